r"""Where MCNFSP departs from Zhang et al. 2019 (:mod:`agents.mcnfsp`), in one place.

Two changes from the paper make the search a best response, as fictitious play needs:

- **Opponents play their average policy, in expectation.** The paper lets the
  opponent choose by PUCT on f_BR too, which searches for a minimax value, not a best
  response to the opponents' average strategy. Here only the searcher's own decisions
  are tree nodes, chosen by PUCT. With ``opponent_backup: expectation`` (the default) a
  simulation expands every move of the others and of chance and backs up their average
  weighted by the others' current Pi and the chance probabilities (at simultaneous
  nodes, over the others' joint actions): no sampling noise, at the cost of the others'
  and chance's subtree down to the searcher's next decisions per simulation, which suits
  small branching (poker, one-shot games). With ``sample`` it draws one move per node
  and simulation, as a plain MCTS would: cheaper per simulation, for board games.
- **Hidden information.** A node is the searcher's information set (its key), not a
  state (single-observer information-set MCTS), and every simulation starts from a
  history drawn from the game's belief sampler (:mod:`hiddenenvs.beliefs`), weighted by
  the opponents' reach under their Pi. Values at a node then average over the histories
  it may hide, as the opponents' policies make them likely: with opponents and chance
  averaged or sampled, the search solves the searcher's one-player decision problem against Pi.
  A perfect-information game (Othello) has one consistent history. A game without a
  belief sampler (combat: chance sampled inside the state) can only be searched from a
  state the caller holds (:meth:`~agents.mcnfsp.search.BestResponseSearch.policy` with ``root=``), each
  simulation on a reseeded copy; :func:`~agents.mcnfsp.self_play.play_against_policy` does that, playing
  episodes on the game model against a fixed opponent (the paper's combat setting:
  MCNFSP attackers trained against scripted defenders).

One option that makes the search's answers best responses where values differ by little
against the utility bound (poker), off by default (the paper's): on Leduc the shipped search
answered with f_BR's prior and valued the next decisions by Pi's play, and MCNFSP sat at
exploitability ~1.0 from 2 minutes to 10 (``configs/mcnfsp_leduc.yaml`` says what it reaches now):

- ``value_target: search``: f_BR's value learns the search's value at the root, ``sum_a
  target(a) Q(a)`` (the value of f_BR's policy target), instead of z. z is the return the
  player went on to earn, its later decisions played mostly by Pi (eta 0.1, per action):
  the value of the mix, not of a best response, so the search, whose leaves are f_BR's
  values, looked one decision ahead of Pi. Measured on the old Leduc run's checkpoint
  (600 s, exact values per information set, weighted by the opponent's reach): f_BR's
  value was 0.51-0.67 chips from Pi's values and 1.0 from the best response's, whose gap
  is 0.75-0.98 chips. With the search's value the leaves back up what the search would do:
  value iteration with the search as the operator (the bootstrap MuZero's Reanalyse uses).

The prior echo has its fix among the options below: PUCT's visits at 20 simulations with
values in units of the utility bound (13 chips on Leduc: one chip is 0.08) follow f_BR's
prior (on that checkpoint the most visited action was the prior's favourite on 283 of the 288
information sets, and the exact best response on 69-87% of the reach; 200 simulations: 71-90%), and
f_BR learns ``pi ∝ N``: the prior again. ``root_selection: gumbel`` plays and teaches by
``logits + sigma(q)``, q min-max normalised, which the values decide.

A ``temperature`` below 1 sharpens the played ``pi ∝ N^(1/temperature)`` (the paper's pi
is N normalised), so that Pi, which learns the searched actions, learns the search's best
answer rather than an echo of the prior. Taught to f_BR as well, the sharpened pi feeds
the echo back: the prior steers a few simulations' visits, their sharpened form trains the
prior, and the prior locks onto one action. On blind tic-tac-toe at temperature 0.25 and
16 simulations, five of the six seats' priors at the first decision (three seeds) ended
0.96-1.0 on one cell. ``policy_target: visits`` teaches f_BR N normalised whatever the
temperature (AlphaGo Zero's target, Silver et al. 2017), while the sharpened pi still plays.

Options for large action spaces, all off by default (the paper's search):

- ``order_head: factored`` (:class:`agents.networks.FactoredOrderHead`): f_BR's and Pi's
  logit of "send n from area s to destination d" is ``a(s) + b(d | s) + c(n | s)`` from the
  area's own features, a source-destination dot product and the count's share of the
  group, with a softmax over the legal orders only, where a linear head learns every flat
  order on its own (combat's commander orders).
- ``rollout_decisions: n``: a new leaf is valued by n of the searcher's decisions played
  with the game's no-op (combat's hold, so the standing orders play out) against the
  others' policies, plus f_BR's value where that stops (AlphaGo's rollout leaf
  evaluation, Silver et al. 2016, with a fixed rollout policy and lambda 1 up to the
  rollout's end), for games where a shallow search with an untrained value sees nothing.
- ``root_selection: gumbel`` (Danihelka et al. 2022, "Policy improvement by planning with
  Gumbel", Algorithm 2 and eq. 11): m root actions (``gumbel_actions``) are drawn without
  replacement by Gumbel-top-m on f_BR's logits, the simulations shared among them by
  sequential halving on ``g + logits + sigma(q)``, ``sigma(q) = (50 + max N) * q`` with
  ``q`` min-max normalised and unvisited actions completed by the mixed value; the search
  plays the best survivor and f_BR learns ``softmax(logits + sigma(completed q))``. Each
  pass over a round's candidates tries them on one drawn root, cloned (its history and its
  reseeded chance stream: common random numbers), so the halving compares the actions, not
  the luck of their draws. With few simulations among many legal actions, PUCT visits
  each action about once and ``pi ∝ N`` echoes the prior; the Gumbel root improves on it
  with any budget. Below the root the simulations descend by PUCT.
- ``rl_replay_ratio`` / ``sl_replay_ratio`` > 0: an update takes as many gradient steps as
  bring the minibatch samples drawn from M_RL / M_SL up to that many per pair the memory
  has ever stored, instead of the fixed ``rl_steps`` / ``sl_steps``. Only the searched
  decisions (a fraction eta) enter the memories, so fixed steps per
  ``learn_every_episodes`` show each pair as often as the steps outnumber the searches,
  and Pi overfits the sampled search actions as one-hot targets; a ratio keeps the
  samples per stored pair fixed.

The search's options are the methods of :class:`SearchDeviations` (a base of
:class:`agents.mcnfsp.search.BestResponseSearch`); the replay ratios are
:func:`replay_steps_due`; the factored head is :class:`agents.networks.FactoredOrderHead`.
The expectation backup and the belief roots are the search itself
(:mod:`agents.mcnfsp.search`); ``search_from: true_state`` and fixed ``opponents`` (the
paper's combat set-up) are :class:`agents.mcnfsp.config.MCNFSPConfig` fields.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from agents.mcnfsp.config import GUMBEL_C_SCALE, GUMBEL_C_VISIT, MCNFSPConfig
from agents.mcnfsp.tree import Node
from agents.networks import PolicyValueNetwork, network_input
from agents.search import check_deadline
from hiddenenvs.game import SIMULTANEOUS, State


class SearchDeviations:
    """The search's options that the paper does not have (module docstring), as methods of
    :class:`agents.mcnfsp.search.BestResponseSearch`, whose state and steps they use
    (declared here, set and defined by the search)."""

    player: int
    config: MCNFSPConfig
    rng: np.random.Generator
    network: PolicyValueNetwork
    architecture: dict[str, Any]
    device: torch.device
    scale: float
    no_op: int | None
    deadline: float | None
    _expand: Callable[[State], Node]
    _simulate: Callable[..., None]
    _advance: Callable[[State], float]
    _joint: Callable[[State, int | None], list[int]]

    def _leaf_value(self, state: State, node: Node) -> float:
        """A new node's value (unscaled): f_BR's ``v``, or with ``rollout_decisions`` the
        searcher's rewards over that many of its decisions played with the game's no-op
        (the others and chance as in ``_advance``) plus f_BR's ``v`` where the rollout stops."""
        if self.config.rollout_decisions == 0:
            return node.value * self.scale
        no_op = self.no_op
        assert no_op is not None  # the search refuses rollout_decisions without a no-op
        state = state.clone()
        earned = 0.0
        for _ in range(self.config.rollout_decisions):
            check_deadline(self.deadline, "MCNFSP search")
            if state.current_player() == SIMULTANEOUS:
                state.apply_actions(self._joint(state, no_op))
            else:
                state.apply_action(no_op)
            earned += float(state.rewards()[self.player]) + self._advance(state)
            if state.is_terminal():
                return earned
        tensor = network_input(
            state.information_state_tensor(self.player)[None], self.architecture, self.device
        )
        with torch.no_grad():
            value = float(self.network.value(tensor)[0])
        return earned + value * self.scale

    def _gumbel_search(
        self, fresh_root: Callable[[], State], nodes: dict[tuple, Node], key: tuple
    ) -> tuple[Node, int]:
        """Gumbel root search (Danihelka et al. 2022, Algorithm 2): sample m root actions
        without replacement by Gumbel-top-m on f_BR's logits, then share the simulations
        among them by sequential halving, keeping the half with the highest
        ``g + logits + sigma(q)`` after each round; the chosen action is the best survivor.
        Below the root, simulations descend by PUCT as usual."""
        node = nodes[key] = self._expand(fresh_root())
        simulations = self.config.num_simulations
        scores = self.rng.gumbel(size=len(node.actions)) + np.log(node.prior + 1e-30)
        count = min(self.config.gumbel_actions, len(node.actions), simulations)
        remaining = np.argsort(-scores, kind="stable")[:count]
        rounds = max(1, math.ceil(math.log2(count)))
        used = 0
        for round_index in range(rounds):
            per_action = max(1, simulations // (rounds * len(remaining)))
            if round_index == rounds - 1:  # the last round spends what is left
                per_action = max(per_action, (simulations - used) // len(remaining))
            for _ in range(per_action):
                # Common random numbers: the round's candidates are each tried once on the
                # same root (one history, one reseeded chance stream, cloned), so their q
                # differ by what the action does, not by which hits or hidden state each
                # simulation happened to draw (one rollout per candidate on combat: the
                # hit rolls' noise decided the comparison).
                world = fresh_root()
                for index in remaining:
                    if used < simulations:
                        check_deadline(self.deadline, "MCNFSP search")
                        self._simulate(world.clone(), nodes, key, root_index=int(index))
                        used += 1
            sigma = self._sigma(node)
            remaining = remaining[np.argsort(-(scores + sigma)[remaining], kind="stable")]
            remaining = remaining[: max(1, math.ceil(len(remaining) / 2))]
        return node, int(remaining[0])

    def _completed_q(self, node: Node) -> np.ndarray:
        """The root's mean returns scaled to [-1, 1], unvisited actions completed by the
        mixed value ``v_mix`` (Danihelka et al. 2022, eq. 33: f_BR's value averaged with
        the prior-weighted visited q)."""
        visited = node.visits > 0
        q = np.where(visited, node.return_sum / np.maximum(node.visits, 1) / self.scale, 0.0)
        total = node.visits.sum()
        if total > 0:
            weighted = (node.prior[visited] * q[visited]).sum() / max(
                node.prior[visited].sum(), 1e-30
            )
            mixed = (node.value + total * weighted) / (1.0 + total)
        else:
            mixed = node.value
        return np.where(visited, q, mixed)

    def _sigma(self, node: Node) -> np.ndarray:
        """``sigma(completed q)``: the completed q (:meth:`_completed_q`) min-max
        normalised over the actions into [0, 1], times ``(50 + max N)``."""
        q = self._completed_q(node)
        spread = q.max() - q.min()
        q = (q - q.min()) / spread if spread > 0 else np.zeros_like(q)
        return (GUMBEL_C_VISIT + node.visits.max()) * GUMBEL_C_SCALE * q


def replay_steps_due(
    fixed_steps: int, replay_ratio: float, stored: int, steps_taken: int, batch_size: int
) -> int:
    """Gradient steps for an update: ``fixed_steps``, or with a replay ratio the steps that
    bring the samples drawn so far (``steps_taken * batch_size``) up to ``replay_ratio *
    stored`` (``stored``: the pairs the memory has ever stored)."""
    if replay_ratio == 0:
        return fixed_steps
    return max(0, int(replay_ratio * stored / batch_size) - steps_taken)
