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
  histories for the searcher's information set: from the game's exact posterior sampler
  (``sampler="posterior"``; GDL-II: forward filter, backward sampling; weight = count),
  or from the paper's own forward sampler with its invalid-state cache and policy-biased
  normalised proposals (``sampler="proposal"``, :class:`ProposalSampler`), each weighted
  by p_model / q_proposal, or from the paper's evaluation-mode sampler (shuffled child
  lists, reach probabilities stored per node: ``sampler="evaluation"``,
  :class:`EvaluationSampler`), the distinct draws weighted by their reach. With
  ``sampler="particles"`` the root is instead ``samples`` weighted particles over the
  *public* state (:meth:`ReBeLSearch.particle_beliefs`: a resampling particle filter
  with the same weights as the exact walk), one subgame per public state as with
  enumeration, falling back to the posterior sampler for an information set the
  particles missed.
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

Which decisions get a new subgame (``resolve``): with ``"frontier"`` (default; ReBeL's
Alg. 1) the first subgame is rooted at the start of the game and a new one at each
public state on the previous subgame's frontier, so a decision inside a solved subgame
plays its σ (at full depth the first subgame is the whole game: CFR+); with
``"decision"`` every decision re-solves its own subgame from its beliefs (unsafe:
Liar's Dice 1x4f 0.064 exploitable against 0.0007); with ``"gadget"`` (two-player
zero-sum games) every decision is re-solved *safely*, CFR-D style (Burch, Johanson &
Bowling 2014): the new subgame's chance root weighs its histories by chance and the
searcher's reach only, and the opponent first chooses, per information set, between the
counterfactual best-response value the previous subgame already conceded to it and
playing on (:meth:`ReBeLSearch._solve_gadget`), so re-solving cannot make the
searcher's strategy more exploitable (Liar's Dice 1x4f at 200 iterations: 0.0011). Solves are cached by their root
public state, and σ at earlier public states is what the searcher computed (or would
have computed) there, so with enumerated beliefs the policy is a deterministic function
of the public state: :func:`rebel_policy` runs the search at every information set of a
small game for exact exploitability (``hiddenenvs.analysis``).

