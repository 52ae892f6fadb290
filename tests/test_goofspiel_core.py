"""The compiled Goofspiel state against main's pure-Python state, kept here as the
reference (``ReferenceState``, verbatim but for its name and ``__str__``), and against
OpenSpiel's C++ ``goofspiel``: seeded random games over every parameter, compared at
every node (keys, tensors, history, legal actions, chance, returns, clones)."""

import pickle

import numpy as np
import pytest

import hiddenenvs
from hiddenenvs._encoding import float32_ones_at
from hiddenenvs.game import CHANCE, SIMULTANEOUS, TERMINAL, State
from test_goofspiel import play_alongside_openspiel

WIN, LOSS, TIE = 1, -1, 0
_RESULT_INDEX = {WIN: 0, LOSS: 1, TIE: 2}


def _sign(value: int) -> int:
    return (value > 0) - (value < 0)


class ReferenceState(State):
    __slots__ = ("point_cards", "bids", "scores", "hands", "deck", "phase", "round_ones")

    def __init__(self, game):
        self.game = game
        cards = range(1, game.num_cards + 1)
        self.point_cards: list[int] = []  # revealed point values, one per round begun
        self.bids: tuple[list[int], list[int]] = ([], [])  # card ranks bid by each player
        self.scores = [0, 0]
        self.hands = (list(cards), list(cards))  # card ranks not yet bid, ascending
        self.deck = list(cards)  # point values not yet revealed, ascending
        self.phase = CHANCE  # the current player: CHANCE, SIMULTANEOUS or TERMINAL
        # Per player, where the information-state tensor has ones for the rounds played,
        # grown as rounds are scored so that the tensor costs no loop over past rounds.
        self.round_ones: tuple[list[int], list[int]] = ([], [])
        self._begin_round()

    def clone(self):
        other = ReferenceState.__new__(ReferenceState)
        other.game = self.game
        other.point_cards = self.point_cards[:]
        other.bids = (self.bids[0][:], self.bids[1][:])
        other.scores = self.scores[:]
        other.hands = (self.hands[0][:], self.hands[1][:])
        other.deck = self.deck[:]
        other.phase = self.phase
        other.round_ones = (self.round_ones[0][:], self.round_ones[1][:])
        return other

    # ---- rounds -------------------------------------------------------------------
    def _begin_round(self) -> None:
        """Reveal a fixed-order point card, or play the forced last round."""
        game = self.game
        played = len(self.bids[0])
        if played == game.num_cards - 1:
            self._reveal(self.deck[0])
            self._score_round(self.hands[0][0], self.hands[1][0])
        elif game.fixed_points is not None:
            self._reveal(game.fixed_points[played])

    def _reveal(self, point: int) -> None:
        self.point_cards.append(point)
        self.deck.remove(point)
        self.phase = SIMULTANEOUS

    def _score_round(self, bid_0: int, bid_1: int) -> None:
        self.bids[0].append(bid_0)
        self.bids[1].append(bid_1)
        self.hands[0].remove(bid_0)
        self.hands[1].remove(bid_1)
        if bid_0 != bid_1:
            self.scores[0 if bid_0 > bid_1 else 1] += self.point_cards[-1]
        game, round_index = self.game, len(self.bids[0]) - 1
        n, base = game.num_cards, 2 + 2 * game.num_cards + round_index * game.round_block
        for player, (mine, theirs) in enumerate(((bid_0, bid_1), (bid_1, bid_0))):
            seen = _RESULT_INDEX[self._result(player, round_index)] if game.imp_info else theirs - 1
            self.round_ones[player].extend(
                (base + self.point_cards[-1] - 1, base + n + mine - 1, base + 2 * n + seen)
            )
        self.phase = TERMINAL if len(self.bids[0]) == self.game.num_cards else CHANCE

    def current_player(self):
        return self.phase

    def movers(self):
        # Both players bid at every simultaneous node: the one-card last round plays
        # itself (_begin_round), so each hand holds two cards or more here.
        return [0, 1] if self.phase == SIMULTANEOUS else []

    def legal_actions(self, player=None):
        current = self.current_player()
        if current == CHANCE:
            return [] if player is not None else [card - 1 for card in self.deck]
        if current == TERMINAL:
            return []
        if player is None:
            raise ValueError(f"{self.game.NAME}: simultaneous node; name the player")
        return [card - 1 for card in self.hands[player]]

    def chance_outcomes(self):
        if self.current_player() != CHANCE:
            return super().chance_outcomes()
        remaining = self.deck
        return [(card - 1, 1.0 / len(remaining)) for card in remaining]

    def _apply_action(self, action):
        self._reveal(action + 1)

    def _apply_actions(self, joint):
        self._score_round(joint[0] + 1, joint[1] + 1)
        if self.phase != TERMINAL:
            self._begin_round()

    # ---- outcome ------------------------------------------------------------------
    def returns(self):
        if not self.is_terminal():
            return np.zeros(2)
        difference = self.scores[0] - self.scores[1]
        if not self.game.point_difference:
            difference = np.sign(difference)
        return np.array([difference, -difference], dtype=np.float64)

    # ---- what players know ----------------------------------------------------------
    def _result(self, player: int, round_index: int) -> int:
        mine, theirs = self.bids[player][round_index], self.bids[1 - player][round_index]
        return WIN if mine > theirs else LOSS if mine < theirs else TIE

    def history(self):
        decided = self.game.num_cards - 1  # the last round plays itself
        entries = []
        for round_index, point in enumerate(self.point_cards[:decided]):
            if self.game.fixed_points is None:
                entries.append(point - 1)
            if round_index < len(self.bids[0]):
                entries.append((self.bids[0][round_index] - 1, self.bids[1][round_index] - 1))
        return tuple(entries)

    def _round_public(self, round_index: int):
        bid_0, bid_1 = self.bids[0][round_index], self.bids[1][round_index]
        return _sign(bid_0 - bid_1) if self.game.imp_info else (bid_0, bid_1)

    def public_state_key(self):
        entries = []
        for round_index, point in enumerate(self.point_cards):
            entries.append(point)
            if round_index < len(self.bids[0]):
                entries.append(self._round_public(round_index))
        return tuple(entries)

    def information_state_key(self, player):
        imp_info = self.game.imp_info
        entries = []
        for round_index, point in enumerate(self.point_cards):
            entries.append((point, None))
            if round_index < len(self.bids[0]):
                private = self.bids[player][round_index] if imp_info else None
                entries.append((self._round_public(round_index), private))
        return tuple(entries)

    def public_observation_tensor(self):
        game = self.game
        n = game.num_cards
        block = n + (3 if game.imp_info else 2 * n)
        tensor = np.zeros(game.info.public_observation_tensor_shape, dtype=np.float32)
        for round_index, point in enumerate(self.point_cards):
            base = round_index * block
            tensor[base + point - 1] = 1
            if round_index < len(self.bids[0]):
                if game.imp_info:
                    tensor[base + n + _RESULT_INDEX[self._result(0, round_index)]] = 1
                else:
                    tensor[base + n + self.bids[0][round_index] - 1] = 1
                    tensor[base + 2 * n + self.bids[1][round_index] - 1] = 1
        return tensor

    def information_state_tensor(self, player):
        game = self.game
        n = game.num_cards
        # The ones' indices, gathered in a list and written in one compiled call: numpy's
        # per-element writes, or its fancy indexing with a list, cost more than the rest of
        # a step.
        ones = [player]
        if len(self.point_cards) > len(self.bids[0]):
            ones.append(1 + self.point_cards[-1])
        ones += [1 + n + card for card in self.hands[player]]
        ones += self.round_ones[player]
        return float32_ones_at(game.info.information_state_tensor_shape, ones)

    def observation_tensor(self, player):
        game = self.game
        n = game.num_cards
        tensor = np.zeros(game.info.observation_tensor_shape, dtype=np.float32)
        tensor[player] = 1
        if len(self.point_cards) > len(self.bids[0]):
            tensor[1 + self.point_cards[-1]] = 1
        for card in self.hands[player]:
            tensor[1 + n + card] = 1
        if not game.imp_info:
            for card in self.hands[1 - player]:
                tensor[1 + 2 * n + card] = 1
        for card in self.deck:
            tensor[1 + 3 * n + card] = 1
        tensor[2 + 4 * n] = self.scores[player] / game.total_points
        tensor[3 + 4 * n] = self.scores[1 - player] / game.total_points
        return tensor


