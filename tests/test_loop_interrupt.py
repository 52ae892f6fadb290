"""Ctrl-C ends a run at once: the learner closed, the last checkpoint intact and resumable,
one line saying where it is and how to resume."""

import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

from agents.checkpoint import load_checkpoint

REPO = Path(__file__).resolve().parent.parent

RUN = {
    "env": {"name": "kuhn_poker"},
    "trainer": {
        "name": "nfsp",
        "params": {"hidden_sizes": [16], "min_buffer_size": 100, "batch_size": 32},
    },
    "budget": {"episodes": None, "seconds": 600},
    "evaluation": {"every_episodes": 10_000_000, "exact": "no", "episodes_vs_random": 10},
    "checkpoint_every_episodes": 256,
    "num_envs": 16,
    "progress_bar": False,
}


def _run_past_its_first_checkpoint(tmp_path, **popen_options):
    """train.py on RUN, started and waited for until its first checkpoint is written."""
    run_dir = tmp_path / "run"
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump({**RUN, "output_dir": str(run_dir)}))
    process = subprocess.Popen(
        [sys.executable, "train.py", "--config", str(config)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        **popen_options,
    )
    checkpoint = run_dir / "checkpoint.pt"
    deadline = time.monotonic() + 120
    while not checkpoint.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    return process, run_dir, checkpoint


def test_sigint_ends_the_run_with_its_last_checkpoint_and_how_to_resume(tmp_path):
    process, run_dir, checkpoint = _run_past_its_first_checkpoint(tmp_path)
    time.sleep(0.2)  # mid-run, between two checkpoints
    process.send_signal(signal.SIGINT)
    _, error = process.communicate(timeout=60)
    assert process.returncode == 130, error[-2000:]
    assert "Traceback" not in error, error[-2000:]
    last = error.strip().splitlines()[-1]
    assert last.startswith("train.py: interrupted (Ctrl-C); the last checkpoint, at "), last
    assert f"is {checkpoint}: continue with train.py --resume {run_dir}" in last
    # Nothing half-written: no temporary file, and the checkpoint resumes to a larger budget.
    assert not [path.name for path in run_dir.iterdir() if path.name.endswith(".tmp")]
    episodes = load_checkpoint(checkpoint)["loop"]["episodes"]
    assert episodes >= 256 and f"at {episodes} episodes" in last
    resumed = subprocess.run(
        [
            sys.executable,
            "train.py",
            "--resume",
            str(run_dir),
            "budget.seconds=null",
            f"budget.episodes={episodes + 64}",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert load_checkpoint(checkpoint)["loop"]["episodes"] == episodes + 64


def test_sigint_is_heard_by_a_run_started_with_sigint_ignored(tmp_path):
    """A background job of a non-interactive shell (``nohup train.py ... &`` in a script)
    starts with SIGINT ignored; the harness's stop and Ctrl-C must still end the run."""
    process, _, _ = _run_past_its_first_checkpoint(
        tmp_path, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)
    )
    process.send_signal(signal.SIGINT)
    _, error = process.communicate(timeout=60)
    assert process.returncode == 130, error[-2000:]
    assert "train.py: interrupted (Ctrl-C); the last checkpoint, at " in error


def test_the_interruption_message_says_when_there_is_nothing_to_resume(tmp_path):
    from agents.config import config_from_dict
    from agents.run import Budget, Checkpointer

    config = config_from_dict({"output_dir": str(tmp_path / "run"), "progress_bar": False})
    checkpointer = Checkpointer(tmp_path / "run", config, Budget(config.budget))
    assert checkpointer.interrupted_message() == (
        "interrupted (Ctrl-C) before the run's first checkpoint: nothing to resume"
    )
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "metrics.csv").write_text("episodes\n")
    assert checkpointer.interrupted_message().endswith(
        f"; remove {tmp_path / 'run'} to start it again"
    )
