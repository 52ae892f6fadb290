"""ReBeL's search: one belief-weighted depth-limited subgame per public state, solved by CFR+.

The search of Brown, Bakhtin, Lerer & Gong 2020, "Combining Deep Reinforcement Learning and Search for Imperfect-Information Games" (ReBeL) and of Partridge & Thielscher, "Hidden Information General Game Playing with Deep Learning and Search" (ReBeL for GDL-II), for any game of the model
(the overview, and why one subgame over beliefs instead of one per sampled state, is
:mod:`agents.rebel`). :class:`ReBeLSearch` roots a subgame at a public state over the
histories the beliefs give (:mod:`agents.rebel.beliefs`), keeps every player's real
information sets in it, solves it with depth-limited CFR+ (Tammelin 2014) with values at
the frontier (:mod:`agents.rebel.values`, :mod:`agents.rebel.pbs`), deepens while the
budget allows, and caches the solve by its root public state. Which decisions get a new
subgame is ``resolve``: ``"frontier"`` (ReBeL's Alg. 1), ``"decision"`` (every decision,
unsafe) or ``"gadget"`` (every decision, safely: :mod:`agents.rebel.gadget`).
:func:`rebel_policy` runs the search at every information set of a small game.
"""

from __future__ import annotations

import dataclasses
import time
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

import numpy as np

from agents.cfr import CFRSolver
from agents.rebel.beliefs import PublicBeliefs
from agents.rebel.gadget import SafeResolving
from agents.rebel.options import SearchOptions, Solved
from agents.rebel.pbs import PBSValue, solve_with_pbs_values, zero_values
from agents.rebel.values import LeafValue, Prior, rollout_values
from agents.search import check_deadline
from hiddenenvs.analysis import GameTree, TabularPolicy, exploitability
from hiddenenvs.analysis.tree import SubgameTooLarge, build_subgame_tree, reweighted_subgame
from hiddenenvs.beliefs import action_probability_function
from hiddenenvs.game import Game, SeatView, State

# CFR+ iterations of a solve between two reads of the deadline.
CFR_CHUNK = 10


