r"""Outcome-sampling Monte-Carlo CFR (Lanctot, Waugh, Zinkevich & Bowling 2009,
"Monte Carlo Sampling for Regret Minimization in Extensive Games", NIPS; section 3.2
and Lanctot's thesis, 2013, algorithm 3), with alternating updates.

Each iteration samples one terminal history ``z`` per update player ``i``: ``i`` samples
from the epsilon-on-policy strategy ``epsilon * uniform + (1 - epsilon) * sigma``, the
other players from ``sigma``, chance from its probabilities, so the sample probability
``q(z)`` is known. Walking back up, at each of ``i``'s information sets ``I`` on the path
(history ``h``, sampled action ``a``), with the tail ``pi(z | h.a)`` of every player's
and chance's probabilities below ``h.a``, the regrets move by the sampled counterfactual
regret (their eq. 10):

.. math::

   W = \frac{u_i(z)\, \pi_{-i}(h)}{q(z)}, \qquad x = \sigma(I, a)\, \pi(z \mid h a) = \pi(z \mid h),

.. math::

   R(I, a) \leftarrow R(I, a) + W \bigl(\pi(z \mid h a) - x\bigr), \qquad
   R(I, b) \leftarrow R(I, b) - W x \quad (b \neq a).

At the other players' nodes the average strategy gets ``sigma(I) pi_p(h) / q(h)``
(stochastically weighted averaging: ``q(h)`` is the probability the sample reached ``h``,
so the expectation is CFR's reach-weighted average). A one-player game has no other player, so there the update
player's own nodes get the same update (else its average would never move from uniform:
Monty Hall, a one-player game with a random role, stayed at exploitability 16.667).

Simultaneous nodes need no turn-based wrapper: every mover samples (the update player
with exploration), the others' actions count as happening after ``i``'s, so their
probabilities are part of the tail ``pi(z | h.a)`` of ``i``'s regret update.

>>> import hiddenenvs
>>> solver = OutcomeSamplingMCCFR(hiddenenvs.load_game("kuhn_poker"), seed=0)
>>> solver.iterate(20000)
>>> solver.exploitability() < 0.02
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.search import register_spec
from agents.search.mccfr_trainer import MCCFRConfig, MCCFRLearner, MCCFRSolverBase, table_agent_spec
from agents.search.tables import RegretTables, apply_choices, chance_distribution, movers_and_joint
from hiddenenvs.game import CHANCE, TERMINAL, Game, State, draw_index


class OutcomeSamplingMCCFR(MCCFRSolverBase):
    """Outcome-sampling MCCFR on any game of the model (see the module docstring).

    ``exploration`` is epsilon (0.6 as OpenSpiel's ``outcome_sampling_mccfr``);
    ``backend`` and ``abstraction`` as in :class:`agents.search.mccfr_trainer.MCCFRSolverBase`.
    """

    def __init__(
        self,
        game: Game,
        seed: int | None = 0,
        exploration: float = 0.6,
        backend: str = "auto",
        abstraction=None,
    ):
        if not 0.0 < exploration <= 1.0:
            raise ValueError(f"exploration (epsilon) must be in (0, 1], got {exploration}")
        super().__init__(game, seed, backend, abstraction)
        self.exploration = exploration

    def iterate(self, iterations: int = 1) -> None:
        if self.compiled is not None:
            self.compiled.outcome_sampling(iterations, self.exploration)
            self.iteration += iterations
            return
        for _ in range(iterations):
            for player in range(self.num_players):
                self._walk(
                    self.game.new_initial_state(), player, [1.0] * (self.num_players + 1), 1.0
                )
            self.iteration += 1

    def _walk(
        self, state: State, update: int, reach: list[float], sample_reach: float
    ) -> tuple[float, float, float]:
        """Sample to a terminal history; returns ``(u_update(z), pi(z | state), q(z))``.

        ``reach[p]`` is player ``p``'s reach of ``state``, ``reach[-1]`` chance's;
        ``sample_reach`` is the probability that the sample got here.
        """
        tables = self.tables
        assert isinstance(tables, RegretTables)  # the model backend's tables
        player = state.current_player()
        if player == TERMINAL:
            return float(state.returns()[update]), 1.0, sample_reach
        if player == CHANCE:
            outcomes, probabilities = chance_distribution(state)
            k = draw_index(probabilities, self.rng)
            state.apply_action(outcomes[k])
            reach = reach.copy()
            reach[-1] *= probabilities[k]
            utility, tail, leaf_reach = self._walk(
                state, update, reach, sample_reach * probabilities[k]
            )
            return utility, tail * probabilities[k], leaf_reach
        movers, joint = movers_and_joint(state)
        if joint is not None and not movers:  # a simultaneous node where nobody chooses
            state.apply_actions(joint)
            return self._walk(state, update, reach, sample_reach)
        # Every mover samples: the update player from its epsilon-on-policy strategy.
        entries, strategies, choices, actions = [], [], [], []
        probability_sampled = 1.0
        for mover in movers:
            entry = tables.entry(state, mover)
            strategy = entry.current_strategy()
            sampling = strategy
            if mover == update:
                sampling = self.exploration / len(strategy) + (1.0 - self.exploration) * strategy
            k = draw_index(sampling, self.rng)
            probability_sampled *= sampling[k]
            entries.append(entry)
            strategies.append(strategy)
            choices.append(k)
            actions.append(entry.legal[k])
        child_reach = reach.copy()
        others_probability = (
            1.0  # sigma of the other movers' actions, part of the update player's tail
        )
        for mover, strategy, k in zip(movers, strategies, choices):
            child_reach[mover] *= strategy[k]
            if mover != update:
                others_probability *= strategy[k]
        apply_choices(state, joint, movers, actions)
        utility, tail, leaf_reach = self._walk(
            state, update, child_reach, sample_reach * probability_sampled
        )
        for mover, entry, strategy, k in zip(movers, entries, strategies, choices):
            if mover == update:
                others_reach = float(np.prod([r for p, r in enumerate(reach) if p != update]))
                weight = utility * others_reach / leaf_reach
                tail_after = others_probability * tail  # pi(z | h.a)
                x = strategy[k] * tail_after  # pi(z | h)
                entry.regret -= weight * x
                entry.regret[k] += weight * tail_after
            if mover != update or self.num_players == 1:
                entry.average += strategy * (reach[mover] / sample_reach)
        full_tail = tail
        for strategy, k in zip(strategies, choices):
            full_tail *= strategy[k]
        return utility, full_tail, leaf_reach


class OutcomeSamplingMCCFRLearner(MCCFRLearner):
    """Trainer ``os-mccfr``: ``iterations_per_step`` OS-MCCFR iterations per loop step."""

    SOLVER = OutcomeSamplingMCCFR

    def _solver_options(self, config: MCCFRConfig) -> dict[str, Any]:
        return {**super()._solver_options(config), "exploration": config.exploration}


@register_spec("os-mccfr")
def _build_agent(argument: str, game, player: int, seed: int | None) -> Any:
    return table_agent_spec("os-mccfr", OutcomeSamplingMCCFR, argument, game, player, seed)
