"""Exact yardsticks on the blind tic-tac-toe GDL-II sheet (issue 46): what the scripted bot
scores against random, and what a best response to the bot scores, by seat.

    python -m benchmarks.blind_tictactoe_ceiling             # the table, about two minutes
    python -m benchmarks.blind_tictactoe_ceiling --sheet biased_blind_tictactoe

The sheet: each step both players try a cell they have not tried before; a contested blank
cell goes to the winner of random's tiebreak, a cell already marked stays as it is, and each
player sees only ``ok`` or ``fail`` for its own try. The bot (``scripted:blind_tictactoe``,
:mod:`agents.scripted`) is deterministic given what its seat saw, so against it the game is
small: the opponent's move is a function of the history, and only the tiebreaks and the
other seat's moves branch.

- **The bot against random**: the expectation over every history of random's moves and the
  tiebreaks (9! move orders at most per seat), by seat.
- **A best response to the bot**: the responder's information states are its own moves and
  percepts; for each, the best move maximises the summed value of the histories it cannot
  tell apart (perfect recall: an information state's histories continue into the next
  ones, so a walk over the responder's information states, backward, is exact).

Scores count a win as 1 and a draw as 1/2 (the ReBeL paper's mean goal, the comparison
page's ``score``); wins alone are given too (the page's ``win``). Neither an equilibrium
of the game (too large to solve here: the paper approximates it with CFR+ and a network)
nor a best response to random (random's moves make every history of the other seat
possible) is computed.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

import hiddenenvs
from agents.base import Agent
from agents.scripted import BlindTicTacToeBot
from hiddenenvs.game import CHANCE, State

# The ReBeL paper's CFR+NN (Partridge & Thielscher, table of results; 100 games a cell):
# mean goal by seat against random and against its hand-crafted bot.
PAPER_CFR_NN = {
    "blind_tictactoe": {"random": (0.795, 0.795), "bot": (0.48, 0.55)},
    "biased_blind_tictactoe": {"random": (0.895, 0.46), "bot": (0.795, 0.44)},
}


@dataclass(frozen=True)
class Outcome:
    """Probabilities of winning and of drawing (the rest is losing) for one seat."""

    win: float
    draw: float

    @property
    def score(self) -> float:
        return self.win + 0.5 * self.draw

    def __add__(self, other: Outcome) -> Outcome:
        return Outcome(self.win + other.win, self.draw + other.draw)

    def scaled(self, weight: float) -> Outcome:
        return Outcome(self.win * weight, self.draw * weight)


NOTHING = Outcome(0.0, 0.0)


def _terminal_outcome(state: State, seat: int) -> Outcome:
    returns = state.returns()
    mine, theirs = returns[seat], returns[1 - seat]
    return Outcome(float(mine > theirs), float(mine == theirs))


def _after_chance(state: State, weight: float) -> list[tuple[State, float]]:
    """The states and weights after the chance nodes from ``state`` on (merged where a
    tiebreak decided nothing: same history of the players' moves and the same state)."""
    if state.current_player() != CHANCE:
        return [(state, weight)]
    merged: dict[tuple, tuple[State, float]] = {}
    for outcome, probability in state.chance_outcomes():
        child = state.clone()
        child.apply_action(outcome)
        for reached, reached_weight in _after_chance(child, weight * probability):
            key = (reached.markov_key(), *(reached.information_state_key(p) for p in range(2)))
            if key in merged:
                merged[key] = (merged[key][0], merged[key][1] + reached_weight)
            else:
                merged[key] = (reached, reached_weight)
    return list(merged.values())


def _options(state: State, seat: int) -> list[int]:
    return state.legal_actions(seat) if seat in state.movers() else [-1]


class FixedPolicy:
    """An agent's moves by information state, asked once per state (the walks meet each
    many times)."""

    def __init__(self, agent: Agent):
        self.agent = agent
        self.moves: dict[tuple, list[tuple[int, float]]] = {}

    def __call__(self, state: State, seat: int) -> list[tuple[int, float]]:
        if seat not in state.movers():
            return [(-1, 1.0)]
        key = state.information_state_key(seat)
        if key not in self.moves:
            probabilities = self.agent.policy_at_state(state, seat)
            self.moves[key] = [
                (int(a), float(probabilities[a])) for a in np.flatnonzero(probabilities > 0)
            ]
        return self.moves[key]


def _joint(seat: int, own: int, other: int) -> list[int]:
    return [own, other] if seat == 0 else [other, own]


def play(policies: tuple[FixedPolicy | None, FixedPolicy | None], game, seat: int) -> Outcome:
    """``seat``'s exact outcome when each seat plays its policy (None: uniform random)."""
    fixed = [p for p, policy in enumerate(policies) if policy is not None]
    known: dict[tuple, Outcome] = {}  # the outcome from a state on, per unit of reach

    def moves(policy: FixedPolicy | None, state: State, player: int) -> list[tuple[int, float]]:
        if policy is not None:
            return policy(state, player)
        options = _options(state, player)
        return [(a, 1.0 / len(options)) for a in options]

    def from_here(state: State) -> Outcome:
        """Random's moves depend on the state, a fixed policy's on its seat's key."""
        key = (state.markov_key(), *(state.information_state_key(p) for p in fixed))
        if key not in known:
            total = NOTHING
            for first, p in moves(policies[0], state, 0):
                for second, q in moves(policies[1], state, 1):
                    child = state.clone()
                    child.apply_actions([first, second])
                    for reached, weight in _after_chance(child, p * q):
                        if reached.is_terminal():
                            total += _terminal_outcome(reached, seat).scaled(weight)
                        else:
                            total += from_here(reached).scaled(weight)
            known[key] = total
        return known[key]

    total = NOTHING
    for reached, weight in _after_chance(game.new_initial_state(), 1.0):
        total += from_here(reached).scaled(weight)
    return total


def best_response(
    game, responder: int, opponent: FixedPolicy, plan: dict[tuple, int] | None = None
) -> Outcome:
    """The outcome of a best response (by score) in seat ``responder`` to ``opponent``'s
    fixed policy in the other seat: exact, over the responder's information states. ``plan``
    (a dict) receives the best response's move at each information state it reaches."""
    other = 1 - responder

    def value(group: list[tuple[State, float]]) -> Outcome:
        """The best outcome from a set of states the responder cannot tell apart (all at a
        simultaneous node), with their reach under chance and the opponent."""
        best: Outcome | None = None
        for own in _options(group[0][0], responder):
            reached = []
            for state, weight in group:
                for move, probability in opponent(state, other):
                    child = state.clone()
                    child.apply_actions(_joint(responder, own, move))
                    reached += _after_chance(child, weight * probability)
            total = from_states(reached)
            if best is None or total.score > best.score:
                best, best_move = total, own
        assert best is not None
        if plan is not None:
            plan[group[0][0].information_state_key(responder)] = best_move
        return best

    def from_states(reached: list[tuple[State, float]]) -> Outcome:
        """The terminal states' outcomes plus the best from each information state of the
        responder among the others."""
        total = NOTHING
        groups: dict[tuple, list[tuple[State, float]]] = defaultdict(list)
        for state, weight in reached:
            if state.is_terminal():
                total += _terminal_outcome(state, responder).scaled(weight)
            else:
                groups[state.information_state_key(responder)].append((state, weight))
        for group in groups.values():
            total += value(group)
        return total

    return from_states(_after_chance(game.new_initial_state(), 1.0))


def table(sheet: str) -> dict[str, tuple[Outcome, Outcome]]:
    """By seat (0: x, 1: o): the bot against random, random against the bot (for the other
    seat's view) and the best response to the bot."""
    game = hiddenenvs.load_game(sheet)
    bots = [FixedPolicy(BlindTicTacToeBot(sheet, seat, {})) for seat in range(2)]
    return {
        "bot vs random": (play((bots[0], None), game, 0), play((None, bots[1]), game, 1)),
        "best response vs bot": (
            best_response(game, 0, bots[1]),
            best_response(game, 1, bots[0]),
        ),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sheet", default="blind_tictactoe", choices=sorted(PAPER_CFR_NN), help="the sheet"
    )
    arguments = parser.parse_args(argv)
    started = time.process_time()
    rows = table(arguments.sheet)
    print(f"{arguments.sheet}: exact, by seat (x / o); score = win + draw / 2")
    print("| | score x / o | win x / o | mean score |")
    print("|---|---|---|---|")
    for name, (x, o) in rows.items():
        print(
            f"| {name} | {x.score:.3f} / {o.score:.3f} | {x.win:.3f} / {o.win:.3f} "
            f"| {(x.score + o.score) / 2:.3f} |"
        )
    paper = PAPER_CFR_NN[arguments.sheet]
    print(f"paper CFR+NN by seat: vs random {paper['random']}, vs its bot {paper['bot']}")
    print(f"({time.process_time() - started:.0f} CPU s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
