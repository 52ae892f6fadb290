"""Scripted Meier and blind tic-tac-toe bots: their rules, their reading of the tensor, their play."""

import numpy as np
import pytest

import hiddenenvs
from agents.leaderboard import evaluate
from agents.leaderboard.specs import resolve_agent
from agents.scripted import (
    MEIER_ORDER,
    blind_tictactoe_cell,
    meier_call_probability,
    meier_claim_distribution,
)
from hiddenenvs.registry import REGISTRY


def _needs(env):
    if env not in REGISTRY:
        pytest.skip(f"the GDL-II env {env!r} is not registered")


def test_meier_claims_bluff_less_with_a_better_roll():
    assert meier_claim_distribution(21, list(MEIER_ORDER)) == {21: 1.0}  # Meier: never bluff
    weakest = meier_claim_distribution(31, list(MEIER_ORDER))  # rank 0: always bluff
    assert weakest.get(31) == 0.0 and len(weakest) == 21
    assert all(p == pytest.approx(1 / 20) for v, p in weakest.items() if v != 31)
    truthful = [meier_claim_distribution(v, list(MEIER_ORDER))[v] for v in MEIER_ORDER]
    assert truthful == sorted(truthful) and truthful[11] == pytest.approx(11 / 20)  # 63
    for roll in MEIER_ORDER:
        assert sum(meier_claim_distribution(roll, list(MEIER_ORDER)).values()) == pytest.approx(1)
    # A roll below the last claim (here 55) forces the lowest legal claim.
    assert meier_claim_distribution(42, [66, 21, 55]) == {55: 1.0}


def test_meier_calls_more_the_higher_the_claim():
    calls = [meier_call_probability(v) for v in MEIER_ORDER]
    assert calls[0] == 0.0 and calls[-1] == 1.0 and calls == sorted(calls)


def test_blind_tictactoe_completes_then_blocks_then_takes_centre_and_corners():
    everything = list(range(9))
    assert blind_tictactoe_cell(set(), set(), everything) == 4
    assert blind_tictactoe_cell({4}, set(), [0, 1, 2, 3, 5, 6, 7, 8]) == 0
    assert blind_tictactoe_cell({0, 4}, set(), [1, 2, 3, 5, 6, 7, 8]) == 8  # own diagonal
    # Failed tries on 3 and 5 are the opponent's: block the middle row ... unless we can win.
    assert blind_tictactoe_cell({0}, {3, 5}, [1, 2, 4, 6, 7, 8]) == 4
    assert blind_tictactoe_cell({0, 1}, {3, 5}, [2, 4, 6, 7, 8]) == 2


@pytest.mark.parametrize(
    "env, spec", [("meier", "scripted:meier"), ("blind_tictactoe", "scripted:blind_tictactoe")]
)
def test_bots_read_their_history_exactly_as_the_game_keeps_it(env, spec):
    _needs(env)
    game = hiddenenvs.load_game(env)
    bots = [resolve_agent(spec, env, seat, {}) for seat in range(2)]
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(20):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.current_player() == hiddenenvs.CHANCE:
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.integers(len(outcomes))][0])
                continue
            joint = []
            for seat, bot in enumerate(bots):
                role = game.player_roles[seat]
                expected = [
                    (
                        game.action_to_string(seat, move),
                        [game.propnet.percept_names[role][k] for k in seen],
                    )
                    for move, seen in state.own_history(seat)
                ][-game.perception.window :]  # the tensor's window: the bots read no further
                assert bot.history(state.information_state_tensor(seat)) == expected
                checked += 1
                legal = state.legal_actions(seat)
                if legal:
                    mask = np.zeros(game.info.num_distinct_actions, dtype=np.int8)
                    mask[legal] = 1
                    action, probabilities = bot.act(state.information_state_tensor(seat), mask)
                    assert action in legal and probabilities.sum() == pytest.approx(1.0)
                joint.append(action if legal else -1)
            state.apply_actions(joint)
    assert checked > 40


@pytest.mark.parametrize(
    "env, spec", [("meier", "scripted:meier"), ("blind_tictactoe", "scripted:blind_tictactoe")]
)
def test_scripted_bots_beat_random(env, spec, tmp_path):
    _needs(env)
    board = evaluate(
        env, {}, [spec, "random"], games=100, db_path=tmp_path / "db.sqlite", progress=False
    )
    summary = board.pairings[(spec, "random")]
    _, low, _ = summary.win_rate
    assert summary.games == 200 and low > 0.5, summary
