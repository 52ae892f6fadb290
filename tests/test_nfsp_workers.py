"""NFSP's self-play on workers: spawn processes and a two-node Ray cluster."""

import time
from pathlib import Path

import numpy as np
import pytest
import torch

import hiddenenvs
from agents.config import ConfigError, config_from_dict
from agents.networks import masked_logits
from agents.nfsp import NFSP, NFSPConfig, SelfPlayWorker

TINY = {
    "hidden_sizes": [8],
    "batch_size": 8,
    "learn_every": 4,
    "min_buffer_size": 8,
    "device": "cpu",
}
ROOT = Path(__file__).resolve().parent.parent


class StepContext:
    """What NFSP's step on workers uses of the loop: its generator, deadline, episodes."""

    def __init__(self, seed: int, deadline: float | None = None, max_episodes: int = 16):
        self.rng = np.random.default_rng(seed)
        self.deadline = deadline
        self.max_episodes = max_episodes
        self.step_cut = False


def test_workers_config_is_checked():
    with pytest.raises(ConfigError, match="workers"):
        config_from_dict(
            {
                "env": {"name": "kuhn_poker"},
                "trainer": {"name": "nfsp", "params": {"workers": 0}},
                "output_dir": "x",
            }
        ).check_values()


def _learner(**params) -> NFSP:
    torch.manual_seed(0)
    config = NFSPConfig(**{**TINY, "workers": 2, **params})
    return NFSP(hiddenenvs.load_game("kuhn_poker"), config, seed=0)


def _steps(learner: NFSP, count: int) -> tuple[list, list[dict]]:
    context = StepContext(0)
    reports = [learner.step(context) for _ in range(count)]
    assert not context.step_cut
    return reports, [agent.state_dict() for agent in learner._agents]


def test_two_worker_processes_train_alike_twice_and_a_deadline_keeps_nothing(process_alive):
    """Two spawn workers: a step's transitions and best-response pairs reach the learner's
    memories and its updates; the same seed gives the same networks and memories again; a
    step past its deadline is cut with nothing kept; closing leaves no worker process."""
    runs = []
    for _ in range(2):
        learner = _learner()
        try:
            reports, states = _steps(learner, 3)
            workers = learner._pool.process_ids()
            assert len(workers) == 2
            if not runs:
                sizes = [len(agent.replay) for agent in learner._agents]
                cut = StepContext(1, deadline=time.perf_counter())
                assert learner.step(cut).episodes == 0 and cut.step_cut
                assert [len(agent.replay) for agent in learner._agents] == sizes
        finally:
            learner.close()
        assert not [pid for pid in workers if process_alive(pid)]
        runs.append((reports, states))
    (reports, states), (again, states_again) = runs
    assert [r.episodes for r in reports] == [16, 16, 16] and reports == again
    assert "rl_loss" in reports[-1].metrics
    for state, state_again in zip(states, states_again):
        assert state["counters"] == state_again["counters"] and state["counters"]["rl_steps"] > 0
        for name in ("q_network", "policy_network"):
            for key, tensor in state[name].items():
                assert torch.equal(tensor, state_again[name][key]), (name, key)
        for memory in ("replay", "reservoir"):
            for key, column in state[memory]["data"].items():
                assert np.array_equal(column, state_again[memory]["data"][key]), (memory, key)
    # Kuhn: each player decides once or twice per game, one transition per decision.
    transitions = [state["counters"]["transitions"] for state in states]
    assert all(48 <= count <= 96 for count in transitions), transitions
    assert [state["replay"]["size"] for state in states] == transitions


def _one_piece(**params) -> NFSP:
    """A learner after one piece of 16 Kuhn episodes played by a :class:`SelfPlayWorker`
    (in this process) with the learner's networks as sent, stored as its step stores it."""
    learner = _learner(**params)
    worker = SelfPlayWorker(learner.game, learner.config, learner.seed)
    networks = [agent.network_arrays() for agent in learner._agents]
    transitions = [agent.transitions for agent in learner._agents]
    memories = worker.play_games(0, networks, transitions, list(range(16)), piece_seed=7)
    for agent, rows in zip(learner._agents, memories):
        agent.store(rows)
    return learner


