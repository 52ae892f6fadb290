"""Simulation-based search on any game model (GDL sheets included): Monte Carlo, Monte
Carlo with memory, and UCT, following the lecture "Spielen allgemeiner Spiele" (Kissmann),
on GDL's goal scale 0..100 (:func:`~agents.search.classic.goal_values`).

- **Monte Carlo** (:class:`MonteCarloSearch`, spec ``mc``): random playouts from the
  current state; the searcher's first move goes round-robin over its legal moves (the
  lecture's example expands each move equally often), everything else is uniformly
  random; the move with the best mean goal is played (example: means 60/55/35 after
  2/2/2 runs -> move 1). Nothing is kept between runs.
- **Monte Carlo with memory** (:class:`TreeSearch` with ``selection="random"``, spec
  ``mc-memory``): each run adds the first node it reaches outside a tree (one node per
  run, for memory's sake); inside the tree moves stay uniformly random, every tree node
  on the run's path updates its statistics, and the tree is kept from move to move (the
  subtree of the state actually reached is reused).
- **UCT** (Kocsis & Szepesvári 2006; :class:`TreeSearch` with ``selection="ucb"``, spec
  ``uct``): the same tree, but at a tree node a mover tries an untried move first (at
  random), else maximises ``Q(s, m) + C * sqrt(ln N(s) / N(s, m))``; ``C`` (``c=``) is
  configurable (default 40, CadiaPlayer's, Finnsson & Björnsson 2008, on the 0..100
  scale). The playout's terminal goals are backed up through the tree.

Players. Turn-taking games (GDL writes every step as a joint move; the one player with
more than one legal move is the mover) keep one tree, each node the statistics of its
mover, visits and mean goal per move: all players' means live in one tree. Simultaneous
moves, ``simultaneous=``:

- ``"decoupled"`` (default; statistics per player): every mover at a node keeps its own
  visits and mean per own move and selects by UCB on them alone; the joint choice leads
  to the child (the lecture's example: player 1 a 7/71, b 8/78; player 2 a 3/83, b 5/64,
  c 7/26).
- ``"trees"`` (one tree per player, Finnsson & Björnsson 2008): each player's statistics
  live in its own tree whose nodes are the player's information states, so a node merges
  every state the player cannot tell apart; the actual successor is computed from the
  joint move. On a GDL-I sheet an information state names the whole history, so both
  modes select alike (tested); on GDL-II determinisations they differ.

Single-player games keep the *best* goal seen below each move instead of the mean
(selection uses it as ``Q``), record the best full path (tree path and playout), and stop
the search as soon as a path reaches 100; the agent then follows that path without
searching again (only on games without chance, where the path is certain).

The move played: the best mean (best maximum for one player) for Monte Carlo and Monte
Carlo with memory, as in the lecture; the most visited move for UCT (ties: the best
mean). Runs stop at the iteration budget, the time budget, or the GGP deadline.
"""

from __future__ import annotations

import math
import time
from collections.abc import Hashable
from typing import TypeVar

import numpy as np

from agents.search import register_spec
from agents.search.classic import (
    GOAL_MAX,
    ClassicSearchAgent,
    apply_choices,
    deadline_of,
    goal_values,
    parse_spec,
    playout_goals,
)
from hiddenenvs.game import CHANCE, TERMINAL, ChanceMode, Game, State, sample_chance_outcome

DEFAULT_EXPLORATION = 40.0


def _out_of_budget(done: int, iterations: int | None, deadline: float) -> bool:
    return (iterations is not None and done >= iterations) or time.monotonic() >= deadline


class MonteCarloSearch:
    """Flat Monte Carlo (module docstring). ``search`` returns ``(action, means, counts)``."""

    def __init__(self, game: Game, player: int, seed: int | None = None):
        self.game = game
        self.player = player
        self.rng = np.random.default_rng(seed)

    def search(self, state: State, iterations: int | None = None, deadline: float = math.inf):
        if iterations is None and deadline == math.inf:
            raise ValueError("Monte Carlo search needs a budget: iterations, seconds or a deadline")
        legal = state.legal_actions(self.player)
        totals, counts = np.zeros(len(legal)), np.zeros(len(legal))
        done = 0
        while not _out_of_budget(done, iterations, deadline):
            k = done % len(legal)
            child = state.clone()
            choices = {p: self._random(child.legal_actions(p)) for p in child.movers()}
            choices[self.player] = legal[k]
            apply_choices(child, choices)
            totals[k] += playout_goals(child, self.rng)[self.player]
            counts[k] += 1
            done += 1
        means = np.divide(totals, counts, out=np.full(len(legal), -1.0), where=counts > 0)
        return legal[int(np.argmax(means))], means, counts

    def _random(self, actions: list[int]) -> int:
        return actions[int(self.rng.integers(len(actions)))]


class _Stats:
    """One mover's statistics at one node: legal moves, visits, goal sums, best goals."""

    __slots__ = ("legal", "visits", "total", "best")

    def __init__(self, legal: list[int]):
        self.legal = legal
        self.visits = np.zeros(len(legal))
        self.total = np.zeros(len(legal))
        self.best = np.full(len(legal), -1.0)

    def means(self) -> np.ndarray:
        return np.divide(
            self.total, self.visits, out=np.full(len(self.legal), -1.0), where=self.visits > 0
        )


