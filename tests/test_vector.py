"""hiddenenvs.vector against the scalar game model: the same deals and actions give the
same tensors, masks, players, rewards and terminations in every env of a batch."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hiddenenvs.vector as vector
from hiddenenvs.game import CHANCE, SIMULTANEOUS, TERMINAL
from hiddenenvs.registry import load_game

CASES = [
    ("kuhn_poker", {}, "information_state"),
    ("kuhn_poker", {}, "observation"),
    ("leduc_holdem", {}, "information_state"),
    ("leduc_holdem", {}, "observation"),
    ("leduc_holdem", {"max_raises": 1}, "information_state"),
    ("leduc_holdem", {"max_raises": 4}, "information_state"),
    ("rps", {}, "information_state"),
    ("biased_rps", {}, "information_state"),
    ("matching_pennies", {}, "information_state"),
    ("liars_dice", {}, "information_state"),
    ("liars_dice", {}, "observation"),
    ("liars_dice", {"num_dice": 2, "faces": 3}, "information_state"),
    ("liars_dice", {"num_dice": 3, "faces": 2}, "observation"),
    ("goofspiel", {}, "information_state"),
    ("goofspiel", {}, "observation"),
    (
        "goofspiel",
        {"imp_info": True, "num_cards": 5, "points_order": "random"},
        "information_state",
    ),
    ("goofspiel", {"imp_info": True, "num_cards": 5, "points_order": "random"}, "observation"),
    (
        "goofspiel",
        {"num_cards": 6, "points_order": "descending", "returns": "point_difference"},
        "observation",
    ),
    (
        "goofspiel",
        {"num_cards": 3, "points_order": "random", "returns": "point_difference"},
        "information_state",
    ),
    ("othello", {"board_size": 4}, "information_state"),
    ("othello", {"board_size": 6}, "information_state"),
    ("othello", {"board_size": 8}, "information_state"),
]


class ScalarMirror:
    """One scalar state per env, fed the vector env's deals and the same actions."""

    def __init__(self, game, observation_type: str, deals: np.ndarray):
        self.game = game
        self.tensor_name = f"{observation_type}_tensor"
        self.states = [self.game.new_initial_state() for _ in deals]
        self.pending_deals = [list(row) for row in deals]
        for index in range(len(deals)):
            self._play_chance(index)

    def _restart(self, index, deals_row):
        self.states[index] = self.game.new_initial_state()
        self.pending_deals[index] = list(deals_row)
        self._play_chance(index)

    def _play_chance(self, index):
        state = self.states[index]
        while state.current_player() == CHANCE:
            state.apply_action(int(self.pending_deals[index].pop(0)))

    def tensor(self, state, player):
        return getattr(state, self.tensor_name)(player)

    def check_decisions(self, step, simultaneous: bool):
        for index, state in enumerate(self.states):
            player = state.current_player()
            assert step.current_players[index] == player, f"env {index}"
            if simultaneous:
                assert player == SIMULTANEOUS
                for p in range(self.game.info.num_players):
                    np.testing.assert_array_equal(
                        step.observations[index, p], self.tensor(state, p)
                    )
                    np.testing.assert_array_equal(
                        step.legal_action_masks[index, p], state.legal_actions_mask(p)
                    )
            else:
                np.testing.assert_array_equal(
                    step.observations[index], self.tensor(state, player), f"env {index}"
                )
                np.testing.assert_array_equal(
                    step.legal_action_masks[index], state.legal_actions_mask()
                )

    def play(self, actions, step, deals_after):
        """Apply ``actions`` and compare the step's outcome; restart finished games."""
        num_players = self.game.info.num_players
        for index, state in enumerate(self.states):
            if state.current_player() == SIMULTANEOUS:
                state.apply_actions([int(a) for a in actions[index]])
            else:
                state.apply_action(int(actions[index]))
            self._play_chance(index)
            ended = state.current_player() == TERMINAL
            assert step.terminated[index] == ended, f"env {index}"
            assert not step.truncated[index]
            expected_rewards = state.returns() if ended else np.zeros(num_players)
            np.testing.assert_array_equal(step.rewards[index], expected_rewards.astype(np.float32))
            if ended:
                for p in range(num_players):
                    np.testing.assert_array_equal(
                        step.final_observations[index, p], self.tensor(state, p)
                    )
                self._restart(index, deals_after[index])


