r"""Counterfactual regret minimisation: CFR and CFR+, vectorised over the whole game tree.

CFR (Zinkevich, Johanson, Bowling & Piccione 2007, "Regret Minimization in Games with
Incomplete Information"). At iteration t, for each information set I of player i and
action a, the counterfactual value (their eq. 7, written per history) is

.. math::

   v_i(\sigma, I, a) = \sum_{h \in I} \pi_{-i}^\sigma(h) \, u_i(\sigma, h \cdot a),

and the instantaneous counterfactual regret is r^t(I, a) = v_i(sigma^t, I, a) -
v_i(sigma^t, I). Regrets accumulate, R^T(I, a) = sum_t r^t(I, a), and the next strategy is
regret matching (their eq. 8): sigma^{T+1}(I, a) proportional to max(R^T(I, a), 0),
uniform when no regret is positive. The *average* strategy, weighted by the player's own
reach pi_i^{sigma^t}(I), converges to a Nash equilibrium in two-player zero-sum games
(their theorem 4: exploitability O(1/sqrt(T))).

CFR+ (Tammelin 2014, "Solving Large Imperfect Information Games Using CFR+"; Tammelin,
Burch, Johanson & Bowling 2015, IJCAI) changes three things: regret-matching+ clips the
cumulative regrets at zero after every update (R+ = max(R+ + r, 0)); players are updated
alternately (player 0's regrets and average first, then player 1 against the updated
sigma_0); and the average strategy is weighted linearly, by t. In practice it converges
orders of magnitude faster than CFR.

Implementation: each iteration is, per updated player, a forward pass (edge and reach
probabilities, per player and chance) and a backward pass (the player's node values) over
the arrays of :class:`hiddenenvs.analysis.GameTree`, then the regret and average sums into
the infoset-action slots; all of it runs in compiled loops without the GIL
(:class:`hiddenenvs.analysis._tree_passes.CFRTree`), adding in numpy's order so that the
iterates are bit for bit those of the numpy formulation (``np.bincount`` of
``pi_{-i}(h) (v(h.a) - v(h))`` per slot; tests/test_exact_analysis.py keeps it as the
reference). Leduc runs at tens of thousands of iterations a second on one core.

Training through the common loop: the trainers ``cfr`` and ``cfr+`` (:class:`CFRLearner`,
:class:`CFRPlusLearner`) run ``iterations_per_step`` iterations per loop step, so budgets,
evaluation and checkpoints count iterations (``configs/cfr_leduc.yaml``)::

    python train.py --config configs/cfr_leduc.yaml
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agents.base import Learner, StepReport
from agents.catalogue import POSITIVE, RANGE
from hiddenenvs.analysis import GameTree, TabularPolicy, as_tabular_policy, exploitability
from hiddenenvs.analysis._tree_passes import CFRTree
from hiddenenvs.game import Game

VARIANTS = ("cfr", "cfr+")


CHUNK_NODE_VISITS = 2_000_000  # per compiled call: well under a second on any tree


class CFRSolver:
    """Tabular CFR / CFR+ on any game whose tree can be enumerated.

    >>> import hiddenenvs
    >>> solver = CFRSolver(hiddenenvs.load_game("kuhn_poker"), variant="cfr+")
    >>> solver.iterate(300)
    >>> solver.exploitability() < 1e-3
    True
    """

    def __init__(self, game_or_tree: Game | GameTree, variant: str = "cfr+"):
        if variant not in VARIANTS:
            raise ValueError(f"CFR variant must be one of {VARIANTS}, got {variant!r}")
        self.tree = (
            game_or_tree if isinstance(game_or_tree, GameTree) else GameTree.build(game_or_tree)
        )
        self.variant = variant
        self.iteration = 0
        self.cumulative_regret = np.zeros(self.tree.num_slots)
        self.cumulative_policy = np.zeros(self.tree.num_slots)
        self._compiled = CFRTree(self.tree)

    # ---- strategies ---------------------------------------------------------------------
    def _regret_matching(self) -> np.ndarray:
        tree = self.tree
        positive = np.maximum(self.cumulative_regret, 0.0)
        totals = np.add.reduceat(positive, tree.infoset_slot_start[:-1])[tree.slot_infoset]
        counts = np.diff(tree.infoset_slot_start)[tree.slot_infoset]
        safe_totals = np.where(totals > 0, totals, 1.0)
        return np.where(totals > 0, positive / safe_totals, 1.0 / counts)

    def current_policy(self) -> TabularPolicy:
        return TabularPolicy(self.tree, self._regret_matching())

    def average_policy(self) -> TabularPolicy:
        tree = self.tree
        totals = np.add.reduceat(self.cumulative_policy, tree.infoset_slot_start[:-1])[
            tree.slot_infoset
        ]
        counts = np.diff(tree.infoset_slot_start)[tree.slot_infoset]
        safe_totals = np.where(totals > 0, totals, 1.0)
        return TabularPolicy(
            tree, np.where(totals > 0, self.cumulative_policy / safe_totals, 1.0 / counts)
        )

    # ---- iterations ----------------------------------------------------------------------
    def iterate(self, iterations: int = 1) -> None:
        """Run ``iterations`` iterations: CFR+ updates the players in turn, each against
        the others' current strategy after their update, with the average weighted by the
        iteration number; CFR updates all players against the same strategy."""
        # The compiled passes hold the interpreter for a whole call: calls of about
        # CHUNK_NODE_VISITS node visits each let Ctrl-C through between them (same iterates).
        chunk = max(1, CHUNK_NODE_VISITS // len(self.tree.parent))
        for start in range(0, iterations, chunk):
            count = min(chunk, iterations - start)
            self._compiled.iterate(
                self.cumulative_regret,
                self.cumulative_policy,
                self.iteration + 1,
                count,
                self.variant == "cfr+",
            )
            self.iteration += count

    def exploitability(self) -> float:
        return exploitability(self.tree, self.average_policy())

    # ---- checkpoints ----------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {
            "variant": self.variant,
            "iteration": self.iteration,
            "cumulative_regret": self.cumulative_regret.copy(),
            "cumulative_policy": self.cumulative_policy.copy(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if (
            state["variant"] != self.variant
            or len(state["cumulative_regret"]) != self.tree.num_slots
        ):
            raise ValueError(
                f"checkpoint is for {state['variant']} with {len(state['cumulative_regret'])} "
                f"slots; this solver is {self.variant} with {self.tree.num_slots}"
            )
        self.iteration = int(state["iteration"])
        self.cumulative_regret = np.asarray(state["cumulative_regret"], dtype=np.float64).copy()
        self.cumulative_policy = np.asarray(state["cumulative_policy"], dtype=np.float64).copy()


# ---- trainers for the common loop --------------------------------------------------------------
@dataclass
class CFRConfig:
    """CFR / CFR+ trainer settings (the variant is the trainer's name)."""

    # CFR iterations per loop step (one step = one iteration)
    iterations_per_step: int = field(default=1, metadata={RANGE: POSITIVE})

    def __post_init__(self):
        from agents.config import check_field_ranges

        check_field_ranges(self, "trainer.params")


class CFRLearner(Learner):
    """CFR as a trainer: each loop step runs iterations over the whole tree (no episodes).

    The evaluation policy is the average policy, as a tabular agent per seat.
    """

    CONFIG_CLASS = CFRConfig
    VARIANT = "cfr"

    def __init__(self, game: Game, config: CFRConfig, seed: int):
        super().__init__(game, config, seed)
        self.solver = CFRSolver(game, variant=self.VARIANT)

    def step(self, loop: Any) -> StepReport:
        self.solver.iterate(self.config.iterations_per_step)
        return StepReport(episodes=0, iterations=self.config.iterations_per_step)

    def evaluation_agent(self, player: int):
        from agents.baselines import TabularPolicyAgent

        return TabularPolicyAgent.from_policy(self.solver.average_policy(), player=player)

    def evaluation_policy(self, tree: GameTree) -> TabularPolicy:
        return as_tabular_policy(tree, self.solver.average_policy())

    def state_dict(self) -> dict[str, Any]:
        return self.solver.state_dict()

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.solver.load_state_dict(state)


class CFRPlusLearner(CFRLearner):
    """CFR+ as a trainer (see :class:`CFRLearner`)."""

    VARIANT = "cfr+"
