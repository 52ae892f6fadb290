"""The search-ready game model: public/private observations, histories, portability.

Contract (``hiddenenvs/game.py``): ``public_state_key()`` has one entry per step;
``information_state_key(p)`` has the same steps, each ``(public, private)`` with the
public part equal to the public key's entry; keys only grow, by prefix, at least one
entry per transition; ``history()`` replays through ``game.state_from_history``; games
and states pickle small and come back equal.

Checked on every registered game: exhaustively where the tree is small (every
information set lies in exactly one public state; equal public keys give equal public
tensors), along seeded random playouts everywhere else; and by explicit swaps of a
private chance outcome or a hidden move, which must leave the public key and tensor
unchanged.
"""

from __future__ import annotations

import pickle
from collections import defaultdict

import numpy as np
import pytest

import hiddenenvs
from hiddenenvs.game import CHANCE, SIMULTANEOUS
from hiddenenvs.registry import REGISTRY

# (name, params) small enough to enumerate every history.
ENUMERABLE = [
    ("kuhn_poker", {}),
    ("leduc_holdem", {}),
    ("rps", {}),
    ("biased_rps", {}),
    ("matching_pennies", {}),
    ("goofspiel", {"num_cards": 3}),
    ("goofspiel", {"num_cards": 4, "imp_info": True}),
    ("goofspiel", {"num_cards": 3, "imp_info": True, "points_order": "random"}),
    ("liars_dice", {"num_dice": 1, "faces": 3}),
    ("monty_hall", {}),
    ("gdl_biased_rps", {}),
]
# Every registered env with its default parameters, along random playouts.
PLAYOUT_GAMES = [(name, {}) for name in sorted(REGISTRY)] + [
    ("othello", {"board_size": 4}),
    ("combat", {"map": "small"}),
    ("combat", {"map": "small", "mode": "fighter"}),
    ("goofspiel", {"num_cards": 6, "imp_info": True}),
]


def _ids(cases):
    return [name + "".join(f"-{k}={v}" for k, v in params.items()) for name, params in cases]


def _children(state, rng=None):
    """Every child (or, with ``rng``, one random child) as (entry, state)."""
    game = state.game
    player = state.current_player()
    if player == CHANCE:
        options = [a for a, _ in state.chance_outcomes()]
    elif player == SIMULTANEOUS:
        legal = [state.legal_actions(p) or [-1] for p in range(game.info.num_players)]
        if rng is not None:
            options = [tuple(int(rng.choice(l)) for l in legal)]
        else:
            options = [()]
            for actions in legal:
                options = [joint + (a,) for joint in options for a in actions]
    else:
        options = state.legal_actions()
    if rng is not None and player != SIMULTANEOUS:
        options = [options[rng.integers(len(options))]]
    for entry in options:
        child = state.clone()
        if isinstance(entry, tuple):
            child.apply_actions(entry)
        else:
            child.apply_action(entry)
        yield entry, child


def _check_state(state):
    """The per-state contract; returns the public key."""
    game = state.game
    public = state.public_state_key()
    assert isinstance(public, tuple)
    for player in range(game.info.num_players):
        key = state.information_state_key(player)
        assert isinstance(key, tuple) and len(key) == len(public), (player, key, public)
        for entry, public_entry in zip(key, public):
            assert isinstance(entry, tuple) and len(entry) == 2 and entry[0] == public_entry
    tensor = state.public_observation_tensor()
    assert tensor.dtype == np.float32
    assert tensor.shape == game.info.public_observation_tensor_shape
    return public


def _check_transition(parent, child):
    """Keys extend by prefix, at least one entry per transition, for everyone."""
    grown = len(child.public_state_key()) - len(parent.public_state_key())
    assert grown >= 1
    assert child.public_state_key()[:-grown] == parent.public_state_key()
    for player in range(parent.game.info.num_players):
        assert child.information_state_key(player)[:-grown] == parent.information_state_key(player)


def _check_history_and_pickle(state):
    """Replaying the history and unpickling both give back an equal state (combat's
    history names its seeds, so its sampled hits replay too)."""
    game = state.game
    history = state.history()
    assert isinstance(history, tuple)
    replayed = game.state_from_history(history)
    restored = pickle.loads(pickle.dumps(state))
    assert restored.game.spec == game.spec
    for rebuilt in (replayed, restored):
        assert rebuilt.history() == history
        assert rebuilt.public_state_key() == state.public_state_key()
        np.testing.assert_array_equal(
            rebuilt.public_observation_tensor(), state.public_observation_tensor()
        )
        for player in range(game.info.num_players):
            assert rebuilt.information_state_key(player) == state.information_state_key(player)
            np.testing.assert_array_equal(
                rebuilt.information_state_tensor(player), state.information_state_tensor(player)
            )
        assert rebuilt.is_terminal() == state.is_terminal()
        np.testing.assert_array_equal(rebuilt.returns(), state.returns())


@pytest.mark.parametrize(("name", "params"), ENUMERABLE, ids=_ids(ENUMERABLE))
def test_every_information_set_lies_in_one_public_state(name, params):
    game = hiddenenvs.load_game(name, **params)
    public_of_infoset: dict = {}
    tensor_of_public: dict = {}
    stack = [game.new_initial_state()]
    visited = 0
    while stack:
        state = stack.pop()
        visited += 1
        public = _check_state(state)
        tensor = state.public_observation_tensor().tobytes()
        assert tensor_of_public.setdefault(public, tensor) == tensor, public
        for player in range(game.info.num_players):
            key = (player, state.information_state_key(player))
            assert public_of_infoset.setdefault(key, public) == public, key
        if visited % 97 == 0:  # a sample of the states: replay and pickling cost more
            _check_history_and_pickle(state)
        if state.is_terminal():
            continue
        for _, child in _children(state):
            _check_transition(state, child)
            stack.append(child)
    assert visited > 1


