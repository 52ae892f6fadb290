"""The common loop: experience routing on turn-based and simultaneous games, evaluation paths."""

import time

import numpy as np
import pytest

import hiddenenvs
from agents import Agent, RandomAgent
from agents.config import config_from_dict
from agents.loop import play_episodes, train
from hiddenenvs.analysis import tree_is_small


class RecordingAgent(RandomAgent):
    """Random play that keeps every transition and episode boundary it is given."""

    def __init__(self, num_actions, seed):
        super().__init__(num_actions, seed)
        self.transitions, self.started, self.ended = [], [], []

    def start_episode(self, episode_id=0):
        self.started.append(episode_id)

    def observe(self, transition):
        self.transitions.append(transition)

    def end_episode(self, episode_id=0):
        self.ended.append(episode_id)


@pytest.mark.parametrize("env_name", ["kuhn_poker", "leduc_holdem", "rps"])
def test_transitions_chain_and_add_up_to_the_returns(env_name):
    envs = [hiddenenvs.make(env_name).unwrapped for _ in range(8)]
    names = envs[0].possible_agents
    num_actions = envs[0].action_space(names[0]).n
    recorders = {name: RecordingAgent(num_actions, seed=k) for k, name in enumerate(names)}
    returns = play_episodes(envs, recorders, np.arange(8), learn=True)
    assert np.allclose(returns.sum(axis=1), 0.0)  # zero-sum games
    for seat, name in enumerate(names):
        agent = recorders[name]
        assert sorted(agent.started) == sorted(agent.ended) == list(range(8))
        for episode in range(8):
            chain = [t for t in agent.transitions if t.episode_id == episode]
            assert chain and chain[-1].done and not any(t.done for t in chain[:-1])
            assert sum(t.reward for t in chain) == pytest.approx(returns[episode, seat])
            assert not chain[-1].next_action_mask.any()
            for before, after in zip(chain, chain[1:]):
                np.testing.assert_array_equal(before.next_observation, after.observation)
                np.testing.assert_array_equal(before.next_action_mask, after.action_mask)
            for t in chain:
                assert t.action_mask[t.action] == 1


def test_same_seeds_same_episodes():
    def run():
        envs = [hiddenenvs.make("leduc_holdem").unwrapped for _ in range(4)]
        agents = {name: RandomAgent(3, seed=k) for k, name in enumerate(envs[0].possible_agents)}
        return play_episodes(envs, agents, np.array([1, 2, 3, 4]), learn=False)

    np.testing.assert_array_equal(run(), run())


def test_tree_size_probe():
    game = hiddenenvs.load_game("kuhn_poker")
    assert tree_is_small(game, 58) and not tree_is_small(game, 57)


def test_head_to_head_evaluation_when_exact_is_off(tmp_path):
    config = config_from_dict(
        {
            "env": {"name": "rps"},
            "trainer": {"name": "nfsp", "params": {"hidden_sizes": [8], "min_buffer_size": 50}},
            "budget": {"episodes": 256},
            "evaluation": {"every_episodes": 128, "exact": "no", "episodes_vs_random": 200},
            "checkpoint_every_episodes": 128,
            "num_envs": 16,
            "output_dir": str(tmp_path),
            "progress_bar": False,
        }
    )
    result = train(config)
    last = result["last_evaluation"]
    assert result["metric"] == "return_vs_random"  # chosen once, by the run's Evaluator
    assert last["episodes"] == 256 and last.get("exploitability") is None
    # RPS against uniform random is worth exactly 0 to any policy; the estimate is close.
    assert abs(last["return_vs_random"]) < 0.15
    assert (tmp_path / "metrics.png").is_file()


def test_an_agent_needs_only_its_policy():
    class AlwaysFirstLegal(Agent):
        def policy_probabilities_batch(self, observations, action_masks):
            first = np.argmax(action_masks, axis=1)
            return np.eye(action_masks.shape[1])[first]

    agent = AlwaysFirstLegal(3)
    assert agent.act(np.zeros(5), np.array([0, 1, 1]))[0] == 1


def test_a_run_takes_callbacks_in_the_manner_of_stable_baselines3(tmp_path):
    """A callback sees every step and every evaluation row the metrics log gets, then the
    end and the close, in that order."""
    import csv

    from agents.loop import Callback, Run

    class Recorder(Callback):
        def __init__(self):
            self.events, self.rows = [], []

        def on_run_start(self, run):
            self.events.append("start")

        def on_step(self, run, report):
            self.events.append(("step", run.counters["iterations"]))

        def on_evaluation(self, run, row):
            self.rows.append(row["iterations"])

        def on_run_end(self, run):
            self.events.append("end")

        def on_close(self, run):
            self.events.append("close")

    config = config_from_dict(
        {
            "env": {"name": "kuhn_poker"},
            "trainer": {"name": "cfr+"},
            "budget": {"iterations": 6, "episodes": None},
            "evaluation": {"every_iterations": 2, "every_episodes": None},
            "checkpoint_every_iterations": 3,
            "checkpoint_every_episodes": None,
            "output_dir": str(tmp_path),
            "progress_bar": False,
        }
    )
    recorder = Recorder()
    result = Run(config, callbacks=[recorder]).run()
    assert result["iterations"] == 6 and result["metric"] == "exploitability"
    assert recorder.events == ["start", *[("step", k) for k in range(1, 7)], "end", "close"]
    with (tmp_path / "metrics.csv").open() as handle:
        logged = [int(row["iterations"]) for row in csv.DictReader(handle)]
    assert recorder.rows == logged == [0, 2, 4, 6]


def test_past_the_deadline_one_episode_plays_on_until_it_ends():
    """An evaluation's first episode per seat: past ``deadline`` with none finished, one
    episode (not the whole lockstep batch) plays on, until ``first_episode_deadline``."""
    envs = [hiddenenvs.make("kuhn_poker").unwrapped for _ in range(8)]
    seats = {name: RandomAgent(3, k) for k, name in enumerate(envs[0].possible_agents)}
    seeds = np.arange(8)
    passed = time.perf_counter() - 1.0
    later = time.perf_counter() + 600.0
    assert play_episodes(envs, seats, seeds, learn=False).shape == (8, 2)
    assert play_episodes(envs, seats, seeds, learn=False, deadline=passed).shape == (0, 2)
    one = play_episodes(envs, seats, seeds, False, passed, first_episode_deadline=later)
    assert one.shape == (1, 2) and one.sum() == 0  # Kuhn is zero-sum
    gone = play_episodes(envs, seats, seeds, False, passed, first_episode_deadline=passed)
    assert gone.shape == (0, 2)