Key = TypeVar("Key", bound=Hashable)


def _stats_at(table: dict[Key, _Stats], key: Key, state: State, mover: int) -> _Stats:
    """``table[key]``, made (``mover``'s legal actions at ``state``) on the first visit."""
    stats = table.get(key)
    if stats is None:
        stats = table[key] = _Stats(list(state.legal_actions(mover)))
    return stats


class _Node:
    """A tree node: per mover its statistics (decoupled mode), children by history entry."""

    __slots__ = ("stats", "children")

    def __init__(self):
        self.stats: dict[int, _Stats] = {}
        self.children: dict = {}


class TreeSearch:
    """Monte Carlo with memory (``selection="random"``) or UCT (``"ucb"``); module docstring.

    ``search(state, iterations, deadline)`` runs from ``state``, reusing the subtree of
    the previous search when ``state`` lies below its root, and returns the chosen
    action. ``root_statistics(player)`` gives ``(legal, visits, means)`` at the root.
    """

    def __init__(
        self,
        game: Game,
        player: int,
        selection: str = "ucb",
        exploration: float = DEFAULT_EXPLORATION,
        simultaneous: str = "decoupled",
        seed: int | None = None,
    ):
        if selection not in ("ucb", "random"):
            raise ValueError(f"tree search: selection must be 'ucb' or 'random', got {selection!r}")
        if simultaneous not in ("decoupled", "trees"):
            raise ValueError(
                f"tree search: simultaneous must be 'decoupled' or 'trees', got {simultaneous!r}"
            )
        if not exploration >= 0:
            raise ValueError(f"tree search: the UCT constant must be >= 0, got {exploration!r}")
        self.game = game
        self.player = player
        self.selection = selection
        self.exploration = exploration
        self.simultaneous = simultaneous
        self.single_player = game.info.num_players == 1
        self.rng = np.random.default_rng(seed)
        self.root = _Node()
        self.root_history: tuple | None = None
        self.trees: list[dict[tuple, _Stats]] = [{} for _ in range(game.info.num_players)]
        self.best_score = -1.0
        self.best_path: tuple = ()
        self.nodes = 1

    # ---- driver -------------------------------------------------------------------------
    def search(
        self, state: State, iterations: int | None = None, deadline: float = math.inf
    ) -> int:
        if iterations is None and deadline == math.inf:
            raise ValueError("tree search needs a budget: iterations, seconds or a deadline")
        self._move_root(state.history())
        done = 0
        while not _out_of_budget(done, iterations, deadline):
            self._run(state)
            done += 1
            if self.single_player and self.best_score >= GOAL_MAX:
                break  # a path to 100: nothing better exists
        legal, visits, values = self.root_statistics(self.player, state)
        if self.selection == "ucb" and not self.single_player:
            order = np.lexsort((-values, -visits))  # most visits, then best mean
        else:
            order = np.argsort(-values, kind="stable")
        return legal[int(order[0])]

    def planned_action(self, history: tuple) -> int | None:
        """A single-player game without chance: the next move of a stored path to 100
        from ``history`` (None when there is none)."""
        if not self.single_player or self.game.info.chance_mode is not ChanceMode.DETERMINISTIC:
            return None
        self._move_root(history)
        if self.best_score < GOAL_MAX or not self.best_path:
            return None
        return self.best_path[0][0]

    def _move_root(self, history: tuple) -> None:
        """Reuse the subtree at ``history`` if the tree holds it, else start afresh."""
        previous = self.root_history or ()
        reusable = self.root_history is not None and history[: len(previous)] == previous
        node = self.root if reusable else None
        for entry in history[len(previous) :]:
            node = node.children.get(entry) if node is not None else None
        if node is None:
            node = _Node()
            self.trees = [{} for _ in range(self.game.info.num_players)]
            self.best_score, self.best_path = -1.0, ()
        elif self.best_path[: len(history) - len(previous)] == history[len(previous) :]:
            self.best_path = self.best_path[len(history) - len(previous) :]
        else:
            self.best_score, self.best_path = -1.0, ()
        self.root, self.root_history = node, tuple(history)

    def root_statistics(self, player: int, state: State):
        """``(legal, visits, values)`` of ``player`` at the root (values: means, or best goals
        in single-player games; -1 where unvisited)."""
        stats = self._stats(self.root, state, player)
        values = stats.best if self.single_player else stats.means()
        return stats.legal, stats.visits, values

    # ---- one run ------------------------------------------------------------------------
    def _run(self, root_state: State) -> None:
        state = root_state.clone()
        node, path, entries = self.root, [], []
        entry: tuple | int
        while True:
            current = state.current_player()
            if current == TERMINAL:
                goals = goal_values(state)
                break
            if current == CHANCE:
                entry = sample_chance_outcome(state, self.rng)
                state.apply_action(entry)
            else:
                choices = {}
                for mover in state.movers():
                    stats = self._stats(node, state, mover)
                    k = self._select(stats)
                    path.append((stats, k, mover))
                    choices[mover] = stats.legal[k]
                entry = apply_choices(state, choices)
            entries.append(entry)
            child = node.children.get(entry)
            if child is None:  # the one node this run adds; a playout values it
                node.children[entry] = _Node()
                self.nodes += 1
                goals = self._playout(state, entries)
                break
            node = child
        if self.single_player and goals[0] > self.best_score:  # the best full path so far
            self.best_score, self.best_path = float(goals[0]), tuple(entries)
        for stats, k, mover in path:
            stats.visits[k] += 1
            stats.total[k] += goals[mover]
            stats.best[k] = max(stats.best[k], goals[mover])

    def _playout(self, state: State, entries: list) -> np.ndarray:
        """Goals of a random playout from ``state``; with one player, its moves are added to
        ``entries`` (the run's path, kept when it is the best so far)."""
        if not self.single_player:
            return playout_goals(state, self.rng)
        state = state.clone()
        entry: tuple | int
        while not state.is_terminal():
            if state.current_player() == CHANCE:
                entry = sample_chance_outcome(state, self.rng)
                state.apply_action(entry)
            else:
                legal = state.legal_actions(0)
                entry = apply_choices(state, {0: legal[int(self.rng.integers(len(legal)))]})
            entries.append(entry)
        return goal_values(state)

    def _stats(self, node: _Node, state: State, mover: int) -> _Stats:
        if self.simultaneous == "trees":  # the mover's own tree, keyed by its information state
            return _stats_at(self.trees[mover], state.information_state_key(mover), state, mover)
        return _stats_at(node.stats, mover, state, mover)

    def _select(self, stats: _Stats) -> int:
        if self.selection == "random":
            return int(self.rng.integers(len(stats.legal)))
        untried = np.flatnonzero(stats.visits == 0)
        if len(untried):
            return int(untried[self.rng.integers(len(untried))])
        values = stats.best if self.single_player else stats.total / stats.visits
        scores = values + self.exploration * np.sqrt(np.log(stats.visits.sum()) / stats.visits)
        return int(np.argmax(scores))  # ties: the first move