def test_a_worker_acts_with_the_learners_best_response():
    """With eta = 1 and no exploration every action a worker takes is the greedy action of
    the learner's Q as sent, and each is a best-response pair in M_SL; with eta = 0 M_SL
    stays empty while M_RL gets every transition."""
    greedy = _one_piece(anticipatory=1.0, epsilon_start=0.0, epsilon_end=0.0)
    for agent in greedy._agents:
        rows = len(agent.replay)
        replay = {k: v[:rows] for k, v in agent.replay.data.items()}
        with torch.no_grad():
            q = agent.q_network(torch.as_tensor(replay["observation"]))
            chosen = masked_logits(q, replay["action_mask"]).argmax(dim=-1).numpy()
        assert 16 <= rows <= 32 and rows == agent.transitions
        assert np.array_equal(chosen, replay["action"])
        assert len(agent.reservoir) == rows
        assert np.array_equal(agent.reservoir.data["action"][:rows], replay["action"])
    average = _one_piece(anticipatory=0.0)
    assert [len(agent.reservoir) for agent in average._agents] == [0, 0]
    assert all(16 <= len(agent.replay) == agent.transitions for agent in average._agents)


def test_one_worker_plays_in_the_loops_process():
    learner = NFSP(hiddenenvs.load_game("kuhn_poker"), NFSPConfig(**TINY), seed=0)
    assert not learner.in_workers
    from agents.loop import LoopContext

    config = config_from_dict(
        {"env": {"name": "kuhn_poker"}, "trainer": {"name": "nfsp"}, "output_dir": "x"}
    )
    context = LoopContext(learner, config, np.random.default_rng(0))
    assert learner.step(context).episodes == config.num_envs and learner._pool is None


@pytest.mark.slow  # spawn workers importing torch under train.py: a minute on 2 loaded cores
def test_ctrl_c_ends_a_run_with_worker_processes_and_leaves_none(tmp_path):
    import yaml
    from conftest import interrupt_training_with_workers

    run = {
        "env": {"name": "leduc_holdem"},
        "trainer": {"name": "nfsp", "params": {**TINY, "workers": 2}},
        "budget": {"episodes": None, "seconds": 600},
        "evaluation": {"every_episodes": 1_000_000},
        "checkpoint_every_episodes": 64,
        "num_envs": 64,
        "progress_bar": False,
        "output_dir": str(tmp_path / "run"),
    }
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump(run))
    interrupt_training_with_workers(["--config", str(config)], tmp_path / "run" / "checkpoint.pt")


@pytest.mark.slow  # a two-node Ray start-up: minutes on 2 cores, run in .ci/run's slow step
def test_self_play_on_a_two_node_cluster_through_train_py_address(tmp_path, two_node_cluster):
    """``train.py --address`` puts NFSP's two self-play workers on the cluster's two
    one-CPU nodes; their transitions reach the learner, and the run's actors are gone after."""
    import ray

    import train as train_cli
    from agents.checkpoint import load_checkpoint

    assert len([node for node in ray.nodes() if node["Alive"]]) == 2  # two raylets
    arguments = [
        "--config",
        "nfsp_kuhn",
        "trainer.params.hidden_sizes=[8]",
        "trainer.params.min_buffer_size=8",
        "budget.episodes=128",
        "evaluation.every_episodes=128",
        "checkpoint_every_episodes=128",
        "progress_bar=false",
        "trainer.params.workers=2",
        f"output_dir={tmp_path / 'cluster'}",
    ]
    assert train_cli.main([*arguments, "--address", two_node_cluster.address]) == 0
    assert ray.is_initialized(), "a run on a cluster leaves the cluster alone"
    assert not ray.util.list_named_actors(), "the run's actors are gone"
    learner = load_checkpoint(tmp_path / "cluster" / "checkpoint.pt")["learner"]
    counters = [agent["counters"] for agent in learner["agents"]]
    assert all(c["transitions"] >= 128 and c["rl_steps"] > 0 for c in counters), counters