class ReBeLSearch(PublicBeliefs, SafeResolving):
    """Belief-weighted depth-limited subgame solving, cached per public state.

    ``options`` (:class:`~agents.rebel.options.SearchOptions`: budgets, beliefs, re-solving) say how it searches;
    keyword ``settings`` replace single fields of them (``ReBeLSearch(game, iterations=50)``).
    Frontier values: ``leaf_value`` per history (default: ``rollouts`` random playouts
    seeded by ``seed``), or ``pbs_value`` (:mod:`agents.rebel.pbs`) per information set
    from the public belief state, recomputed at every CFR iteration; ``prior`` warm-starts
    CFR's regrets. Without ``seconds`` the search builds the ``max_depth`` subgame first
    (shallower only when it does not fit): the intermediate depths would not answer.
    ``structures`` (:class:`SubgameStructures`) keeps subgame trees for reuse with new
    beliefs and values, shared between searches when given (a trainer's self-play games).
    See the module docstring for the method.
    """

    @classmethod
    def for_config(
        cls,
        game: Game,
        config: Any,
        resolve: str,
        *,
        seed: int,
        structures: SubgameStructures,
        **guide: Any,
    ) -> ReBeLSearch:
        """The search a ReBeL trainer's ``config`` runs (self-play: ``resolve="frontier"``),
        guided at its frontier by ``guide`` (``leaf_value`` / ``prior`` / ``pbs_value``)."""
        return cls(
            game,
            SearchOptions.from_config(config, resolve),
            seed=seed,
            structures=structures,
            **guide,
        )

    def __init__(
        self,
        game: Game,
        options: SearchOptions | None = None,
        *,
        seed: int = 0,
        leaf_value: LeafValue | None = None,
        prior: Prior | None = None,
        pbs_value: PBSValue | None = None,
        structures: SubgameStructures | None = None,
        **settings: Any,
    ):
        options = dataclasses.replace(options or SearchOptions(), **settings)
        if options.resolve == "gadget" and not game.info.is_two_player_zero_sum:
            raise ValueError(
                f"resolve='gadget' needs a two-player zero-sum game; {game.spec} is not"
            )
        self.game, self.options = game, options
        self.pbs_value = pbs_value
        if pbs_value is not None:
            if leaf_value is not None:
                raise ValueError(
                    "give leaf_value (per history) or pbs_value (per public belief state), not both"
                )
            leaf_value = zero_values(game)  # replaced at every CFR iteration
        self.leaf_value = leaf_value or rollout_values(game, options.rollouts, seed)
        self.prior = prior
        self.rng = np.random.default_rng(seed)
        # A time.perf_counter() instant (None: none) that stops a solve inside its CFR
        # iterations (DeadlinePassed): a trainer's step sets it to the run's deadline.
        self.deadline: float | None = None
        self._prior_probabilities = action_probability_function(prior)
        # public state key (or ("sampled", player, key)) -> (subgame tree, σ per slot, depth),
        # None for a public state too large to enumerate
        self._solved: dict[tuple, Solved | None] = {}
        self._public_state_index = {}
        self.structures = structures if structures is not None else SubgameStructures()
        # Where the first subgame is rooted: the initial state's public state, empty in most
        # games but not in all (II-Goofspiel reveals the first point card before any move).
        self.initial_public_key = tuple(game.new_initial_state().public_state_key())

    # ---- the answer ---------------------------------------------------------------------
    def policy(self, view: SeatView) -> np.ndarray:
        """Probabilities over ``num_distinct_actions`` at the seat's information set."""
        key = tuple(view.information_state_key)
        probabilities = self._infoset_policy(view.player, key, view.public_state_key, view)
        out = np.zeros(self.game.info.num_distinct_actions)
        for action in view.legal_actions:
            out[action] = probabilities.get(action, 0.0)
        total = out.sum()
        if total <= 0:
            out[list(view.legal_actions)] = 1.0 / len(view.legal_actions)
            return out
        return out / total

    def _infoset_policy(
        self, player: int, key: Hashable, public_key: tuple, view: SeatView | None
    ) -> dict[int, float]:
        """σ at ``(player, key)``; {} when the public state is too large to enumerate and no
        seat is given to sample for (beliefs then fall back to the prior)."""
        solved = self._subgame_of(tuple(public_key), player) or self._solved.get(
            ("particles", tuple(public_key))
        )
        if solved is None and view is not None:
            solved = self.subgame(view)
        if solved is None:
            return {}
        tree, slots = solved[0], solved[1]
        infoset = tree.infoset_index.get((player, key))
        if infoset is None:  # a sampled subgame that missed this information set
            return {}
        start, stop = tree.infoset_slot_start[infoset], tree.infoset_slot_start[infoset + 1]
        return {int(a): float(p) for a, p in zip(tree.slot_action[start:stop], slots[start:stop])}

    def subgame(self, view: SeatView) -> Solved:
        """The solved subgame that answers at the seat's information set (solving it)."""
        solved = self._subgame_of(tuple(view.public_state_key), view.player)
        if solved is None and self.options.resolve == "gadget":
            raise ValueError(
                f"{self.game.spec}: resolve='gadget' found no history of public state "
                f"{tuple(view.public_state_key)!r} in the previous subgame (too large to enumerate?)"
            )
        if solved is None and self.options.sampler == "particles":
            particles_key = ("particles", tuple(view.public_state_key))
            if particles_key not in self._solved:
                self._solved[particles_key] = self._solve(
                    view.public_state_key, self.particle_beliefs(view.public_state_key)
                )
            solved = self._solved[particles_key]
            if (
                solved is not None
                and (view.player, tuple(view.information_state_key)) not in solved[0].infoset_index
            ):
                solved = None  # the particles missed the seat's own information set
        if solved is None:
            # Sampled beliefs depend on the seat's own information: cached per information set.
            sampled_key = ("sampled", view.player, tuple(view.information_state_key))
            if sampled_key not in self._solved:
                self._solved[sampled_key] = self._solve(
                    view.public_state_key, self.sampled_beliefs(view)
                )
            solved = self._solved[sampled_key]
            if solved is None:
                raise ValueError(
                    f"{self.game.spec}: a depth-1 subgame over {self.options.samples} sampled histories has "
                    f"more than {self.options.max_subgame_nodes} nodes; raise max_subgame_nodes or lower samples"
                )
        return solved

    def _subgame_of(self, public_key: tuple, player: int) -> Solved | None:
        """The solved subgame whose σ answers for ``player`` at ``public_key`` (solving
        what is missing).

        ``resolve="frontier"`` (ReBeL's Alg. 1): the first subgame is rooted at the initial
        state's public state (``initial_public_key``); a public state inside a solved subgame (above its frontier) takes
        that subgame's σ, and one on or below the frontier roots the next subgame at the
        frontier public state on its path. ``resolve="decision"``: every public state is
        re-solved from its own beliefs.
        ``resolve="gadget"``: :meth:`_gadget_subgame`.
        """
        if self.options.resolve == "gadget":
            return self._gadget_subgame(public_key, player)
        root = public_key if self.options.resolve == "decision" else self.initial_public_key
        while True:
            if root not in self._solved:
                self._solved[root] = self._solve(root, self.public_beliefs(root))
            solved = self._solved[root]
            if solved is None or root == public_key:
                return solved
            frontier_keys = solved[3]
            next_root = next(
                (
                    public_key[:k]
                    for k in range(len(root) + 1, len(public_key) + 1)
                    if public_key[:k] in frontier_keys
                ),
                None,
            )
            if next_root is None:
                return solved
            root = next_root

    # ---- solving ------------------------------------------------------------------------
    def _solve(
        self,
        public_key: tuple,
        roots: list[tuple[State, float]] | None,
        gadget: tuple[int, np.ndarray] | None = None,
        iterations: int | None = None,
    ) -> Solved | None:
        """Iterative deepening from ``roots`` (behind a re-solving ``gadget`` when given, see
        :func:`build_subgame_tree`): the deepest finished solve (None when not even depth 1
        fits in ``max_subgame_nodes``)."""
        if roots is None:
            return None
        length = len(public_key)
        if self.options.seconds is None and self.options.max_depth is not None:
            # Without a clock only the deepest subgame that fits answers: build it first.
            for depth in range(self.options.max_depth, 0, -1):
                built = self._subgame_tree(roots, length + depth, gadget)
                if built is not None:
                    return (
                        built[0],
                        self._cfr(built[0], iterations or self.options.iterations),
                        depth,
                        built[1],
                        roots,
                    )
            return None
        deadline = (
            None if self.options.seconds is None else time.perf_counter() + self.options.seconds
        )
        depth = 0
        best: Solved | None = None
        while self.options.max_depth is None or depth < self.options.max_depth:
            check_deadline(self.deadline, "ReBeL solve")
            depth += 1
            built = self._subgame_tree(roots, length + depth, gadget)
            if built is None:  # the last depth that fitted answers
                break
            tree = built[0]
            best = (
                tree,
                self._cfr(tree, iterations or self.options.iterations),
                depth,
                built[1],
                roots,
            )
            complete = tree.num_frontier == 0
            if complete or (deadline is not None and time.perf_counter() >= deadline):
                break
        return best

    def _subgame_tree(
        self, roots: list[tuple[State, float]], cut: int, gadget: tuple[int, np.ndarray] | None
    ) -> tuple[GameTree, frozenset] | None:
        """The subgame below ``roots`` cut where public keys reach length ``cut``, and the
        public states cut (None when it has more than ``max_subgame_nodes`` nodes). Without
        a gadget the structure over the same root histories is built once and reused
        with the new beliefs and frontier values (:func:`reweighted_subgame`)."""
        key = None
        if gadget is None:
            single = len(roots) == 1 and roots[0][1] == 1.0
            key = (tuple(_hashable(state.history()) for state, _ in roots), cut, single)
            cached = self.structures.get(key)
            if cached is not None:
                if cached is SubgameTooLarge:
                    return None
                tree, cut_keys = cached
                return reweighted_subgame(tree, [w for _, w in roots], self.leaf_value), cut_keys
        frontier_keys: set[tuple] = set()

        def frontier(state: State) -> bool:
            public = state.public_state_key()
            if len(public) < cut:
                return False
            frontier_keys.add(public)
            return True

        try:
            tree = build_subgame_tree(
                self.game,
                [(s.clone(), w) for s, w in roots],
                frontier,
                self.leaf_value,
                max_nodes=self.options.max_subgame_nodes,
                gadget=gadget,
                keep_states=self.options.resolve == "gadget" or self.pbs_value is not None,
            )
        except SubgameTooLarge:
            if key is not None:
                self.structures.put(key, SubgameTooLarge)
            return None
        built = (tree, frozenset(frontier_keys))
        if key is not None:
            self.structures.put(key, built)
        return built

    def _cfr(self, tree: GameTree, iterations: int) -> np.ndarray:
        solver = CFRSolver(tree, variant="cfr+")
        if self.prior is not None:
            info = self.game.info
            scale = info.max_utility - info.min_utility
            states = tree.representative_states()
            gadget_infosets = set(tree.gadget_infosets.tolist())
            for infoset, (state, player) in enumerate(zip(states, tree.infoset_player)):
                if infoset in gadget_infosets:  # terminate-or-follow: no prior
                    continue
                probabilities = self._prior_probabilities(state, int(player)) or {}
                start, stop = tree.infoset_slot_start[infoset], tree.infoset_slot_start[infoset + 1]
                for slot in range(start, stop):
                    solver.cumulative_regret[slot] = scale * probabilities.get(
                        int(tree.slot_action[slot]), 0.0
                    )
        if self.pbs_value is not None:
            return solve_with_pbs_values(
                tree, self.pbs_value, iterations, solver, deadline=self.deadline
            )[0]
        for done in range(0, iterations, CFR_CHUNK):  # the deadline is read between chunks
            check_deadline(self.deadline, "ReBeL solve")
            solver.iterate(min(CFR_CHUNK, iterations - done))
        return solver.average_policy().slot_probabilities