@pytest.mark.parametrize("name, params, observation_type", CASES)
def test_vector_env_matches_the_scalar_game(name, params, observation_type):
    num_envs = 16
    num_steps = 40 if name in ("rps", "biased_rps", "matching_pennies") else 150  # one step a game
    env = vector.make(name, num_envs=num_envs, seed=7, observation_type=observation_type, **params)
    policy = vector.RandomLegalPolicy(seed=3)
    step = env.reset()
    mirror = ScalarMirror(load_game(name, **params), observation_type, env.deals)
    mirror.check_decisions(step, env.simultaneous)
    endings = 0
    for _ in range(num_steps):
        actions = policy(step.legal_action_masks)
        step = env.step(actions)
        mirror.play(actions, step, env.deals)
        mirror.check_decisions(step, env.simultaneous)
        endings += int(step.terminated.sum())
    assert endings > 0


def test_goofspiel_kernel_plays_ranks_above_int8_like_the_scalar_game():
    """Ranks past 127 (the kernel once kept cards as int8: a random deck's high point cards
    wrote outside the tensor and corrupted the heap)."""
    params = {"num_cards": 150, "points_order": "random"}
    env = vector.make("goofspiel", num_envs=2, seed=7, observation_type="observation", **params)
    policy = vector.RandomLegalPolicy(seed=3)
    step = env.reset()
    assert env.deals.max() > 127
    mirror = ScalarMirror(load_game("goofspiel", **params), "observation", env.deals)
    mirror.check_decisions(step, env.simultaneous)
    for _ in range(12):
        actions = policy(step.legal_action_masks)
        step = env.step(actions)
        mirror.play(actions, step, env.deals)
        mirror.check_decisions(step, env.simultaneous)


@settings(max_examples=12, deadline=None, derandomize=True)
@given(
    case=st.sampled_from(CASES),
    num_envs=st.integers(1, 6),
    seed=st.integers(0, 2**64 - 1),
    policy_seed=st.integers(0, 2**32 - 1),
)
def test_any_seed_and_batch_size_match_the_scalar_game(case, num_envs, seed, policy_seed):
    name, params, observation_type = case
    env = vector.make(
        name, num_envs=num_envs, seed=seed, observation_type=observation_type, **params
    )
    policy = vector.RandomLegalPolicy(seed=policy_seed)
    step = env.reset()
    mirror = ScalarMirror(load_game(name, **params), observation_type, env.deals)
    mirror.check_decisions(step, env.simultaneous)
    for _ in range(25):
        actions = policy(step.legal_action_masks)
        step = env.step(actions)
        mirror.play(actions, step, env.deals)
        mirror.check_decisions(step, env.simultaneous)


def test_same_seed_same_games_and_rows_differ():
    def run(seed):
        env = vector.make("leduc_holdem", num_envs=8, seed=seed)
        policy = vector.RandomLegalPolicy(seed=0)
        step = env.reset()
        deals, rewards = [env.deals], []
        for _ in range(40):
            step = env.step(policy(step.legal_action_masks))
            deals.append(env.deals)
            rewards.append(step.rewards)
        return np.stack(deals), np.stack(rewards)

    first, again, other = run(11), run(11), run(12)
    np.testing.assert_array_equal(first[0], again[0])
    np.testing.assert_array_equal(first[1], again[1])
    assert not np.array_equal(first[0], other[0])
    assert len({tuple(row) for row in first[0][0]}) > 1  # envs get different deals


def test_reset_with_a_seed_replays_the_same_deals():
    env = vector.make("kuhn_poker", num_envs=32, seed=5)
    env.reset()
    deals = env.deals
    env.reset(seed=99)
    env.reset(seed=5)
    np.testing.assert_array_equal(env.deals, deals)


