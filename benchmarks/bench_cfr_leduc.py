"""CFR+ iterations per second and time to exact exploitability on Leduc hold'em.

Ours: agents.cfr.CFRSolver (compiled passes over hiddenenvs.analysis.GameTree). Peer:
OpenSpiel's C++ CFRPlusSolver and C++ exploitability on its leduc_poker, measured in
the same run when open_spiel is installed.

OpenSpiel's leduc_poker deals suited cards (936 information sets); ours deals ranks with
their exact probabilities (288 information sets). It is the same game: the game value,
equilibria and exploitabilities coincide (tests/test_against_openspiel.py), so the rates
below compare the time each needs to solve the same game.

    python benchmarks/bench_cfr_leduc.py [--iterations 500]
"""

from __future__ import annotations

import argparse
import time

import hiddenenvs
from agents.cfr import CFRSolver
from hiddenenvs.analysis import GameTree, TabularPolicy, exploitability


def timed(fn, repeat: int = 1) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - start) / repeat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=500)
    args = parser.parse_args()

    game = hiddenenvs.load_game("leduc_holdem")
    build_seconds = timed(lambda: GameTree.build(hiddenenvs.load_game("leduc_holdem")))
    tree = GameTree.build(game)
    solver = CFRSolver(tree, variant="cfr+")
    ours_rate = args.iterations / timed(lambda: solver.iterate(args.iterations))
    average = solver.average_policy()
    ours_exploitability_seconds = timed(lambda: exploitability(tree, average), repeat=20)
    uniform_seconds = timed(lambda: exploitability(tree, TabularPolicy.uniform(tree)), repeat=20)
    print(f"ours: tree build {build_seconds * 1e3:.1f} ms ({tree})")
    print(
        f"ours: exploitability after {args.iterations} CFR+ iterations = {solver.exploitability():.2e}"
    )

    rows = [
        ("CFR+ iterations/s", ours_rate, None),
        ("exact exploitability, seconds (CFR+ average)", ours_exploitability_seconds, None),
        ("exact exploitability, seconds (uniform)", uniform_seconds, None),
    ]
    try:
        import pyspiel

        spiel_game = pyspiel.load_game("leduc_poker")
        spiel_solver = pyspiel.CFRPlusSolver(spiel_game)
        spiel_iterations = max(20, args.iterations // 10)
        spiel_rate = spiel_iterations / timed(
            lambda: [spiel_solver.evaluate_and_update_policy() for _ in range(spiel_iterations)]
        )
        spiel_policy = spiel_solver.average_policy()
        spiel_seconds = timed(lambda: pyspiel.exploitability(spiel_game, spiel_policy), repeat=5)
        uniform_policy = pyspiel.UniformRandomPolicy(spiel_game)
        spiel_uniform_seconds = timed(
            lambda: pyspiel.exploitability(spiel_game, uniform_policy), repeat=5
        )
        rows = [
            (rows[0][0], ours_rate, spiel_rate),
            (rows[1][0], ours_exploitability_seconds, spiel_seconds),
            (rows[2][0], uniform_seconds, spiel_uniform_seconds),
        ]
    except ImportError:
        print("peer open_spiel not installed (pip install open_spiel); printing ours only")

    print(f"{'measure':<48}{'ours':>12}{'OpenSpiel C++':>15}{'speed-up':>10}")
    for label, ours, peer in rows:
        if peer is None:
            print(f"{label:<48}{ours:>12.4g}{'-':>15}{'-':>10}")
            continue
        speedup = ours / peer if label.endswith("/s") else peer / ours
        print(f"{label:<48}{ours:>12.4g}{peer:>15.4g}{speedup:>9.1f}x")


if __name__ == "__main__":
    main()
