"""The fast path of ES- and OS-MCCFR: array tables on an enumerated tree, compiled traversals.

On a game whose tree can be enumerated, the tree is built once
(:class:`hiddenenvs.analysis.GameTree`, as :mod:`agents.cfr` does) and every MCCFR
iteration walks its arrays in compiled code (``_tree_mccfr.pyx``): an information set is
an index, its regrets and average weights are the slots
``infoset_slot_start[i]:infoset_slot_start[i + 1]`` of two float64 arrays, and no Python
``State`` is touched. The sampling schemes and updates are exactly those of the generic,
model-driven solvers (:mod:`agents.search.external_sampling_mccfr`, eq. 9 of Lanctot et
al. 2009; :mod:`agents.search.outcome_sampling_mccfr`, eq. 10), which remain the path for
games too large to enumerate.

One difference at simultaneous nodes: the tree sequentialises them (the second mover's
information set does not see the first mover's choice), so in external sampling an
opponent moving after the traverser samples once per traverser action, where the
generic solver samples once per node. Both are unbiased estimates of the same
counterfactual regrets; the opponent's average gets a constant factor per information
set, which normalisation removes.

:class:`TreeTables` offers the interface of :class:`agents.search.tables.RegretTables`
(tables by ``(player, information_state_key)``, tabular policies, checkpoints).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.search._tree_mccfr import CompiledTree
from hiddenenvs.analysis import GameTree, TabularPolicy, tree_is_small
from hiddenenvs.game import Game

BACKENDS = ("auto", "tree", "model")
# "auto" enumerates a game without a fast tree builder only up to this many histories
# (counting them walks Python states: about a second per 100,000).
AUTO_TREE_MAX_NODES = 200_000


def use_tree(game: Game, backend: str, max_nodes: int = AUTO_TREE_MAX_NODES) -> bool:
    """Whether ``backend`` means the compiled tree path for ``game``.

    ``"auto"``: the tree when it is already built, when the game has its own fast
    builder (``build_game_tree``), or when it has at most ``max_nodes`` (default
    :data:`AUTO_TREE_MAX_NODES`) histories; ``"tree"`` insists (an error for a
    sampled-chance game); ``"model"`` never.
    """
    if backend not in BACKENDS:
        raise ValueError(f"MCCFR backend must be one of {BACKENDS}, got {backend!r}")
    if backend == "model":
        return False
    if backend == "tree":
        return True
    return (
        getattr(game, "_hiddenenvs_game_tree", None) is not None
        or hasattr(game, "build_game_tree")
        or tree_is_small(game, max_nodes)
    )


class TreeTables:
    """Regret and average-weight arrays over the slots of an enumerated tree."""

    def __init__(self, tree: GameTree):
        self.tree = tree
        self.num_actions = tree.game.info.num_distinct_actions
        self.regret = np.zeros(tree.num_slots)
        self.average = np.zeros(tree.num_slots)

    def compile(self, generator: np.random.Generator) -> CompiledTree:
        """The compiled traversals, updating these arrays and drawing from ``generator``."""
        return CompiledTree(self.tree, self.regret, self.average, generator)

    def _visited(self) -> np.ndarray:
        """Information sets whose regrets or average weights have been touched."""
        touched = (self.regret != 0.0) | (self.average != 0.0)
        return np.logical_or.reduceat(touched, self.tree.infoset_slot_start[:-1]) if len(touched) else touched

    def __len__(self) -> int:
        return int(self._visited().sum())

    def _slot_probabilities(self, strategy: str) -> np.ndarray:
        tree = self.tree
        weights = self.average if strategy == "average" else np.maximum(self.regret, 0.0)
        totals = np.add.reduceat(weights, tree.infoset_slot_start[:-1])[tree.slot_infoset]
        counts = np.diff(tree.infoset_slot_start)[tree.slot_infoset]
        return np.where(totals > 0.0, weights / np.where(totals > 0.0, totals, 1.0), 1.0 / counts)

    def _rows(self, strategy: str) -> dict[tuple, np.ndarray]:
        tree = self.tree
        probabilities = self._slot_probabilities(strategy)
        table = {}
        for infoset in np.flatnonzero(self._visited()):
            row = np.zeros(self.num_actions)
            slots = slice(tree.infoset_slot_start[infoset], tree.infoset_slot_start[infoset + 1])
            row[tree.slot_action[slots]] = probabilities[slots]
            table[tree.infoset_keys[infoset]] = row
        return table

    def average_table(self) -> dict[tuple, np.ndarray]:
        """``{(player, key): probabilities over num_distinct_actions}`` of the visited sets."""
        return self._rows("average")

    def current_table(self) -> dict[tuple, np.ndarray]:
        return self._rows("current")

    def tabular_policy(self, tree: GameTree, strategy: str = "average") -> TabularPolicy:
        """The strategy on ``tree`` (this table's tree, or one built again for the same game)."""
        if tree is not self.tree and tree.infoset_keys != self.tree.infoset_keys:
            raise ValueError(f"{tree} is not the tree these tables were built on ({self.tree})")
        return TabularPolicy(tree, self._slot_probabilities(strategy))

    def state_dict(self) -> dict[str, Any]:
        return {"regret": self.regret.copy(), "average": self.average.copy()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if "regret" not in state or len(state["regret"]) != self.tree.num_slots:
            raise ValueError(
                f"checkpoint tables do not fit this tree ({self.tree.num_slots} infoset-action slots); "
                "they were written by the other MCCFR backend or for other game parameters"
            )
        # In place: the compiled traversal holds pointers to these arrays.
        self.regret[:] = state["regret"]
        self.average[:] = state["average"]