PARAMETERS = [
    (num_cards, order, imp_info, returns)
    for num_cards in range(3, 14)
    for order in ("ascending", "descending", "random")
    for imp_info in (False, True)
    for returns in (("win_loss", "point_difference") if num_cards in (3, 6) else ("win_loss",))
]


def assert_same_node(state, reference):
    game = reference.game
    assert state.current_player() == reference.current_player()
    assert state.is_terminal() == reference.is_terminal()
    assert state.movers() == reference.movers()
    assert state.history() == reference.history()
    assert state.public_state_key() == reference.public_state_key()
    assert (state.point_cards, state.bids, state.scores, state.hands, state.deck) == (
        reference.point_cards,
        reference.bids,
        reference.scores,
        reference.hands,
        reference.deck,
    )
    tensors = [
        (
            state.public_observation_tensor(),
            reference.public_observation_tensor(),
            game.info.public_observation_tensor_shape,
        ),
    ]
    for player in (0, 1):
        assert state.information_state_key(player) == reference.information_state_key(player)
        assert state.legal_actions(player) == reference.legal_actions(player)
        assert np.array_equal(
            state.legal_actions_mask(player), reference.legal_actions_mask(player)
        )
        tensors.append(
            (
                state.information_state_tensor(player),
                reference.information_state_tensor(player),
                game.info.information_state_tensor_shape,
            )
        )
        tensors.append(
            (
                state.observation_tensor(player),
                reference.observation_tensor(player),
                game.info.observation_tensor_shape,
            )
        )
    for ours, theirs, shape in tensors:
        # Bit-identical: same dtype, shape and bytes.
        assert ours.dtype == theirs.dtype == np.float32 and ours.shape == theirs.shape == shape
        assert ours.tobytes() == theirs.tobytes()
    if state.current_player() == SIMULTANEOUS:
        assert np.array_equal(
            state.information_state_tensors(),
            [reference.information_state_tensor(p) for p in (0, 1)],
        )
        assert np.array_equal(
            state.observation_tensors(), [reference.observation_tensor(p) for p in (0, 1)]
        )
        assert np.array_equal(
            state.legal_actions_masks(), [reference.legal_actions_mask(p) for p in (0, 1)]
        )
    elif state.current_player() == CHANCE:
        assert state.legal_actions() == reference.legal_actions()
        assert state.chance_outcomes() == reference.chance_outcomes()
    returns, expected = state.returns(), reference.returns()
    assert returns.dtype == expected.dtype and returns.tobytes() == expected.tobytes()


