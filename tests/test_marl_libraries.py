"""The MARL libraries' own PettingZoo paths on our envs, and each script of examples/ for
a few hundred steps (each skips when its library is not installed; ``.ci/run`` installs
them all, RLlib and AgileRL in their own virtual environments)."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import hiddenenvs
from hiddenenvs.envs.combat.doctrine import doctrine_action

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def example(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_fighters_go_through_black_death_and_a_markov_vector_env_across_episode_ends():
    supersuit = pytest.importorskip("supersuit")
    from hiddenenvs.marl import black_death

    env = hiddenenvs.make_parallel(
        "combat",
        mode="fighter",
        map="small",
        team_size=3,
        hit_probability=1.0,
        damage=100,
        observation_layout="flat",
        illegal_action="no_op",
    )
    vec_env = supersuit.pettingzoo_env_to_vec_env_v1(black_death(env))
    observations, infos = vec_env.reset(seed=0)
    assert observations.shape == (6, 11 * 11 * 5) and all("action_mask" in info for info in infos)
    rng = np.random.default_rng(0)
    episodes = saw_dead = 0
    for _ in range(400):
        # scripted fighters meet soon; the dead (no mask in their infos) send anything
        actions = np.array(
            [
                doctrine_action(env.game_state, player, rng) if agent in env.agents else 7
                for player, agent in enumerate(env.possible_agents)
            ]
        )
        dead = [i for i, agent in enumerate(env.possible_agents) if agent not in env.agents]
        observations, rewards, terminations, truncations, infos = vec_env.step(actions)
        if terminations.all():
            episodes += 1
            assert observations.any(axis=1).all(), (
                "after an episode the vector env resets: all alive"
            )
        else:  # those dead before this step are zeros (at the step they die: their last view)
            saw_dead += bool(dead)
            assert not observations[dead].any(), "the dead are zeros"
            assert not rewards[dead].any()
    assert episodes >= 2 and saw_dead


def test_sb3_ppo_through_supersuit_on_goofspiel_and_fighter_mode():
    pytest.importorskip("supersuit")
    pytest.importorskip("stable_baselines3")
    script = example("sb3_supersuit_ppo")
    _, share = script.main(["--env", "goofspiel", "--steps", "256"])
    assert 0.0 < share < 1.0  # an unmasked PPO makes illegal bids, each one lost and reported
    _, share = script.main(
        [
            "--env",
            "combat",
            "--param",
            "mode=fighter",
            "--param",
            "map=small",
            "--param",
            "team_size=3",
            "--steps",
            "256",
        ]
    )
    assert 0.0 < share < 1.0  # illegal orders held and reported


def test_tianshou_dqn_on_leduc():
    pytest.importorskip("tianshou")
    mean_return = example("tianshou_dqn_leduc").main(["--steps", "400", "--test-episodes", "20"])
    assert -13 <= mean_return <= 13


def test_torchrl_collector_draws_only_legal_actions():
    pytest.importorskip("torchrl")
    frames, illegal = example("torchrl_collector_leduc").main(["--frames", "1000"])
    assert frames == 1000 and illegal == 0


def test_rllib_ppo_with_action_masking():
    pytest.importorskip("ray.rllib")
    assert example("rllib_ppo_masked").main(["--steps", "500"]) >= 500


def test_agilerl_ippo_with_action_masking():
    # The env raises on an illegal action, so finishing means every action was masked.
    pytest.importorskip("agilerl")
    assert example("agilerl_ippo").main(["--steps", "500"]) >= 500


def test_supersuit_observation_wrappers_take_the_flat_layout():
    """The wrappers the issue found failing on the dict observation, each on flat Goofspiel
    (parallel) and Leduc (AEC), checked by PettingZoo's own API tests."""
    supersuit = pytest.importorskip("supersuit")
    from pettingzoo.test import api_test, parallel_api_test

    wrappers = {
        "pad_observations": supersuit.pad_observations_v0,
        "flatten": supersuit.flatten_v0,
        "dtype": lambda env: supersuit.dtype_v0(env, np.float64),
        "normalize_obs": lambda env: supersuit.normalize_obs_v0(env, env_min=-1.0, env_max=1.0),
        "frame_stack": lambda env: supersuit.frame_stack_v1(env, 3),
        "agent_indicator": lambda env: supersuit.agent_indicator_v0(env, type_only=False),
    }
    for name, wrap in wrappers.items():
        parallel = wrap(
            hiddenenvs.make_parallel("goofspiel", observation_layout="flat", illegal_action="lose")
        )
        parallel_api_test(parallel, num_cycles=50)
        observations, infos = parallel.reset(seed=0)
        assert all(parallel.observation_space(a).contains(o) for a, o in observations.items()), name
        assert all("action_mask" in info for info in infos.values()), name
        api_test(wrap(hiddenenvs.make("leduc_holdem", observation_layout="flat")), num_cycles=50)
