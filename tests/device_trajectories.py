"""Seeded short runs of each trainer and the digest of where they end (tests/test_device.py
pins them). Free of ``agents.device``, so that the same functions record the digests from
the code before the trainers learnt the device setting. Each run starts from a shipped
config: when a config is retuned, pin the settings the digest was recorded with in its
overrides here (as for ExIt-OOS), so that the digest keeps pinning the code."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import torch

from agents.checkpoint import load_checkpoint
from agents.config import load_config
from agents.loop import train
from agents.networks import mlp


def _feed(digest, value) -> None:
    if isinstance(value, dict):
        digest.update(b"{")
        for key in sorted(value, key=str):
            _feed(digest, key)
            _feed(digest, value[key])
        digest.update(b"}")
    elif isinstance(value, (list, tuple)):
        digest.update(b"[")
        for item in value:
            _feed(digest, item)
        digest.update(b"]")
    elif isinstance(value, torch.Tensor):
        _feed(digest, value.detach().cpu().numpy())
    elif isinstance(value, np.ndarray):
        digest.update(f"{value.dtype.str}{value.shape}".encode())
        digest.update(np.ascontiguousarray(value).tobytes())
    else:
        digest.update(f"{type(value).__name__}:{value!r};".encode())


def canary_digest() -> str:
    """One seeded step of the kernels the trainers use (linear layers, ReLU, softmax
    cross-entropy, fused Adam) on one thread: equal here and on the recording machine
    means their float arithmetic agrees."""
    torch.manual_seed(0)
    network = mlp(32, [64], 3)
    optimizer = torch.optim.Adam(network.parameters(), lr=0.01, fused=True)
    inputs = torch.from_numpy(np.random.default_rng(0).random((128, 32)).astype(np.float32))
    targets = torch.from_numpy(np.random.default_rng(1).integers(3, size=128))
    for _ in range(3):
        loss = torch.nn.functional.cross_entropy(network(inputs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    digest = hashlib.sha256()
    _feed(digest, network.state_dict())
    return digest.hexdigest()


def trajectory_digest(config_name: str, overrides: list[str], output_dir: Path) -> str:
    """The sha256 of the whole learner state at the end of ``config_name`` with
    ``overrides`` (one thread, as the loop sets it)."""
    config = load_config(
        config_name, [*overrides, f"output_dir={output_dir}", "progress_bar=false"]
    )
    threads = torch.get_num_threads()
    try:
        train(config)
    finally:
        torch.set_num_threads(threads)
    digest = hashlib.sha256()
    _feed(digest, load_checkpoint(output_dir / "checkpoint.pt")["learner"])
    return digest.hexdigest()


# Short seeded runs of each trainer, their final evaluation only (config, overrides).
TRAJECTORIES = {
    "nfsp": (
        "nfsp_kuhn",
        [
            "budget.episodes=3000",
            "evaluation.every_episodes=3000",
            "checkpoint_every_episodes=3000",
        ],
    ),
}


def _schedule(unit: str, count: int) -> list[str]:
    """Train ``count`` ``unit`` (episodes or iterations), evaluating and saving at the end only."""
    return [
        f"budget.{unit}={count}",
        "budget.seconds=null",
        f"evaluation.every_{unit}={count}",
        f"checkpoint_every_{unit}={count}",
    ]


# Short seeded runs of each trainer (a shipped config and its overrides), on Kuhn poker. ANFSP
# is left out: its actor-learners are Ray actors, whose order of arrival is not seeded.
TRAJECTORIES: dict[str, tuple[str, list[str]]] = {
    "nfsp": ("nfsp_kuhn", _schedule("episodes", 3000)),
    "mcnfsp": (
        "mcnfsp_kuhn",
        [
            *_schedule("episodes", 256),
            "trainer.params.anticipatory=0.5",
            "trainer.params.num_simulations=10",
            "trainer.params.learn_every_episodes=64",
            "trainer.params.min_buffer_size=32",
            "trainer.params.batch_size=32",
        ],
    ),
    "exit_oos": (
        "exit_oos_leduc",
        [
            "env.name=kuhn_poker",
            *_schedule("iterations", 2),
            "checkpoint_every_episodes=null",
            "trainer.params.workers=0",
            "trainer.params.games_per_iteration=8",
            "trainer.params.simulations_per_move=50",
            "trainer.params.train_steps=8",
            "trainer.params.hidden_sizes=[32]",
            # The config's search switches as they were when the digest was recorded (the
            # shipped config was retuned since): the digest pins the code, not the tuning.
            "trainer.params.reweighting=ema",
            "trainer.params.prior_regret=0",
            "trainer.params.average_tremble=0",
        ],
    ),
    "rebel": (
        "rebel_liars_dice",
        [
            "env.name=kuhn_poker",
            "env.params={}",
            *_schedule("episodes", 4),
            "trainer.params.iterations=20",
            "trainer.params.batches_per_episode=4",
            "trainer.params.batch_size=16",
        ],
    ),
}