@pytest.mark.parametrize("num_cards, points_order, imp_info, returns", PARAMETERS)
def test_random_games_equal_the_pure_python_reference(num_cards, points_order, imp_info, returns):
    game = hiddenenvs.load_game(
        "goofspiel",
        num_cards=num_cards,
        points_order=points_order,
        imp_info=imp_info,
        returns=returns,
    )
    rng = np.random.default_rng(num_cards)
    for _ in range(20):
        state, reference = game.new_initial_state(), ReferenceState(game)
        midgame = None
        while True:
            assert_same_node(state, reference)
            if state.is_terminal():
                break
            if state.is_chance_node():
                action = int(rng.choice(reference.legal_actions()))
                state.apply_action(action)
                reference.apply_action(action)
            else:
                joint = [int(rng.choice(reference.legal_actions(p))) for p in (0, 1)]
                if midgame is None and rng.random() < 0.3:
                    midgame = (state.clone(), reference.clone(), joint)
                state.apply_actions(joint)
                reference.apply_actions(joint)
        assert pickle.loads(pickle.dumps(state)).history() == reference.history()
        if midgame is not None:  # a clone plays on independently of its original
            clone, reference_clone, joint = midgame
            before = clone.information_state_key(0)
            clone.apply_actions(joint)
            reference_clone.apply_actions(joint)
            assert clone.information_state_key(0) != before
            assert_same_node(clone, reference_clone)
            assert_same_node(state, reference)


