"""The whole game tree as flat arrays, for exact vectorised analysis.

Exact best responses and CFR touch every history of a game at every iteration. Walking
Python ``State`` objects for that is slow, so the tree is enumerated once into arrays and
every later pass is a handful of numpy operations per depth level.

Simultaneous nodes are sequentialised: the movers choose one after another in player
order, each at a decision node whose information set is its own
``information_state_key`` of the unchanged state, so no mover learns the others' choice.
This is the standard conversion and leaves values, best responses and equilibria intact.

Layout. Nodes are stored level by level (every node of depth ``d`` before any of depth
``d + 1``); the children of a node are contiguous, and sibling blocks appear in the order
of their parents. Per node (length ``num_nodes``):

==================== ========================================================================
``parent``           index of the parent, -1 at the root
``actor``            the player to act (0..n-1), ``CHANCE``, or ``TERMINAL`` at leaves
``infoset``          the node's information set at decision nodes, else -1
``edge_action``      action on the edge from the parent (-1 at the root); at sequentialised
                     simultaneous nodes, the mover's own action
``edge_slot``        index of ``(infoset, action)`` of the parent's decision, -1 after chance
``chance_probability`` probability of the edge from a chance parent, 1 otherwise
``terminal_returns`` ``(num_nodes, num_players)``: returns at leaves, 0 elsewhere
==================== ========================================================================

Per information set (length ``num_infosets``): ``infoset_player``, ``infoset_keys`` (the
``(player, information_state_key)`` pairs), ``infoset_node`` (a representative node) and
``infoset_slot_start`` (length ``num_infosets + 1``: the slots of infoset ``i`` are
``infoset_slot_start[i]:infoset_slot_start[i+1]``). Per slot (an infoset-action pair):
``slot_infoset`` and ``slot_action``; slots of one infoset are sorted by action.

A game may supply its own, faster builder by defining ``Game.build_game_tree()``
returning a ``GameTree`` made with :meth:`GameTree.from_arrays`; it must equal the
generic builder's tree (the tests of such games compare them on small parameters).

Building checks the game as it goes: every history of an information set must have
the same legal actions, and the player must have perfect recall (all histories of an
information set share the player's own previous information set and action). A game
that breaks either gets an error naming the information set.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from hiddenenvs.analysis.size import tree_size
from hiddenenvs.game import CHANCE, SIMULTANEOUS, TERMINAL, Game, State

# The game's attribute that holds its tree once built (GameTree.ready_or_fast reads it).
_CACHE_ATTRIBUTE = "_hiddenenvs_game_tree"


@dataclass
class _Level:
    start: int
    stop: int
    # For the block of children in this level: offsets (relative to start) where a new
    # parent's children begin, and those parents.
    group_offsets: np.ndarray
    group_parents: np.ndarray


class GameTree:
    """A fully enumerated game tree (see the module docstring for the layout)."""

    game: Game
    num_players: int
    # Per node.
    parent: np.ndarray
    actor: np.ndarray
    infoset: np.ndarray
    edge_action: np.ndarray
    edge_slot: np.ndarray
    chance_probability: np.ndarray
    terminal_returns: np.ndarray
    depth: np.ndarray
    node_of_input: np.ndarray  # position in from_arrays' input -> node index
    parent_actor_column: np.ndarray  # the parent's actor's column in a reach array
    own_decisions_above: np.ndarray  # [player, node]
    levels: list[_Level]
    terminal_nodes: np.ndarray
    player_child_nodes: list[np.ndarray]  # per player: the children of its decision nodes
    # Per information set, and per slot.
    infoset_player: np.ndarray
    infoset_keys: list[tuple[int, Hashable]]
    infoset_index: dict[tuple[int, Hashable], int]
    infoset_node: np.ndarray
    infoset_slot_start: np.ndarray
    slot_infoset: np.ndarray
    slot_action: np.ndarray
    _representative_states: list[State] | None
    _last_own_slot: np.ndarray
    _best_response_plans: dict[int, list]  # per player, kept by the best response
    # Subgames (build_subgame_tree) only; node_states only with keep_states.
    num_frontier: int
    frontier_nodes: np.ndarray
    frontier_states: list[State]
    belief_root: bool
    gadget_infosets: np.ndarray
    node_states: dict[int, State]

    def __init__(self):
        raise TypeError("use GameTree.build(game) or GameTree.from_arrays(...)")

    # ---- construction -------------------------------------------------------------
    @classmethod
    def build(cls, game: Game) -> GameTree:
        """The tree of ``game``, built once and cached on the game object."""
        cached = getattr(game, _CACHE_ATTRIBUTE, None)
        if cached is not None:
            return cached
        builder = getattr(game, "build_game_tree", None)
        tree = builder() if builder is not None else _build_generic(game)
        setattr(game, _CACHE_ATTRIBUTE, tree)
        return tree

    @staticmethod
    def ready_or_fast(game: Game) -> bool:
        """Whether :meth:`build` costs little for ``game``: its tree is already built, or the
        game supplies its own builder (``Game.build_game_tree``)."""
        return (
            getattr(game, _CACHE_ATTRIBUTE, None) is not None
            or getattr(game, "build_game_tree", None) is not None
        )

    @classmethod
    def from_arrays(
        cls,
        game: Game,
        parent: np.ndarray,
        actor: np.ndarray,
        infoset: np.ndarray,
        edge_action: np.ndarray,
        chance_probability: np.ndarray,
        terminal_returns: np.ndarray,
        infoset_player: np.ndarray,
        infoset_keys: list[tuple[int, Hashable]],
        infoset_legal_actions: list[np.ndarray],
        representative_states: list[State] | None = None,
    ) -> GameTree:
        """Assemble a tree from per-node arrays in any order where parents precede children.

        Nodes are reordered level by level here, and slots are derived from
        ``infoset_legal_actions``; ``edge_slot`` comes from the parent's infoset and the
        edge action.
        """
        tree = object.__new__(cls)
        tree.game = game
        tree.num_players = game.info.num_players
        parent = np.asarray(parent, dtype=np.int64)
        num_nodes = len(parent)
        depth = np.zeros(num_nodes, dtype=np.int64)
        ancestor = parent.copy()
        while (ancestor >= 0).any():  # one pass per level of the tree
            alive = ancestor >= 0
            depth += alive
            ancestor[alive] = parent[ancestor[alive]]
        order = np.argsort(depth, kind="stable")
        new_index = np.empty(num_nodes, dtype=np.int64)
        new_index[order] = np.arange(num_nodes)
        old_parent = parent[order]
        tree.parent = np.where(old_parent >= 0, new_index[np.maximum(old_parent, 0)], -1)
        tree.node_of_input = new_index  # input position -> node index
        tree.depth = depth[order]
        tree.actor = np.asarray(actor, dtype=np.int64)[order]
        tree.infoset = np.asarray(infoset, dtype=np.int64)[order]
        tree.edge_action = np.asarray(edge_action, dtype=np.int64)[order]
        tree.chance_probability = np.asarray(chance_probability, dtype=np.float64)[order]
        tree.terminal_returns = np.asarray(terminal_returns, dtype=np.float64)[order]

        tree.infoset_player = np.asarray(infoset_player, dtype=np.int64)
        tree.infoset_keys = list(infoset_keys)
        tree.infoset_index = {key: i for i, key in enumerate(tree.infoset_keys)}
        counts = np.array([len(a) for a in infoset_legal_actions], dtype=np.int64)
        tree.infoset_slot_start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        tree.slot_action = (
            np.concatenate([np.asarray(a, dtype=np.int64) for a in infoset_legal_actions])
            if infoset_legal_actions
            else np.zeros(0, dtype=np.int64)
        )
        tree.slot_infoset = np.repeat(np.arange(len(counts)), counts)
        tree._representative_states = representative_states
        tree._finish()
        return tree

    def _finish(self) -> None:
        num_nodes = len(self.parent)
        num_actions = self.game.info.num_distinct_actions
        # edge_slot via a dense (infoset, action) -> slot table.
        slot_table = np.full((self.num_infosets, num_actions), -1, dtype=np.int64)
        slot_table[self.slot_infoset, self.slot_action] = np.arange(self.num_slots)
        self.edge_slot = np.full(num_nodes, -1, dtype=np.int64)
        has_parent = self.parent >= 0
        parent_infoset = np.full(num_nodes, -1, dtype=np.int64)
        parent_infoset[has_parent] = self.infoset[self.parent[has_parent]]
        decision_edge = parent_infoset >= 0
        self.edge_slot[decision_edge] = slot_table[
            parent_infoset[decision_edge], self.edge_action[decision_edge]
        ]
        if (self.edge_slot[decision_edge] < 0).any():
            node = int(np.flatnonzero(decision_edge & (self.edge_slot < 0))[0])
            raise ValueError(
                f"{self.game.NAME}: action {self.edge_action[node]} taken at information set "
                f"{self.infoset_keys[parent_infoset[node]]} is not among its legal actions"
            )
        # Column of the parent's actor in a reach array (chance is the last column; -1 at the root).
        parent_actor = np.where(has_parent, self.actor[np.maximum(self.parent, 0)], TERMINAL)
        self.parent_actor_column = np.where(
            parent_actor == CHANCE, self.num_players, np.where(has_parent, parent_actor, -1)
        )

        # Levels and the parent groups of each level's children.
        level_starts: np.ndarray | list[int] = (
            np.flatnonzero(np.diff(self.depth, prepend=-1)) if num_nodes else []
        )
        bounds = list(level_starts) + [num_nodes]
        self.levels = []
        for start, stop in zip(bounds[:-1], bounds[1:]):
            parents = self.parent[start:stop]
            if start == 0:
                offsets = np.zeros(0, dtype=np.int64)
                group_parents = np.zeros(0, dtype=np.int64)
            else:
                offsets = np.flatnonzero(np.diff(parents, prepend=-1)).astype(np.int64)
                group_parents = parents[offsets]
            self.levels.append(_Level(int(start), int(stop), offsets, group_parents))

        self.terminal_nodes = np.flatnonzero(self.actor == TERMINAL)
        self.infoset_node = np.full(self.num_infosets, -1, dtype=np.int64)
        decision_nodes = np.flatnonzero(self.infoset >= 0)
        seen, first = np.unique(self.infoset[decision_nodes], return_index=True)
        self.infoset_node[seen] = decision_nodes[first]
        # Children of each player's decision nodes, for regret and best-response sums.
        self.player_child_nodes = [
            np.flatnonzero(parent_actor == player) for player in range(self.num_players)
        ]
        self._last_own_slot = self._propagate_last_own_slots()
        self._check_perfect_recall()
        self._best_response_plans = {}

    def _propagate_last_own_slots(self) -> np.ndarray:
        """``[player, node]``: the player's last (infoset, action) slot above node, or -1.

        Also fills ``own_decisions_above[player, node]``, the number of the player's own
        decisions on the path to the node.
        """
        last = np.full((self.num_players, len(self.parent)), -1, dtype=np.int64)
        self.own_decisions_above = np.zeros((self.num_players, len(self.parent)), dtype=np.int64)
        for level in self.levels[1:]:
            block = slice(level.start, level.stop)
            parents = self.parent[block]
            last[:, block] = last[:, parents]
            self.own_decisions_above[:, block] = self.own_decisions_above[:, parents]
            columns = self.parent_actor_column[block]
            own = columns < self.num_players
            rows = columns[own]
            nodes = np.arange(level.start, level.stop)[own]
            last[rows, nodes] = self.edge_slot[nodes]
            self.own_decisions_above[rows, nodes] += 1
        return last

    def _check_perfect_recall(self) -> None:
        decision_nodes = np.flatnonzero(self.infoset >= 0)
        infosets = self.infoset[decision_nodes]
        players = self.infoset_player[infosets]
        previous = self._last_own_slot[players, decision_nodes]
        expected = previous[np.searchsorted(decision_nodes, self.infoset_node[infosets])]
        bad = np.flatnonzero(previous != expected)
        if len(bad):
            infoset = int(infosets[bad[0]])
            raise ValueError(
                f"{self.game.NAME}: information set {self.infoset_keys[infoset]} joins histories "
                f"with different previous moves of player {self.infoset_player[infoset]}; "
                f"information_state_key must give perfect recall"
            )

    # ---- sizes ----------------------------------------------------------------------
    @property
    def num_nodes(self) -> int:
        return len(self.parent)

    @property
    def num_infosets(self) -> int:
        return len(self.infoset_player)

    @property
    def num_slots(self) -> int:
        return len(self.slot_action)

    @property
    def num_terminals(self) -> int:
        return len(self.terminal_nodes)

    def infoset_legal_actions(self, infoset: int | np.integer) -> np.ndarray:
        return self.slot_action[
            self.infoset_slot_start[infoset] : self.infoset_slot_start[infoset + 1]
        ]

    def last_own_slot(self, player: int) -> np.ndarray:
        return self._last_own_slot[player]

    # ---- states behind information sets ------------------------------------------------
    def representative_states(self) -> list[State]:
        """One game state per information set (replayed from the root when not kept)."""
        if self._representative_states is None:
            self._representative_states = [self.replay(node) for node in self.infoset_node]
        return self._representative_states

    def path(self, node: int) -> list[int]:
        nodes = []
        while node >= 0:
            nodes.append(int(node))
            node = self.parent[node]
        return nodes[::-1]

    def replay(self, node: int) -> State:
        """The game state at ``node`` (at a sequentialised simultaneous node: before the joint move)."""
        state = self.game.new_initial_state()
        edges = [int(self.edge_action[n]) for n in self.path(node)[1:]]
        position = 0
        num_players = self.num_players
        while position < len(edges):
            if state.current_player() == SIMULTANEOUS:
                movers = state.movers()
                if position + len(movers) > len(edges):
                    break  # node lies inside this simultaneous move
                joint = [
                    (legal[0] if legal else -1)
                    for legal in (state.legal_actions(p) for p in range(num_players))
                ]
                for offset, mover in enumerate(movers):
                    joint[mover] = edges[position + offset]
                state.apply_actions(joint)
                position += len(movers)
            else:
                state.apply_action(edges[position])
                position += 1
            _skip_forced_simultaneous(state)
        return state

    def __repr__(self) -> str:
        return (
            f"GameTree({self.game!r}: {self.num_nodes} nodes, {self.num_terminals} terminal, "
            f"{self.num_infosets} information sets, {self.num_slots} infoset-actions)"
        )


def _skip_forced_simultaneous(state: State) -> None:
    """Apply simultaneous nodes where nobody has a real choice (the env does the same)."""
    while state.current_player() == SIMULTANEOUS and not state.movers():
        state.apply_actions([-1] * state.game.info.num_players)


class SubgameTooLarge(ValueError):
    """A subgame over its node budget (a search then keeps a shallower one)."""


def _build_generic(game: Game) -> GameTree:
    """Enumerate ``game`` depth-first through its State API (iterative: no recursion limit)."""
    return build_subgame_tree(game, [(game.new_initial_state(), 1.0)])


def build_subgame_tree(
    game: Game,
    roots: list[tuple[State, float]],
    is_frontier: Callable[[State], bool] | None = None,
    leaf_values: Callable[[list[State]], np.ndarray] | None = None,
    max_nodes: int | None = None,
    gadget: tuple[int, np.ndarray] | None = None,
    keep_states: bool = False,
) -> GameTree:
    """The tree below ``roots``, cut at a frontier: a search's subgame.

    ``roots`` are ``(state, probability)`` pairs; several roots hang below a chance node
    with those probabilities (a belief over histories), edge action ``i`` for root ``i``.
    Decision nodes where ``is_frontier(state)`` holds become leaves (actor ``TERMINAL``)
    valued by ``leaf_values(states)`` (one row of returns per state, called once). More
    than ``max_nodes`` nodes raise :class:`SubgameTooLarge` (a ``ValueError``). Information sets are the players'
    ``information_state_key`` as in the whole tree, so a subgame is solved with the same
    CFR and best-response passes.

    ``gadget = (opponent, terminate_returns)`` inserts Burch, Johanson & Bowling's (2014)
    re-solving gadget between the chance root and root ``i``: a decision of ``opponent``
    at the information set ``(opponent, ("gadget", its key at root i))`` between
    *terminate* (action 0: a leaf with returns ``terminate_returns[i]``) and *follow*
    (action 1: the subgame below root ``i``); ``tree.gadget_infosets`` lists those
    information sets. ``keep_states`` keeps the state of every decision and frontier
    node in ``tree.node_states`` (``{node: state}``), to find histories in the tree later.

    The tree keeps ``frontier_nodes`` and ``frontier_states`` (same order) and whether
    its root is the chance node over ``roots`` (``belief_root``), so that
    :func:`reweighted_subgame` can reuse it for new beliefs and frontier values.
    """
    num_players = game.info.num_players
    parent, actor, infoset, edge_action, chance_probability = [], [], [], [], []
    returns_rows: dict[int, np.ndarray] = {}
    infoset_index: dict[tuple[int, Hashable], int] = {}
    infoset_player: list[int] = []
    infoset_keys: list[tuple[int, Hashable]] = []
    infoset_legal: list[np.ndarray] = []
    representatives: list[State] = []

    frontier_nodes: list[int] = []
    frontier_states: list[State] = []
    for root, _ in roots:
        _skip_forced_simultaneous(root)
    # Frame: (state, parent node, edge action, edge chance probability, pending movers, joint).
    belief_root = not (gadget is None and len(roots) == 1 and roots[0][1] == 1.0)
    if not belief_root:
        stack: list[_Frame] = [(roots[0][0], -1, -1, 1.0, None, None)]
    else:
        parent.append(-1)
        edge_action.append(-1)
        chance_probability.append(1.0)
        actor.append(CHANCE)
        infoset.append(-1)
        root_frames: list[_Frame] = [
            (
                root if gadget is None else _GadgetChoice(root, gadget[1][index]),
                0,
                index,
                float(weight),
                None,
                None,
            )
            for index, (root, weight) in enumerate(roots)
        ]
        stack = root_frames[::-1]
    kept: list[tuple[int, State]] = []
    gadget_infosets: list[int] = []

    def infoset_of(key, player: int, legal: np.ndarray, representative: State) -> tuple[int, bool]:
        """The index of information set ``key``, and whether this call created it."""
        index = infoset_index.get(key)
        if index is not None:
            return index, False
        index = len(infoset_keys)
        infoset_index[key] = index
        infoset_keys.append(key)
        infoset_player.append(player)
        infoset_legal.append(legal)
        representatives.append(representative)
        return index, True

    while stack:
        state, parent_node, action, probability, movers, joint = stack.pop()
        node = len(parent)
        if max_nodes is not None and node >= max_nodes:
            raise SubgameTooLarge(f"{game.NAME}: the subgame has more than {max_nodes} nodes")
        parent.append(parent_node)
        edge_action.append(action)
        chance_probability.append(probability)
        if isinstance(state, np.ndarray):  # a gadget's terminate leaf: its returns
            actor.append(TERMINAL)
            infoset.append(-1)
            returns_rows[node] = state
            continue
        if isinstance(state, _GadgetChoice):
            assert gadget is not None  # gadget choices are made only with a gadget
            opponent = gadget[0]
            key = (opponent, ("gadget", state.root.information_state_key(opponent)))
            index, created = infoset_of(key, opponent, np.array([0, 1], dtype=np.int64), state.root)
            if created:
                gadget_infosets.append(index)
            actor.append(opponent)
            infoset.append(index)
            stack.append((state.root, node, 1, 1.0, None, None))
            stack.append(
                (np.asarray(state.terminate_returns, dtype=np.float64), node, 0, 1.0, None, None)
            )
            continue
        player = state.current_player()
        if keep_states and movers is None and player not in (CHANCE, TERMINAL):
            kept.append((node, state))
        if (
            movers is None
            and player not in (CHANCE, TERMINAL)
            and is_frontier is not None
            and is_frontier(state)
        ):
            actor.append(TERMINAL)
            infoset.append(-1)
            frontier_nodes.append(node)
            frontier_states.append(state)
            continue
        if player == SIMULTANEOUS and movers is None:
            movers = state.movers()
            joint = [
                (legal[0] if legal else -1)
                for legal in (state.legal_actions(p) for p in range(num_players))
            ]
        if player == TERMINAL:
            actor.append(TERMINAL)
            infoset.append(-1)
            returns_rows[node] = np.asarray(state.returns(), dtype=np.float64)
            continue
        if player == CHANCE:
            actor.append(CHANCE)
            infoset.append(-1)
            children: list[_Frame] = []
            for outcome, outcome_probability in state.chance_outcomes():
                child = state.clone()
                child._apply_action(outcome)
                _skip_forced_simultaneous(child)
                children.append((child, node, outcome, outcome_probability, None, None))
            stack.extend(reversed(children))
            continue
        mover = movers[0] if movers is not None else player
        legal = state.legal_actions(mover) if movers is not None else state.legal_actions()
        key = (mover, state.information_state_key(mover))
        index, created = infoset_of(key, mover, np.asarray(legal, dtype=np.int64), state)
        if not created and not np.array_equal(infoset_legal[index], legal):
            raise ValueError(
                f"{game.NAME}: information set {key} has legal actions "
                f"{infoset_legal[index].tolist()} in one history and {list(legal)} in another; "
                f"information_state_key must tell these histories apart"
            )
        actor.append(mover)
        infoset.append(index)
        children = []
        for move in legal:
            if movers is None:
                child = state.clone()
                child._apply_action(move)
                _skip_forced_simultaneous(child)
                children.append((child, node, move, 1.0, None, None))
                continue
            assert joint is not None  # a simultaneous node's frames carry movers and joint
            child_joint = joint[:]
            child_joint[mover] = move
            if len(movers) > 1:
                children.append((state, node, move, 1.0, movers[1:], child_joint))
            else:
                child = state.clone()
                child._apply_actions(child_joint)
                _skip_forced_simultaneous(child)
                children.append((child, node, move, 1.0, None, None))
        stack.extend(reversed(children))

    terminal_returns = np.zeros((len(parent), num_players))
    for node, row in returns_rows.items():
        terminal_returns[node] = row
    if frontier_nodes:
        assert leaf_values is not None, "a frontier needs leaf_values"
        terminal_returns[frontier_nodes] = np.asarray(
            leaf_values(frontier_states), dtype=np.float64
        )
    tree = GameTree.from_arrays(
        game,
        parent=np.asarray(parent),
        actor=np.asarray(actor),
        infoset=np.asarray(infoset),
        edge_action=np.asarray(edge_action),
        chance_probability=np.asarray(chance_probability),
        terminal_returns=terminal_returns,
        infoset_player=np.asarray(infoset_player, dtype=np.int64),
        infoset_keys=infoset_keys,
        infoset_legal_actions=infoset_legal,
        representative_states=representatives,
    )
    tree.num_frontier = len(frontier_nodes)  # leaves valued by leaf_values, not by the game
    tree.frontier_nodes = tree.node_of_input[np.asarray(frontier_nodes, dtype=np.int64)]
    tree.frontier_states = frontier_states
    tree.belief_root = belief_root
    tree.gadget_infosets = np.asarray(gadget_infosets, dtype=np.int64)
    if keep_states:
        tree.node_states = {int(tree.node_of_input[node]): state for node, state in kept}
    return tree


def reweighted_subgame(
    tree: GameTree,
    weights: Sequence[float],
    leaf_values: Callable[[list[State]], np.ndarray] | None,
) -> GameTree:
    """A subgame of :func:`build_subgame_tree` over the same root histories with new
    probabilities ``weights`` (one per root, in the order built) and its frontier valued
    anew by ``leaf_values``: equal to building it again, without walking the game.

    The structure (nodes, information sets, kept states) is shared with ``tree``; the
    root probabilities and the returns are the new tree's own.
    """
    if tree.gadget_infosets.size:
        raise ValueError(
            "reweighted_subgame: a re-solving gadget's subgame has no belief root to reweight"
        )
    other = copy.copy(tree)
    other.chance_probability = tree.chance_probability.copy()
    if tree.belief_root:
        children = np.flatnonzero(tree.parent == 0)
        other.chance_probability[children] = np.asarray(weights, dtype=np.float64)[
            tree.edge_action[children]
        ]
    elif len(weights) != 1 or weights[0] != 1.0:
        raise ValueError("reweighted_subgame: the tree was built from one root of probability 1")
    other.terminal_returns = tree.terminal_returns.copy()
    if len(tree.frontier_nodes):
        assert leaf_values is not None, "a frontier needs leaf_values"
        other.terminal_returns[tree.frontier_nodes] = np.asarray(
            leaf_values(tree.frontier_states), dtype=np.float64
        )
    return other


@dataclass
class _GadgetChoice:
    """A pending gadget node of :func:`build_subgame_tree`: its root and terminate returns."""

    root: State
    terminate_returns: np.ndarray


# A frame of build_subgame_tree's stack (a state, a gadget choice or a terminate leaf's
# returns first; see there).
_Frame = tuple[
    State | _GadgetChoice | np.ndarray, int, int, float, list[int] | None, list[int] | None
]


def tree_is_small(game: Game, max_nodes: int) -> bool:
    """Whether the game tree has at most ``max_nodes`` nodes (an exact count that stops
    beyond; :func:`hiddenenvs.analysis.size.tree_size`, so a wide node stops it at once)."""
    return tree_size(game, max_nodes).fits(max_nodes)
