"""Minimax-family search on any game model (GDL sheets included): minimax, negamax,
alpha-beta, max^n with shallow pruning and soft-max^n, all with iterative deepening.

Following the lecture "Spielen allgemeiner Spiele" (Kissmann), on GDL's
goal scale 0..100 (:func:`agents.search.classic.goal_values`):

- **Minimax** (paranoid view, Korf 1989): the searching player maximises its goal and every
  other player minimises it. For two players whose goals sum to 100 this is exact minimax;
  with more players or other sums it is the pessimistic view the lecture recommends for
  alpha-beta ("alle nicht mit uns kooperierenden Spieler gegen uns").
- **Negamax**: the same values with every node a max node: goals rescaled to ``2g - 100``
  and negated where the player to move changes. Two players, proven constant sum 100.
- **Alpha-beta** on the paranoid tree with the window (0, 100), fail-hard as in the
  lecture (a max node returns β at a cut, a min node α); a negamax form with the window
  (-100, 100) gives ``2v - 100`` of the same value.
- **Max^n** (Luckhardt & Irani 1986): every player maximises its own component; ties go to
  the first child. **Shallow pruning** (Korf 1991): with goals ≥ 0 and their sum at most
  ``S`` (the proven constant sum, else 100 per player), a node whose player already has
  ``b`` makes a child of another player stop once that player has ``≥ S - b``; immediate
  pruning is the case ``b = 0`` (a child worth ``S`` to the mover). No deep pruning.
- **Soft-max^n** (Sturtevant & Bowling 2006): a node backs up the union of its children's
  max^n sets that no sibling set strongly dominates for the player to move
  (``s1`` strongly dominates ``s2`` for ``i`` iff ``v1[i] > v2[i]`` for all ``v1 ∈ s1,
  v2 ∈ s2``). At the root the player takes the non-dominated move with the best worst case.

Simultaneous moves are sequentialised: the searching player moves first and the others
answer knowing its move, in seat order (the lecture's pessimistic view, Schiffel &
Thielscher 2007, which rock-paper-scissors punishes), or, with ``simultaneous="random"``
(minimax, alpha-beta, max^n), the others choose uniformly at random and their moves back
up expectations like chance (the random-opponent model of Kuhlmann, Dresner & Stone 2006). Chance nodes (GDL's ``random``) back up the expectation (expectimax; soft-max^n
refuses them). Depth counts decisions of this sequentialised tree; a non-terminal leaf at
the depth limit is worth 50 to everyone, or the mean of ``playouts`` random playouts.
Iterative deepening (uniform) deepens until the deadline, the depth limit or a search that
reached no depth-limited leaf (then the value is exact); the previous best move is searched
first.

Specs (:func:`agents.specs.load_agent`, ``evaluate.py``, the GGP player): the method
name, then a depth or a time: ``alphabeta:6``, ``maxn:1s``, ``minimax`` (to the end of the
game or the GGP deadline); options ``playouts=<n>`` values depth-limited leaves by ``n``
random playouts (``alphabeta:4,playouts=8``), ``simultaneous=random`` the model above.

>>> import hiddenenvs
>>> game = hiddenenvs.load_game("gdl_tictactoe")
>>> MinimaxSearch(game, player=0, method="alphabeta").search(game.new_initial_state())[1]
50.0
"""

from __future__ import annotations

import math
import time

import numpy as np

from agents.search import register_spec
from agents.search.classic import (
    GOAL_MAX,
    ClassicSearchAgent,
    TimeUp,
    apply_choices,
    deadline_of,
    goal_sum_bound,
    goal_values,
    parse_spec,
    playout_goals,
)
from hiddenenvs.game import CHANCE, SIMULTANEOUS, TERMINAL, Game, State

METHODS = ("minimax", "negamax", "alphabeta", "negamax-alphabeta", "maxn", "softmaxn")
NEUTRAL = GOAL_MAX / 2  # value of an unexplored leaf without playouts: the window's midpoint


