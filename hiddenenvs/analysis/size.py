"""How big a game tree is: counted exactly up to a node cap, deterministically.

Algorithms that enumerate the tree (CFR, exact exploitability, the tree backends of MCCFR
and OOS) must know before they start whether the tree fits, and the answer must be true
and the same every time: :func:`tree_size` counts the histories exactly up to a cap (no
clock), so a tree at or under the cap gets its exact size and a larger one "more than the
cap". Counting walks depth first and counts a node's children when it is expanded, before
any child is built: memory is one path of states with their untried moves (a
simultaneous node's joint actions are enumerated lazily), and a node with more children
than the cap stops the count at once (Goofspiel with 1,500 cards: 2.25 million joint
actions at the root).

A tree far larger than the cap is refused without counting to it: Knuth's random-probe
estimator (D. E. Knuth, "Estimating the efficiency of backtrack programs", Mathematics of
Computation 29(129), 1975; along a uniformly random path from the root,
``1 + b_0 + b_0 b_1 + ...`` with ``b_d`` the number of children at depth ``d`` is an
unbiased estimate of the node count) over a fixed number of probes from a fixed seed, so it
too is the same every time, decides only when it lands :data:`FAR_FACTOR` times above the
cap; nearer the cap the tree is counted.

Nodes are histories of the game model: a simultaneous node's children are its joint
actions, a chance node's its outcomes. (:class:`~hiddenenvs.analysis.GameTree`
sequentialises simultaneous moves and so stores a few more nodes.) A game whose chance is
sampled inside the state (``ChanceMode.SAMPLED_STOCHASTIC``) has no enumerable tree.

>>> import hiddenenvs
>>> tree_size(hiddenenvs.load_game("leduc_holdem"), max_nodes=1000).fits(1000)  # stops at 1,000
False
>>> size = tree_size(hiddenenvs.load_game("leduc_holdem"), max_nodes=10_000)
>>> print(size)
1,939 nodes
>>> size.fits(10_000), size.fits(1_000)
(True, False)
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
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
        """Whether the tree is known to have at most ``max_nodes`` nodes: only a count says
        so (a lower bound or an estimate never does)."""
        return self.how == EXACT and self.nodes <= max_nodes

    def __str__(self) -> str:
        if self.how == NOT_ENUMERABLE:
            return "not enumerable (chance is sampled inside the state)"
        if self.how == EXACT:
            return f"{int(self.nodes):,} nodes"
        if self.how == AT_LEAST:
            return f"more than {int(self.nodes):,} nodes"
        return f"about {self.nodes:.2g} nodes (estimated)"


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


def _child_states(state: State, num_players: int) -> Iterator[State]:
    """The children of a non-terminal ``state``, built one at a time."""
    player = state.current_player()
    if player == CHANCE:
        return (state.child(action) for action, _ in state.chance_outcomes())
    if player == SIMULTANEOUS:
        options = [state.legal_actions(p) or [-1] for p in range(num_players)]

        def joint_children() -> Iterator[State]:
            for joint in itertools.product(*options):
                child = state.clone()
                child.apply_actions(list(joint))
                yield child

        return joint_children()
    return (state.child(action) for action in state.legal_actions())


def count_nodes(game: Game, max_nodes: int) -> tuple[int, bool]:
    """Count the tree's nodes exactly, depth first, stopping once the count passes
    ``max_nodes``; returns ``(count, finished)`` (unfinished: more than ``max_nodes``).

    A node's children are counted when it is expanded, so a single wide node stops the
    count before any of its children is built, and memory holds one path only."""
    num_players = game.info.num_players
    root = game.new_initial_state()
    if root.is_terminal():
        return 1, True
    count = 1 + _branching(root, num_players)
    pending = [_child_states(root, num_players)]
    while pending and count <= max_nodes:
        state = next(pending[-1], None)
        if state is None:
            pending.pop()
        elif not state.is_terminal():
            count += _branching(state, num_players)
            pending.append(_child_states(state, num_players))
    return count, count <= max_nodes


def knuth_estimate(game: Game, probes: int, seed: int = 0) -> float:
    """Knuth's estimate of the node count: the mean of ``1 + b_0 + b_0 b_1 + ...`` over
    ``probes`` uniformly random root-to-leaf paths drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    num_players = game.info.num_players
    estimates = []
    for _ in range(probes):
        state, product, estimate = game.new_initial_state(), 1.0, 1.0
        while not state.is_terminal():
            product *= _branching(state, num_players)
            estimate += product
            if math.isinf(estimate):  # so is the mean: the rest of the walk changes nothing
                return math.inf  # (goofspiel num_cards=1,000: 33 s of CPU walked to the end)
            state = _random_child(state, num_players, rng)
        estimates.append(estimate)
    return float(np.mean(estimates))


