"""ReBeL's public belief states: the beliefs a subgame's chance root is built on.

A public belief state (PBS; Brown, Bakhtin, Lerer & Gong 2020, "Combining Deep Reinforcement Learning and Search for Imperfect-Information Games", Sect. 4) is a public state with every player's belief
over the histories in it. Here the belief of history ``h`` is

    b(h) ∝ π_c(h) · Π_q π_q^σ(h),

chance times every player's reach under the search policy σ already computed at the
earlier public states, σ mixed with ``tremble`` uniform so that public states σ never
reaches still get a belief (the limit of trembling beliefs). :class:`PublicBeliefs` gives
:class:`~agents.rebel.search.ReBeLSearch` three ways to get them: the exact walk
(:meth:`~PublicBeliefs.public_beliefs`) while it fits in ``max_root_nodes``, a resampling
particle filter over the public state (:meth:`~PublicBeliefs.particle_beliefs`), or
``samples`` histories of the seat's own information set
(:meth:`~PublicBeliefs.sampled_beliefs`: the game's exact posterior sampler, or the
samplers of Partridge & Thielscher, "Hidden Information General Game Playing with Deep Learning and Search", :mod:`agents.rebel.samplers`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping

import numpy as np

from agents.rebel.options import SearchOptions
from agents.rebel.samplers import EvaluationSampler, ProposalSampler, _reached_children
from agents.rebel.values import Prior
from hiddenenvs.beliefs import sample_histories
from hiddenenvs.game import Game, SeatView, State


class PublicBeliefs:
    """The belief side of :class:`~agents.rebel.search.ReBeLSearch` (a mixin: it reads the
    search's σ, prior, tremble, budgets and generator)."""

    # What it reads of the search it is part of (set by ReBeLSearch.__init__), and σ at an
    # information set (ReBeLSearch._infoset_policy).
    game: Game
    options: SearchOptions
    prior: Prior | None
    rng: np.random.Generator
    _prior_probabilities: Callable[[State, int], Mapping[int, float] | None]
    _infoset_policy: Callable[[int, Hashable, tuple, SeatView | None], dict[int, float]]

    def _belief_policy(self, state: State, player: int) -> dict[int, float]:
        """σ at an earlier public state, trembled: every legal action keeps some weight."""
        legal = state.legal_actions(player)
        probabilities: Mapping[int, float] = self._infoset_policy(
            player, state.information_state_key(player), state.public_state_key(), None
        )
        uniform = self.options.tremble / len(legal)
        total = sum(probabilities.get(a, 0.0) for a in legal)
        if total <= 0:
            prior_probabilities = self._prior_probabilities(state, player)
            if prior_probabilities is None:
                return {a: 1.0 / len(legal) for a in legal}
            probabilities = prior_probabilities
            total = sum(probabilities.get(a, 0.0) for a in legal) or 1.0
        return {
            a: (1 - self.options.tremble) * probabilities.get(a, 0.0) / total + uniform
            for a in legal
        }

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
            if visited > self.options.max_root_nodes:
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
                    if key == target[: len(key)]:
                        grown.append((child, weight * child_weight, len(key) == len(target)))
            if not grown:
                raise ValueError(f"{self.game.spec}: no history has the public state {target!r}")
            particles = grown if len(grown) <= self.options.samples else self._resample(grown)
        total = sum(w for _, w, _ in particles)
        return [(state, w / total) for state, w, _ in particles]

    def _resample(
        self, particles: list[tuple[State, float, bool]]
    ) -> list[tuple[State, float, bool]]:
        """Systematic resampling to ``samples`` draws of equal weight, duplicates merged."""
        weights = np.array([w for _, w, _ in particles])
        total = weights.sum()
        positions = (self.rng.random() + np.arange(self.options.samples)) / self.options.samples
        picks = np.minimum(
            np.searchsorted(np.cumsum(weights) / total, positions), len(particles) - 1
        )
        counts = np.bincount(picks, minlength=len(particles))
        return [
            (particles[i][0], total * counts[i] / self.options.samples, particles[i][2])
            for i in np.flatnonzero(counts)
        ]

    def sampled_beliefs(self, view: SeatView) -> list[tuple[State, float]]:
        """``samples`` histories for the seat's information set, with their weights.

        ``sampler="posterior"``: the game's exact posterior sampler, weighted by count
        (under the uniform opponent model when the prior's is too large for it).
        ``sampler="proposal"``: the paper's forward sampler (:class:`ProposalSampler`),
        weighted by p_model / q_proposal. ``sampler="evaluation"``: the paper's evaluation
        mode (:class:`EvaluationSampler`); the distinct histories drawn, each weighted by
        its stored reach (the posterior restricted to what was drawn).
        """
        if self.options.sampler == "evaluation":
            sampler = EvaluationSampler(
                self.game, view.player, view.information_state_key, self.prior
            )
            draws = [
                (history, sampler.reach[history])
                for history in dict.fromkeys(
                    h for h, _ in sampler.sample(self.options.samples, self.rng)
                )
            ]
        elif self.options.sampler == "proposal":
            draws = ProposalSampler(
                self.game, view.player, view.information_state_key, self.prior, self.prior
            ).sample(self.options.samples, self.rng)
        else:
            try:
                histories = sample_histories(
                    self.game,
                    view.player,
                    view.information_state_key,
                    self.rng,
                    self.options.samples,
                    self.prior,
                )
            except ValueError:
                if self.prior is None:
                    raise
                # Under a policy the sampler tells apart the other roles' information
                # states too, which can outgrow its node budget late in long games (Meier):
                # the uniform opponent model merges them.
                histories = sample_histories(
                    self.game,
                    view.player,
                    view.information_state_key,
                    self.rng,
                    self.options.samples,
                )
            draws = [(history, 1.0) for history in histories]
        weights: dict[tuple, float] = {}
        for history, weight in draws:
            weights[history] = weights.get(history, 0.0) + weight
        total = sum(weights.values())
        return [
            (self.game.state_from_history(h), w / total)
            for h, w in sorted(weights.items(), key=str)
        ]
