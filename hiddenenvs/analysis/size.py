"""How big a game tree is, within a time budget: counted exactly, or estimated.

Algorithms that enumerate the tree (CFR, exact exploitability, the tree backends of MCCFR
and OOS) must know before they start whether the tree fits. Counting every history is
exact but costs as much as enumerating it; :func:`tree_size` counts up to a node limit
within a time budget and, when the budget runs out first, estimates the size with Knuth's
random-probe estimator (D. E. Knuth, "Estimating the efficiency of backtrack programs",
Mathematics of Computation 29(129), 1975): along a uniformly random path from the root,
``1 + b_0 + b_0 b_1 + b_0 b_1 b_2 + ...`` (``b_d`` the number of children at depth ``d``)
is an unbiased estimate of the number of nodes; the mean over many probes is reported.

Nodes are histories of the game model: a simultaneous node's children are its joint
actions, a chance node's its outcomes. (:class:`~hiddenenvs.analysis.GameTree`
sequentialises simultaneous moves and so stores a few more nodes.) A game whose chance is
sampled inside the state (``ChanceMode.SAMPLED_STOCHASTIC``) has no enumerable tree.

>>> import hiddenenvs
>>> print(tree_size(hiddenenvs.load_game("kuhn_poker")))
58 nodes
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from hiddenenvs.game import CHANCE, SIMULTANEOUS, ChanceMode, Game, State

EXACT = "exact"
AT_LEAST = "at least"
ESTIMATED = "estimated"
NOT_ENUMERABLE = "not enumerable"


@dataclass(frozen=True)
class TreeSize:
    """A game tree's node count: ``how`` says whether ``nodes`` is exact, a lower bound
    (counting stopped at the limit), a Knuth estimate, or infinite (sampled chance)."""

    nodes: float
    how: str

    def fits(self, max_nodes: int) -> bool:
        """Whether the tree has at most ``max_nodes`` nodes (an estimate decides by itself)."""
        if self.how == AT_LEAST:  # counting stopped at the cap: not known to fit
            return False
        return self.nodes <= max_nodes

    def __str__(self) -> str:
        if self.how == NOT_ENUMERABLE:
            return "not enumerable (chance is sampled inside the state)"
        if self.how == EXACT:
            return f"{int(self.nodes):,} nodes"
        if self.how == AT_LEAST:
            return f"more than {int(self.nodes):,} nodes"
        return f"about {self.nodes:.2g} nodes (estimated)"


def _children(state: State, num_players: int) -> list[State]:
    player = state.current_player()
    if player == CHANCE:
        return [state.child(action) for action, _ in state.chance_outcomes()]
    if player == SIMULTANEOUS:
        joints: list[list[int]] = [[]]
        for options in (state.legal_actions(p) or [-1] for p in range(num_players)):
            joints = [joint + [action] for joint in joints for action in options]
        children = []
        for joint in joints:
            child = state.clone()
            child.apply_actions(joint)
            children.append(child)
        return children
    return [state.child(action) for action in state.legal_actions()]


def _branching(state: State, num_players: int) -> int:
    player = state.current_player()
    if player == CHANCE:
        return len(state.chance_outcomes())
    if player == SIMULTANEOUS:
        return math.prod(max(1, len(state.legal_actions(p))) for p in range(num_players))
    return len(state.legal_actions())


def _random_child(state: State, num_players: int, rng: np.random.Generator) -> State:
    player = state.current_player()
    if player == CHANCE:
        outcomes = state.chance_outcomes()
        return state.child(outcomes[int(rng.integers(len(outcomes)))][0])
    if player == SIMULTANEOUS:
        joint = []
        for p in range(num_players):
            options = state.legal_actions(p)
            joint.append(options[int(rng.integers(len(options)))] if options else -1)
        child = state.clone()
        child.apply_actions(joint)
        return child
    options = state.legal_actions()
    return state.child(options[int(rng.integers(len(options)))])


def count_nodes(game: Game, max_nodes: int, seconds: float) -> tuple[int, bool]:
    """Count the tree's nodes depth first, stopping past ``max_nodes`` or after
    ``seconds``; returns ``(count, finished)``."""
    deadline = time.perf_counter() + seconds
    num_players = game.info.num_players
    stack = [game.new_initial_state()]
    count = 0
    while stack:
        state = stack.pop()
        count += 1
        if count > max_nodes or (count % 256 == 0 and time.perf_counter() > deadline):
            return count, False
        if not state.is_terminal():
            stack.extend(_children(state, num_players))
    return count, True


def knuth_estimate(game: Game, probes: int, seconds: float, seed: int = 0) -> float:
    """Knuth's estimate of the node count: the mean of ``1 + b_0 + b_0 b_1 + ...`` over
    up to ``probes`` uniformly random root-to-leaf paths (fewer if ``seconds`` runs out)."""
    rng = np.random.default_rng(seed)
    deadline = time.perf_counter() + seconds
    num_players = game.info.num_players
    estimates = []
    for _ in range(probes):
        state, product, estimate = game.new_initial_state(), 1.0, 1.0
        while not state.is_terminal():
            product *= _branching(state, num_players)
            estimate += product
            state = _random_child(state, num_players, rng)
        estimates.append(estimate)
        if time.perf_counter() > deadline:
            break
    return float(np.mean(estimates))


def external_sampling_nodes(game: Game, probes: int, seconds: float, seed: int = 0) -> float:
    """Knuth's estimate of the nodes one external-sampling MCCFR iteration visits: for each
    traverser, every action at its own nodes (its simultaneous moves too), one sampled
    action or outcome elsewhere; the estimator multiplies branching only at the traverser's
    nodes. ``inf`` for a game whose chance is sampled inside the state."""
    if game.info.chance_mode is ChanceMode.SAMPLED_STOCHASTIC:
        return math.inf
    rng = np.random.default_rng(seed)
    deadline = time.perf_counter() + seconds
    num_players = game.info.num_players
    total = 0.0
    for traverser in range(num_players):
        estimates = []
        for _ in range(probes):
            state, product, estimate = game.new_initial_state(), 1.0, 1.0
            while not state.is_terminal():
                player = state.current_player()
                if player == traverser or (
                    player == SIMULTANEOUS and state.legal_actions(traverser)
                ):
                    product *= max(1, len(state.legal_actions(traverser)))
                estimate += product
                state = _random_child(state, num_players, rng)
            estimates.append(estimate)
            if time.perf_counter() > deadline:
                break
        total += float(np.mean(estimates))
    return total


_CACHE: dict[tuple, TreeSize] = {}


def tree_size(
    game: Game, max_nodes: int = 10_000_000, seconds: float = 1.0, probes: int = 256
) -> TreeSize:
    """The size of ``game``'s tree: counted exactly when the count finishes within
    ``seconds`` and ``max_nodes``; "more than ``max_nodes``" when it stops there; else
    Knuth's estimate from ``probes`` random paths (within another ``seconds``).

    Results are cached per game spec and arguments, so asking twice costs nothing.
    """
    if game.info.chance_mode is ChanceMode.SAMPLED_STOCHASTIC:
        return TreeSize(math.inf, NOT_ENUMERABLE)
    key = (str(game.spec), max_nodes, seconds, probes)
    if key not in _CACHE:
        count, finished = count_nodes(game, max_nodes, seconds)
        if finished:
            size = TreeSize(float(count), EXACT)
        elif count > max_nodes:
            size = TreeSize(float(max_nodes), AT_LEAST)
        else:
            size = TreeSize(max(float(count), knuth_estimate(game, probes, seconds)), ESTIMATED)
        _CACHE[key] = size
    return _CACHE[key]