class Ply:
    """A node of the game tree with simultaneous moves made one mover at a time.

    ``first`` (if it is a mover) chooses before the others, who choose in seat order;
    ``chosen`` holds the actions chosen so far at the underlying simultaneous node.
    """

    __slots__ = ("chosen", "order", "state")

    def __init__(self, state: State, first: int | None, chosen: tuple = (), order=None):
        while state.current_player() == SIMULTANEOUS and not state.movers():
            state = state.clone()  # nobody has a choice: play the forced joint move
            apply_choices(state, {})
        self.state = state
        self.chosen = chosen
        if order is None:
            order = tuple(sorted(state.movers(), key=lambda p: (p != first, p)))
        self.order = order

    def to_move(self) -> int:
        current = self.state.current_player()
        return current if current in (CHANCE, TERMINAL) else self.order[len(self.chosen)]

    def children(self, first: int | None):
        """``(action, probability, child)`` for every action of the player to move."""
        state = self.state
        mover = self.to_move()
        if mover == CHANCE:
            for action, probability in state.chance_outcomes():
                child = state.clone()
                child.apply_action(action)
                yield action, probability, Ply(child, first)
            return
        legal = state.legal_actions(mover)
        for action in legal:  # probability: a uniformly random mover's (random opponents)
            chosen = self.chosen + (action,)
            if len(chosen) < len(self.order):
                yield action, 1.0 / len(legal), Ply(state, first, chosen, self.order)
            else:
                child = state.clone()
                apply_choices(child, dict(zip(self.order, chosen)))
                yield action, 1.0 / len(legal), Ply(child, first)


def strongly_dominates(first: frozenset, second: frozenset, player: int) -> bool:
    """Every value of ``first`` beats every value of ``second`` for ``player``."""
    return min(v[player] for v in first) > max(v[player] for v in second)


def weakly_dominates(first: frozenset, second: frozenset, player: int) -> bool:
    """``first`` is never worse for ``player`` and sometimes better."""
    return min(v[player] for v in first) >= max(v[player] for v in second) and max(
        v[player] for v in first
    ) > min(v[player] for v in second)


def soft_maxn_union(sets: list[frozenset], player: int) -> frozenset:
    """The union of the sets that no other set strongly dominates for ``player``."""
    kept = [s for s in sets if not any(strongly_dominates(t, s, player) for t in sets)]
    return frozenset().union(*kept)