def _hashable(history) -> tuple:
    """A history as a dictionary key (joint actions may come as lists)."""
    return tuple(tuple(entry) if isinstance(entry, list) else entry for entry in history)


class SubgameStructures:
    """The most recently used subgame trees by (root histories, cut, single root), shared
    by the searches of one trainer or agent: beliefs and frontier values change between
    solves of one public state, the tree below its histories does not."""

    def __init__(self, max_entries: int = 32):
        self.max_entries = max_entries
        self._entries: OrderedDict[tuple, Any] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: tuple) -> Any:
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
        return entry

    def put(self, key: tuple, entry: Any) -> None:
        self._entries[key] = entry
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)


def rebel_policy(search: ReBeLSearch, tree: GameTree | None = None) -> TabularPolicy:
    """The search run at every information set of the whole game (small games only)."""
    tree = tree or GameTree.build(search.game)
    states = tree.representative_states()
    mapping = {}
    for (player, key), state in zip(tree.infoset_keys, states):
        probabilities = search._infoset_policy(player, key, state.public_state_key(), None)
        mapping[(player, key)] = probabilities or {
            int(a): 1.0 for a in tree.infoset_legal_actions(tree.infoset_index[(player, key)])
        }
    return TabularPolicy.from_mapping(tree, mapping)


def rebel_exploitability(search: ReBeLSearch) -> float:
    """Exact exploitability of :func:`rebel_policy`."""
    tree = GameTree.build(search.game)
    return exploitability(tree, rebel_policy(search, tree))