class MonteCarloAgent(ClassicSearchAgent):
    """A seat played by :class:`MonteCarloSearch` (spec ``mc:1s`` or ``mc:2000`` playouts)."""

    def __init__(
        self,
        game: Game,
        player: int,
        iterations: int | None = None,
        seconds: float | None = None,
        seed: int | None = None,
    ):
        super().__init__(game, player, seed)
        self.iterations, self.seconds = iterations, seconds
        self.searcher = MonteCarloSearch(game, player)

    def choose(self, state: State, player: int) -> int:
        self.searcher.player, self.searcher.rng = player, self.rng
        deadline = deadline_of(self.seconds, self.deadline)
        return self.searcher.search(state, self.iterations, deadline)[0]


class TreeSearchAgent(ClassicSearchAgent):
    """A seat played by :class:`TreeSearch`: UCT (spec ``uct:1s``, ``uct:2000,c=40``,
    ``uct:1s,simultaneous=trees``) or Monte Carlo with memory (``mc-memory:1s``).

    The tree is kept through the match (the reached subtree is reused).
    """

    def __init__(
        self,
        game: Game,
        player: int,
        iterations: int | None = None,
        seconds: float | None = None,
        selection: str = "ucb",
        exploration: float = DEFAULT_EXPLORATION,
        simultaneous: str = "decoupled",
        seed: int | None = None,
    ):
        super().__init__(game, player, seed)
        self.iterations, self.seconds = iterations, seconds
        self.searcher = TreeSearch(game, player, selection, exploration, simultaneous)

    def choose(self, state: State, player: int) -> int:
        searcher = self.searcher
        if player != searcher.player:  # another seat: nothing in the tree applies
            searcher.root_history = None
        searcher.player, searcher.rng = player, self.rng
        planned = searcher.planned_action(state.history())
        if planned is not None:
            return planned
        return searcher.search(state, self.iterations, deadline_of(self.seconds, self.deadline))


@register_spec("mc")
def _build_monte_carlo(argument: str, game: Game, player: int, seed: int | None) -> MonteCarloAgent:
    iterations, seconds, _ = parse_spec("mc", argument, {})
    return MonteCarloAgent(game, player, iterations, seconds, seed)


@register_spec("mc-memory")
def _build_memory(argument: str, game: Game, player: int, seed: int | None) -> TreeSearchAgent:
    iterations, seconds, options = parse_spec("mc-memory", argument, {"simultaneous": str})
    return TreeSearchAgent(
        game, player, iterations, seconds, selection="random", seed=seed, **options
    )


@register_spec("uct")
def _build_uct(argument: str, game: Game, player: int, seed: int | None) -> TreeSearchAgent:
    iterations, seconds, options = parse_spec("uct", argument, {"c": float, "simultaneous": str})
    exploration = options.pop("c", DEFAULT_EXPLORATION)
    return TreeSearchAgent(
        game, player, iterations, seconds, exploration=exploration, seed=seed, **options
    )
