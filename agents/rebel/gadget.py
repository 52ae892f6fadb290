"""Safe re-solving for ReBeL: CFR-D's gadget (``resolve="gadget"``).

Re-solving a subgame from beliefs alone (unsafe re-solving, as ReBeL's Alg. 1 in
Brown, Bakhtin, Lerer & Gong 2020, "Combining Deep Reinforcement Learning and Search for Imperfect-Information Games") can make the searcher's strategy more exploitable. The gadget of Burch, Johanson
& Bowling 2014 ("Solving Imperfect Information Games Using Decomposition", CFR-D; the
re-solving of DeepStack, Moravčík et al. 2017) first lets the opponent choose, per
information set, between the counterfactual best-response value the previous subgame
already conceded to it and playing on, so an exact re-solve never concedes more
(Burch et al. 2014, Thm. 2). Partridge & Thielscher, "Hidden Information General Game Playing with Deep Learning and Search" re-solve the same way (CFR-D). :class:`SafeResolving`
is that side of :class:`~agents.rebel.search.ReBeLSearch`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from agents.rebel.options import SearchOptions, Solved
from hiddenenvs.analysis import GameTree, TabularPolicy
from hiddenenvs.analysis.exploitability import (
    best_response,
    edge_probabilities,
    node_values,
    reach_probabilities,
)
from hiddenenvs.game import Game, State


class SafeResolving:
    """The re-solving gadget of :class:`~agents.rebel.search.ReBeLSearch` (a mixin: it
    calls the search's ``_solve`` and ``public_beliefs``)."""

    # What it reads of the search it is part of (set by ReBeLSearch.__init__), and the
    # search's solve and beliefs (ReBeLSearch._solve, PublicBeliefs.public_beliefs).
    game: Game
    options: SearchOptions
    initial_public_key: tuple
    _solved: dict[tuple, Solved | None]
    _solve: Callable[..., Solved | None]
    public_beliefs: Callable[[tuple], list[tuple[State, float]] | None]
    # {id(tree): (tree, {public state: [(node, state)]})} over the kept-states subgames it
    # re-solves from (the tree is held so that its id stays its own).
    _public_state_index: dict[int, tuple[GameTree, dict[tuple, list[tuple[int, State]]]]]

    def _gadget_subgame(self, public_key: tuple, player: int) -> Solved | None:
        """CFR-D's continual re-solving for ``player`` (Burch, Johanson & Bowling 2014;
        DeepStack's re-solving, Moravčík et al. 2017).

        The first subgame (the blueprint) is rooted at the initial state's public state, where the
        beliefs are the chance probabilities. Walking down to ``public_key``, every public
        state where ``player`` acts, and every frontier public state of the subgame above,
        is re-solved with the gadget from that subgame (:meth:`_solve_gadget`), so the
        player's policy at each of its decisions comes from a subgame rooted there.
        Solves are cached per ``(player, root public state)``.
        """
        solved = self._subgame_of_blueprint()
        root: tuple = self.initial_public_key
        while solved is not None and root != public_key:
            tree, frontier_keys = solved[0], solved[3]
            acting = self._states_by_public_state(tree)
            next_root = next(
                (
                    public_key[:k]
                    for k in range(len(root) + 1, len(public_key) + 1)
                    if public_key[:k] in frontier_keys
                    or any(tree.actor[node] == player for node, _ in acting.get(public_key[:k], ()))
                ),
                None,
            )
            if next_root is None:  # the player does not act again before public_key: same subgame
                return solved
            root = next_root
            cache_key = ("gadget", player, root)
            if cache_key not in self._solved:
                self._solved[cache_key] = self._solve_gadget(solved, player, root)
            solved = self._solved[cache_key]
        return solved

    def _subgame_of_blueprint(self) -> Solved | None:
        root = self.initial_public_key
        if root not in self._solved:
            self._solved[root] = self._solve(
                root, self.public_beliefs(root), iterations=self.options.blueprint_budget
            )
        return self._solved[root]

    def _solve_gadget(self, previous: Solved, player: int, public_key: tuple) -> Solved | None:
        """Re-solve at ``public_key`` for ``player`` with the safe re-solving gadget.

        From the previous subgame (tree ``T``, σ): the histories ``h`` of the public state
        in ``T`` and their weights ``w(h) = π_c(h) π_player(h)`` (chance and the searcher
        only: the opponent's reach is what the gadget lets it choose), and for each
        opponent information set ``I`` the value the opponent could already secure there,

            T(I) = Σ_{h∈I} w(h) BR(h) / Σ_{h∈I} w(h),

        with ``BR(h)`` the opponent's counterfactual best response to σ_player in ``T``
        (Burch et al.'s counterfactual best-response values; at ``T``'s frontier, the
        frontier value). The new subgame's chance root draws ``h`` with ``w(h)``, then the
        opponent chooses to terminate for ``T(I)`` or to follow into the subgame. An exact
        solution gives every ``I`` at most ``T(I)``, so re-solving never makes the
        player's strategy more exploitable than σ (Burch et al. 2014, Thm. 2); CFR+'s
        remaining gap is the only slack. None when no history of the public state has
        weight (the player never plays into it: its policy there does not matter).
        """
        tree, slots = previous[0], previous[1]
        opponent = 1 - player
        nodes_states = self._states_by_public_state(tree).get(public_key, [])
        if not nodes_states:
            return None
        nodes = np.array([node for node, _ in nodes_states])
        edges = edge_probabilities(tree, slots)
        reach = reach_probabilities(tree, edges)
        weights = reach[nodes, player] * reach[nodes, -1]
        _, response = best_response(tree, TabularPolicy(tree, slots), opponent)
        values = node_values(tree, edge_probabilities(tree, response.slot_probabilities))[
            nodes, opponent
        ]
        opponent_keys = [state.information_state_key(opponent) for _, state in nodes_states]
        mass: dict[tuple, float] = {}
        secured: dict[tuple, float] = {}
        for key, weight, value in zip(opponent_keys, weights, values):
            mass[key] = mass.get(key, 0.0) + weight
            secured[key] = secured.get(key, 0.0) + weight * value
        keep = np.flatnonzero(weights > 0)
        if len(keep) == 0:
            return None
        total = weights[keep].sum()
        utility_sum = self.game.info.utility_sum or 0.0
        roots, terminate = [], []
        for index in keep:
            key = opponent_keys[index]
            row = np.zeros(2)
            row[opponent] = secured[key] / mass[key]
            row[player] = utility_sum - row[opponent]
            roots.append((nodes_states[index][1], weights[index] / total))
            terminate.append(row)
        return self._solve(public_key, roots, gadget=(opponent, np.array(terminate)))

    def _states_by_public_state(self, tree: GameTree) -> dict[tuple, list[tuple[int, State]]]:
        """``{public state: [(node, state)]}`` over a kept-states subgame's decision and
        frontier nodes (kept per tree)."""
        kept = self._public_state_index.get(id(tree))
        if kept is not None:
            return kept[1]
        index: dict[tuple, list[tuple[int, State]]] = {}
        for node, state in sorted(tree.node_states.items()):
            index.setdefault(tuple(state.public_state_key()), []).append((node, state))
        self._public_state_index[id(tree)] = (tree, index)
        return index
