"""MCNFSP's self-play on workers: spawn processes and a two-node Ray cluster."""

import copy
import time
from pathlib import Path

import numpy as np
import pytest
import torch

import hiddenenvs
from agents.config import ConfigError, config_from_dict
from agents.mcnfsp import MCNFSP, MCNFSPConfig

TINY = {
    "network": "mlp",
    "hidden_sizes": [8],
    "anticipatory": 0.5,
    "num_simulations": 4,
    "learn_every_episodes": 8,
    "batch_size": 8,
    "min_buffer_size": 1,
    "rl_steps": 2,
    "sl_steps": 2,
}
ROOT = Path(__file__).resolve().parent.parent


class StepContext:
    """What MCNFSP's step uses of the loop: its generator, deadline and episodes per step."""

    def __init__(self, seed: int, deadline: float | None = None, max_episodes: int = 8):
        self.rng = np.random.default_rng(seed)
        self.deadline = deadline
        self.max_episodes = max_episodes
        self.step_cut = False


def _assert_same(first, second, where="state"):
    if isinstance(first, dict):
        assert first.keys() == second.keys(), where
        for key in first:
            _assert_same(first[key], second[key], f"{where}/{key}")
    elif isinstance(first, (list, tuple)):
        assert len(first) == len(second), where
        for index, (a, b) in enumerate(zip(first, second)):
            _assert_same(a, b, f"{where}[{index}]")
    elif isinstance(first, torch.Tensor):
        assert torch.equal(first, second), where
    elif isinstance(first, np.ndarray):
        assert np.array_equal(first, second), where
    else:
        assert first == second, where


def test_workers_config_is_checked():
    with pytest.raises(ConfigError, match="workers"):
        config_from_dict(
            {
                "env": {"name": "kuhn_poker"},
                "trainer": {"name": "mcnfsp", "params": {"workers": 0}},
                "output_dir": "x",
            }
        ).check_values()


def _learner_on_two_workers():
    torch.manual_seed(0)
    return MCNFSP(hiddenenvs.load_game("kuhn_poker"), MCNFSPConfig(**TINY, workers=2), seed=0)


def test_worker_processes_reach_the_learner_resume_alike_and_a_deadline_leaves_no_worker(
    process_alive,
):
    """Two spawn workers: the searches of a step's episodes reach the learner's memories and
    its update; the state saved after one step, resumed in a new learner (new workers),
    ends its second step equal to the learner that went on; a step past its deadline is cut with
    nothing kept; closing leaves no worker process."""
    straight, context = _learner_on_two_workers(), StepContext(0)
    try:
        reports = [straight.step(context)]
        saved, generator = copy.deepcopy(straight.state_dict()), context.rng.bit_generator.state
        reports.append(straight.step(context))
        assert not context.step_cut and [r.episodes for r in reports] == [8, 8]
        assert reports[-1].metrics["searches"] == sum(len(a.replay) for a in straight._agents)
        assert reports[-1].metrics["searches"] > 0 and "sl_loss" in reports[-1].metrics
        expected = copy.deepcopy(straight.state_dict())
        workers = straight._pool.process_ids()
        assert len(workers) == 2
    finally:
        straight.close()
    assert not [pid for pid in workers if process_alive(pid)]

    resumed, context = _learner_on_two_workers(), StepContext(0)
    try:
        resumed.load_state_dict(saved)
        context.rng.bit_generator.state = generator
        resumed.step(context)
        _assert_same(expected, resumed.state_dict())
        sizes = [len(agent.replay) for agent in resumed._agents]
        workers = resumed._pool.process_ids()
        cut = StepContext(1, deadline=time.perf_counter())
        assert resumed.step(cut).episodes == 0 and cut.step_cut
        assert [len(agent.replay) for agent in resumed._agents] == sizes
    finally:
        resumed.close()
    assert not [pid for pid in workers if process_alive(pid)]


@pytest.mark.slow  # spawn workers importing torch under train.py: a minute on 2 loaded cores
def test_ctrl_c_ends_a_run_with_worker_processes_and_leaves_none(tmp_path):
    import yaml
    from conftest import interrupt_training_with_workers

    run = {
        "env": {"name": "leduc_holdem"},
        "trainer": {"name": "mcnfsp", "params": {**TINY, "workers": 2, "num_simulations": 400}},
        "budget": {"episodes": None, "seconds": 600},
        "evaluation": {"every_episodes": 100_000},
        "checkpoint_every_episodes": 8,
        "num_envs": 8,
        "progress_bar": False,
        "output_dir": str(tmp_path / "run"),
    }
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump(run))
    interrupt_training_with_workers(["--config", str(config)], tmp_path / "run" / "checkpoint.pt")


@pytest.mark.slow  # a two-node Ray start-up: minutes on 2 cores, run in .ci/run's slow step
def test_self_play_on_a_two_node_cluster_through_train_py_address(tmp_path, two_node_cluster):
    """``train.py --address`` puts MCNFSP's two self-play workers on the cluster's two
    one-CPU nodes; their searches reach the learner, and the run's actors are gone after."""
    import ray

    import train as train_cli
    from agents.checkpoint import load_checkpoint

    assert len([node for node in ray.nodes() if node["Alive"]]) == 2  # two raylets
    params = [f"trainer.params.{key}={value}" for key, value in TINY.items()]
    arguments = [
        "--config",
        "mcnfsp_kuhn",
        *[p.replace(" ", "") for p in params],
        "budget.episodes=16",
        "evaluation.every_episodes=16",
        "checkpoint_every_episodes=16",
        "num_envs=8",
        "progress_bar=false",
        "trainer.params.workers=2",
        f"output_dir={tmp_path / 'cluster'}",
    ]
    assert train_cli.main([*arguments, "--address", two_node_cluster.address]) == 0
    assert ray.is_initialized(), "a run on a cluster leaves the cluster alone"
    assert not ray.util.list_named_actors(), "the run's actors are gone"
    learner = load_checkpoint(tmp_path / "cluster" / "checkpoint.pt")["learner"]
    assert learner["episodes"] == 16
    assert sum(agent["counters"]["searches"] for agent in learner["agents"]) > 0
