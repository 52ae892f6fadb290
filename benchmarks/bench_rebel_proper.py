"""ReBeL proper: CFR-D's safe re-solving gadget and public-belief-state values, measured exactly.

    python benchmarks/bench_rebel_proper.py                 # gadget and PBS parts, ~6 minutes
    python benchmarks/bench_rebel_proper.py --part gadget   # ~3 minutes
    python benchmarks/bench_rebel_proper.py --part pbs --episodes 300

1. Re-solving (Kuhn poker, Liar's Dice 1x4f): exact exploitability of the policy the search
   plays at every information set, for the blueprint alone (``resolve="frontier"`` at full
   depth: one subgame, CFR+), the unsafe re-solve at every decision (``"decision"``) and
   the safe gadget re-solve (``"gadget"``, Burch, Johanson & Bowling 2014) from that blueprint;
   the peer is OpenSpiel's C++ ``CFRPlusSolver`` at the blueprint's iterations.
2. PBS values (Liar's Dice 1x4f, depth 2): the search with a public-belief-state value
   network trained by ReBeL's self-play for ``--episodes`` games against the same search
   with per-history random-playout values (the peer, part (a)), same run.
"""

from __future__ import annotations

import argparse
import time

import torch

import hiddenenvs
from agents.rebel import ReBeLSearch, rebel_exploitability
from agents.rebel import PBSValue, train_pbs_values


def timed_exploitability(search: ReBeLSearch) -> tuple[float, float]:
    start = time.perf_counter()
    value = rebel_exploitability(search)
    return value, time.perf_counter() - start


def openspiel_cfr_plus(name: str, params: dict, iterations: int) -> float | None:
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game(name, params)
    solver = pyspiel.CFRPlusSolver(game)
    for _ in range(iterations):
        solver.evaluate_and_update_policy()
    return pyspiel.exploitability(game, solver.average_policy())


def gadget_part() -> None:
    cases = [
        ("kuhn_poker", {}, "kuhn_poker", {}, [(10, 1000), (200, 200)]),
        (
            "liars_dice",
            {"faces": 4},
            "liars_dice",
            {"numdice": 1, "dice_sides": 4},
            [(10, 200), (200, 200)],
        ),
    ]
    for name, params, spiel_name, spiel_params, budgets in cases:
        game = hiddenenvs.load_game(name, **params)
        print(f"{name} {params}: exact exploitability (seconds)")
        for blueprint, resolve in budgets:
            base, base_s = timed_exploitability(ReBeLSearch(game, iterations=blueprint))
            unsafe, unsafe_s = timed_exploitability(
                ReBeLSearch(game, iterations=resolve, resolve="decision")
            )
            safe, safe_s = timed_exploitability(
                ReBeLSearch(
                    game, iterations=resolve, blueprint_iterations=blueprint, resolve="gadget"
                )
            )
            peer = openspiel_cfr_plus(spiel_name, spiel_params, blueprint)
            print(
                f"  blueprint {blueprint} it: {base:.6f} ({base_s:.1f} s)   OpenSpiel CFR+ {blueprint} it: "
                + ("n/a" if peer is None else f"{peer:.6f}, ratio ours/peer {base / peer:.3f}")
            )
            print(
                f"  re-solve every decision, {resolve} it: unsafe {unsafe:.6f} ({unsafe_s:.1f} s), "
                f"gadget {safe:.6f} ({safe_s:.1f} s); gadget/blueprint {safe / base:.3f}"
            )


def pbs_part(episodes: int, iterations: int) -> None:
    torch.set_num_threads(1)
    game = hiddenenvs.load_game("liars_dice", faces=4)
    playout, playout_s = timed_exploitability(ReBeLSearch(game, iterations=iterations, max_depth=2))
    pbs = PBSValue(game, hidden_size=64)
    untrained, _ = timed_exploitability(
        ReBeLSearch(game, iterations=iterations, max_depth=2, pbs_value=pbs)
    )
    start = time.perf_counter()
    losses = train_pbs_values(pbs, episodes=episodes, max_depth=2, iterations=iterations, seed=0)
    train_s = time.perf_counter() - start
    trained, trained_s = timed_exploitability(
        ReBeLSearch(game, iterations=iterations, max_depth=2, pbs_value=pbs)
    )
    print(
        f"Liar's Dice 1x4f, depth 2, {iterations} CFR+ iterations per solve: exact exploitability"
    )
    print(f"  per-history playout values (peer, part (a)): {playout:.4f} ({playout_s:.1f} s)")
    print(
        f"  PBS network untrained: {untrained:.4f}; after {episodes} self-play games ({train_s:.0f} s, "
        f"last loss {sum(losses[-20:]) / 20:.4f}): {trained:.4f} ({trained_s:.1f} s); "
        f"ratio PBS/playout {trained / playout:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("gadget", "pbs", "all"), default="all")
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--iterations", type=int, default=50)
    args = parser.parse_args()
    if args.part in ("gadget", "all"):
        gadget_part()
    if args.part in ("pbs", "all"):
        pbs_part(args.episodes, args.iterations)


if __name__ == "__main__":
    main()
