"""Random-playout transitions per second of the GDL propnet, and the transition cache.

For tictactoe, connectFour and breakthroughSmall from ``../shared/gdl/ggp-base/``:

- compiled depth charge: ``Propnet.depth_charge`` (the whole playout in Cython);
- Python-level apply loop: ``GdlState.apply_actions`` with random legal moves, through
  the game model (what a Python agent sees; cache off so every transition is computed);
- a CFR-style re-traversal: the same depth-limited tree walked several times (as CFR's
  iterations do), with the LRU transition cache on and off: hit rate and speed-up.

The peer, ggp-base's Java prover, is not installable here: its figures are QUOTED anchors
from the issue (about 2,000 transitions/s on tictactoe, 1,100 on connectFour, 630 on
breakthrough on this kind of machine), not measured in this run.

    python benchmarks/bench_gdl_playouts.py [--seconds 2]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import hiddenenvs
from hiddenenvs.envs.gdl.propnet import Propnet

SHEETS = (
    Path(__file__).resolve().parent.parent.parent / "shared" / "gdl" / "ggp-base" / "rulesheets"
)
QUOTED_JAVA_PROVER = {"tictactoe": 2000, "connectFour": 1100, "breakthroughSmall": 630}


def depth_charge_rate(net: Propnet, seconds: float) -> float:
    transitions, seed = 0, 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        _, steps, _ = net.depth_charge(net.initial_state, seed)
        transitions += steps
        seed += 1
    return transitions / (time.perf_counter() - start)


def apply_loop_rate(name: str, seconds: float) -> float:
    game = hiddenenvs.load_game("gdl", rules=str(SHEETS / f"{name}.kif"), max_steps=10_000)
    game.propnet.cache_size = 0
    rng = np.random.default_rng(0)
    transitions = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = game.new_initial_state()
        while not state.is_terminal():
            joint = [int(rng.choice(state.legal_actions(p))) for p in range(game.info.num_players)]
            state.apply_actions(joint)
            transitions += 1
    return transitions / (time.perf_counter() - start)


def traverse(net: Propnet, state: bytes, depth: int) -> int:
    """Visit every joint move to ``depth`` (a CFR iteration's walk); returns transitions."""
    info = net.evaluate(state)
    if info.terminal or depth == 0:
        return 0
    joints = [()]
    for legal in info.legal:
        joints = [j + (m,) for j in joints for m in legal]
    count = 0
    for joint in joints:
        child, _ = net.transition(state, joint)
        count += 1 + traverse(net, child, depth - 1)
    return count


def cache_benchmark(net: Propnet, depth: int, passes: int) -> tuple[float, float, float]:
    timings = {}
    for size in (0, 1_000_000):
        net.cache_size = size
        net.clear_cache()
        start = time.perf_counter()
        for _ in range(passes):
            traverse(net, net.initial_state, depth)
        timings[size] = time.perf_counter() - start
        hit_rate = net.cache_info()["transition"]["hit_rate"]
    net.clear_cache()
    return hit_rate, timings[0], timings[1_000_000]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    if not SHEETS.is_dir():
        raise SystemExit(f"needs ../shared/gdl/ggp-base/ beside the repository ({SHEETS})")
    print(
        f"{'sheet':18s} {'depth charge/s':>15s} {'apply loop/s':>13s} {'Java (quoted)':>14s} "
        f"{'charge/Java':>12s} {'loop/Java':>10s}"
    )
    for name, anchor in QUOTED_JAVA_PROVER.items():
        net = Propnet.from_file(SHEETS / f"{name}.kif")
        charge = depth_charge_rate(net, args.seconds)
        loop = apply_loop_rate(name, args.seconds)
        print(
            f"{name:18s} {charge:15,.0f} {loop:13,.0f} {anchor:14,d} {charge / anchor:11.0f}x "
            f"{loop / anchor:9.1f}x"
        )
    net = Propnet.from_file(SHEETS / "tictactoe.kif")
    hit_rate, uncached, cached = cache_benchmark(net, depth=4, passes=5)
    print(
        f"\nCFR-style re-traversal (tictactoe, every joint move to depth 4, 5 passes): "
        f"transition cache hit rate {hit_rate:.1%}, {uncached:.2f}s without cache, "
        f"{cached:.2f}s with, speed-up {uncached / cached:.1f}x"
    )


if __name__ == "__main__":
    main()
