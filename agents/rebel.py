"""ReBeL-style search for any game of the model: one belief-weighted subgame per decision.

The GDL-II ReBeL paper (``shared/research`` S0, its Alg. 1 and Sect. 3) samples perfect-
information states consistent with a role's percepts, solves each sampled state with
depth-limited CFR (goals at terminals, a value network at the frontier, CFR started from
a policy network) and averages the per-state policies. Solving each state on its own is
*strategy fusion*: in Monty Hall every sampled state knows where the car is, so the
averaged policy switches with p = 2/3 only. This module builds one subgame per decision
instead (the issue's "beyond the paper (a)"):

- **Chance root over beliefs.** The subgame's root is a chance node over the histories
  ``h`` consistent with the searcher's *public* state ``S`` (exact enumeration while it
  fits in ``max_root_nodes``), weighted by

      b(h) ∝ π_c(h) · Π_q π_q^σ(h),

  the chance probabilities times every player's reach under the search policy ``σ``
  already computed at the earlier public states of ``S`` (a public belief state as in
  ReBeL, Brown, Bakhtin, Lerer & Gong 2020, Sect. 4; unsafe re-solving: no gadget).
  Restricted to the searcher's information set ``I`` this is the posterior
  ``P(h | I)`` of :mod:`hiddenenvs.beliefs`. Reach under σ is mixed with ``tremble``
  uniform so public states that σ never reaches still get a belief (the limit of
  trembling beliefs). When the exact walk is too large, the root holds ``samples``
  histories drawn from the searcher's posterior by the game's own sampler
  (``game.sample_consistent_history``, exact for the GDL-II forward filter/backward
  sampler, so the importance weight p_model/q_proposal is 1 and a history's weight is
  its count).
- **One information set per role over them.** Every node of the subgame keeps the
  players' real ``information_state_key``, so the searcher's decision is a single
  information set spanning all root histories: the policy is a best response to the
  beliefs (Monty Hall switches with p = 1), not an average of clairvoyant solutions.
- **Depth-limited CFR+** (Tammelin 2014) over the subgame tree
  (:func:`hiddenenvs.analysis.tree.build_subgame_tree`, solved by
  :class:`agents.cfr.CFRSolver`): returns at terminals, ``leaf_value(states)`` at the
  frontier (a value network; by default the mean return of ``rollouts`` uniform random
  playouts), regrets warm-started from ``prior(state, player)`` when given (the paper's
  "CFR initialised from the policy network"; Brown & Sandholm 2016's strategy-based warm
  start), the linear average policy as the answer.
- **Iterative deepening** (the paper's evaluation protocol): depth 1, 2, ... public steps
  until the subgame has no frontier left, the subgame exceeds ``max_subgame_nodes``, the
  ``max_depth`` is reached or the ``seconds`` budget runs out; the deepest finished solve
  answers.

Every public state is solved once and cached, and σ at the earlier public states is
exactly what the searcher computed (or would have computed) there, so the policy is a
deterministic function of the public state: :func:`rebel_policy` runs the search at every
information set of a small game for exact exploitability (``hiddenenvs.analysis``).

Not here yet (see the README, Trainers, ReBeL): the paper's training loop (Alg. 1) with a
shared-trunk value/policy network, the policy-biased proposal sampler with the invalid-
state cache, value networks over public belief states and CFR-D with a safe re-solving
gadget (Brown et al. 2020; Burch, Johanson & Bowling 2014).

>>> import hiddenenvs
>>> game = hiddenenvs.load_game("monty_hall")
>>> search = ReBeLSearch(game, iterations=50)
>>> state = game.new_initial_state()
>>> # ... play to the switch decision, then search.policy(state.seat_view(0)) -> switch
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from agents.base import SearchAgent
from agents.cfr import CFRSolver
from agents.search import parse_budget, register_spec
from hiddenenvs.analysis import GameTree, TabularPolicy, exploitability
from hiddenenvs.analysis.tree import build_subgame_tree
from hiddenenvs.beliefs import _children, action_probability_function, sample_history
from hiddenenvs.game import Game, SeatView, State, random_playout

LeafValue = Callable[[list[State]], np.ndarray]
Prior = Callable[[State, int], Any]
RESOLVE_MODES = ("frontier", "decision")
# A finished solve: subgame tree, σ per infoset-action slot, depth, the public states cut.
Solved = tuple[GameTree, np.ndarray, int, frozenset]


def rollout_values(rollouts: int, seed: int) -> LeafValue:
    """A frontier value without a network: the mean returns of uniform random playouts.

    Seeded per call from ``seed`` so a search is reproducible.
    """
    if rollouts < 1:
        raise ValueError(f"rollouts must be >= 1, got {rollouts}")

    def values(states: list[State]) -> np.ndarray:
        rng = np.random.default_rng(seed)
        return np.array([
            np.mean([random_playout(state.clone(), rng).returns for _ in range(rollouts)], axis=0)
            for state in states
        ])

    return values


class ReBeLSearch:
    """Belief-weighted depth-limited subgame solving, cached per public state.

    Budget per solve: ``iterations`` CFR+ iterations at every depth, deepening while
    ``seconds`` (None: no time limit) allow. ``max_depth`` (None: unlimited) caps the
    depth in public steps. See the module docstring for the method.
    """

    def __init__(
        self,
        game: Game,
        iterations: int = 200,
        seconds: float | None = None,
        max_depth: int | None = None,
        leaf_value: LeafValue | None = None,
        prior: Prior | None = None,
        rollouts: int = 8,
        tremble: float = 1e-6,
        max_root_nodes: int = 50_000,
        max_subgame_nodes: int = 20_000,
        samples: int = 64,
        resolve: str = "frontier",
        seed: int = 0,
    ):
        if iterations < 1:
            raise ValueError(f"iterations must be >= 1, got {iterations}")
        if seconds is not None and seconds <= 0:
            raise ValueError(f"seconds must be positive, got {seconds}")
        if max_depth is not None and max_depth < 1:
            raise ValueError(f"max_depth must be >= 1, got {max_depth}")
        if resolve not in RESOLVE_MODES:
            raise ValueError(f"resolve must be one of {RESOLVE_MODES}, got {resolve!r}")
        if not 0.0 < tremble < 1.0:
            raise ValueError(f"tremble must be in (0, 1), got {tremble}")
        self.game = game
        self.iterations, self.seconds, self.max_depth = iterations, seconds, max_depth
        self.leaf_value = leaf_value or rollout_values(rollouts, seed)
        self.prior = prior
        self.tremble = tremble
        self.max_root_nodes, self.max_subgame_nodes = max_root_nodes, max_subgame_nodes
        self.samples = samples
        self.resolve = resolve
        self.rng = np.random.default_rng(seed)
        self._prior_probabilities = action_probability_function(prior)
        # public state key (or ("sampled", player, key)) -> (subgame tree, σ per slot, depth),
        # None for a public state too large to enumerate
        self._solved: dict[tuple, Solved | None] = {}

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

    def _infoset_policy(self, player: int, key: tuple, public_key: tuple, view: SeatView | None) -> dict[int, float]:
        """σ at ``(player, key)``; {} when the public state is too large to enumerate and no
        seat is given to sample for (beliefs then fall back to the prior)."""
        solved = self._subgame_of(tuple(public_key))
        if solved is None and view is not None:
            # Sampled beliefs depend on the seat's own information: cached per information set.
            sampled_key = ("sampled", player, key)
            if sampled_key not in self._solved:
                self._solved[sampled_key] = self._solve(public_key, self.sampled_beliefs(view))
            solved = self._solved[sampled_key]
        if solved is None:
            return {}
        tree, slots = solved[0], solved[1]
        infoset = tree.infoset_index.get((player, key))
        if infoset is None:  # a sampled subgame that missed this information set
            return {}
        start, stop = tree.infoset_slot_start[infoset], tree.infoset_slot_start[infoset + 1]
        return {int(a): float(p) for a, p in zip(tree.slot_action[start:stop], slots[start:stop])}

    def _subgame_of(self, public_key: tuple) -> Solved | None:
        """The solved subgame whose σ answers at ``public_key`` (solving what is missing).

        ``resolve="frontier"`` (ReBeL's Alg. 1): the first subgame is rooted at the empty
        public state; a public state inside a solved subgame (above its frontier) takes
        that subgame's σ, and one on or below the frontier roots the next subgame at the
        frontier public state on its path. ``resolve="decision"``: every public state is
        re-solved from its own beliefs (the issue's one subgame per decision).
        """
        root = public_key if self.resolve == "decision" else ()
        while True:
            if root not in self._solved:
                self._solved[root] = self._solve(root, self.public_beliefs(root))
            solved = self._solved[root]
            if solved is None or root == public_key:
                return solved
            frontier_keys = solved[3]
            root = next(
                (public_key[:k] for k in range(len(root) + 1, len(public_key) + 1) if public_key[:k] in frontier_keys),
                None,
            )
            if root is None:
                return solved

    # ---- beliefs ------------------------------------------------------------------------
    def _belief_policy(self, state: State, player: int) -> dict[int, float]:
        """σ at an earlier public state, trembled: every legal action keeps some weight."""
        legal = state.legal_actions(player)
        probabilities = self._infoset_policy(
            player, state.information_state_key(player), state.public_state_key(), None
        )
        uniform = self.tremble / len(legal)
        total = sum(probabilities.get(a, 0.0) for a in legal)
        if total <= 0:
            probabilities = self._prior_probabilities(state, player)
            if probabilities is None:
                return {a: 1.0 / len(legal) for a in legal}
            total = sum(probabilities.get(a, 0.0) for a in legal) or 1.0
        return {a: (1 - self.tremble) * probabilities.get(a, 0.0) / total + uniform for a in legal}

    def public_beliefs(self, public_key: tuple) -> list[tuple[State, float]] | None:
        """``[(state, b(h))]`` over the histories with this public state, or None if too many."""
        target = tuple(public_key)
        num_players = self.game.info.num_players
        probabilities_of = lambda state, player: self._belief_policy(state, player)  # noqa: E731
        found: list[tuple[State, float]] = []
        visited = 0
        stack: list[tuple[State, float]] = [(self.game.new_initial_state(), 1.0)]
        while stack:
            state, weight = stack.pop()
            visited += 1
            if visited > self.max_root_nodes:
                return None
            key = state.public_state_key()
            if key != target[: len(key)]:
                continue
            if len(key) == len(target):
                found.append((state, weight))
                continue
            # Every player's reach counts here (own reach too: a public belief state), so
            # the children are weighted for "no one" and each mover's probabilities added.
            for action, child_weight in _children(state, -1, probabilities_of, num_players):
                if child_weight <= 0:
                    continue
                child = state.clone()
                child.apply_actions(action) if isinstance(action, tuple) else child.apply_action(action)
                stack.append((child, weight * child_weight))
        if not found:
            raise ValueError(f"{self.game.spec}: no history has the public state {target!r}")
        total = sum(w for _, w in found)
        return [(state, w / total) for state, w in found]

    def sampled_beliefs(self, view: SeatView) -> list[tuple[State, float]]:
        """``samples`` histories from the seat's posterior (the game's sampler), by count."""
        counts: dict[tuple, int] = {}
        for _ in range(self.samples):
            history = sample_history(self.game, view.player, view.information_state_key, self.rng, self.prior)
            counts[history] = counts.get(history, 0) + 1
        return [(self.game.state_from_history(h), n / self.samples) for h, n in sorted(counts.items(), key=str)]

    # ---- solving ------------------------------------------------------------------------
    def _solve(
        self, public_key: tuple, roots: list[tuple[State, float]] | None
    ) -> Solved | None:
        """Iterative deepening from ``roots``: the deepest finished solve."""
        if roots is None:
            return None
        length = len(public_key)
        deadline = None if self.seconds is None else time.perf_counter() + self.seconds
        depth = 0
        best: Solved | None = None
        while self.max_depth is None or depth < self.max_depth:
            depth += 1
            cut = length + depth
            frontier_keys: set[tuple] = set()

            def frontier(state: State) -> bool:
                key = state.public_state_key()
                if len(key) < cut:
                    return False
                frontier_keys.add(key)
                return True

            try:
                tree = build_subgame_tree(
                    self.game, [(s.clone(), w) for s, w in roots], frontier, self.leaf_value,
                    max_nodes=self.max_subgame_nodes,
                )
            except ValueError:
                if best is None:
                    raise
                break
            best = (tree, self._cfr(tree), depth, frozenset(frontier_keys))
            complete = tree.num_frontier == 0
            if complete or (deadline is not None and time.perf_counter() >= deadline):
                break
        return best

    def _cfr(self, tree: GameTree) -> np.ndarray:
        solver = CFRSolver(tree, variant="cfr+")
        if self.prior is not None:
            info = self.game.info
            scale = info.max_utility - info.min_utility
            states = tree.representative_states()
            for infoset, (state, player) in enumerate(zip(states, tree.infoset_player)):
                probabilities = self._prior_probabilities(state, int(player)) or {}
                start, stop = tree.infoset_slot_start[infoset], tree.infoset_slot_start[infoset + 1]
                for slot in range(start, stop):
                    solver.cumulative_regret[slot] = scale * probabilities.get(int(tree.slot_action[slot]), 0.0)
        solver.iterate(self.iterations)
        return solver.average_policy().slot_probabilities


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


class ReBeLAgent(SearchAgent):
    """ReBeL search as a player. Solves are kept across decisions and matches: with
    enumerated beliefs σ is a fixed function of the public state, so they stay valid."""

    def __init__(self, game: Game, player: int, seed: int | None = None, **options: Any):
        super().__init__(game.info.num_distinct_actions, seed)
        self.game, self.player = game, player
        self.search = ReBeLSearch(game, seed=int(self.rng.integers(2**31)), **options)

    def search_policy(self, view: SeatView) -> np.ndarray:
        return self.search.policy(view)


@register_spec("rebel")
def _build_agent(argument: str, game: Game, player: int, seed: int | None) -> ReBeLAgent:
    iterations, seconds = parse_budget(f"rebel:{argument}", argument)
    if seconds is not None:
        return ReBeLAgent(game, player, seed=seed, seconds=seconds)
    return ReBeLAgent(game, player, seed=seed, iterations=iterations)
