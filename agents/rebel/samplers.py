"""ReBeL's belief samplers: histories consistent with a seat's information-state key.

From Partridge & Thielscher, "Hidden Information General Game Playing with Deep Learning and Search" (ReBeL for GDL-II), Sect. 3: the state sampler that plays forward from the root
with a policy-biased proposal and an invalid-state cache (:class:`ProposalSampler`, here
with the importance weights that make its draws estimate the posterior), and its
evaluation mode (:class:`EvaluationSampler`: shuffled child lists, reach probabilities
stored per node). The exact posterior sampler is the game's own
(:mod:`hiddenenvs.beliefs`); :class:`agents.rebel.beliefs.PublicBeliefs` chooses among them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.rebel.values import Prior
from hiddenenvs.beliefs import _action_weight, _children, action_probability_function
from hiddenenvs.game import CHANCE, SIMULTANEOUS, Game, State, draw_index


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

    def __init__(
        self,
        game: Game,
        player: int,
        information_state_key: tuple,
        proposal: Prior | None = None,
        model: Prior | None = None,
        max_passes: int = 100_000,
    ):
        self.game, self.player = game, player
        self.target = tuple(information_state_key)
        self.proposal = action_probability_function(proposal)
        self.model = action_probability_function(model)
        self.max_passes = max_passes
        self.invalid: set[tuple] = set()

    def sample(self, count: int, rng: np.random.Generator) -> list[tuple[tuple, float]]:
        """``count`` consistent histories with their importance weights (unnormalised)."""
        draws: list[tuple[tuple, float]] = []
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
        state, weight, known = self.game.new_initial_state(), 1.0, 0
        history: tuple = ()
        while True:
            key, arrived = self._follow_target(state, history, known)
            if arrived is not None:
                return (history, weight) if arrived else None
            options = [
                (a, p, q) for a, p, q in self._children(state) if history + (a,) not in self.invalid
            ]
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
        if key[known:] != self.target[known : len(key)] or len(key) > len(self.target):
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
                options = [
                    (legal[0] if len(legal) == 1 and current != SIMULTANEOUS else -1, 1.0, 1.0)
                ]
            else:
                f = self.proposal(state, q)
                model = self.model(state, q) if q != self.player else None
                options = [
                    (
                        a,
                        1.0 if q == self.player else _action_weight(model, a, legal),
                        (_action_weight(f, a, legal) + 1.0 / len(legal)) / 2
                        if f is not None
                        else 1.0 / len(legal),
                    )
                    for a in legal
                ]
            joints = [(j + (a,), p * pa, w * qa) for j, p, w in joints for a, pa, qa in options]
        if current != SIMULTANEOUS:
            return [(joint[current], p, q) for joint, p, q in joints]
        return joints


class EvaluationSampler(ProposalSampler):
    """The GDL-II paper's evaluation-mode sampler (Partridge & Thielscher, Sect. 3.2, "Evaluation Method").

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
      ``π(h) / Σ π`` whatever the opponents played; ``self.reach`` holds ``π(h)`` of every
      history drawn, so a set of distinct draws can be weighted exactly by its reach.

    Passes restart from the root on a percept mismatch, as in :class:`ProposalSampler`.
    """

    def __init__(
        self,
        game: Game,
        player: int,
        information_state_key: tuple,
        model: Prior | None = None,
        max_passes: int = 100_000,
    ):
        super().__init__(
            game, player, information_state_key, proposal=None, model=model, max_passes=max_passes
        )
        # history -> [children (action, π(child | node), _), shuffled order, next position]
        self.nodes: dict[tuple, list] = {}
        self.reach: dict[tuple, float] = {(): 1.0}

    def _pass(self, rng: np.random.Generator) -> tuple[tuple, float] | None:
        state, chosen, known = self.game.new_initial_state(), 1.0, 0
        history: tuple = ()
        while True:
            key, arrived = self._follow_target(state, history, known)
            if arrived is not None:
                return (history, self.reach[history] / chosen) if arrived else None
            node = self.nodes.get(history)
            if node is None:
                children = self._children(state)
                node = self.nodes[history] = [children, rng.permutation(len(children)), 0]
            children, order, position = node
            valid = [
                i for i in range(len(children)) if history + (children[i][0],) not in self.invalid
            ]
            if not valid:
                self._mark_invalid(history)
                return None
            while (
                position < len(order) and history + (children[order[position]][0],) in self.invalid
            ):
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
