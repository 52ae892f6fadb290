"""Where a vector env step's time goes, and the floor under it.

For Kuhn, Leduc and Othello 8x8, random legal play at each batch size, nanoseconds of CPU
time per agent-step (one decision of one game) of:

- ``step loop``: what a user's loop costs, ``env.step(policy(masks))`` with ``copy=False``;
- ``policy call``: ``RandomLegalPolicy(masks)`` alone (its compiled draw included);
- ``kernels``: the compiled draw and the kernel's ``step`` called directly, no Python
  wrapper: ``step loop`` minus this, times the batch, is the Python cost of one call;
- ``play_random``: the fused path, ``K`` steps of random play in one compiled call;

then each game's floor: ``benchmarks/vector_floor_<game>.c``, a plain C loop over the
same state and outputs (the player to move's tensor, the mask, rewards, terminated flags
and both final tensors) with the same draws and everything inlined, compiled with
``cc -O3`` when a C compiler is on the PATH. CPU time, so that other jobs on a shared
machine slow the figures less than the wall clock (they still share caches and cores:
say the load average, printed first).

    python benchmarks/profile_vector.py [--core 0] [--batches 1 1024] [--seconds 0.5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

import hiddenenvs.vector as vector
from hiddenenvs.vector import _kernels

GAMES = {"kuhn_poker": {}, "leduc_holdem": {}, "othello": {"board_size": 8}}
# Each game's plain C floor, and the game-steps it times (divided by the batch).
FLOORS = {
    "kuhn_poker": ("vector_floor_kuhn.c", 3_000_000),
    "leduc_holdem": ("vector_floor_leduc.c", 2_000_000),
    "othello": ("vector_floor_othello.c", 300_000),
}


def cpu_seconds_per_call(function, seconds: float) -> float:
    """Median CPU seconds of one call over five slices of about ``seconds / 5``."""
    function()
    slices = []
    for _ in range(5):
        calls, start = 0, time.process_time()
        while time.process_time() - start < seconds / 5:
            function()
            calls += 1
        slices.append((time.process_time() - start) / calls)
    return float(np.median(slices))


def profile(name: str, params: dict, batch: int, seconds: float) -> dict[str, float]:
    env = vector.make(name, num_envs=batch, seed=0, copy=False, **params)
    policy = vector.RandomLegalPolicy(seed=1)
    holder = {"step": env.reset()}
    kernel = env._kernel
    masks = kernel.legal_action_masks.reshape(batch, -1)
    actions = np.empty(batch, dtype=np.int64)
    draws = np.zeros(batch, dtype=np.uint64)
    _kernels.seed_generators(draws, 2)
    active = np.ones(batch, dtype=np.int8)

    def step_loop():
        holder["step"] = env.step(policy(holder["step"].legal_action_masks))

    def kernels():
        _kernels.random_legal_actions(masks, draws, actions)
        kernel.step(actions.reshape(batch, 1), active)

    fused_steps = max(1, 20_000 // batch)
    per_step = {
        "step loop": cpu_seconds_per_call(step_loop, seconds),
        "policy call": cpu_seconds_per_call(lambda: policy(masks), seconds),
        "kernels": cpu_seconds_per_call(kernels, seconds),
        "play_random": cpu_seconds_per_call(lambda: env.play_random(fused_steps, policy), seconds)
        / fused_steps,
    }
    return {label: 1e9 * value / batch for label, value in per_step.items()}


def floor(name: str, batch: int) -> str:
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return "no C compiler on the PATH"
    source, game_steps = FLOORS[name]
    with tempfile.TemporaryDirectory() as folder:
        binary = str(Path(folder) / "floor")
        subprocess.run(
            [compiler, "-O3", "-o", binary, str(Path(__file__).with_name(source))], check=True
        )
        steps = str(max(1, game_steps // batch))
        return subprocess.run([binary, str(batch), steps], capture_output=True, text=True).stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--core", type=int, default=0)
    parser.add_argument("--batches", type=int, nargs="+", default=[1, 1024])
    parser.add_argument("--seconds", type=float, default=0.5, help="CPU time per figure")
    args = parser.parse_args()
    os.sched_setaffinity(0, {args.core})
    print(
        f"# core {args.core}, load average {os.getloadavg()[0]:.1f}; ns of CPU time per agent-step"
    )
    print(
        "| game | batch | step loop | policy call | kernels | Python per call (us) | play_random |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, params in GAMES.items():
        for batch in args.batches:
            ns = profile(name, params, batch, args.seconds)
            python_us = (ns["step loop"] - ns["kernels"]) * batch / 1e3
            print(
                f"| {name} | {batch:,} | {ns['step loop']:.1f} | {ns['policy call']:.1f} | "
                f"{ns['kernels']:.1f} | {python_us:.1f} | {ns['play_random']:.1f} |",
                flush=True,
            )
    for name in GAMES:
        for batch in args.batches:
            print(f"floor, {name}, plain C loop: {floor(name, batch).strip()}", flush=True)


if __name__ == "__main__":
    main()
