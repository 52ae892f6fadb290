"""benchmarks/blind_tictactoe_ceiling.py: the exact yardsticks of blind tic-tac-toe that
issue 46's comparison page quotes, checked by playing the real sheet."""

from __future__ import annotations

import numpy as np
import pytest

import hiddenenvs
from agents.scripted import BlindTicTacToeBot
from benchmarks.blind_tictactoe_ceiling import (
    FixedPolicy,
    _options,
    _terminal_outcome,
    best_response,
    play,
)
from hiddenenvs.game import CHANCE, sample_chance_outcome


def _played(game, choose, seat: int, games: int, seed: int) -> tuple[float, float]:
    """(win rate, draw rate) of ``seat`` over ``games`` seeded games, ``choose(state,
    player, rng)`` giving each player's move and the tiebreaks drawn uniformly."""
    rng = np.random.default_rng(seed)
    wins = draws = 0.0
    for _ in range(games):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.current_player() == CHANCE:
                state.apply_action(sample_chance_outcome(state, rng))
            else:
                state.apply_actions([choose(state, player, rng) for player in range(2)])
        outcome = _terminal_outcome(state, seat)
        wins, draws = wins + outcome.win, draws + outcome.draw
    return wins / games, draws / games


def test_the_bot_against_random_matches_games_played():
    game = hiddenenvs.load_game("blind_tictactoe")
    bot = FixedPolicy(BlindTicTacToeBot("blind_tictactoe", 1, {}))
    exact = play((None, bot), game, 1)

    def choose(state, player, rng):
        if player == 1:
            return bot(state, 1)[0][0]
        options = _options(state, player)
        return options[rng.integers(len(options))]

    games = 3000
    win, draw = _played(game, choose, 1, games, seed=0)
    for measured, value in ((win, exact.win), (draw, exact.draw)):
        assert abs(measured - value) < 4 * np.sqrt(value * (1 - value) / games)
    assert 0.7 < exact.score < 0.9  # 0.802: the page's figure


@pytest.mark.slow
def test_the_best_response_to_the_bot_wins_every_game_it_plays():
    """The walk says a best response to the (deterministic) bot wins with probability 1 in
    seat o; its plan, played on the sheet with random tiebreaks, wins every game."""
    game = hiddenenvs.load_game("blind_tictactoe")
    bot = FixedPolicy(BlindTicTacToeBot("blind_tictactoe", 0, {}))
    plan: dict[tuple, int] = {}
    outcome = best_response(game, 1, bot, plan)
    assert outcome.win == pytest.approx(1.0)
    assert outcome.score >= play((bot, None), game, 1).score  # above random's

    def choose(state, player, rng):
        if player == 0:
            return bot(state, 0)[0][0]
        if 1 not in state.movers():
            return -1
        return plan[state.information_state_key(1)]

    win, _ = _played(game, choose, 1, 300, seed=1)
    assert win == 1.0


def test_the_comparison_pages_yardsticks_quote_the_walks():
    """The figures the harness writes into the blind cells' "Why not met" are the walks'."""
    from benchmarks.training import (
        _BIASED_REBEL_YARDSTICK,
        _BLIND_REBEL_YARDSTICK,
        _BLIND_YARDSTICK,
    )

    game = hiddenenvs.load_game("blind_tictactoe")
    bot = FixedPolicy(BlindTicTacToeBot("blind_tictactoe", 0, {}))
    against_random = play((bot, None), game, 0)
    for text in (_BLIND_YARDSTICK, _BLIND_REBEL_YARDSTICK):
        assert f"{against_random.score:.3f}" in text  # 0.802
    assert f"wins {against_random.win:.3f} against random" in _BLIND_YARDSTICK  # 0.763
    biased = hiddenenvs.load_game("biased_blind_tictactoe")
    scores = [
        play(
            tuple(
                FixedPolicy(BlindTicTacToeBot("biased_blind_tictactoe", s, {}))
                if s == seat
                else None
                for s in range(2)
            ),
            biased,
            seat,
        ).score
        for seat in range(2)
    ]
    assert (
        f"{scores[0]:.3f} against random as x and {scores[1]:.3f} as o" in _BIASED_REBEL_YARDSTICK
    )
