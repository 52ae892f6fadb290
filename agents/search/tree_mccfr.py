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

State-space abstraction (Shi & Littman 2000; Waugh et al. 2009, "Abstraction pathologies
in extensive games"): an :class:`InfosetAbstraction` maps every information set of the
tree to an abstract one; the sets mapped together share one row of regrets and average
weights, so the player acts alike in all of them (an abstracted player may forget what
it did: imperfect recall, which MCCFR handles empirically, Waugh et al. 2009, "A practical
use of imperfect recall"). The traversal is the same compiled code, reading the abstract
row of each node's information set; the average policy is expanded back onto the tree's
information sets, so exact best responses and exploitability measure it on the real game.

>>> import hiddenenvs
>>> from agents.search.external_sampling_mccfr import ExternalSamplingMCCFR
>>> from hiddenenvs.analysis import GameTree
>>> game = hiddenenvs.load_game("kuhn_poker")
>>> card_only = InfosetAbstraction.from_keys(  # player 0 sees its card, not the betting
...     GameTree.build(game), lambda player, key: key[0] if player == 0 else key)
>>> card_only.num_abstract_infosets  # player 0: 3 cards x 2 own-decision points merged to 3; player 1: 6
9
>>> solver = ExternalSamplingMCCFR(game, seed=0, abstraction=card_only)
>>> solver.iterate(100)
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
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
    return GameTree.ready_or_fast(game) or tree_is_small(game, max_nodes)


class InfosetAbstraction:
    """A map of a tree's information sets onto abstract information sets.

    ``abstract_infoset[i]`` names the abstract set of information set ``i`` (any integers;
    equal values merge). Merged sets must belong to one player and have the same legal
    actions, else a ``ValueError`` names the first pair that differs. Abstract sets are
    numbered by first appearance in the tree; ``infoset_slot_start[i]`` is the first slot
    of ``i``'s abstract set in the tables and ``slot_table_slot`` maps each tree slot to
    its table slot (the identity when nothing is merged).
    """

    def __init__(self, tree: GameTree, abstract_infoset: np.ndarray):
        abstract_infoset = np.asarray(abstract_infoset)
        if abstract_infoset.shape != (tree.num_infosets,) or not np.issubdtype(
            abstract_infoset.dtype, np.integer
        ):
            raise ValueError(
                f"{tree}: an abstraction needs one integer abstract id per information set "
                f"({tree.num_infosets}), got an array of shape {abstract_infoset.shape} "
                f"and dtype {abstract_infoset.dtype}"
            )
        self.tree = tree
        _, first_member, inverse = np.unique(
            abstract_infoset, return_index=True, return_inverse=True
        )
        order = np.argsort(first_member, kind="stable")  # number abstract sets by first appearance
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        self.abstract_infoset = rank[inverse.reshape(-1)]
        representative = first_member[order][
            self.abstract_infoset
        ]  # per infoset, its set's first member
        offset_in_infoset = np.arange(tree.num_slots) - tree.infoset_slot_start[tree.slot_infoset]
        self._check_merges(representative, offset_in_infoset)
        counts = np.diff(tree.infoset_slot_start)
        abstract_start = np.concatenate([[0], np.cumsum(counts[first_member[order]])]).astype(
            np.int64
        )
        self.infoset_slot_start = abstract_start[self.abstract_infoset]
        self.num_abstract_infosets = len(order)
        self.num_slots = int(abstract_start[-1])
        self.slot_table_slot = self.infoset_slot_start[tree.slot_infoset] + offset_in_infoset

    @classmethod
    def from_keys(
        cls, tree: GameTree, abstract_key: Callable[[int, Hashable], Hashable]
    ) -> InfosetAbstraction:
        """Merge the information sets whose ``abstract_key(player, information_state_key)``
        are equal (within one player: keys are paired with the player)."""
        ids: dict[tuple[int, Hashable], int] = {}
        abstract_infoset = np.fromiter(
            (
                ids.setdefault((player, abstract_key(player, key)), len(ids))
                for player, key in tree.infoset_keys
            ),
            dtype=np.int64,
            count=tree.num_infosets,
        )
        return cls(tree, abstract_infoset)

    def _check_merges(self, representative: np.ndarray, offset_in_infoset: np.ndarray) -> None:
        tree = self.tree
        counts = np.diff(tree.infoset_slot_start)
        bad = (tree.infoset_player != tree.infoset_player[representative]) | (
            counts != counts[representative]
        )
        if not bad.any():
            # Same counts: compare the legal actions slot by slot against the representative's.
            mirror = tree.infoset_slot_start[representative[tree.slot_infoset]] + offset_in_infoset
            differs = tree.slot_action != tree.slot_action[mirror]
            bad[tree.slot_infoset[differs]] = True
        if bad.any():
            infoset = int(np.flatnonzero(bad)[0])
            other = int(representative[infoset])
            raise ValueError(
                f"{tree.game.spec}: the abstraction merges information sets {tree.infoset_keys[other]!r} "
                f"(legal actions {tree.infoset_legal_actions(other).tolist()}) and "
                f"{tree.infoset_keys[infoset]!r} (legal actions {tree.infoset_legal_actions(infoset).tolist()}); "
                "merged sets need one player and the same legal actions"
            )

    def counts_by_player(self) -> list[int]:
        """Per player, the number of its abstract information sets."""
        first = np.unique(self.abstract_infoset, return_index=True)[1]
        return np.bincount(
            self.tree.infoset_player[first], minlength=self.tree.num_players
        ).tolist()


class TreeTables:
    """Regret and average-weight arrays over the slots of an enumerated tree, or over the
    abstract slots of an :class:`InfosetAbstraction` of it."""

    def __init__(self, tree: GameTree, abstraction: InfosetAbstraction | None = None):
        if abstraction is not None and abstraction.tree is not tree:
            raise ValueError(
                f"the abstraction was built on another tree ({abstraction.tree}), not {tree}"
            )
        self.tree = tree
        self.abstraction = abstraction
        self.num_actions = tree.game.info.num_distinct_actions
        num_table_slots = tree.num_slots if abstraction is None else abstraction.num_slots
        self.regret = np.zeros(num_table_slots)
        self.average = np.zeros(num_table_slots)

    def compile(self, generator: np.random.Generator) -> CompiledTree:
        """The compiled traversals, updating these arrays and drawing from ``generator``."""
        starts = None if self.abstraction is None else self.abstraction.infoset_slot_start
        return CompiledTree(self.tree, self.regret, self.average, generator, starts)

    def _per_tree_slot(self, table: np.ndarray) -> np.ndarray:
        """A table over the tree's own slots (abstract rows copied to every merged set)."""
        return table if self.abstraction is None else table[self.abstraction.slot_table_slot]

    def _visited(self) -> np.ndarray:
        """Information sets whose regrets or average weights have been touched."""
        touched = self._per_tree_slot((self.regret != 0.0) | (self.average != 0.0))
        return (
            np.logical_or.reduceat(touched, self.tree.infoset_slot_start[:-1])
            if len(touched)
            else touched
        )

    def __len__(self) -> int:
        return int(self._visited().sum())

    def _slot_probabilities(self, strategy: str) -> np.ndarray:
        tree = self.tree
        weights = self._per_tree_slot(
            self.average if strategy == "average" else np.maximum(self.regret, 0.0)
        )
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
        if "regret" not in state or len(state["regret"]) != len(self.regret):
            raise ValueError(
                f"checkpoint tables do not fit this tree ({len(self.regret)} infoset-action slots); "
                "they were written by the other MCCFR backend, for other game parameters or another abstraction"
            )
        # In place: the compiled traversal holds pointers to these arrays.
        self.regret[:] = state["regret"]
        self.average[:] = state["average"]
