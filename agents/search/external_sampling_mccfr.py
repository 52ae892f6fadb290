r"""External-sampling Monte-Carlo CFR (Lanctot, Waugh, Zinkevich & Bowling 2009,
"Monte Carlo Sampling for Regret Minimization in Extensive Games", NIPS; algorithm 1 of
Lanctot's thesis, 2013).

Each iteration runs one traversal per player ``i`` (the traverser). At ``i``'s decision
nodes every action is explored; at the other players' nodes and at chance nodes one
action is sampled, by the current strategy and by the chance probabilities. Because
the sampling probability of a history equals ``pi_{-i}(h)``, the sampled counterfactual
value of an action is just the value returned from below (their eq. 9 with
``q(z) = pi_{-i}(z)``), and the regret update at ``i``'s information set ``I`` is

.. math::

   R(I, a) \leftarrow R(I, a) + v(h a) - \sum_b \sigma(I, b)\, v(h b).

At the other players' nodes the sampled strategy is added to their average ("simple"
averaging: a node is reached with probability proportional to the player's own reach,
so the expectation is the reach-weighted average of CFR). A one-player game has no other
player: there the traverser's own nodes add ``pi_i(h) sigma(I)`` ("full" averaging, its
own reach carried down the traversal; chance is sampled, so the expectation is again
CFR's average up to a constant per information set). Without it the average of a
one-player game never moves from uniform (Monty Hall stayed at exploitability 16.667).

Simultaneous nodes are handled as in the paper's simultaneous-move formulation, with no
turn-based wrapper: every mover other than the traverser samples one action (once for
the node), and the traverser's actions are all explored against that sample.

Regrets are keyed by ``(player, information_state_key)`` (:mod:`agents.search.tables`),
so this runs on every game of the model, however large; exact exploitability is
measured on enumerable games with :meth:`ExternalSamplingMCCFR.exploitability`.

>>> import hiddenenvs
>>> solver = ExternalSamplingMCCFR(hiddenenvs.load_game("kuhn_poker"), seed=0)
>>> solver.iterate(5000)
>>> solver.exploitability() < 0.02
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.search import register_spec
from agents.search.mccfr_trainer import MCCFRLearner, MCCFRSolverBase, table_agent_spec
from agents.search.tables import RegretTables, apply_choices, movers_and_joint
from hiddenenvs.game import CHANCE, TERMINAL, State, draw_index, sample_chance_outcome


class ExternalSamplingMCCFR(MCCFRSolverBase):
    """External-sampling MCCFR on any game of the model (see the module docstring)."""

    def iterate(self, iterations: int = 1) -> None:
        if self.compiled is not None:
            self.compiled.external_sampling(iterations)
            self.iteration += iterations
            return
        for _ in range(iterations):
            for traverser in range(self.num_players):
                self._traverse(self.game.new_initial_state(), traverser)
            self.iteration += 1

    def _traverse(self, state: State, traverser: int, own_reach: float = 1.0) -> float:
        """The sampled value of ``state`` for ``traverser``; ``state`` may be consumed.
        ``own_reach`` is the traverser's reach of ``state`` (one-player averaging)."""
        rng, tables = self.rng, self.tables
        assert isinstance(tables, RegretTables)  # the model backend's tables
        while True:  # chance and other players' nodes sample one child: no recursion needed
            player = state.current_player()
            if player == TERMINAL:
                return float(state.returns()[traverser])
            if player == CHANCE:
                state.apply_action(sample_chance_outcome(state, rng))
                continue
            movers, joint = movers_and_joint(state)
            if joint is not None and not movers:  # a simultaneous node where nobody chooses
                state.apply_actions(joint)
                continue
            actions: list[int] = []
            for mover in movers:
                if mover == traverser:
                    actions.append(-1)  # filled in below with each of its actions
                    continue
                entry = tables.entry(state, mover)
                strategy = entry.current_strategy()
                entry.average += strategy
                actions.append(entry.legal[draw_index(strategy, rng)])
            if traverser not in movers:
                apply_choices(state, joint, movers, actions)
                continue
            # The traverser explores every action against the others' sample.
            entry = tables.entry(state, traverser)
            strategy = entry.current_strategy()
            if self.num_players == 1:
                entry.average += own_reach * strategy
            slot = movers.index(traverser)
            values = np.empty(len(entry.legal))
            for k, action in enumerate(entry.legal):
                child = state.clone()
                actions[slot] = action
                apply_choices(child, joint, movers, actions)
                values[k] = self._traverse(child, traverser, own_reach * strategy[k])
            value = float(strategy @ values)
            entry.regret += values - value
            return value


class ExternalSamplingMCCFRLearner(MCCFRLearner):
    """Trainer ``es-mccfr``: ``iterations_per_step`` ES-MCCFR iterations per loop step."""

    SOLVER = ExternalSamplingMCCFR


@register_spec("es-mccfr")
def _build_agent(argument: str, game, player: int, seed: int | None) -> Any:
    return table_agent_spec("es-mccfr", ExternalSamplingMCCFR, argument, game, player, seed)