def test_leduc_deals_follow_the_six_card_deck():
    # Exact probabilities of (player 0's rank, player 1's rank, public rank) from two
    # cards of each of three ranks, drawn without replacement.
    env = vector.make("leduc_holdem", num_envs=60_000, seed=1)
    env.reset()
    counts = np.zeros((3, 3, 3))
    np.add.at(counts, tuple(env.deals.T), 1)
    for ranks in np.ndindex(3, 3, 3):
        left = [2, 2, 2]
        probability = 1.0
        for rank in ranks:
            probability *= left[rank] / sum(left)
            left[rank] -= 1
        expected = probability * env.num_envs
        assert abs(counts[ranks] - expected) < 5 * np.sqrt(expected + 1), ranks


def test_illegal_action_names_the_env_and_moves_nothing():
    env = vector.make("leduc_holdem", num_envs=4, seed=0)
    step = env.reset()
    actions = np.ones(4, dtype=np.int64)  # call is always legal
    actions[2] = 0  # fold is illegal when not facing a raise
    with pytest.raises(ValueError, match=r"env 2: player 0 played 0, legal \[1, 2\]; no env moved"):
        env.step(actions)
    np.testing.assert_array_equal(env.step(np.ones(4, dtype=np.int64)).current_players, 1)
    assert step.current_players.tolist() == [0, 0, 0, 0]


def test_wrong_shapes_and_names_are_clear_errors():
    with pytest.raises(ValueError, match="no vector kernel for 'nope'"):
        vector.make("nope")
    with pytest.raises(ValueError, match="num_envs must be an int >= 1"):
        vector.make("kuhn_poker", num_envs=0)
    with pytest.raises(ValueError, match="max_raises"):
        vector.make("leduc_holdem", max_raises=9)
    env = vector.make("rps", num_envs=3, seed=0)
    with pytest.raises(ValueError, match="call reset"):
        env.step(np.zeros((3, 2), dtype=np.int64))
    env.reset()
    with pytest.raises(ValueError, match=r"shape \(3, 2\)"):
        env.step(np.zeros(3, dtype=np.int64))


def test_views_are_read_only_and_copies_are_independent():
    env = vector.make("kuhn_poker", num_envs=2, seed=0, copy=False)
    step = env.reset()
    with pytest.raises(ValueError):
        step.observations[0, 0] = 5
    copied = vector.make("kuhn_poker", num_envs=2, seed=0)
    first = copied.reset()
    second = copied.step(np.zeros(2, dtype=np.int64))
    assert not np.shares_memory(first.observations, second.observations)


def test_random_legal_policy_plays_only_legal_actions():
    masks = np.array([[0, 1, 1], [1, 0, 0], [0, 0, 1]], dtype=np.int8)
    policy = vector.RandomLegalPolicy(seed=0)
    seen = set()
    for _ in range(50):
        actions = policy(masks)
        assert masks[np.arange(3), actions].all()
        seen.add(int(actions[0]))
    assert seen == {1, 2}


@pytest.mark.parametrize("num_actions", [3, 13, 65])
def test_random_legal_policy_draws_alike_on_every_path(num_actions):
    # int8 C-contiguous masks take one compiled call (after the first, which seeds the
    # generators); bool, strided or listed masks are converted first; both draw the same
    # actions, uniformly among the legal ones (few actions: a branch-free pick; many:
    # eight mask entries at a time).
    rng = np.random.default_rng(num_actions)
    masks = (rng.random((2, 40, num_actions)) < 0.3).astype(np.int8)
    masks[0, 0] = 0  # a row without a legal action draws -1
    masks[1, 0, -1] = 1
    fast, converted = vector.RandomLegalPolicy(seed=4), vector.RandomLegalPolicy(seed=4)
    counts = np.zeros(masks.shape, dtype=np.int64)
    for turn in range(400):
        drawn = fast(masks)
        other = masks.astype(bool) if turn % 2 else np.asfortranarray(masks).tolist()
        np.testing.assert_array_equal(drawn, converted(np.asarray(other)))
        assert drawn.shape == (2, 40) and drawn[0, 0] == -1
        legal_rows = masks.any(axis=-1)
        picked = np.take_along_axis(masks, np.maximum(drawn, 0)[..., None], axis=-1)[..., 0]
        assert (picked[legal_rows] == 1).all()
        counts[legal_rows, drawn[legal_rows]] = 1
    assert (counts == masks).all()  # every legal action of every row was drawn


