"""Killing a run with SIGKILL and resuming it gives exactly the uninterrupted run."""

import csv
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from agents.checkpoint import load_checkpoint
from agents.config import config_from_dict
from agents.loop import train

REPO = Path(__file__).resolve().parent.parent

RUN = {
    "env": {"name": "kuhn_poker"},
    "trainer": {
        "name": "nfsp",
        "params": {
            "hidden_sizes": [16],
            "min_buffer_size": 100,
            "learn_every": 16,
            "batch_size": 32,
        },
    },
    "seed": 5,
    "budget": {"episodes": 4000},
    "evaluation": {"every_episodes": 1000},
    "checkpoint_every_episodes": 400,
    "num_envs": 16,
    "progress_bar": False,
}
# MCNFSP: searches, belief samples and the opponents' average policies inside the tree.
MCNFSP_RUN = {
    **RUN,
    "trainer": {
        "name": "mcnfsp",
        "params": {
            "network": "mlp",
            "hidden_sizes": [16],
            "num_simulations": 8,
            "anticipatory": 0.2,
            "learn_every_episodes": 64,
            "rl_steps": 2,
            "sl_steps": 2,
            "batch_size": 32,
            "min_buffer_size": 32,
        },
    },
}


def _flatten(value, prefix=""):
    """Every tensor / array / number in a nested state dict, by path."""
    if isinstance(value, dict):
        items = {}
        for key, item in value.items():
            items.update(_flatten(item, f"{prefix}/{key}"))
        return items
    if isinstance(value, (list, tuple)):
        items = {}
        for index, item in enumerate(value):
            items.update(_flatten(item, f"{prefix}/{index}"))
        return items
    return {prefix: value}


def _assert_same_state(left, right):
    left, right = _flatten(left), _flatten(right)
    assert left.keys() == right.keys()
    for key in left:
        a, b = left[key], right[key]
        if isinstance(a, torch.Tensor):
            assert torch.equal(a, b), key
        elif isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b, err_msg=key)
        else:
            assert a == b, key


def _exploitabilities(run_dir):
    with (run_dir / "metrics.csv").open() as handle:
        return [
            (int(row["episodes"]), float(row["exploitability"])) for row in csv.DictReader(handle)
        ]


def kill_between_checkpoints_and_resume(run: dict, killed: Path, counter: str, pause: float) -> int:
    """Run ``train.py`` on ``run`` into ``killed``, SIGKILL it ``pause`` seconds after its
    first checkpoint (between two checkpoints), then ``train.py --resume`` it to the end;
    the loop's ``counter`` (episodes, iterations) at the kill."""
    config_path = killed.parent / f"{killed.name}.yaml"
    config_path.write_text(yaml.safe_dump({**run, "output_dir": str(killed)}))
    process = subprocess.Popen(
        [sys.executable, "train.py", "--config", str(config_path)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    checkpoint = killed / "checkpoint.pt"
    deadline = time.monotonic() + 120
    while not checkpoint.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(pause)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL, process.stderr.read().decode()[-2000:]
    interrupted_at = load_checkpoint(checkpoint)["loop"][counter]
    assert 0 < interrupted_at < run["budget"][counter]
    resumed = subprocess.run(
        [sys.executable, "train.py", "--resume", str(killed)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    return interrupted_at


def resumed_checkpoint_equals_straight(
    straight: Path, killed: Path, counter: str, expected: int
) -> tuple[dict, dict]:
    """The final checkpoints of an uninterrupted run and of a killed-and-resumed one, after
    checking that both ended at ``expected`` ``counter`` with the same learner state."""
    final_straight = load_checkpoint(straight / "checkpoint.pt")
    final_resumed = load_checkpoint(killed / "checkpoint.pt")
    assert final_resumed["loop"][counter] == final_straight["loop"][counter] == expected
    _assert_same_state(final_straight["learner"], final_resumed["learner"])
    return final_straight, final_resumed


@pytest.mark.parametrize("run", [RUN, MCNFSP_RUN], ids=["nfsp", "mcnfsp"])
def test_sigkill_then_resume_equals_an_uninterrupted_run(tmp_path, run):
    straight = tmp_path / "straight"
    train(config_from_dict({**run, "output_dir": str(straight)}))

    killed = tmp_path / "killed"
    kill_between_checkpoints_and_resume(run, killed, "episodes", pause=0.15)
    final_straight, final_resumed = resumed_checkpoint_equals_straight(
        straight, killed, "episodes", 4000
    )
    _assert_same_state(final_straight["loop"]["rng"], final_resumed["loop"]["rng"])
    # The metrics log has each evaluation exactly once, with the same values.
    assert _exploitabilities(killed) == _exploitabilities(straight)
    assert [episodes for episodes, _ in _exploitabilities(killed)] == list(range(0, 4001, 1000))
