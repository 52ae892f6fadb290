"""MCCFR speed against OpenSpiel, measured in the same run.

    python benchmarks/bench_mccfr.py                  # 30 s per solver (about 5 minutes with
                                                      # OpenSpiel's exact exploitability on Goofspiel)
    python benchmarks/bench_mccfr.py --seconds 10 --skip-peer-exploitability   # about a minute

1. External-sampling MCCFR on Goofspiel(5) with a random point deck (3.3 million
   histories). Ours: :class:`agents.search.external_sampling_mccfr.ExternalSamplingMCCFR`
   on the compiled tree backend. Peer: OpenSpiel C++ ``ExternalSamplingMCCFRSolver``
   (simple averaging) through pyspiel, on ``convert_to_turn_based(goofspiel(...))`` since
   OpenSpiel's MCCFR needs a sequential game. Each solver gets ``--seconds`` of wall time
   from its construction (ours includes building the tree); the figures are iterations
   per second while iterating and the exact exploitability of the average policy at the
   end (ours: ``hiddenenvs.analysis``; theirs: ``pyspiel.exploitability``, which builds its
   own tree and takes one to two minutes: ``--skip-peer-exploitability`` leaves it out).
2. Outcome-sampling MCCFR (epsilon 0.6) on Leduc hold'em. Ours: the compiled tree backend.
   Peer: OpenSpiel's Python ``open_spiel.python.algorithms.outcome_sampling_mccfr``. Same
   figures (the peer's exploitability by OpenSpiel's Python ``exploitability``).

One MCCFR iteration is one traversal (ES) or one sampled history (OS) per player, in both
libraries. Both run single-threaded on the CPU; on the shared 2-core development machine
other jobs move the figures, so the ratio, measured side by side, is the figure to quote.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import hiddenenvs  # noqa: E402
from agents.search.external_sampling_mccfr import ExternalSamplingMCCFR  # noqa: E402
from agents.search.outcome_sampling_mccfr import OutcomeSamplingMCCFR  # noqa: E402

GOOFSPIEL_SPEC = "goofspiel(num_cards=5,points_order=random)"


def run_for(seconds: float, step, chunk: int, started: float) -> tuple[int, float]:
    """Call ``step(chunk)`` until ``seconds`` have passed since ``started``; returns
    (iterations, seconds spent iterating)."""
    iterations, iterating_from = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        step(chunk)
        iterations += chunk
    return iterations, time.perf_counter() - iterating_from


def ours(solver_class, game, seconds: float, chunk: int, **options) -> dict:
    started = time.perf_counter()
    solver = solver_class(game, seed=0, backend="tree", **options)
    setup_seconds = time.perf_counter() - started
    iterations, iterating_seconds = run_for(seconds, solver.iterate, chunk, started)
    return {
        "setup_seconds": setup_seconds,
        "iterations": iterations,
        "per_second": iterations / iterating_seconds,
        "exploitability": solver.exploitability(),
    }


def peer_external_sampling(seconds: float, exact: bool) -> dict:
    import pyspiel

    started = time.perf_counter()
    game = pyspiel.convert_to_turn_based(pyspiel.load_game(GOOFSPIEL_SPEC))
    solver = pyspiel.ExternalSamplingMCCFRSolver(game, 1, pyspiel.MCCFRAverageType.SIMPLE)
    setup_seconds = time.perf_counter() - started

    def step(chunk: int) -> None:
        for _ in range(chunk):
            solver.run_iteration()

    iterations, iterating_seconds = run_for(seconds, step, 10, started)
    result = {
        "setup_seconds": setup_seconds,
        "iterations": iterations,
        "per_second": iterations / iterating_seconds,
        "exploitability": None,
    }
    if exact:
        measured_from = time.perf_counter()
        result["exploitability"] = pyspiel.exploitability(game, solver.average_policy())
        result["exploitability_seconds"] = time.perf_counter() - measured_from
    return result


def peer_outcome_sampling(seconds: float) -> dict:
    import pyspiel
    from open_spiel.python.algorithms import exploitability, outcome_sampling_mccfr

    started = time.perf_counter()
    game = pyspiel.load_game("leduc_poker")
    solver = outcome_sampling_mccfr.OutcomeSamplingSolver(game)
    setup_seconds = time.perf_counter() - started

    def step(chunk: int) -> None:
        for _ in range(chunk):
            solver.iteration()

    iterations, iterating_seconds = run_for(seconds, step, 100, started)
    return {
        "setup_seconds": setup_seconds,
        "iterations": iterations,
        "per_second": iterations / iterating_seconds,
        "exploitability": exploitability.exploitability(game, solver.average_policy()),
    }


def report(title: str, our: dict, peer: dict | None, peer_name: str, goal: float) -> None:
    print(f"\n== {title}")
    print(
        f"ours: {our['iterations']:,} iterations, {our['per_second']:,.0f} iterations/s "
        f"(setup {our['setup_seconds']:.1f} s), exploitability {our['exploitability']:.4f}"
    )
    if peer is None:
        print(f"{peer_name}: not installed (pip install open_spiel)")
        return
    exploitability = (
        "not measured" if peer["exploitability"] is None else f"{peer['exploitability']:.4f}"
    )
    if peer.get("exploitability_seconds"):
        exploitability += f" ({peer['exploitability_seconds']:.0f} s to compute)"
    print(
        f"{peer_name}: {peer['iterations']:,} iterations, {peer['per_second']:,.0f} iterations/s "
        f"(setup {peer['setup_seconds']:.1f} s), exploitability {exploitability}"
    )
    ratio = our["per_second"] / peer["per_second"]
    print(
        f"ratio (ours / peer) iterations/s: {ratio:.1f}x (goal >= {goal:g}x: {'met' if ratio >= goal else 'NOT met'})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--seconds", type=float, default=30.0, help="wall time per solver (default 30)"
    )
    parser.add_argument(
        "--skip-peer-exploitability",
        action="store_true",
        help="leave out pyspiel.exploitability on Goofspiel (one to two minutes)",
    )
    args = parser.parse_args()
    try:
        import pyspiel  # noqa: F401

        have_peer = True
    except ImportError:
        have_peer = False

    goofspiel = hiddenenvs.load_game("goofspiel", num_cards=5, points_order="random")
    our_es = ours(ExternalSamplingMCCFR, goofspiel, args.seconds, 100)
    peer_es = (
        peer_external_sampling(args.seconds, not args.skip_peer_exploitability)
        if have_peer
        else None
    )
    report(
        f"ES-MCCFR, Goofspiel(5) random deck, {args.seconds:g} s each",
        our_es,
        peer_es,
        "OpenSpiel C++ ExternalSamplingMCCFRSolver",
        1.0,
    )

    leduc = hiddenenvs.load_game("leduc_holdem")
    our_os = ours(OutcomeSamplingMCCFR, leduc, args.seconds, 10_000, exploration=0.6)
    peer_os = peer_outcome_sampling(args.seconds) if have_peer else None
    report(
        f"OS-MCCFR (epsilon 0.6), Leduc hold'em, {args.seconds:g} s each",
        our_os,
        peer_os,
        "OpenSpiel Python outcome_sampling_mccfr",
        10.0,
    )


if __name__ == "__main__":
    main()
