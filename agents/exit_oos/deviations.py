"""Where ExIt-OOS departs from Kitchen & Benedetti 2018 (:mod:`agents.exit_oos`), in one place.

Each switch is a field of :class:`agents.exit_oos.config.ExItOOSConfig`; off (the value
named) it is the paper's design. Figures: ``docs/results/exit-oos.md``, exact
exploitability of the apprentice unless named otherwise.

- ``reweighting`` (default ``"ema"``, the paper's): the paper replaces OOS's importance
  weight ``1 / q(z)`` by ``1 / (q_u(z) r)``, ``r`` an exponential moving average of
  ``q(z) / q_u(z)``; ``"none"`` keeps OOS's own mixture weight (Lisý et al. 2015). ``r``
  is heavy tailed (1e5-1e12 within a Leduc search, logged as ``ema_ratio``), which makes
  each search's answer noisier: Leduc 40 iterations 0.733 with ``none`` against 0.812
  with ``ema``; Liar's Dice(1) at the paper's budget, no difference beyond noise (PST:
  0.475 and 0.479 win against OOS(10k)). Both OOS backends implement both
  (:mod:`agents.search.oos`).
- ``average_tremble`` (default 0): OOS weighs each average-strategy update by the mover's
  reach under its current strategy, so a targeted decision that strategy does not lead to
  keeps an average of 0 and its stored target is uniform, however clear its regrets
  (Leduc: average [0, 0] with regrets [9.9, -355] after 20,000 iterations). With ``t``
  the reach is taken under ``(1 - t) sigma + t uniform``. Tree backend only (compiled in
  ``_tree_mccfr.pyx``).
- ``prior_regret`` (default 0): as published the apprentice reaches the search only
  through its rollouts, and a small game's incremental tree soon holds every information
  set, so the teacher does not improve with its student. With ``c > 0`` each search's
  regrets start at ``c`` times the apprentice's probabilities, so OOS's current strategy
  starts at ``f_theta``. Leduc (10,000 simulations a move): ``none`` alone 0.42-0.46 by
  iteration 30-60; ``none``, ``prior_regret`` 300 and ``average_tremble`` 0.1 together
  0.233 at iteration 50 (``configs/exit_oos_leduc.yaml``; ``prior_regret`` 100: 0.292,
  1000: 0.287).
  Tree backend only.
- ``public_state_targets`` (default False): PST targets every information set of the
  mover in the current public state alike, but the paper stores the search's answer
  only at the one held; on, the answers at the others that hold an average are stored
  too (:class:`PublicStateTargets`). Leduc, with ``average_tremble`` 0.1: 0.536 at iteration
  40 against 0.531 without it, no help. PST and the tree backend only.
- ``targeting`` per game: the paper uses PST for Leduc and Liar's Dice, IST for
  Goofspiel. ``configs/exit_oos_liars_dice.yaml`` targets IST: 0.504 [0.482, 0.525]
  against OOS(10k) where PST made 0.475-0.479.
- The budget: ``simulations_per_move`` is the paper's 10,000 scaled down where a config
  says so (Leduc 2,000, II-Goofspiel(6) 1,000; Liar's Dice keeps 10,000). Networks the
  paper does not give (Liar's Dice [128, 64]) and ``batch_size`` (128) are set in the
  configs.

Engineering that changes no result: on the tree backend the apprentice, fixed during an
iteration's self-play, is evaluated at every information set in one batched forward and
the compiled search reads that table (:meth:`agents.search.oos.OOS.set_rollout_policy`,
tested equal to a forward at every rollout step); it replaces the paper's state-machine
batching of concurrent simulations, which the model backend keeps
(:func:`agents.search.oos.search_concurrently`). The search variants where the OOS
references differ (target compensation, the expansion step, lost targets) are OOS's, and
are explained in :mod:`agents.search.oos`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

import numpy as np

from agents.exit_oos.config import ExItOOSConfig
from agents.search.oos import OOS, OOSOptions
from hiddenenvs.game import State

# (information-state tensor, legal-action mask, sigma_oos): one stored decision.
Target = tuple[np.ndarray, np.ndarray, np.ndarray]


def deviation_options(config: ExItOOSConfig) -> OOSOptions:
    """The OOS options of ``average_tremble`` and ``prior_regret``, each only when on (OOS
    refuses them off its tree backend)."""
    options: OOSOptions = {}
    if config.average_tremble > 0.0:
        options["average_tremble"] = config.average_tremble
    if config.prior_regret > 0.0:
        options["prior_regret"] = config.prior_regret
    return options


class PublicStateTargets:
    """``public_state_targets``: the search's answers at the mover's other information sets
    of the held one's public state (tree backend)."""

    def __init__(self) -> None:
        self._representatives: list[State] | None = None  # a state per information set

    def __call__(self, search: OOS, mover: int, key: tuple, joint: bool) -> Iterator[Target]:
        """``(tensor, mask, sigma)`` at the mover's other information sets of ``key``'s
        public state that the search holds with an average (PST targeted them as ``key``)."""
        if search.tree is None:
            raise ValueError("public_state_targets needs OOS's tree backend")
        tree, tables = search.tree_tables()
        if self._representatives is None:
            self._representatives = tree.representative_states()
        held = tree.infoset_index[(mover, tuple(key))]
        for infoset in search.public_state_infosets(key):
            start, stop = tree.infoset_slot_start[infoset : infoset + 2]
            if infoset == held or tables.average[start:stop].sum() <= 0.0:
                continue
            state = self._representatives[infoset]
            mask = np.asarray(state.legal_actions_mask(mover if joint else None), dtype=np.int8)
            other = cast(tuple, tree.infoset_keys[infoset][1])  # a key is a tuple of steps
            sigma = search.policy(other, tuple(np.flatnonzero(mask)))
            tensor = np.ravel(state.information_state_tensor(mover)).astype(np.float32)
            yield tensor, mask, sigma.astype(np.float32)