The paper's training loop (Alg. 1) is :class:`ReBeLLearner` (trainer ``rebel``): a
shared-trunk value/policy network (:class:`ReBeLNetwork`) over the propnet state.
Frontier values per public belief state instead of per history (ReBeL's value network,
recomputed at every CFR iteration): ``pbs_value``, :mod:`agents.rebel_pbs` (enumerated
public states only), trained
through the loop by ``ReBeLLearner`` with ``values: pbs`` (ReBeL's Alg. 1, value side),
its evaluation search re-solving as ``resolve`` says (``gadget``: CFR-D). Not here yet
(see the README, Trainers, ReBeL): PBS values and the gadget over particle beliefs.

>>> import hiddenenvs
>>> game = hiddenenvs.load_game("monty_hall")
>>> state = game.new_initial_state()
>>> state.apply_action(2); state.apply_actions([0])   # car behind door 3; candidate picks door 1
>>> while state.is_chance_node():                      # the host opens a goat door
...     state.apply_action(state.legal_actions()[0])
>>> policy = ReBeLSearch(game, iterations=50).policy(state.seat_view(0))
>>> game.action_to_string(0, int(policy.argmax())), bool(policy.max() > 0.99)
('switch', True)
"""

from __future__ import annotations

import copy
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.base import Learner, SearchAgent, StepReport
from agents.cfr import CFRSolver
from agents.memories import CircularBuffer
from agents.networks import mlp, network_with_weights
from agents.rebel_pbs import (
    PBSValue,
    PBSValueNetwork,
    self_play_examples,
    solve_with_pbs_values,
    train_step,
    zero_values,
)
from agents.search import register_spec
from agents.search.classic import GOAL_MAX, parse_spec, playout_goals
from hiddenenvs.analysis import GameTree, TabularPolicy, exploitability
from hiddenenvs.analysis.exploitability import best_response, edge_probabilities, node_values, reach_probabilities
from hiddenenvs.analysis.tree import SubgameTooLarge, build_subgame_tree, reweighted_subgame
from hiddenenvs.beliefs import _action_weight, _children, action_probability_function, sample_histories
from hiddenenvs.game import CHANCE, SIMULTANEOUS, Game, GameSpec, SeatView, State, draw_index
from hiddenenvs.registry import load_game

LeafValue = Callable[[list[State]], np.ndarray]
Prior = Callable[[State, int], Any]
RESOLVE_MODES = ("frontier", "decision", "gadget")
VALUE_KINDS = ("history", "pbs")
SAMPLERS = ("posterior", "proposal", "evaluation", "particles")
# A finished solve: subgame tree, σ per infoset-action slot, depth, the public states cut,
# the root histories with their beliefs.
Solved = tuple[GameTree, np.ndarray, int, frozenset, list]


def rollout_values(game: Game, rollouts: int, seed: int) -> LeafValue:
    """A frontier value without a network: the mean returns of uniform random playouts
    (GDL: the propnet's compiled depth charge), seeded per call so a search is reproducible."""
    if rollouts < 1:
        raise ValueError(f"rollouts must be >= 1, got {rollouts}")
    info = game.info
    span = (info.max_utility - info.min_utility) / GOAL_MAX

    def values(states: list[State]) -> np.ndarray:
        rng = np.random.default_rng(seed)
        goals = [np.mean([playout_goals(state, rng) for _ in range(rollouts)], axis=0) for state in states]
        return info.min_utility + span * np.array(goals)

    return values


def _reached_children(state: State, probabilities_of, num_players: int):
    """Each child of ``state`` with positive weight (chance times every mover's
    probability, ``hiddenenvs.beliefs``' convention for "no one's own reach left out"),
    as a new state."""
    for action, weight in _children(state, -1, probabilities_of, num_players):
        if weight > 0:
            child = state.clone()
            child.apply_actions(action) if isinstance(action, tuple) else child.apply_action(action)
            yield child, weight


class ProposalSampler:
    """The GDL-II paper's state sampler, with the importance weights it lacked.

    A pass plays forward from the root: chance by its probabilities, the seat's own
    moves and every other player's by the proposal ``q(a) = (f(s, i, a) + 1/|A|) / 2``
    (the paper's policy-biased proposal, normalised; uniform without a policy ``f``), and
    restarts from the root when the seat's information-state key stops matching (a
    percept mismatch). An *invalid-state cache* remembers every history found
    inconsistent, and a history all of whose children are invalid is invalid itself,
    so passes never re-enter a dead end; the proposal is renormalised over the children
    not known invalid. A consistent history ``h`` comes back with weight
    ``p_model(h) / q(h)``: ``p_model`` the chance probabilities times the other players'
    ``model`` policy (uniform when None; the seat's own moves count 1 in both, perfect
    recall makes them the same in every consistent history), ``q`` the product of the
    probabilities the pass drew with. Self-normalised, the weighted draws estimate the
    posterior of :mod:`hiddenenvs.beliefs`; restarts condition on success, which the
    weights do not undo exactly while the cache is still learning (it only grows).
    """

    def __init__(self, game: Game, player: int, information_state_key: tuple,
                 proposal: Prior | None = None, model: Prior | None = None, max_passes: int = 100_000):
        self.game, self.player = game, player
        self.target = tuple(information_state_key)
        self.proposal = action_probability_function(proposal)
        self.model = action_probability_function(model)
        self.max_passes = max_passes
        self.invalid: set[tuple] = set()

    def sample(self, count: int, rng: np.random.Generator) -> list[tuple[tuple, float]]:
        """``count`` consistent histories with their importance weights (unnormalised)."""
        draws = []
        passes = 0
        while len(draws) < count:
            passes += 1
            if passes > self.max_passes or () in self.invalid:
                raise ValueError(
                    f"{self.game.spec}: no history consistent with player {self.player}'s key found in "
                    f"{passes - 1} passes ({len(draws)} of {count} drawn)"
                )
            draw = self._pass(rng)
            if draw is not None:
                draws.append(draw)
        return draws

    def _pass(self, rng: np.random.Generator) -> tuple[tuple, float] | None:
        state, history, weight, known = self.game.new_initial_state(), (), 1.0, 0
        while True:
            key, arrived = self._follow_target(state, history, known)
            if arrived is not None:
                return (history, weight) if arrived else None
            options = [(a, p, q) for a, p, q in self._children(state) if history + (a,) not in self.invalid]
            if not options:
                self._mark_invalid(history)
                return None
            proposal = np.array([q for _, _, q in options])
            index = draw_index(proposal, rng)
            action, model_probability, proposal_probability = options[index]
            weight *= model_probability / (proposal_probability / proposal.sum())
            state.apply_actions(action) if isinstance(action, tuple) else state.apply_action(action)
            history, known = history + (action,), len(key)

    def _follow_target(self, state: State, history: tuple, known: int) -> tuple[tuple, bool | None]:
        """The seat's key at ``state`` and whether the pass arrived: True at the target,
        False off it (``history`` marked invalid), None while it may go on. ``known``: how
        much of the key the pass has already checked."""
        key = state.information_state_key(self.player)
        if key[known:] != self.target[known:len(key)] or len(key) > len(self.target):
            self._mark_invalid(history)
            return key, False
        return key, (True if len(key) == len(self.target) else None)

    def _mark_invalid(self, history: tuple) -> None:
        """Invalidate ``history``, and each ancestor whose children are now all invalid."""
        self.invalid.add(history)
        while history:
            history = history[:-1]
            state = self.game.state_from_history(history)
            if any(history + (a,) not in self.invalid for a, _, _ in self._children(state)):
                return
            self.invalid.add(history)

    def _children(self, state: State) -> list[tuple[Any, float, float]]:
        """``(action or joint, p_model, q_proposal)`` for every child of ``state``."""
        current = state.current_player()
        if current == CHANCE:
            return [(a, p, p) for a, p in state.chance_outcomes()]
        movers = state.movers() if current == SIMULTANEOUS else [current]
        joints: list[tuple[tuple, float, float]] = [((), 1.0, 1.0)]
        for q in range(self.game.info.num_players):
            legal = state.legal_actions(q) if current == SIMULTANEOUS or q == current else []
            if q not in movers:
                options = [(legal[0] if len(legal) == 1 and current != SIMULTANEOUS else -1, 1.0, 1.0)]
            else:
                f = self.proposal(state, q)
                model = self.model(state, q) if q != self.player else None
                options = [
                    (a, 1.0 if q == self.player else _action_weight(model, a, legal),
                     (_action_weight(f, a, legal) + 1.0 / len(legal)) / 2 if f is not None else 1.0 / len(legal))
                    for a in legal
                ]
            joints = [(j + (a,), p * pa, w * qa) for j, p, w in joints for a, pa, qa in options]
        if current != SIMULTANEOUS:
            return [(joint[current], p, q) for joint, p, q in joints]
        return joints


class EvaluationSampler(ProposalSampler):
    """The GDL-II paper's evaluation-mode sampler (S0 Sect. 3.2, "Evaluation Method").

    The training sampler's policy-biased proposal and its invalid-state cache alone make
    the sampled histories follow the proposal (or, unbiased, make every valid leaf
    equally frequent: Monty Hall at 50%), not the play of "unknown other agents". The
    paper's evaluation mode keeps the cache but stores on every node of the sampled tree
    (i) the probability of reaching it from the root and (ii) the list of all its child
    joint moves, shuffled when the node is first accessed: each later access takes the
    next child of the list, so every child is explored exactly once, and only then does
    the node choose its children by their conditional reach probabilities. Here:

    - the reach ``π(h)`` is chance times the other players' ``model`` (uniform when None:
      the paper's naïve sampler), the seat's own moves counting 1, stored per node;
    - after its list is exhausted a node draws among the children not known invalid with
      probability ∝ ``π(child | node)``; while exploring, each of the ``n`` children not
      known invalid counts ``1/n`` (a systematic sample over the shuffled list);
    - every consistent draw comes back with ``π(h) / q(h)``, ``q`` the probability the
      pass chose it with, so the weighted frequencies estimate the posterior
      ``π(h) / Σ π`` whatever the opponents played; :attr:`reach` holds ``π(h)`` of every
      history drawn, so a set of distinct draws can be weighted exactly by its reach.

    Passes restart from the root on a percept mismatch, as in :class:`ProposalSampler`.
    """

    def __init__(self, game: Game, player: int, information_state_key: tuple,
                 model: Prior | None = None, max_passes: int = 100_000):
        super().__init__(game, player, information_state_key, proposal=None, model=model, max_passes=max_passes)
        # history -> [children (action, π(child | node), _), shuffled order, next position]
        self.nodes: dict[tuple, list] = {}
        self.reach: dict[tuple, float] = {(): 1.0}

    def _pass(self, rng: np.random.Generator) -> tuple[tuple, float] | None:
        state, history, chosen, known = self.game.new_initial_state(), (), 1.0, 0
        while True:
            key, arrived = self._follow_target(state, history, known)
            if arrived is not None:
                return (history, self.reach[history] / chosen) if arrived else None
            node = self.nodes.get(history)
            if node is None:
                children = self._children(state)
                node = self.nodes[history] = [children, rng.permutation(len(children)), 0]
            children, order, position = node
            valid = [i for i in range(len(children)) if history + (children[i][0],) not in self.invalid]
            if not valid:
                self._mark_invalid(history)
                return None
            while position < len(order) and history + (children[order[position]][0],) in self.invalid:
                position += 1
            if position < len(order):  # exploring: the next child of the shuffled list
                index = int(order[position])
                node[2] = position + 1
                chosen /= len(valid)
            else:  # explored: by the conditional reach probabilities
                probabilities = np.array([children[i][1] for i in valid])
                if probabilities.sum() <= 0:  # the model never plays into what is left
                    self._mark_invalid(history)
                    return None
                index = valid[draw_index(probabilities, rng)]
                chosen *= children[index][1] / probabilities.sum()
            action, probability, _ = children[index]
            child = history + (action,)
            self.reach.setdefault(child, self.reach[history] * probability)
            state.apply_actions(action) if isinstance(action, tuple) else state.apply_action(action)
            history, known = child, len(key)


class ReBeLSearch:
    """Belief-weighted depth-limited subgame solving, cached per public state.

    Budget per solve: ``iterations`` CFR+ iterations at every depth, deepening while
    ``seconds`` (None: no time limit) allow. ``max_depth`` (None: unlimited) caps the
    depth in public steps. ``pbs_value`` (:mod:`agents.rebel_pbs`) values the frontier per
    information set from the public belief state, recomputed at every CFR iteration,
    instead of ``leaf_value`` per history. ``blueprint_iterations`` (default ``iterations``) budgets the
    first subgame of ``resolve="gadget"`` alone: CFR-D's cheap blueprint, re-solved safely.
    Without ``seconds`` the search builds the ``max_depth`` subgame first (shallower only
    when it does not fit): the intermediate depths would not answer. ``structures``
    (:class:`SubgameStructures`) keeps subgame trees for reuse with new beliefs and values,
    shared between searches when given (a trainer's self-play games).
    See the module docstring for the method.
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
        max_root_nodes: int = 10_000,
        max_subgame_nodes: int = 20_000,
        samples: int = 64,
        resolve: str = "frontier",
        sampler: str = "posterior",
        seed: int = 0,
        blueprint_iterations: int | None = None,
        pbs_value: PBSValue | None = None,
        structures: SubgameStructures | None = None,
    ):
        if iterations < 1:
            raise ValueError(f"iterations must be >= 1, got {iterations}")
        if blueprint_iterations is not None and blueprint_iterations < 1:
            raise ValueError(f"blueprint_iterations must be >= 1, got {blueprint_iterations}")
        if seconds is not None and seconds <= 0:
            raise ValueError(f"seconds must be positive, got {seconds}")
        if max_depth is not None and max_depth < 1:
            raise ValueError(f"max_depth must be >= 1, got {max_depth}")
        if sampler not in SAMPLERS:
            raise ValueError(f"sampler must be one of {SAMPLERS}, got {sampler!r}")
        if resolve not in RESOLVE_MODES:
            raise ValueError(f"resolve must be one of {RESOLVE_MODES}, got {resolve!r}")
        if resolve == "gadget" and not game.info.is_two_player_zero_sum:
            raise ValueError(f"resolve='gadget' needs a two-player zero-sum game; {game.spec} is not")
        if not 0.0 < tremble < 1.0:
            raise ValueError(f"tremble must be in (0, 1), got {tremble}")
        self.game = game
        self.iterations, self.seconds, self.max_depth = iterations, seconds, max_depth
        self.blueprint_iterations = blueprint_iterations or iterations
        self.pbs_value = pbs_value
        if pbs_value is not None:
            if leaf_value is not None:
                raise ValueError("give leaf_value (per history) or pbs_value (per public belief state), not both")
            leaf_value = zero_values(game)  # replaced at every CFR iteration
        self.leaf_value = leaf_value or rollout_values(game, rollouts, seed)
        self.prior = prior
        self.tremble = tremble
        self.max_root_nodes, self.max_subgame_nodes = max_root_nodes, max_subgame_nodes
        self.samples = samples
        self.resolve = resolve
        self.sampler = sampler
        self.rng = np.random.default_rng(seed)
        self._prior_probabilities = action_probability_function(prior)
        # public state key (or ("sampled", player, key)) -> (subgame tree, σ per slot, depth),
        # None for a public state too large to enumerate
        self._solved: dict[tuple, Solved | None] = {}
        self.structures = structures if structures is not None else SubgameStructures()

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
        solved = self._subgame_of(tuple(public_key), player) or self._solved.get(("particles", tuple(public_key)))
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
        if solved is None and self.resolve == "gadget":
            raise ValueError(
                f"{self.game.spec}: resolve='gadget' found no history of public state "
                f"{tuple(view.public_state_key)!r} in the previous subgame (too large to enumerate?)"
            )
        if solved is None and self.sampler == "particles":
            particles_key = ("particles", tuple(view.public_state_key))
            if particles_key not in self._solved:
                self._solved[particles_key] = self._solve(view.public_state_key,
                                                          self.particle_beliefs(view.public_state_key))
            solved = self._solved[particles_key]
            if solved is not None and (view.player, tuple(view.information_state_key)) not in solved[0].infoset_index:
                solved = None  # the particles missed the seat's own information set
        if solved is None:
            # Sampled beliefs depend on the seat's own information: cached per information set.
            sampled_key = ("sampled", view.player, tuple(view.information_state_key))
            if sampled_key not in self._solved:
                self._solved[sampled_key] = self._solve(view.public_state_key, self.sampled_beliefs(view))
            solved = self._solved[sampled_key]
            if solved is None:
                raise ValueError(
                    f"{self.game.spec}: a depth-1 subgame over {self.samples} sampled histories has "
                    f"more than {self.max_subgame_nodes} nodes; raise max_subgame_nodes or lower samples"
                )
        return solved

    def _subgame_of(self, public_key: tuple, player: int) -> Solved | None:
        """The solved subgame whose σ answers for ``player`` at ``public_key`` (solving
        what is missing).

        ``resolve="frontier"`` (ReBeL's Alg. 1): the first subgame is rooted at the empty
        public state; a public state inside a solved subgame (above its frontier) takes
        that subgame's σ, and one on or below the frontier roots the next subgame at the
        frontier public state on its path. ``resolve="decision"``: every public state is
        re-solved from its own beliefs (the issue's one subgame per decision).
        ``resolve="gadget"``: :meth:`_gadget_subgame`.
        """
        if self.resolve == "gadget":
            return self._gadget_subgame(public_key, player)
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

    def _gadget_subgame(self, public_key: tuple, player: int) -> Solved | None:
        """CFR-D's continual re-solving for ``player`` (Burch, Johanson & Bowling 2014;
        DeepStack's re-solving, Moravčík et al. 2017).

        The first subgame (the blueprint) is rooted at the empty public state, where the
        beliefs are the chance probabilities. Walking down to ``public_key``, every public
        state where ``player`` acts, and every frontier public state of the subgame above,
        is re-solved with the gadget from that subgame (:meth:`_solve_gadget`), so the
        player's policy at each of its decisions comes from a subgame rooted there.
        Solves are cached per ``(player, root public state)``.
        """
        solved = self._subgame_of_blueprint()
        root: tuple = ()
        while solved is not None and root != public_key:
            tree, frontier_keys = solved[0], solved[3]
            acting = _states_by_public_state(tree)
            root = next(
                (public_key[:k] for k in range(len(root) + 1, len(public_key) + 1)
                 if public_key[:k] in frontier_keys
                 or any(tree.actor[node] == player for node, _ in acting.get(public_key[:k], ()))),
                None,
            )
            if root is None:  # the player does not act again before public_key: same subgame
                return solved
            cache_key = ("gadget", player, root)
            if cache_key not in self._solved:
                self._solved[cache_key] = self._solve_gadget(solved, player, root)
            solved = self._solved[cache_key]
        return solved

    def _subgame_of_blueprint(self) -> Solved | None:
        if () not in self._solved:
            self._solved[()] = self._solve((), self.public_beliefs(()), iterations=self.blueprint_iterations)
        return self._solved[()]

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
        nodes_states = _states_by_public_state(tree).get(public_key, [])
        if not nodes_states:
            return None
        nodes = np.array([node for node, _ in nodes_states])
        edges = edge_probabilities(tree, slots)
        reach = reach_probabilities(tree, edges)
        weights = reach[nodes, player] * reach[nodes, -1]
        _, response = best_response(tree, TabularPolicy(tree, slots), opponent)
        values = node_values(tree, edge_probabilities(tree, response.slot_probabilities))[nodes, opponent]
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
            for child, child_weight in _reached_children(state, probabilities_of, num_players):
                stack.append((child, weight * child_weight))
        if not found:
            raise ValueError(f"{self.game.spec}: no history has the public state {target!r}")
        total = sum(w for _, w in found)
        return [(state, w / total) for state, w in found]

    def particle_beliefs(self, public_key: tuple) -> list[tuple[State, float]]:
        """At most ``samples`` weighted histories for a public state too large to enumerate:
        a sequential-importance-resampling particle filter over the public belief state.

        Particles start at the root and are expanded child by child, each weighted by
        ``π_c · Π_q π_q`` under the trembled search policy (as :meth:`public_beliefs`),
        children whose public state leaves ``public_key`` dropped; whenever the population
        exceeds ``samples`` it is resampled systematically in proportion to the weights,
        every survivor carrying an equal share of the total (duplicates merged), so the
        weights stay unnormalised posterior masses and estimate ``b(h)`` consistently.
        """
        target = tuple(public_key)
        num_players = self.game.info.num_players
        probabilities_of = lambda state, player: self._belief_policy(state, player)  # noqa: E731
        particles: list[tuple[State, float, bool]] = [(self.game.new_initial_state(), 1.0, False)]
        while not all(done for _, _, done in particles):
            grown = []
            for state, weight, done in particles:
                if done:
                    grown.append((state, weight, True))
                    continue
                for child, child_weight in _reached_children(state, probabilities_of, num_players):
                    key = tuple(child.public_state_key())
                    if key == target[:len(key)]:
                        grown.append((child, weight * child_weight, len(key) == len(target)))
            if not grown:
                raise ValueError(f"{self.game.spec}: no history has the public state {target!r}")
            particles = grown if len(grown) <= self.samples else self._resample(grown)
        total = sum(w for _, w, _ in particles)
        return [(state, w / total) for state, w, _ in particles]

    def _resample(self, particles: list[tuple[State, float, bool]]) -> list[tuple[State, float, bool]]:
        """Systematic resampling to ``samples`` draws of equal weight, duplicates merged."""
        weights = np.array([w for _, w, _ in particles])
        total = weights.sum()
        positions = (self.rng.random() + np.arange(self.samples)) / self.samples
        picks = np.minimum(np.searchsorted(np.cumsum(weights) / total, positions), len(particles) - 1)
        counts = np.bincount(picks, minlength=len(particles))
        return [(particles[i][0], total * counts[i] / self.samples, particles[i][2]) for i in np.flatnonzero(counts)]

    def sampled_beliefs(self, view: SeatView) -> list[tuple[State, float]]:
        """``samples`` histories for the seat's information set, with their weights.

        ``sampler="posterior"``: the game's exact posterior sampler, weighted by count
        (under the uniform opponent model when the prior's is too large for it).
        ``sampler="proposal"``: the paper's forward sampler (:class:`ProposalSampler`),
        weighted by p_model / q_proposal. ``sampler="evaluation"``: the paper's evaluation
        mode (:class:`EvaluationSampler`); the distinct histories drawn, each weighted by
        its stored reach (the posterior restricted to what was drawn).
        """
        if self.sampler == "evaluation":
            sampler = EvaluationSampler(self.game, view.player, view.information_state_key, self.prior)
            draws = [(history, sampler.reach[history]) for history in
                     dict.fromkeys(h for h, _ in sampler.sample(self.samples, self.rng))]
        elif self.sampler == "proposal":
            draws = ProposalSampler(self.game, view.player, view.information_state_key, self.prior,
                                    self.prior).sample(self.samples, self.rng)
        else:
            try:
                histories = sample_histories(self.game, view.player, view.information_state_key, self.rng,
                                             self.samples, self.prior)
            except ValueError:
                if self.prior is None:
                    raise
                # Under a policy the sampler tells apart the other roles' information
                # states too, which can outgrow its node budget late in long games (Meier):
                # the uniform opponent model merges them.
                histories = sample_histories(self.game, view.player, view.information_state_key, self.rng,
                                             self.samples)
            draws = [(history, 1.0) for history in histories]
        weights: dict[tuple, float] = {}
        for history, weight in draws:
            weights[history] = weights.get(history, 0.0) + weight
        total = sum(weights.values())
        return [(self.game.state_from_history(h), w / total) for h, w in sorted(weights.items(), key=str)]

    # ---- solving ------------------------------------------------------------------------
    def _solve(
        self, public_key: tuple, roots: list[tuple[State, float]] | None,
        gadget: tuple[int, np.ndarray] | None = None, iterations: int | None = None,
    ) -> Solved | None:
        """Iterative deepening from ``roots`` (behind a re-solving ``gadget`` when given, see
        :func:`build_subgame_tree`): the deepest finished solve (None when not even depth 1
        fits in ``max_subgame_nodes``)."""
        if roots is None:
            return None
        length = len(public_key)
        if self.seconds is None and self.max_depth is not None:
            # Without a clock only the deepest subgame that fits answers: build it first.
            for depth in range(self.max_depth, 0, -1):
                built = self._subgame_tree(roots, length + depth, gadget)
                if built is not None:
                    return (built[0], self._cfr(built[0], iterations or self.iterations), depth, built[1], roots)
            return None
        deadline = None if self.seconds is None else time.perf_counter() + self.seconds
        depth = 0
        best: Solved | None = None
        while self.max_depth is None or depth < self.max_depth:
            depth += 1
            built = self._subgame_tree(roots, length + depth, gadget)
            if built is None:  # the last depth that fitted answers
                break
            tree = built[0]
            best = (tree, self._cfr(tree, iterations or self.iterations), depth, built[1], roots)
            complete = tree.num_frontier == 0
            if complete or (deadline is not None and time.perf_counter() >= deadline):
                break
        return best

    def _subgame_tree(self, roots: list[tuple[State, float]], cut: int,
                      gadget: tuple[int, np.ndarray] | None) -> tuple[GameTree, frozenset] | None:
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
                tree, frontier_keys = cached
                return reweighted_subgame(tree, [w for _, w in roots], self.leaf_value), frontier_keys
        frontier_keys: set[tuple] = set()

        def frontier(state: State) -> bool:
            public = state.public_state_key()
            if len(public) < cut:
                return False
            frontier_keys.add(public)
            return True

        try:
            tree = build_subgame_tree(
                self.game, [(s.clone(), w) for s, w in roots], frontier, self.leaf_value,
                max_nodes=self.max_subgame_nodes, gadget=gadget,
                keep_states=self.resolve == "gadget" or self.pbs_value is not None,
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
                    solver.cumulative_regret[slot] = scale * probabilities.get(int(tree.slot_action[slot]), 0.0)
        if self.pbs_value is not None:
            return solve_with_pbs_values(tree, self.pbs_value, iterations, solver)[0]
        solver.iterate(iterations)
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


def _states_by_public_state(tree: GameTree) -> dict[tuple, list[tuple[int, State]]]:
    """``{public state: [(node, state)]}`` over a kept-states subgame's decision and
    frontier nodes (cached on the tree)."""
    index = getattr(tree, "_by_public_state", None)
    if index is None:
        index = {}
        for node, state in sorted(tree.node_states.items()):
            index.setdefault(tuple(state.public_state_key()), []).append((node, state))
        tree._by_public_state = index
    return index


# ---- the paper's network and training loop ------------------------------------------------------
def state_features(state: State) -> np.ndarray:
    """The network's input: the propnet's base propositions for GDL-II states (the paper's
    grounded state), else every player's information-state tensor, concatenated (a full
    state for the native games, whose hidden information is the players' private parts)."""
    if hasattr(state, "state_tensor"):
        return np.asarray(state.state_tensor(), dtype=np.float32).ravel()
    return np.concatenate([
        np.asarray(state.information_state_tensor(p), dtype=np.float32).ravel()
        for p in range(state.game.info.num_players)
    ])


class ReBeLNetwork(nn.Module):
    """The paper's shared-trunk network: grounded state -> trunk -> a value head (one linear
    layer, every role) and one policy head per role (one more hidden layer, then logits)."""

    def __init__(self, input_size: int, num_players: int, num_actions: int, hidden_size: int):
        super().__init__()
        self.architecture = {"input_size": input_size, "num_players": num_players,
                             "num_actions": num_actions, "hidden_size": hidden_size}
        self.trunk = nn.Sequential(nn.Linear(input_size, hidden_size), nn.ReLU())
        self.value = nn.Linear(hidden_size, num_players)
        self.policy = nn.ModuleList(
            mlp(hidden_size, [hidden_size], num_actions) for _ in range(num_players)
        )

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Values ``(B, players)`` and logits ``(B, players, actions)``."""
        hidden = self.trunk(features)
        return self.value(hidden), torch.stack([head(hidden) for head in self.policy], dim=1)

    def values(self, features: torch.Tensor) -> torch.Tensor:
        """The value head alone (the search's frontier needs no policy)."""
        return self.value(self.trunk(features))

    def logits(self, features: torch.Tensor, player: int) -> torch.Tensor:
        """One role's policy head alone (CFR's starting policy for that role)."""
        return self.policy[player](self.trunk(features))

    @classmethod
    def from_state_dict(cls, architecture: dict[str, int], weights: dict) -> ReBeLNetwork:
        return network_with_weights(lambda: cls(**{k: int(v) for k, v in architecture.items()}), weights,
                                    "ReBeL network")


class NetworkGuide:
    """A :class:`ReBeLNetwork` as the search's frontier value and CFR's starting policy.

    The value head works in [-1, 1]: utilities are scaled by the game's bounds (GDL goals
    are 0..100), and :meth:`leaf_value` scales back. A role's policy logits are kept per
    input (searches and the belief sampler ask about the same states again and again);
    :meth:`forget` drops them when the network's weights change.
    """

    MAX_KEPT_LOGITS = 1 << 17

    def __init__(self, network: ReBeLNetwork, game: Game):
        self.network = network
        self._logits: dict[tuple[bytes, int], np.ndarray] = {}
        info = game.info
        self.value_offset = (info.max_utility + info.min_utility) / 2
        self.value_scale = max((info.max_utility - info.min_utility) / 2, 1e-9)

    def value_target(self, returns: np.ndarray) -> np.ndarray:
        return (returns - self.value_offset) / self.value_scale

    @torch.no_grad()
    def leaf_value(self, states: list[State]) -> np.ndarray:
        features = torch.from_numpy(np.stack([state_features(state) for state in states]))
        values = self.network.values(features).numpy().astype(np.float64)
        return values * self.value_scale + self.value_offset

    @torch.no_grad()
    def prior(self, state: State, player: int) -> dict[int, float]:
        legal = state.legal_actions(player)
        features = state_features(state)
        key = (features.tobytes(), player)
        logits = self._logits.get(key)
        if logits is None:
            if len(self._logits) >= self.MAX_KEPT_LOGITS:
                self._logits.clear()
            logits = self._logits[key] = self.network.logits(torch.from_numpy(features[None]), player)[0].numpy()
        chosen = logits[legal] - logits[legal].max()
        probabilities = np.exp(chosen) / np.exp(chosen).sum()
        return dict(zip(legal, probabilities.tolist()))

    def forget(self) -> None:
        """Drop the kept logits (call after changing the network's weights)."""
        self._logits.clear()

    def search_options(self) -> dict[str, Any]:
        return {"leaf_value": self.leaf_value, "prior": self.prior}


@dataclass
class ReBeLConfig:
    """ReBeL trainer settings (the paper's Alg. 1 at a small scale)."""

    # "history": the GDL-II paper's value/policy network over one history; "pbs": ReBeL
    # proper's value network over public belief states (agents.rebel_pbs)
    values: str = "history"
    resolve: str = "frontier"  # the evaluation search's re-solving: frontier, decision, gadget
    hidden_size: int = 64  # network width (the paper: 199 for blind tic-tac-toe)
    iterations: int = 50  # CFR+ iterations per subgame solve
    max_depth: int = 2  # public steps per subgame (the value network beyond)
    exploration: float = 0.1  # self-play moves: uniform with this probability, else σ
    batches_per_episode: int = 20  # the paper's 20 minibatches per game
    batch_size: int = 64
    buffer_size: int = 20_000  # newest training examples kept
    learning_rate: float = 1e-3

    def __post_init__(self):
        from agents.config import ConfigError

        for name in ("hidden_size", "iterations", "max_depth", "batches_per_episode", "batch_size", "buffer_size"):
            if getattr(self, name) < 1:
                raise ConfigError(f"trainer.params.{name} must be >= 1, got {getattr(self, name)}")
        if not 0.0 <= self.exploration < 1.0:
            raise ConfigError(f"trainer.params.exploration must be in [0, 1), got {self.exploration}")
        if self.values not in VALUE_KINDS:
            raise ConfigError(f"trainer.params.values must be one of {VALUE_KINDS}, got {self.values!r}")
        if self.resolve not in RESOLVE_MODES:
            raise ConfigError(f"trainer.params.resolve must be one of {RESOLVE_MODES}, got {self.resolve!r}")
        if self.learning_rate <= 0:
            raise ConfigError(f"trainer.params.learning_rate must be positive, got {self.learning_rate}")


class ReBeLLearner(Learner):
    """The training loop, one self-play game per loop step, in two kinds (``values``).

    ``"history"``, the GDL-II paper's Alg. 1: self-play on the game model where every
    decision is a subgame solve guided by the network (:class:`ReBeLNetwork`); each solve
    adds, for every root history h, the example (features(h), v(h) under σ for every
    role, σ at each mover's information set); then ``batches_per_episode`` minibatches of
    squared value error plus policy cross-entropy.

    ``"pbs"``, ReBeL proper (Brown et al. 2020, Alg. 1, value side;
    :mod:`agents.rebel_pbs`): a self-play game over public belief states, each depth-
    limited subgame solved with the PBS value network at its frontier, adds (root PBS,
    information-set values averaged over the iterations) to a replay buffer, and the next
    root is the frontier PBS reached by σ at a random iteration; then
    ``batches_per_episode`` minibatches of squared error. The evaluation policy is the
    search with the network at the frontier, re-solving as ``resolve`` says (``"gadget"``:
    CFR-D's safe re-solving).
    """

    CONFIG_CLASS = ReBeLConfig

    def __init__(self, game: Game, config: ReBeLConfig, seed: int):
        super().__init__(game, config, seed)
        from agents.config import ConfigError

        if config.resolve == "gadget" and not game.info.is_two_player_zero_sum:
            raise ConfigError(f"trainer.params.resolve: 'gadget' needs a two-player zero-sum game; "
                              f"{game.spec} is not")
        torch.manual_seed(seed)
        info = game.info
        self.num_players, self.num_actions = info.num_players, info.num_distinct_actions
        self.pbs: PBSValue | None = None
        if config.values == "pbs":
            try:
                self.pbs = PBSValue(game, hidden_size=config.hidden_size, seed=seed)
            except ValueError as error:
                raise ConfigError(f"trainer.params.values: 'pbs' on {game.spec}: {error}") from None
            self.network = self.pbs.network
            size = int(self.pbs.offsets[-1])  # private states, all roles
            input_size = self.network.architecture["public_size"] + size
            self.buffer = CircularBuffer(config.buffer_size, {
                "features": ((input_size,), np.float32),
                "target": ((size,), np.float32),
                "mask": ((size,), np.float32),
            })
        else:
            input_size = len(state_features(game.new_initial_state()))
            self.network = ReBeLNetwork(input_size, self.num_players, self.num_actions, config.hidden_size)
            self.buffer = CircularBuffer(config.buffer_size, {
                "features": ((input_size,), np.float32),
                "value": ((self.num_players,), np.float32),
                "policy": ((self.num_players, self.num_actions), np.float32),
                "has_policy": ((self.num_players,), np.float32),
            })
            self.guide = NetworkGuide(self.network, game)
        self.optimizer = torch.optim.Adam(self.network.parameters(), lr=config.learning_rate)
        self.rng = np.random.default_rng(seed)
        self.episodes = 0
        self.structures = SubgameStructures()  # subgame trees, reused across self-play games

    @property
    def search_options(self) -> dict[str, Any]:
        return {"iterations": self.config.iterations, "max_depth": self.config.max_depth}

    def search(self, seed: int, resolve: str = "frontier") -> ReBeLSearch:
        guide = {"pbs_value": self.pbs} if self.pbs is not None else self.guide.search_options()
        return ReBeLSearch(self.game, seed=seed, resolve=resolve, structures=self.structures,
                           **self.search_options, **guide)

    def step(self, loop: Any) -> StepReport:
        if self.pbs is not None:
            return self._pbs_step()
        search = self.search(int(self.rng.integers(2**31)))
        state = self.game.new_initial_state()
        examples = 0
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[draw_index([p for _, p in outcomes], self.rng)][0])
                continue
            joint = [-1] * self.num_players
            for player in state.movers():
                view = state.seat_view(player)
                examples += self._add_examples(search.subgame(view))
                probabilities = search.policy(view)[list(view.legal_actions)]
                if self.rng.random() < self.config.exploration:
                    probabilities = np.full(len(probabilities), 1.0 / len(probabilities))
                joint[player] = view.legal_actions[draw_index(probabilities, self.rng)]
            if state.is_simultaneous_node():
                state.apply_actions(joint)
            else:
                state.apply_action(joint[state.current_player()])
        losses = [self._train_batch() for _ in range(self.config.batches_per_episode)]
        self.guide.forget()
        self.episodes += 1
        return StepReport(episodes=1, iterations=1, metrics={
            "loss": float(np.mean(losses)), "examples": float(examples), "buffer": float(len(self.buffer))})

    def _pbs_step(self) -> StepReport:
        config = self.config
        examples = self_play_examples(self.pbs, self.rng, config.max_depth, config.iterations, config.exploration)
        for features, target, mask in examples:
            self.buffer.add(features=features, target=target, mask=mask)
        losses = []
        for _ in range(config.batches_per_episode):
            batch = self.buffer.sample(config.batch_size, self.rng)
            losses.append(train_step(self.pbs, self.optimizer, batch["features"], batch["target"], batch["mask"]))
        self.episodes += 1
        return StepReport(episodes=1, iterations=1, metrics={
            "loss": float(np.mean(losses)), "examples": float(len(examples)), "buffer": float(len(self.buffer))})

    def _add_examples(self, solved: Solved) -> int:
        tree, slots, _, _, roots = solved
        values = node_values(tree, edge_probabilities(tree, slots))
        root_nodes = [0] if tree.actor[0] != CHANCE or len(roots) == 1 else np.flatnonzero(tree.parent == 0)
        for node, (state, _) in zip(root_nodes, roots):
            policy = np.zeros((self.num_players, self.num_actions), dtype=np.float32)
            has_policy = np.zeros(self.num_players, dtype=np.float32)
            for player in state.movers():
                infoset = tree.infoset_index.get((player, state.information_state_key(player)))
                if infoset is not None:
                    start, stop = tree.infoset_slot_start[infoset], tree.infoset_slot_start[infoset + 1]
                    policy[player, tree.slot_action[start:stop]] = slots[start:stop]
                    has_policy[player] = 1.0
            self.buffer.add(features=state_features(state),
                            value=self.guide.value_target(values[node]),
                            policy=policy, has_policy=has_policy)
        return len(roots)

    def _train_batch(self) -> float:
        batch = {k: torch.from_numpy(v) for k, v in
                 self.buffer.sample(self.config.batch_size, self.rng).items()}
        values, logits = self.network(batch["features"])
        value_loss = ((values - batch["value"]) ** 2).mean()
        # Cross-entropy against σ where a role moved (σ is 0 on illegal actions; the prior
        # renormalises over the legal ones).
        log_probabilities = torch.log_softmax(logits, -1)
        policy_loss = -(batch["policy"] * log_probabilities).sum(-1)
        policy_loss = (policy_loss * batch["has_policy"]).sum() / batch["has_policy"].sum().clamp(min=1.0)
        loss = value_loss + policy_loss
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()

    # ---- evaluation and checkpoints -------------------------------------------------------------
    def evaluation_agent(self, player: int) -> ReBeLAgent:
        network = {"pbs_network" if self.pbs is not None else "network": copy.deepcopy(self.network)}
        return ReBeLAgent(self.game, player, seed=self.seed, resolve=self.config.resolve,
                          **network, **self.search_options)

    def evaluation_policy(self, tree: GameTree) -> TabularPolicy:
        return rebel_policy(self.search(self.seed, self.config.resolve), tree)

    def state_dict(self) -> dict[str, Any]:
        return {"network": self.network.state_dict(), "optimizer": self.optimizer.state_dict(),
                "buffer": self.buffer.state_dict(), "rng": self.rng.bit_generator.state,
                "episodes": self.episodes}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.network.load_state_dict(state["network"])
        if self.pbs is None:
            self.guide.forget()
        self.optimizer.load_state_dict(state["optimizer"])
        self.buffer.load_state_dict(state["buffer"])
        self.rng.bit_generator.state = state["rng"]
        self.episodes = int(state["episodes"])


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
    """ReBeL search as a player, guided by a :class:`ReBeLNetwork` (per-history values and
    CFR's starting policy) or a :class:`agents.rebel_pbs.PBSValueNetwork` (frontier values
    per public belief state) when given one.

    Solves are kept across decisions and matches: with enumerated beliefs σ is a fixed
    function of the public state, so they stay valid. ``options`` are numbers for
    :class:`ReBeLSearch` (``iterations``, ``seconds``, ``max_depth``, ...); the agent file
    holds them, the game's spec and the network's weights.
    """

    def __init__(self, game: Game, player: int, seed: int | None = None,
                 network: ReBeLNetwork | None = None, pbs_network: PBSValueNetwork | None = None,
                 **options: Any):
        super().__init__(game.info.num_distinct_actions, seed)
        if network is not None and pbs_network is not None:
            raise ValueError("give a ReBeLNetwork (network) or a PBSValueNetwork (pbs_network), not both")
        self.game, self.player, self.network, self.options = game, player, network, options
        self.pbs_network = pbs_network
        self.seed = seed
        guided = NetworkGuide(network, game).search_options() if network is not None else {}
        if pbs_network is not None:
            guided = {"pbs_value": PBSValue(game, pbs_network)}
        self.search = ReBeLSearch(game, seed=int(self.rng.integers(2**31)), **options, **guided)

    def search_policy(self, view: SeatView) -> np.ndarray:
        return self.search.policy(view)

    def state_dict(self) -> dict[str, Any]:
        state = {"num_actions": self.num_actions, "game": self.game.spec.to_dict(), "player": self.player,
                 "seed": self.seed, "options": dict(self.options)}
        if self.network is not None:
            state["architecture"] = dict(self.network.architecture)
            state["weights"] = self.network.state_dict()
        if self.pbs_network is not None:
            state["pbs_architecture"] = dict(self.pbs_network.architecture)
            state["pbs_weights"] = self.pbs_network.state_dict()
        return state

    @classmethod
    def from_state_dict(cls, state: dict[str, Any]) -> ReBeLAgent:
        network = pbs_network = None
        if "weights" in state:
            network = ReBeLNetwork.from_state_dict(state["architecture"], state["weights"])
        if "pbs_weights" in state:
            pbs_network = PBSValueNetwork.from_state_dict(state["pbs_architecture"], state["pbs_weights"])
        game = load_game(GameSpec.from_dict(state["game"]))
        return cls(game, int(state["player"]), seed=state["seed"], network=network, pbs_network=pbs_network,
                   **state["options"])


SPEC_OPTIONS = {"iterations": int, "depth": int, "rollouts": int, "samples": int, "resolve": str, "sampler": str}


@register_spec("rebel")
def _build_agent(argument: str, game: Game, player: int, seed: int | None) -> ReBeLAgent:
    """``rebel:<iterations>`` (CFR+ iterations per solve, deepening to the node cap) or
    ``rebel:<seconds>s`` (deepening per move), with options ``iterations=``, ``depth=``
    (max_depth), ``rollouts=``, ``samples=``, ``resolve=`` (frontier, decision, gadget),
    ``sampler=`` (posterior, proposal, evaluation, particles: who draws ``samples``
    histories when a public state is too large to enumerate):
    ``rebel:1s,depth=2,rollouts=2,samples=16,sampler=evaluation``, ``rebel:200,resolve=gadget``.
    A trained agent is its file: ``runs/rebel_liars_dice/policy_player0.pt``."""
    iterations, seconds, options = parse_spec("rebel", argument, SPEC_OPTIONS)
    if iterations is None and seconds is None:
        raise ValueError(f"agent spec 'rebel:{argument}': give a budget, e.g. rebel:200 or rebel:1s")
    if iterations is not None:
        options["iterations"] = iterations
    if "depth" in options:
        options["max_depth"] = options.pop("depth")
    return ReBeLAgent(game, player, seed=seed, seconds=seconds, **options)
