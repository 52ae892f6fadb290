"""SB3VecEnv: a learner seat of a vector game as Stable-Baselines3's VecEnv."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

from hiddenenvs.vector.sb3_env import SB3VecEnv  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "sb3_vector_maskable_ppo.py"


def test_terminal_observations_and_masks_follow_sb3_conventions():
    env = SB3VecEnv("kuhn_poker", num_envs=6, seat=1, seed=0)
    env.seed(3)
    observations = env.reset()
    assert observations.shape == (6, 11)
    assert env.action_masks().shape == (6, 2) and env.action_masks().all()
    assert np.stack(env.env_method("action_masks")).shape == (6, 2)
    assert env.has_attr("action_masks")
    for _ in range(4):
        observations, rewards, dones, infos = env.step(np.zeros(6, dtype=np.int64))
        for row in range(6):
            if dones[row]:
                terminal = infos[row]["terminal_observation"]
                assert terminal[1] == 1  # the learner's tensor: "I am player 1"
                assert infos[row]["TimeLimit.truncated"] is False
            else:
                assert "terminal_observation" not in infos[row] and rewards[row] == 0
    with pytest.raises(AttributeError, match="only 'action_masks'"):
        env.env_method("render")


def test_seed_makes_reset_deterministic():
    env = SB3VecEnv("leduc_holdem", num_envs=4, seed=0)
    env.seed(9)
    first = env.reset().copy()
    deals = env.seated.env.deals
    env.seed(9)
    np.testing.assert_array_equal(env.reset(), first)
    np.testing.assert_array_equal(env.seated.env.deals, deals)


def test_maskable_ppo_example_runs():
    pytest.importorskip("sb3_contrib")
    spec = importlib.util.spec_from_file_location("sb3_vector_maskable_ppo", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert np.isfinite(
        module.main(
            ["--game", "kuhn_poker", "--num-envs", "8", "--steps", "512", "--eval-steps", "4"]
        )
    )
