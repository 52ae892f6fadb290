"""Information-set Monte-Carlo tree search (Cowling, Powley & Whitehouse 2012,
"Information Set Monte Carlo Tree Search", IEEE TCIAIG), determinised with the game's
belief sampler.

Each iteration draws a *determinisation*, a history consistent with the searcher's
information-state key (:func:`hiddenenvs.beliefs.sample_history`, uniform over the
others' actions), then runs one MCTS descent on it. Tree nodes are information sets,
keyed by ``(player, information_state_key)`` of the player to move, so one tree
collects the statistics of every determinisation (the multiple-observer form of
their section V: each player's choice is made at its own information set, and no
player's node reveals what it cannot see). Per node and action: visits ``n``, total
reward ``w`` and availability ``m`` (how often the action was legal when the node was
visited, their section IV-B). Selection is UCB1 with availability,

    a = argmax  w(a) / n(a) + c * sqrt(ln m(a) / n(a)),

among the determinisation's legal actions, untried actions first; the first new
information set of a descent is expanded, a uniform random playout finishes the
game, and every visited node's action gets its mover's return, scaled to [0, 1] by
the game's utility bounds. At a simultaneous node each mover selects at its own
information set (decoupled UCT). The move played is the most visited action at the
searcher's information set; the tree is rebuilt for every decision.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from agents.base import SearchAgent
from agents.search import parse_budget, register_spec
from agents.search.tables import apply_choices, movers_and_joint
from hiddenenvs.beliefs import sample_history
from hiddenenvs.game import (
    CHANCE,
    Game,
    SeatView,
    State,
    random_playout,
    sample_chance_outcome,
)


class _Node:
    __slots__ = ("legal", "visits", "reward", "available")

    def __init__(self, legal: list[int]):
        self.legal = legal
        self.visits = np.zeros(len(legal))
        self.reward = np.zeros(len(legal))
        self.available = np.zeros(len(legal))


class ISMCTS:
    """The search (see the module docstring); ``exploration`` is UCB1's ``c``."""

    def __init__(self, game: Game, exploration: float = 0.7, seed: int | None = None):
        self.game = game
        self.exploration = exploration
        self.rng = np.random.default_rng(seed)
        low, high = game.info.min_utility, game.info.max_utility
        self._scale = (low, (high - low) or 1.0)
        self.nodes: dict[tuple, _Node] = {}

    def search(
        self, player: int, key: tuple, iterations: int | None = None, seconds: float | None = None
    ) -> np.ndarray:
        """Visit counts at ``player``'s information set ``key`` (over num_distinct_actions)."""
        if (iterations is None) == (seconds is None):
            raise ValueError("ISMCTS.search needs exactly one budget: iterations or seconds")
        self.nodes = {}
        start, done = time.perf_counter(), 0
        budget_seconds = seconds if seconds is not None else math.inf  # one of the two is given
        while (
            (done < iterations)
            if iterations is not None
            else (time.perf_counter() - start < budget_seconds)
        ):
            history = sample_history(self.game, player, key, self.rng)
            self._descend(self.game.state_from_history(history))
            done += 1
        counts = np.zeros(self.game.info.num_distinct_actions)
        root = self.nodes.get((player, tuple(key)))
        if root is not None:
            counts[root.legal] = root.visits
        return counts

    def _descend(self, state: State) -> None:
        path: list[tuple[_Node, int, int]] = []  # (node, action index, mover)
        expanded = False
        while not state.is_terminal():
            player = state.current_player()
            if player == CHANCE:
                state.apply_action(sample_chance_outcome(state, self.rng))
                continue
            movers, joint = movers_and_joint(state)
            if joint is not None and not movers:  # a simultaneous node where nobody chooses
                state.apply_actions(joint)
                continue
            if expanded:
                random_playout(state, self.rng)
                break
            actions = []
            for mover in movers:
                key = (mover, state.information_state_key(mover))
                node = self.nodes.get(key)
                if node is None:
                    legal = list(
                        state.legal_actions(mover) if joint is not None else state.legal_actions()
                    )
                    node = self.nodes[key] = _Node(legal)
                    expanded = True
                k = self._select(node)
                path.append((node, k, mover))
                actions.append(node.legal[k])
            apply_choices(state, joint, movers, actions)
        returns = state.returns()
        low, width = self._scale
        for node, k, mover in path:
            node.visits[k] += 1
            node.reward[k] += (returns[mover] - low) / width

    def _select(self, node: _Node) -> int:
        # Every action of an information set is legal in each of its histories, so all are available.
        node.available += 1
        untried = np.flatnonzero(node.visits == 0)
        if len(untried):
            return int(untried[self.rng.integers(len(untried))])
        scores = node.reward / node.visits + self.exploration * np.sqrt(
            np.log(node.available) / node.visits
        )
        best = np.flatnonzero(scores == scores.max())
        return int(best[self.rng.integers(len(best))])


class ISMCTSAgent(SearchAgent):
    """IS-MCTS as a player: plays the most visited action (ties split evenly)."""

    def __init__(
        self,
        game: Game,
        player: int,
        iterations: int | None = None,
        seconds: float | None = None,
        exploration: float = 0.7,
        seed: int | None = None,
    ):
        super().__init__(game.info.num_distinct_actions, seed)
        if (iterations is None) == (seconds is None):
            raise ValueError("ISMCTSAgent needs exactly one budget: iterations or seconds per move")
        self.iterations, self.seconds = iterations, seconds
        self.search = ISMCTS(game, exploration, seed=int(self.rng.integers(2**63)))

    def search_policy(self, view: SeatView) -> np.ndarray:
        counts = self.search.search(
            view.player, view.information_state_key, self.iterations, self.seconds
        )
        probabilities = np.zeros(self.num_actions)
        legal = list(view.legal_actions)
        best = [a for a in legal if counts[a] == counts[legal].max()]
        probabilities[best] = 1.0 / len(best)
        return probabilities


@register_spec("ismcts")
def _build_agent(argument: str, game: Game, player: int, seed: int | None) -> Any:
    iterations, seconds = parse_budget(f"ismcts:{argument}", argument)
    return ISMCTSAgent(game, player, iterations=iterations, seconds=seconds, seed=seed)
