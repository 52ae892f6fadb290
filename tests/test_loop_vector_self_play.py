"""The loop's ``vector_self_play`` option: the runs it refuses, partial batches, and resuming."""

import numpy as np
import pytest

import hiddenenvs.vector as vector
from agents.config import ConfigError, config_from_dict
from agents.loop import train
from agents.vector_self_play import play_vector_episodes
from test_loop_resume import (
    _exploitabilities,
    kill_between_checkpoints_and_resume,
    resumed_checkpoint_equals_straight,
)
from test_vector_self_play import RecordingRandomAgent

# NFSP on Leduc; 1,000 episodes per evaluation are 62 steps of 16 games and one of 8, so
# the partial batches (num_games < num_envs) are played, checkpointed and resumed too.
VECTOR_RUN = {
    "env": {"name": "leduc_holdem"},
    "trainer": {
        "name": "nfsp",
        "params": {
            "hidden_sizes": [16],
            "min_buffer_size": 100,
            "learn_every": 16,
            "batch_size": 32,
        },
    },
    "seed": 3,
    "budget": {"episodes": 3000},
    "evaluation": {"every_episodes": 1000},
    "checkpoint_every_episodes": 500,
    "num_envs": 16,
    "progress_bar": False,
    "vector_self_play": True,
}


def test_sigkill_then_resume_equals_an_uninterrupted_run_with_vector_self_play(tmp_path):
    straight = tmp_path / "straight"
    train(config_from_dict({**VECTOR_RUN, "output_dir": str(straight)}))

    killed = tmp_path / "killed"
    kill_between_checkpoints_and_resume(VECTOR_RUN, killed, "episodes", pause=0.1)
    resumed_checkpoint_equals_straight(straight, killed, "episodes", 3000)
    assert _exploitabilities(killed) == _exploitabilities(straight)


def test_same_seed_same_run_and_the_schedules_hold(tmp_path):
    """Two runs with one seed end with the same networks; evaluations fall on their episodes
    (100 = 6 steps of 16 games and one of 4)."""
    run = {
        **VECTOR_RUN,
        "budget": {"episodes": 200},
        "evaluation": {"every_episodes": 100},
        "checkpoint_every_episodes": 100,
    }
    for name in ("first", "second"):
        train(config_from_dict({**run, "output_dir": str(tmp_path / name)}))
    resumed_checkpoint_equals_straight(tmp_path / "first", tmp_path / "second", "episodes", 200)
    assert [episodes for episodes, _ in _exploitabilities(tmp_path / "first")] == [0, 100, 200]


@pytest.mark.parametrize(
    "env, trainer, message",
    [
        ("meier", "nfsp", "env 'meier' has no vector kernel"),
        ("kuhn_poker", "cfr", "trainer 'cfr' runs its own step"),
        ("kuhn_poker", "mcnfsp", "trainer 'mcnfsp''s agents need seat views"),
    ],
)
def test_unsupported_runs_are_refused_at_the_start(tmp_path, env, trainer, message):
    config = config_from_dict(
        {
            "env": {"name": env},
            "trainer": {"name": trainer},
            "budget": {"episodes": 10},
            "num_envs": 4,
            "progress_bar": False,
            "vector_self_play": True,
            "output_dir": str(tmp_path),
        }
    )
    with pytest.raises(ConfigError, match=message) as raised:
        train(config)
    assert "\n" not in str(raised.value)
    assert not (tmp_path / "checkpoint.pt").exists()


def test_a_partial_batch_plays_the_first_games_of_the_batch():
    """``num_games=n`` on a B-game env plays what an n-game env plays (deals follow the
    game's index), and the other games stay still."""

    def play(num_envs, num_games):
        env = vector.make("leduc_holdem", num_envs=num_envs)
        decisions = []
        agents = [
            RecordingRandomAgent(env.num_actions, seed=p, decisions=decisions) for p in range(2)
        ]
        returns = play_vector_episodes(env, agents, seed=11, num_games=num_games)
        return returns, decisions, agents

    partial_returns, partial_decisions, partial_agents = play(8, 3)
    full_returns, full_decisions, full_agents = play(3, None)
    np.testing.assert_array_equal(partial_returns, full_returns)
    assert partial_returns.shape == (3, 2)
    assert [(e, a) for e, _, a in partial_decisions] == [(e, a) for e, _, a in full_decisions]
    for left, right in zip(partial_agents, full_agents):
        assert left.started == right.started == {0, 1, 2}
        assert left.ended == right.ended == {0, 1, 2}
        assert len(left.transitions) == len(right.transitions) > 0
        for a, b in zip(left.transitions, right.transitions):
            np.testing.assert_array_equal(a.next_observation, b.next_observation)
            assert (a.action, a.reward, a.done, a.episode_id) == (
                b.action,
                b.reward,
                b.done,
                b.episode_id,
            )
    with pytest.raises(ValueError, match="num_games must be 1..8"):
        play(8, 9)