def external_sampling_nodes(game: Game, probes: int, seed: int = 0) -> float:
    """Knuth's estimate of the nodes one external-sampling MCCFR iteration visits: for each
    traverser, every action at its own nodes (its simultaneous moves too), one sampled
    action or outcome elsewhere; the estimator multiplies branching only at the traverser's
    nodes; ``probes`` paths per traverser drawn from ``seed`` (the same answer every time).
    ``inf`` for a game whose chance is sampled inside the state."""
    if game.info.chance_mode is ChanceMode.SAMPLED_STOCHASTIC:
        return math.inf
    rng = np.random.default_rng(seed)
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
                if math.isinf(estimate):  # so is the total (as in knuth_estimate)
                    return math.inf
                state = _random_child(state, num_players, rng)
            estimates.append(estimate)
        total += float(np.mean(estimates))
    return total


# Counting first stops here; a tree that passes it is sized by Knuth's estimate, and counted
# on to the cap only when the estimate is within FAR_FACTOR of it.
QUICK_COUNT = 50_000
FAR_FACTOR = 10.0
KNUTH_PROBES = 512
# What is known of each game's tree (by spec): its exact size, a lower bound (the nodes a
# stopped count reached), a Knuth estimate.
_KNOWN: dict[str, dict[str, float]] = {}


def tree_size(game: Game, max_nodes: int) -> TreeSize:
    """The size of ``game``'s tree as far as ``max_nodes`` decides it: exact when it has at
    most ``max_nodes`` nodes, else "more than ``max_nodes``" (counted), or Knuth's estimate
    when that lands :data:`FAR_FACTOR` times above ``max_nodes`` (module docstring).
    Deterministic: no clock, a fixed seed; what was learnt is kept per game spec.
    """
    if game.info.chance_mode is ChanceMode.SAMPLED_STOCHASTIC:
        return TreeSize(math.inf, NOT_ENUMERABLE)
    known = _KNOWN.setdefault(str(game.spec), {})

    def settled() -> bool:
        return EXACT in known or known.get(AT_LEAST, 0) > max_nodes

    def count(cap: int) -> None:
        nodes, finished = count_nodes(game, cap)
        if finished:
            known[EXACT] = nodes
        else:  # the count passed the cap: the tree has at least the nodes it reached
            known[AT_LEAST] = max(known.get(AT_LEAST, 0), nodes)

    if not settled() and known.get(AT_LEAST, 0) <= min(max_nodes, QUICK_COUNT):
        count(min(max_nodes, QUICK_COUNT))
    if not settled():
        if ESTIMATED not in known:
            known[ESTIMATED] = knuth_estimate(game, KNUTH_PROBES)
        if known[ESTIMATED] <= FAR_FACTOR * max_nodes:
            count(max_nodes)
    if EXACT in known:
        return TreeSize(known[EXACT], EXACT)
    if known.get(AT_LEAST, 0) > max_nodes:
        return TreeSize(float(max_nodes), AT_LEAST)
    return TreeSize(max(known[ESTIMATED], float(known.get(AT_LEAST, 0))), ESTIMATED)
