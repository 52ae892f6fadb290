"""The game model's contract, on every registered game with default parameters."""

import numpy as np
import pytest

import hiddenenvs
from hiddenenvs.game import CHANCE, SIMULTANEOUS, random_playout
from hiddenenvs.registry import REGISTRY

FOUNDATION_GAMES = ["kuhn_poker", "leduc_holdem", "rps", "biased_rps", "matching_pennies"]


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_random_playouts_respect_the_model(name):
    """Tensor shapes and dtypes, chance distributions, clone independence, game length,
    utility bounds and sums, over a few random episodes (long games: a step budget)."""
    game = hiddenenvs.load_game(name)
    info = game.info
    rng = np.random.default_rng(0)
    step_budget = 400
    for episode in range(5):
        state = game.new_initial_state(seed=int(rng.integers(1000)))
        steps = 0
        while not state.is_terminal() and step_budget > 0:
            step_budget -= 1
            for player in range(info.num_players):
                assert (
                    state.information_state_tensor(player).shape
                    == info.information_state_tensor_shape
                )
                assert state.observation_tensor(player).shape == info.observation_tensor_shape
                assert state.information_state_tensor(player).dtype == np.float32
            if state.is_chance_node():
                probabilities = [p for _, p in state.chance_outcomes()]
                assert abs(sum(probabilities) - 1) < 1e-9
            if steps < 3:  # playing a clone to the end must not touch the original
                before = str(state)
                random_playout(state.clone(), rng)
                assert str(state) == before
            if state.is_simultaneous_node():
                joint = [
                    (l[rng.integers(len(l))] if l else -1)
                    for l in (state.legal_actions(p) for p in range(info.num_players))
                ]
                state.apply_actions(joint)
            elif state.is_chance_node():
                state.apply_action(state.chance_outcomes()[0][0])
            else:
                legal = state.legal_actions()
                state.apply_action(legal[rng.integers(len(legal))])
            steps += 1
        assert steps <= info.max_game_length
        if not state.is_terminal():
            break  # out of budget mid-episode
        returns = state.returns()
        assert info.min_utility - 1e-9 <= returns.min() and returns.max() <= info.max_utility + 1e-9
        if info.utility_sum is not None:
            assert abs(returns.sum() - info.utility_sum) < 1e-9


def test_worked_example_in_the_model_docstring():
    game = hiddenenvs.load_game("kuhn_poker")
    state = game.new_initial_state()
    assert state.is_chance_node() and state.chance_outcomes()[0] == (0, 1 / 3)
    state.apply_action(2)
    state.apply_action(0)
    assert state.current_player() == 0
    for action in (0, 1, 0):
        state.apply_action(action)
    assert state.is_terminal() and state.returns().tolist() == [-1.0, 1.0]
    assert state.information_state_key(0) == (
        ("deal", "K"),
        ("deal", None),
        ("pass", None),
        ("bet", None),
        ("pass", None),
    )
    assert state.public_state_key() == ("deal", "deal", "pass", "bet", "pass")
    assert state.history() == (2, 0, 0, 1, 0)


def test_unknown_and_invalid_parameters_are_named():
    with pytest.raises(ValueError, match=r"unknown parameter\(s\) \['max_raise'\].*max_raises"):
        hiddenenvs.load_game("leduc_holdem", max_raise=3)
    with pytest.raises(ValueError, match="'max_raises' must be <= 4, got 9"):
        hiddenenvs.load_game("leduc_holdem", max_raises=9)
    with pytest.raises(ValueError, match="'max_raises' must be int, got str"):
        hiddenenvs.load_game("leduc_holdem", max_raises="2")
    with pytest.raises(ValueError, match="unknown env 'poker'.*kuhn_poker"):
        hiddenenvs.load_game("poker")
    with pytest.raises(ValueError, match="fixed by this variant"):
        hiddenenvs.load_game("rps", matrix="matching_pennies")


def test_illegal_moves_name_the_legal_ones():
    state = hiddenenvs.load_game("leduc_holdem").new_initial_state()
    with pytest.raises(ValueError, match="illegal for chance"):
        state.apply_action(7)
    state.apply_action(0)
    state.apply_action(1)
    with pytest.raises(
        ValueError,
        match=r"action 0 is illegal for player 0; legal actions: 1 \(call\), 2 \(raise\)",
    ):
        state.apply_action(0)
    rps = hiddenenvs.load_game("rps").new_initial_state()
    with pytest.raises(ValueError, match="use apply_actions"):
        rps.apply_action(0)
    with pytest.raises(ValueError, match="needs 2 entries"):
        rps.apply_actions([0])


def test_information_state_keys_hide_the_opponent_card():
    game = hiddenenvs.load_game("leduc_holdem")
    keys = set()
    for opponent_card in range(3):
        state = game.new_initial_state()
        state.apply_action(1)
        state.apply_action(opponent_card)
        keys.add(state.information_state_key(0))
        assert state.public_state_key() == ("deal", "deal")
    assert keys == {(("deal", "Q"), ("deal", None))}
    state.apply_action(2)  # player 0 raises: public, as is the public card
    state.apply_action(1)
    state.apply_action(0)
    assert state.information_state_key(1) == (
        ("deal", None),
        ("deal", "K"),
        ("raise", None),
        ("call", None),
        ("J", None),
    )


def test_leduc_max_raises_changes_the_game():
    for max_raises in (1, 2, 3):
        game = hiddenenvs.load_game("leduc_holdem", max_raises=max_raises)
        state = game.new_initial_state()
        state.apply_action(0)
        state.apply_action(1)
        for _ in range(max_raises):
            assert 2 in state.legal_actions()
            state.apply_action(2)
        assert state.legal_actions() == [0, 1]
        assert game.info.information_state_tensor_shape == (8 + 6 * (2 + max_raises),)


@pytest.mark.parametrize("name", FOUNDATION_GAMES)
def test_chance_and_simultaneous_constants(name):
    state = hiddenenvs.load_game(name).new_initial_state()
    assert state.current_player() in (CHANCE, SIMULTANEOUS)


def test_float32_ones_at_is_numpys_zeros_with_ones_written_and_refuses_bad_places():
    from hiddenenvs._encoding import float32_ones_at

    for shape, ones in (((7,), [0, 3, 3, 6]), ((2, 3, 4), [0, 23, 5, 11]), ((4,), []), ((0,), [])):
        expected = np.zeros(shape, dtype=np.float32)
        expected.reshape(-1)[ones] = 1
        tensor = float32_ones_at(shape, ones)
        assert tensor.dtype == np.float32 and tensor.shape == shape and tensor.flags.c_contiguous
        np.testing.assert_array_equal(tensor, expected)
    with pytest.raises(IndexError, match="index 7 is outside a tensor of shape"):
        float32_ones_at((7,), [1, 7])
    with pytest.raises(IndexError, match="index -1 is outside"):
        float32_ones_at((7,), [-1])
    with pytest.raises(ValueError, match="negative dimension"):
        float32_ones_at((-1,), [])
    with pytest.raises(TypeError):
        float32_ones_at((3,), [1.5])
