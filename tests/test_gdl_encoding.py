"""The GDL information-state tensor (hiddenenvs/envs/gdl/encoding.py) against the keys.

A seat's tensor must be a function of its information-state key (histories it cannot
tell apart look the same), and tell apart what it keeps: every key when the window covers
the horizon (all shipped GDL-II sheets but Meier), and in Meier the last ``W`` steps and
the set of older facts, which the test derives from the key itself.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

import hiddenenvs
from agents.scripted import BlindTicTacToeBot, MeierBot
from hiddenenvs.game import CHANCE, SIMULTANEOUS

GDL_II = ["meier", "blind_tictactoe", "biased_blind_tictactoe", "monty_hall", "gdl_biased_rps"]
# Tensor sizes at the defaults; before the window they were 5,545, 100, 100, 37 and 7.
SIZES = {
    "meier": 970,
    "blind_tictactoe": 101,
    "biased_blind_tictactoe": 101,
    "monty_hall": 38,
    "gdl_biased_rps": 8,
}


def playout_states(game, rng, games: int):
    """Every state along ``games`` uniformly random playouts (the root included)."""
    for _ in range(games):
        state = game.new_initial_state()
        yield state
        while not state.is_terminal():
            state = state.clone()
            if state.current_player() == CHANCE:
                outcomes = [a for a, _ in state.chance_outcomes()]
                state.apply_action(outcomes[rng.integers(len(outcomes))])
            else:
                assert state.current_player() == SIMULTANEOUS
                legal = [state.legal_actions(p) for p in range(game.info.num_players)]
                state.apply_actions([a[rng.integers(len(a))] for a in legal])
            yield state


def own_steps_from_key(game, player: int, key: tuple) -> list[tuple[int, frozenset[str]]]:
    """``(own move, percept names)`` per GDL step, read from the key alone."""
    role = game.player_roles[player]
    names = game.propnet.percept_names[role]
    steps = []
    for public, private in key:
        if public is None:  # random's move: perceived at the next entry
            continue
        move, private_percepts = private
        seen = {game.public_percept_names[k] for k in public} | {names[k] for k in private_percepts}
        steps.append((move, frozenset(seen)))
    return steps


def kept_by_the_tensor(game, player: int, key: tuple):
    """What the module docstring says the tensor keeps of ``key``: the step count, whether
    random has just moved, the window's steps in order, and the older steps' facts as sets."""
    steps = own_steps_from_key(game, player, key)
    window = game.perception.window
    older = steps[:-window]
    return (
        len(steps),
        bool(key) and key[-1] == (None, None),
        tuple(steps[-window:]),
        frozenset(move for move, _ in older),
        frozenset().union(*(seen for _, seen in older)),
    )


def check_against_keys(game, rng, games: int, kept) -> int:
    """Tensors are equal exactly when ``kept(player, key)`` is; returns the distinct keys."""
    tensor_of: dict = {}
    kept_of_tensor: dict = defaultdict(set)
    for state in playout_states(game, rng, games):
        for player in range(game.info.num_players):
            key = state.information_state_key(player)
            tensor = state.information_state_tensor(player)
            assert tensor.shape == game.info.information_state_tensor_shape
            assert tensor.dtype == np.float32 and tensor.min() >= 0.0 and tensor.max() <= 1.0
            if (player, key) in tensor_of:  # indistinguishable histories: one tensor
                np.testing.assert_array_equal(tensor_of[player, key], tensor)
            else:
                tensor_of[player, key] = tensor
            kept_of_tensor[player, tensor.tobytes()].add(kept(player, key))
    collisions = {k: v for k, v in kept_of_tensor.items() if len(v) > 1}
    assert not collisions, f"distinguishable keys share a tensor: {next(iter(collisions.values()))}"
    return len(tensor_of)


@pytest.mark.parametrize("name", GDL_II)
def test_sizes_are_fixed_by_the_vocabulary_not_the_game_length(name):
    game = hiddenenvs.load_game(name)
    assert game.info.information_state_tensor_shape == (SIZES[name],)
    assert game.perception.summarises == (name == "meier")


@pytest.mark.parametrize(
    ("name", "params", "games", "least_keys"),
    [  # least_keys: (player, key) pairs the seeded playouts meet (all 20 of biased RPS)
        ("blind_tictactoe", {}, 150, 1000),
        ("biased_blind_tictactoe", {}, 150, 1000),
        ("monty_hall", {}, 100, 30),
        ("gdl_biased_rps", {}, 30, 20),
        ("meier", {}, 150, 900),
        ("meier", {"history_window": 3}, 150, 900),  # most games outlast this window
    ],
)
def test_the_tensor_is_a_function_of_the_key_and_keeps_what_it_says(
    name, params, games, least_keys
):
    """Same key, same tensor; different tensors for keys that differ in what the tensor
    keeps: the whole key when the window covers the horizon (one to one), else Meier's
    last W steps and the sets of its older moves and percepts."""
    game = hiddenenvs.load_game(name, **params)
    rng = np.random.default_rng(7)
    if game.perception.summarises:
        kept = lambda player, key: kept_by_the_tensor(game, player, key)
    else:
        kept = lambda player, key: key
    assert check_against_keys(game, rng, games, kept) >= least_keys


def test_meier_with_a_window_over_the_horizon_is_one_to_one_on_keys():
    game = hiddenenvs.load_game("meier", history_window=63)
    assert not game.perception.summarises
    assert game.info.information_state_tensor_shape == (2 + 63 * 88,)
    check_against_keys(game, np.random.default_rng(3), 60, lambda player, key: key)


def meier_turns(game, turns: list[tuple[str, str, str]]):
    """Meier after ``(roll, claim, response)`` turns by name; alice is in control first and
    control passes to the responder after each accepted claim."""
    state = game.new_initial_state()
    names = game.propnet.move_names
    controller = 0
    for roll, claim, response in turns:
        assert state.current_player() == CHANCE
        state.apply_action(names[game.random_role].index(roll))
        for mover, move in ((controller, claim), (1 - controller, response)):
            joint = [names[game.player_roles[p]].index("noop") for p in range(2)]
            joint[mover] = names[game.player_roles[mover]].index(move)
            state.apply_actions(joint)
        controller = 1 - controller
    return state


def test_meier_roll_is_seen_by_the_roller_only_also_beyond_the_window():
    """alice rolls 31 or 54 and claims 54, bob accepts; 6 more turns of rising claims go by,
    beyond a 3-step window: alice's tensors differ (the roll is among her older facts),
    bob's are the same, though the true states differ."""
    game = hiddenenvs.load_game("meier", history_window=3)
    later = [
        (f"(roll {1 + i} 2)", f"(claim {v})", "accept")
        for i, v in enumerate(["61", "62", "63", "64", "65", "11"])
    ]
    lucky = meier_turns(game, [("(roll 3 1)", "(claim 54)", "accept"), *later])
    bluff = meier_turns(game, [("(roll 5 4)", "(claim 54)", "accept"), *later])
    assert not lucky.is_terminal() and lucky.steps == 7 * 3
    alice, bob = 0, 1
    assert lucky.information_state_key(bob) == bluff.information_state_key(bob)
    np.testing.assert_array_equal(
        lucky.information_state_tensor(bob), bluff.information_state_tensor(bob)
    )
    assert lucky.information_state_key(alice) != bluff.information_state_key(alice)
    differ = np.flatnonzero(
        lucky.information_state_tensor(alice) != bluff.information_state_tensor(alice)
    )
    assert len(differ) and differ.min() >= game.perception.earlier_offset  # the older set


def test_scripted_bots_read_the_window():
    """The Meier bot needs its last step only: its choices are the same with a window of
    1; the blind tic-tac-toe bot needs every step and refuses a window that drops some."""
    rng = np.random.default_rng(5)
    full = hiddenenvs.load_game("meier")
    short = hiddenenvs.load_game("meier", history_window=1)
    for state in list(playout_states(full, rng, 20)):
        if state.current_player() != SIMULTANEOUS:
            continue
        twin = short.state_from_history(state.history())
        for player in state.movers():
            mask = np.zeros(full.info.num_distinct_actions, dtype=bool)
            mask[state.legal_actions(player)] = True
            rows = [
                MeierBot("meier", player, dict(game.spec.params)).policy_probabilities_batch(
                    [s.information_state_tensor(player)], [mask]
                )
                for game, s in ((full, state), (short, twin))
            ]
            np.testing.assert_array_equal(*rows)
    with pytest.raises(ValueError, match="raise history_window to 9"):
        BlindTicTacToeBot("blind_tictactoe", 0, {"history_window": 4})


def test_a_window_below_one_step_is_refused():
    with pytest.raises(ValueError, match="history_window"):
        hiddenenvs.load_game("meier", history_window=0)
