"""Shared by the playout benchmarks: a rate meter and a random AEC playout."""

from __future__ import annotations

import time

import numpy as np


def games_per_second(seconds: float, play_one, *args) -> float:
    """How many ``play_one(*args)`` calls finish per second, measured for ``seconds``."""
    games, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        play_one(*args)
        games += 1
    return games / (time.perf_counter() - start)


def aec_playout(env, rng: np.random.Generator) -> None:
    env.reset(seed=int(rng.integers(2**31)))
    for agent in env.agent_iter():
        observation, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        legal = np.flatnonzero(observation["action_mask"])
        env.step(int(legal[rng.integers(len(legal))]))
