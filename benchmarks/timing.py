"""Shared by the benchmarks: a rate meter that takes turns, a random AEC playout, the
table of a training run's metrics.csv rows, and the commit a page names."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Callable

import numpy as np


def interleaved_rates(
    seconds: float, contenders: dict[str, Callable[[], object]], turns: int = 8
) -> dict[str, float]:
    """Units per second of each contender, ``name: run_once``: ``run_once()`` returns the
    units one call did as an int; any other result (None, a playout's trajectory) counts
    as one game.

    Each contender runs about ``seconds`` in all, in ``turns`` slices taken in rotation
    with the others, so that load from other jobs on a shared machine falls on ours and
    the peer's alike instead of on whichever happened to run at a busy moment. Each runs
    once untimed first (tables, caches, imports).
    """
    for run_once in contenders.values():
        run_once()
    units = dict.fromkeys(contenders, 0)
    elapsed = dict.fromkeys(contenders, 0.0)
    slice_seconds = seconds / turns
    for _ in range(turns):
        for name, run_once in contenders.items():
            start = now = time.perf_counter()
            while now - start < slice_seconds:
                done = run_once()
                units[name] += done if type(done) is int else 1
                now = time.perf_counter()
            elapsed[name] += now - start
    return {name: units[name] / elapsed[name] for name in contenders}


def aec_playout(env, rng: np.random.Generator) -> None:
    """One seeded AEC episode, each agent drawing a uniformly random legal action from its
    mask (``mask.nonzero()[0]``: the same indices as ``np.flatnonzero``, whose Python
    wrapper alone cost 1.6 microseconds a call, more than some envs' whole step)."""
    env.reset(seed=int(rng.integers(2**31)))
    for agent in env.agent_iter():
        observation, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        legal = observation["action_mask"].nonzero()[0]
        env.step(int(legal[rng.integers(len(legal))]))


def print_exploitability_rows(rows: list[dict]) -> dict:
    """Print a training run's ``metrics.csv`` rows (episodes, wall time, episodes/s,
    exploitability) as a table; return the row with the lowest exploitability."""
    print(f"{'episodes':>10} {'wall s':>8} {'episodes/s':>11} {'exploitability':>15}")
    for row in rows:
        print(
            f"{int(row['episodes']):>10} {float(row['wall_seconds']):>8.0f} "
            f"{float(row['episodes_per_second']):>11.0f} {float(row['exploitability']):>15.4f}"
        )
    return min(rows, key=lambda row: float(row["exploitability"]))


def checkout_commit() -> str:
    """This checkout's commit (``git rev-parse --short HEAD``), ``-dirty`` when tracked files
    other than the generated results (``docs/results/``, which the benchmark commands
    themselves rewrite) differ from it, or ``unknown`` outside a git checkout."""
    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=root
        )
        if head.returncode != 0:
            return "unknown"
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!docs/results"],
            capture_output=True,
            text=True,
            cwd=root,
        )
    except OSError:
        return "unknown"
    return head.stdout.strip() + ("-dirty" if changed.stdout.strip() else "")