def test_illegal_actions_are_refused_as_before():
    game = hiddenenvs.load_game("goofspiel", num_cards=4, imp_info=True)
    state, reference = game.new_initial_state(), ReferenceState(game)
    state.apply_actions([1, 2])
    reference.apply_actions([1, 2])
    for joint in ([1, 0], [0, 2], [4, 0], [-1, 0], [0.5, 0], ["0", 1], [0, 1, 2], [0]):
        with pytest.raises(ValueError) as error:
            state.apply_actions(joint)
        with pytest.raises(ValueError) as expected:
            reference.apply_actions(joint)
        assert str(error.value) == str(expected.value)
    for joint in ([np.int64(0), 3], [0.0, 3.0]):  # integers and integral floats, as before
        ours, theirs = state.clone(), reference.clone()
        ours.apply_actions(joint)
        theirs.apply_actions(joint)
        assert_same_node(ours, theirs)
    with pytest.raises(ValueError, match="simultaneous node; use apply_actions"):
        state.apply_action(0)


@pytest.mark.parametrize("points_order", ["ascending", "descending", "random"])
@pytest.mark.parametrize("imp_info", [False, True])
def test_random_games_equal_openspiel(points_order, imp_info):
    pyspiel = pytest.importorskip("pyspiel")
    rng = np.random.default_rng(1)
    for num_cards in (3, 7, 13):
        spiel_game = pyspiel.load_game(
            "goofspiel",
            {
                "num_cards": num_cards,
                "points_order": points_order,
                "imp_info": imp_info,
                "returns_type": "point_difference",
            },
        )
        game = hiddenenvs.load_game(
            "goofspiel",
            num_cards=num_cards,
            points_order=points_order,
            imp_info=imp_info,
            returns="point_difference",
        )
        for _ in range(30):
            state, spiel_state = play_alongside_openspiel(game, spiel_game, rng)
            # OpenSpiel's point_difference is points minus the mean of both: half ours.
            assert state.is_terminal() and state.returns().tolist() == [
                2 * r for r in spiel_state.returns()
            ]


def test_aec_env_masks_from_the_core_are_read_only_and_checked():
    env = hiddenenvs.make("goofspiel", num_cards=5, imp_info=True)
    env.reset(seed=3)
    state = env.unwrapped.game_state
    observation, *_ = env.last()
    mask = observation["action_mask"]
    assert (
        not mask.flags.writeable
        and mask.tolist() == state.legal_actions_mask(0).tolist() == [1] * 5
    )
    env.step(2)  # player 0 bids 3 (checked against the mask it saw)
    assert env.observe("player_0")["action_mask"].tolist() == [0] * 5  # waiting for player 1
    env.step(4)  # player 1 bids 5 without looking first: checked against its legal actions
    observation, *_ = env.last()
    assert observation["action_mask"].tolist() == [1, 1, 0, 1, 1]
    with pytest.raises(ValueError, match="action 2 is illegal for player_0"):
        env.step(2)
    with pytest.raises(TypeError, match="must be an integer"):
        env.step(1.0)


def test_the_core_refuses_a_player_or_card_outside_the_game():
    state = hiddenenvs.load_game("goofspiel", num_cards=4).new_initial_state()
    for method in (
        state.legal_actions,
        state.information_state_key,
        state.information_state_tensor,
        state.observation_tensor,
        state.legal_actions_mask,
    ):
        for player in (2, -1):
            with pytest.raises(ValueError, match=f"player must be 0 or 1, got {player}"):
                method(player)
    with pytest.raises(ValueError, match="no card for bids"):
        state.core.play(4, 0)
    with pytest.raises(ValueError, match="no point card for action -1"):
        state.core.reveal(-1)


def test_the_core_writes_information_state_tensors_into_a_given_buffer():
    state = hiddenenvs.load_game("goofspiel", num_cards=6, imp_info=True).new_initial_state()
    state.apply_actions([5, 2])
    buffer = np.full(state.game.info.information_state_tensor_shape, 7.0, dtype=np.float32)
    for player in (0, 1):
        state.core.write_information_state_tensor(player, buffer)  # overwrites every value
        assert buffer.tobytes() == state.information_state_tensor(player).tobytes()
    with pytest.raises(ValueError, match="has 104 values, the buffer 103"):
        state.core.write_information_state_tensor(0, np.zeros(103, dtype=np.float32))