def test_inactive_envs_keep_their_state():
    env = vector.make("othello", num_envs=3, seed=0, board_size=4)
    first = env.reset()
    actions = np.array([int(np.flatnonzero(mask)[0]) for mask in first.legal_action_masks])
    step = env.step(actions, active=np.array([True, False, True]))
    np.testing.assert_array_equal(step.current_players, [1, 0, 1])
    np.testing.assert_array_equal(step.observations[1], first.observations[1])
    assert (step.rewards[1] == 0).all() and not step.terminated[1]
    with pytest.raises(ValueError, match=r"active must be bool of shape \(3,\)"):
        env.step(actions, active=np.ones(3))


@pytest.mark.parametrize(
    "name, params",
    [
        ("kuhn_poker", {}),
        ("leduc_holdem", {}),
        ("rps", {}),
        ("liars_dice", {"num_dice": 2, "faces": 3}),
        ("goofspiel", {"imp_info": True, "num_cards": 4, "points_order": "random"}),
        ("othello", {"board_size": 6}),
        ("combat", {"mode": "fighter", "map": "small"}),  # no compiled path: the step loop
    ],
)
def test_play_random_is_the_same_games_as_stepping_with_the_policy(name, params):
    fused, stepped = (vector.make(name, num_envs=5, seed=7, **params) for _ in range(2))
    fused_policy, stepped_policy = vector.RandomLegalPolicy(3), vector.RandomLegalPolicy(3)
    fused.reset()
    step = stepped.reset()
    num_steps = 3 if name == "combat" else 40
    reward_sums = np.zeros((5, stepped.num_players))
    episodes = np.zeros(5, dtype=np.int64)
    for _ in range(num_steps):
        step = stepped.step(stepped_policy(step.legal_action_masks))
        reward_sums += step.rewards
        episodes += step.terminated
    played = fused.play_random(num_steps, fused_policy)
    np.testing.assert_array_equal(played.reward_sums, reward_sums)
    np.testing.assert_array_equal(played.episodes, episodes)
    if name != "combat":
        assert episodes.sum() > 0
    for field in step._fields:
        np.testing.assert_array_equal(getattr(played.step, field), getattr(step, field))
    np.testing.assert_array_equal(fused.deals, stepped.deals)
    # The policies' generators advanced alike: the next draws agree.
    np.testing.assert_array_equal(
        fused_policy(step.legal_action_masks), stepped_policy(step.legal_action_masks)
    )


def test_play_random_rejects_a_policy_of_another_batch_size():
    env = vector.make("kuhn_poker", num_envs=4, seed=0)
    policy = vector.RandomLegalPolicy(0)
    policy(np.ones((3, 2), dtype=np.int8))
    env.reset()
    with pytest.raises(ValueError, match="generators serve 3"):
        env.play_random(2, policy)


@pytest.mark.parametrize(
    "name, params",
    [("leduc_holdem", {}), ("goofspiel", {"imp_info": True, "num_cards": 4}), ("othello", {})],
)
def test_play_random_on_several_threads_plays_the_same_games(name, params):
    results = []
    for threads in (1, 2, 3):
        env = vector.make(name, num_envs=7, seed=5, **params)
        env.reset()
        policy = vector.RandomLegalPolicy(9)
        played = env.play_random(30, policy, threads=threads)
        results.append(
            (played, env.deals, policy.generators(played.step.legal_action_masks[..., 0].size))
        )
    for played, deals, generators in results[1:]:
        np.testing.assert_array_equal(played.reward_sums, results[0][0].reward_sums)
        np.testing.assert_array_equal(played.episodes, results[0][0].episodes)
        np.testing.assert_array_equal(played.step.observations, results[0][0].step.observations)
        np.testing.assert_array_equal(deals, results[0][1])
        np.testing.assert_array_equal(generators, results[0][2])
    with pytest.raises(ValueError, match="threads must be an int >= 1"):
        env.play_random(1, policy, threads=0)