class MinimaxSearch:
    """One player's minimax-family search (see the module docstring).

    ``search(state)`` returns ``(action, value, depth)``: the chosen action, its backed-up
    value (a goal 0..100; for negamax ``2g - 100``; a tuple for max^n; a set for
    soft-max^n) and the depth of the last completed iteration. ``nodes`` counts the
    nodes visited and ``pruned`` the max^n shallow cuts.
    """

    def __init__(
        self,
        game: Game,
        player: int,
        method: str = "alphabeta",
        max_depth: int | None = None,
        playouts: int = 0,
        pruning: bool = True,
        simultaneous: str = "paranoid",
        seed: int | None = None,
    ):
        if method not in METHODS:
            raise ValueError(f"minimax search: method must be one of {METHODS}, got {method!r}")
        if simultaneous not in ("paranoid", "random"):
            raise ValueError(
                f"minimax search: simultaneous must be 'paranoid' or 'random', got {simultaneous!r}"
            )
        if simultaneous == "random" and method not in ("minimax", "alphabeta", "maxn"):
            raise ValueError(
                f"minimax search: simultaneous='random' works with minimax, "
                f"alphabeta and maxn, not {method}"
            )
        if max_depth is not None and max_depth < 1:
            raise ValueError(f"minimax search: max_depth must be >= 1, got {max_depth}")
        sum_bound = goal_sum_bound(game)
        if method.startswith("negamax") and (
            game.info.num_players != 2 or abs(sum_bound - GOAL_MAX) > 1e-9
        ):
            raise ValueError(
                f"{game.NAME}: negamax needs two players whose goals provably sum "
                f"to 100 (this game: {game.info.num_players} players, "
                f"{game.info.utility.value}); use alphabeta (paranoid) or maxn"
            )
        self.game = game
        self.player = player
        self.method = method
        self.max_depth = max_depth
        self.playouts = playouts
        self.pruning = pruning
        self.random_opponents = simultaneous == "random"
        self.sum_bound = sum_bound
        self.rng = np.random.default_rng(seed)
        self.deadline = math.inf
        self.nodes = 0
        self.pruned = 0
        self._leaf_reached = False

    # ---- driver -------------------------------------------------------------------
    def search(self, state: State, deadline: float = math.inf):
        """Iterative deepening from ``state`` (``player`` must have a choice there)."""
        self.deadline = deadline
        root = Ply(state, self.player)
        if root.to_move() != self.player:
            raise ValueError(f"{self.game.NAME}: player {self.player} is not to move here")
        best, value, completed = root.state.legal_actions(self.player)[0], None, 0
        depth = 0
        while self.max_depth is None or depth < self.max_depth:
            depth += 1
            self._leaf_reached = False
            try:
                best, value = self._root(root, depth, preferred=best)
            except TimeUp:
                break
            completed = depth
            if not self._leaf_reached:  # solved: a deeper search gives the same answer
                break
        return best, value, completed

    def _root(self, root: Ply, depth: int, preferred: int):
        children = {action: child for action, _, child in root.children(self.player)}
        order = [preferred] + [a for a in children if a != preferred]
        player = self.player
        if self.method == "softmaxn":
            sets = {a: self.soft_maxn(children[a], depth - 1) for a in order}
            candidates = [
                a
                for a in order
                if not any(strongly_dominates(sets[b], sets[a], player) for b in order)
            ]
            best = max(candidates, key=lambda a: (min(v[player] for v in sets[a]), -order.index(a)))
            return best, sets[best]
        if self.method == "maxn":
            best, best_value = order[0], None
            for action in order:
                bound = self._child_bound(root, children[action], best_value)
                goals = self.maxn(children[action], depth - 1, bound)
                if best_value is None or goals[player] > best_value[player]:
                    best, best_value = action, goals
            assert best_value is not None  # a decision node has a legal action
            return best, tuple(best_value)
        if self.method in ("alphabeta", "negamax-alphabeta"):
            negamax = self.method == "negamax-alphabeta"
            alpha, beta = (-GOAL_MAX, GOAL_MAX) if negamax else (0.0, GOAL_MAX)
            best = order[0]
            for action in order:
                value = (
                    self.negamax_alphabeta(children[action], depth - 1, alpha, beta, player)
                    if negamax
                    else self.alphabeta(children[action], depth - 1, alpha, beta)
                )
                if value > alpha:
                    alpha, best = value, action
                if alpha >= beta:
                    break
            return best, alpha
        values = [
            self.negamax(children[a], depth - 1, player)
            if self.method == "negamax"
            else self.minimax(children[a], depth - 1)
            for a in order
        ]
        index = int(np.argmax(values))
        return order[index], values[index]

    # ---- shared pieces ---------------------------------------------------------------
    def _random_opponent(self, ply: Ply, mover: int) -> bool:
        """Another mover of a simultaneous move, modelled as choosing uniformly at random."""
        return self.random_opponents and len(ply.order) > 1 and mover != self.player

    def _tick(self) -> None:
        self.nodes += 1
        if not self.nodes & 63 and time.monotonic() > self.deadline:
            raise TimeUp

    def _leaf(self, ply: Ply) -> np.ndarray:
        """Goals at a depth-limited leaf: 50 each, or the mean of random playouts."""
        self._leaf_reached = True
        if not self.playouts:
            return np.full(self.game.info.num_players, NEUTRAL)
        return np.mean([playout_goals(ply.state, self.rng) for _ in range(self.playouts)], axis=0)

    # ---- paranoid minimax and alpha-beta (value: the searching player's goal) ---------
    def minimax(self, ply: Ply, depth: int) -> float:
        self._tick()
        mover = ply.to_move()
        if mover == TERMINAL:
            return float(goal_values(ply.state)[self.player])
        if depth == 0:
            return float(self._leaf(ply)[self.player])
        if mover == CHANCE or self._random_opponent(ply, mover):
            return sum(p * self.minimax(child, depth) for _, p, child in ply.children(self.player))
        values = [self.minimax(child, depth - 1) for _, _, child in ply.children(self.player)]
        return max(values) if mover == self.player else min(values)

    def alphabeta(self, ply: Ply, depth: int, alpha: float, beta: float) -> float:
        self._tick()
        mover = ply.to_move()
        if mover == TERMINAL:
            return float(goal_values(ply.state)[self.player])
        if depth == 0:
            return float(self._leaf(ply)[self.player])
        if mover == CHANCE or self._random_opponent(ply, mover):  # expectation, clamped (fail-hard)
            value = sum(
                p * self.alphabeta(child, depth, 0.0, GOAL_MAX)
                for _, p, child in ply.children(self.player)
            )
            return min(max(value, alpha), beta)
        if mover == self.player:  # max node
            for _, _, child in ply.children(self.player):
                value = self.alphabeta(child, depth - 1, alpha, beta)
                if value >= beta:
                    return beta  # β-cut
                alpha = max(alpha, value)
            return alpha
        for _, _, child in ply.children(self.player):  # min node
            value = self.alphabeta(child, depth - 1, alpha, beta)
            if value <= alpha:
                return alpha  # α-cut
            beta = min(beta, value)
        return beta

    # ---- negamax (value 2g - 100 for ``me``) -------------------------------------------
    def negamax(self, ply: Ply, depth: int, me: int) -> float:
        mover = ply.to_move()
        if mover >= 0 and mover != me:
            return -self.negamax(ply, depth, mover)
        self._tick()
        if mover == TERMINAL:
            return 2.0 * goal_values(ply.state)[me] - GOAL_MAX
        if depth == 0:
            return 2.0 * self._leaf(ply)[me] - GOAL_MAX
        if mover == CHANCE:
            return sum(
                p * self.negamax(child, depth, me) for _, p, child in ply.children(self.player)
            )
        return max(self.negamax(child, depth - 1, me) for _, _, child in ply.children(self.player))

    def negamax_alphabeta(self, ply: Ply, depth: int, alpha: float, beta: float, me: int) -> float:
        mover = ply.to_move()
        if mover >= 0 and mover != me:
            return -self.negamax_alphabeta(ply, depth, -beta, -alpha, mover)
        self._tick()
        if mover == TERMINAL:
            return 2.0 * goal_values(ply.state)[me] - GOAL_MAX
        if depth == 0:
            return 2.0 * self._leaf(ply)[me] - GOAL_MAX
        if mover == CHANCE:
            value = sum(
                p * self.negamax_alphabeta(child, depth, -GOAL_MAX, GOAL_MAX, me)
                for _, p, child in ply.children(self.player)
            )
            return min(max(value, alpha), beta)
        for _, _, child in ply.children(self.player):
            value = self.negamax_alphabeta(child, depth - 1, alpha, beta, me)
            if value >= beta:
                return beta
            alpha = max(alpha, value)
        return alpha

    # ---- max^n with shallow pruning ------------------------------------------------------
    def _child_bound(self, parent: Ply, child: Ply, best: np.ndarray | None) -> float:
        """Korf's bound for ``child``: its mover may stop at ``S - best[parent mover]``."""
        mover = parent.to_move()
        if not self.pruning or best is None or child.to_move() in (mover, CHANCE, TERMINAL):
            return self.sum_bound
        return self.sum_bound - best[mover]

    def maxn(self, ply: Ply, depth: int, bound: float) -> np.ndarray:
        self._tick()
        mover = ply.to_move()
        if mover == TERMINAL:
            return goal_values(ply.state)
        if depth == 0:
            return self._leaf(ply)
        if mover == CHANCE or self._random_opponent(ply, mover):  # every outcome counts: no pruning
            return sum(
                p * self.maxn(child, depth, self.sum_bound)
                for _, p, child in ply.children(self.player)
            )
        best: np.ndarray | None = None
        for _, _, child in ply.children(self.player):
            if best is not None and self.pruning and best[mover] >= bound:
                self.pruned += 1  # the parent's player gets at most S - bound from here
                break
            value = self.maxn(child, depth - 1, self._child_bound(ply, child, best))
            if best is None or value[mover] > best[mover]:  # ties: the first child
                best = value
        assert best is not None  # a decision node has a legal action
        return best

    # ---- soft-max^n -------------------------------------------------------------------------
    def soft_maxn(self, ply: Ply, depth: int) -> frozenset:
        self._tick()
        mover = ply.to_move()
        if mover == TERMINAL:
            return frozenset([tuple(goal_values(ply.state).tolist())])
        if depth == 0:
            return frozenset([tuple(self._leaf(ply).tolist())])
        if mover == CHANCE:
            raise ValueError(
                f"{self.game.NAME}: soft-max^n has no rule for chance nodes; use maxn or alphabeta"
            )
        return soft_maxn_union(
            [self.soft_maxn(child, depth - 1) for _, _, child in ply.children(self.player)], mover
        )


