"""SeatedVectorEnv: a learner seat of a vector game as a Gymnasium VectorEnv."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from hiddenenvs.vector.gymnasium_env import SeatedVectorEnv

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "vector_ppo_masked.py"
TORCHRL_EXAMPLE = EXAMPLE.with_name("torchrl_vector_leduc.py")


def always(action):
    return lambda observations, masks: np.full(masks.shape[0], action, dtype=np.int64)


def test_spaces_and_metadata():
    env = SeatedVectorEnv("leduc_holdem", num_envs=5, seed=0)
    assert env.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    assert env.single_observation_space.shape == (32,)
    assert env.observation_space.shape == (5, 32)
    assert env.single_action_space.n == 3
    observations, infos = env.reset(seed=1)
    assert observations.shape == (5, 32) and infos["action_mask"].shape == (5, 3)
    assert infos["action_mask"].dtype == bool


@pytest.mark.parametrize("seat", [0, 1])
def test_every_step_lands_on_the_learners_turn(seat):
    env = SeatedVectorEnv("leduc_holdem", num_envs=16, seat=seat, seed=3)
    observations, infos = env.reset()
    rng = np.random.default_rng(0)
    for _ in range(60):
        assert (env.env._kernel.current_players == seat).all()
        assert (observations[:, seat] == 1).all()  # the one-hot "which player I am"
        actions = np.array([rng.choice(np.flatnonzero(mask)) for mask in infos["action_mask"]])
        observations, rewards, terminated, truncated, infos = env.step(actions)
        assert not truncated.any()
        assert (infos["final_obs"][terminated][:, seat] == 1).all()
        assert (infos["final_obs"][~terminated] == 0).all()
        assert (rewards[~terminated] == 0).all()


def test_kuhn_showdown_rewards_follow_the_deals():
    # The opponent (seat 0) always passes; the learner (seat 1) passes too: a showdown for 1.
    env = SeatedVectorEnv("kuhn_poker", num_envs=64, seat=1, opponents=always(0), seed=5)
    env.reset()
    for _ in range(5):
        deals = env.env.deals
        _, rewards, terminated, _, _ = env.step(np.zeros(64, dtype=np.int64))
        assert terminated.all()
        np.testing.assert_array_equal(rewards, np.where(deals[:, 1] > deals[:, 0], 1.0, -1.0))


def test_a_game_ended_by_the_opponent_pays_the_learner_in_that_step():
    # Kuhn, learner at seat 0 passes, opponent bets, learner folds: -1 chip each game.
    # Learner bets instead: the opponent folds (always passes): +1.
    folds = SeatedVectorEnv("kuhn_poker", num_envs=8, seat=0, opponents=always(1), seed=0)
    folds.reset()
    _, rewards, terminated, _, _ = folds.step(np.zeros(8, dtype=np.int64))  # pass; opponent bets
    assert not terminated.any() and (rewards == 0).all()
    _, rewards, terminated, _, _ = folds.step(np.zeros(8, dtype=np.int64))  # fold
    assert terminated.all() and (rewards == -1).all()
    wins = SeatedVectorEnv("kuhn_poker", num_envs=8, seat=0, opponents=always(0), seed=0)
    wins.reset()
    _, rewards, terminated, _, _ = wins.step(np.ones(8, dtype=np.int64))  # bet; opponent folds
    assert terminated.all() and (rewards == 1).all()


def test_simultaneous_game_joins_the_learner_and_the_opponent():
    env = SeatedVectorEnv("rps", num_envs=4, seat=1, opponents={0: always(0)}, seed=0)  # rock
    env.reset()
    _, rewards, terminated, _, infos = env.step(np.ones(4, dtype=np.int64))  # paper
    assert terminated.all() and (rewards == 1).all()
    # learner's final tensor: I am player 1, I played paper, the opponent rock
    np.testing.assert_array_equal(infos["final_obs"][0], [0, 1, 0, 1, 0, 1, 0, 0])


def test_same_seed_same_rewards():
    def run():
        env = SeatedVectorEnv("goofspiel", num_envs=8, seat=0, seed=4, points_order="random")
        _, infos = env.reset()
        total = []
        for _ in range(20):
            actions = np.argmax(infos["action_mask"], axis=1)
            _, rewards, _, _, infos = env.step(actions)
            total.append(rewards)
        return np.stack(total)

    np.testing.assert_array_equal(run(), run())


def test_bad_seats_and_opponents_are_clear_errors():
    with pytest.raises(ValueError, match="seat must be 0..1"):
        SeatedVectorEnv("kuhn_poker", seat=2)
    with pytest.raises(ValueError, match=r"opponents must name the seats \[1\]"):
        SeatedVectorEnv("kuhn_poker", opponents={0: always(0)})
    with pytest.raises(ValueError, match="opponents must be 'random'"):
        SeatedVectorEnv("kuhn_poker", opponents="greedy")


def test_masked_ppo_example_runs():
    pytest.importorskip("torch")
    spec = importlib.util.spec_from_file_location("vector_ppo_masked", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    mean_reward = module.main(
        ["--game", "kuhn_poker", "--updates", "2", "--num-envs", "8", "--num-steps", "8"]
    )
    assert np.isfinite(mean_reward)


def test_replace_plays_a_legal_action_and_flags_it():
    env = SeatedVectorEnv("leduc_holdem", num_envs=4, seed=0, illegal_action="replace")
    env.reset()
    _, _, _, _, infos = env.step(np.array([0, 1, 7, -1]))  # fold is illegal at the start
    np.testing.assert_array_equal(infos["illegal_action"], [True, False, True, True])
    strict = SeatedVectorEnv("leduc_holdem", num_envs=4, seed=0)
    strict.reset()
    with pytest.raises(ValueError, match="illegal action in env 0"):
        strict.step(np.array([0, 1, 1, 1]))
    with pytest.raises(ValueError, match="illegal_action must be one of"):
        SeatedVectorEnv("leduc_holdem", illegal_action="lose")


def test_torchrl_example_runs():
    pytest.importorskip("torchrl")
    spec = importlib.util.spec_from_file_location("torchrl_vector_leduc", TORCHRL_EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--num-envs", "16", "--steps", "10"]) > 0


def test_gymnasium_episode_statistics_read_the_same_step_autoreset():
    from gymnasium.wrappers.vector import RecordEpisodeStatistics

    env = RecordEpisodeStatistics(SeatedVectorEnv("leduc_holdem", num_envs=8, seed=2))
    _, infos = env.reset(seed=2)
    episodes = 0
    for _ in range(30):
        _, rewards, terminated, _, infos = env.step(np.argmax(infos["action_mask"], axis=1))
        if terminated.any():
            np.testing.assert_array_equal(infos["_episode"], terminated)
            # rewards come only at the end of a game, so a game's return is its last reward
            np.testing.assert_array_equal(infos["episode"]["r"][terminated], rewards[terminated])
            episodes += int(terminated.sum())
    assert episodes > 0