@pytest.mark.parametrize(("name", "params"), PLAYOUT_GAMES, ids=_ids(PLAYOUT_GAMES))
def test_contract_along_random_playouts(name, params):
    game = hiddenenvs.load_game(name, **params)
    rng = np.random.default_rng(1)
    for episode in range(3):
        state = game.new_initial_state(seed=episode)
        for step in range(60):
            _check_state(state)
            if step % 10 == 0:
                _check_history_and_pickle(state)
            if state.is_terminal():
                break
            _, child = next(_children(state, rng))
            _check_transition(state, child)
            state = child
        _check_history_and_pickle(state)


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_games_and_states_pickle_small(name):
    game = hiddenenvs.load_game(name)
    assert len(pickle.dumps(game)) < 1_000
    state = game.new_initial_state(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(5):
        if state.is_terminal():
            break
        state = next(_children(state, rng))[1]
    assert len(pickle.dumps(state)) < 200_000, "a state must not carry the game's tables"
    assert pickle.loads(pickle.dumps(game)).spec == game.spec


def test_game_identity_is_the_registered_name_not_the_class():
    game = hiddenenvs.load_game("gdl_biased_rps")
    assert game.spec.name == "gdl_biased_rps" and type(game).NAME == "gdl"
    assert hiddenenvs.load_game(game.spec).spec == game.spec
    leduc = hiddenenvs.load_game("leduc_holdem", max_raises=3)
    assert hiddenenvs.load_game(leduc.spec).params["max_raises"] == 3
    rebuilt = pickle.loads(pickle.dumps(leduc))
    assert rebuilt.spec == leduc.spec and rebuilt.params == leduc.params


def test_state_from_history_names_the_bad_entry():
    game = hiddenenvs.load_game("kuhn_poker")
    with pytest.raises(ValueError, match=r"history entry 1 \(0\).*illegal for chance"):
        game.state_from_history([0, 0])


# ---- swaps of hidden information leave the public state alone ---------------------------------
def _public(game, history):
    state = game.state_from_history(history)
    return state.public_state_key(), state.public_observation_tensor().tobytes()


SWAPS = {
    # a private card dealt to player 1 (J vs K), same public betting
    ("kuhn_poker", ()): [((0, 1, 0, 1), (0, 2, 0, 1))],
    # Leduc (chance deals ranks): player 0's private card (J vs K), same betting and public card
    ("leduc_holdem", ()): [((0, 1, 1, 1, 1), (2, 1, 1, 1, 1))],
    # Liar's Dice: the opponent's die, same bids
    ("liars_dice", (("faces", 3), ("num_dice", 1))): [((0, 1, 2), (0, 2, 2))],
    # II-Goofspiel: bids (2 v 1) and (3 v 1): player 0 wins both; the bids stay private
    ("goofspiel", (("imp_info", True), ("num_cards", 4))): [(((1, 0),), ((2, 0),))],
    # Monty Hall: the car behind door 1 or door 2, the candidate chose door 3
    ("monty_hall", ()): "monty_hall",
}


@pytest.mark.parametrize("case", sorted(SWAPS, key=str), ids=lambda c: c[0])
def test_swapping_hidden_information_leaves_the_public_state_unchanged(case):
    name, params = case
    game = hiddenenvs.load_game(name, **dict(params))
    pairs = SWAPS[case]
    if pairs == "monty_hall":
        pairs = _monty_hall_swaps(game)
    for first, second in pairs:
        assert _public(game, first) == _public(game, second)
        one, other = game.state_from_history(first), game.state_from_history(second)
        # ... while someone can tell them apart (otherwise the swap proves nothing)
        assert (
            any(
                one.information_state_key(p) != other.information_state_key(p)
                for p in range(game.info.num_players)
            )
            or one.history() != other.history()
        )


def _monty_hall_swaps(game):
    """Two histories that differ only in where random hid the car."""
    state = game.new_initial_state()
    assert state.is_chance_node()
    pairs = []
    cars = [a for a, _ in state.chance_outcomes()]
    for first, second in zip(cars, cars[1:]):
        one, other = game.state_from_history((first,)), game.state_from_history((second,))
        pairs.append(((first,), (second,)))
        assert one.public_state_key() == other.public_state_key()
    return pairs


def test_ii_goofspiel_keeps_bids_private_but_reveals_winners():
    game = hiddenenvs.load_game("goofspiel", num_cards=4, imp_info=True)
    win, lose = game.state_from_history([(1, 0)]), game.state_from_history([(0, 1)])
    assert win.public_state_key() != lose.public_state_key()  # the winner is public
    by_three = game.state_from_history([(3, 0)])
    assert by_three.information_state_key(1) == win.information_state_key(1)
    assert by_three.information_state_key(0) != win.information_state_key(0)


def test_public_keys_group_histories_by_public_observations_only():
    """Kuhn: the public key forgets the cards and nothing else."""
    game = hiddenenvs.load_game("kuhn_poker")
    groups = defaultdict(set)
    for first in range(3):
        for second in range(3):
            if first != second:
                state = game.state_from_history([first, second, 1])
                groups[state.public_state_key()].add((first, second))
    assert len(groups) == 1 and len(next(iter(groups.values()))) == 6
    assert (
        game.state_from_history([0, 1, 0]).public_state_key()
        != game.state_from_history([0, 1, 1]).public_state_key()
    )