class MinimaxAgent(ClassicSearchAgent):
    """A seat played by :class:`MinimaxSearch` (specs ``alphabeta:6``, ``maxn:1s``, ``minimax``).

    ``max_depth`` limits the iterative deepening, ``seconds`` the time per move (either,
    both, or neither: then the search runs to the end of the game or the GGP deadline).
    """

    def __init__(
        self,
        game: Game,
        player: int,
        method: str = "alphabeta",
        max_depth: int | None = None,
        seconds: float | None = None,
        playouts: int = 0,
        simultaneous: str = "paranoid",
        seed: int | None = None,
    ):
        super().__init__(game, player, seed)
        self.searcher = MinimaxSearch(
            game, player, method, max_depth, playouts, simultaneous=simultaneous
        )
        self.seconds = seconds

    def choose(self, state: State, player: int) -> int:
        self.searcher.player = player
        self.searcher.rng = self.rng  # playouts draw from the agent's stream
        return self.searcher.search(state, deadline_of(self.seconds, self.deadline))[0]


def _builder(method: str):
    def build(argument: str, game: Game, player: int, seed: int | None) -> MinimaxAgent:
        depth, seconds, options = parse_spec(
            method, argument, {"playouts": int, "simultaneous": str}
        )
        return MinimaxAgent(
            game, player, method, max_depth=depth, seconds=seconds, seed=seed, **options
        )

    return build


for _method in METHODS:
    register_spec(_method)(_builder(_method))
