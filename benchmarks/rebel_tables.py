"""The GDL-II ReBeL paper's tables, re-measured: ReBeL search against random and the
scripted bots, each seat separately, with 95% Wilson intervals.

    python benchmarks/rebel_tables.py --games 10 --spec "rebel:0.3s,rollouts=2,samples=16"

Score per 100 games as in the paper: the mean goal (0..100) of ReBeL's seat, the
interval a Wilson interval on score/100. The paper's figures (100 games per cell; CFR-only
search, and CFR+NN after ~24 h of training) are printed beside ours. Matches go through
:func:`agents.leaderboard.evaluate` (SQLite store in --out: an interrupted run resumes).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from agents.leaderboard import evaluate
from agents.leaderboard.stats import wilson_interval
from agents.leaderboard.store import ResultStore

# (env, scripted bot, {seat: ((CFR-only vs random, vs hand-crafted), (CFR+NN vs random, vs
# hand-crafted))}): S0's tables; our search has no trained network, so CFR-only is its peer.
GAMES = (
    ("meier", "scripted:meier", {0: ((83, 64), (97, 81)), 1: ((80, 40), (80, 41))}),
    ("blind_tictactoe", "scripted:blind_tictactoe", {0: ((54, 25), (79.5, 48)), 1: ((60, 20), (79.5, 55))}),
    ("biased_blind_tictactoe", "scripted:blind_tictactoe",
     {0: ((84, 40.5), (89.5, 79.5)), 1: ((36, 14.5), (46, 44))}),
)


def seat_scores(db: Path, env: str, spec: str, opponent: str) -> dict[int, tuple[float, float, float, int]]:
    """``{seat: (score, low, high, games)}`` of ``spec`` against ``opponent``."""
    with ResultStore(db) as store:
        results = [r for r in store.results(env) if set(r.key.seats) == {spec, opponent}]
    scores = {}
    for seat in (0, 1):
        goals = [r.returns[seat] for r in results if r.key.seats[seat] == spec]
        low, high = wilson_interval(sum(goals) / 100.0, len(goals))
        scores[seat] = (sum(goals) / max(len(goals), 1), 100 * low, 100 * high, len(goals))
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--spec", default="rebel:0.3s,rollouts=2,samples=16")
    parser.add_argument("--games", type=int, default=10, help="games per seat per opponent")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", default="results/rebel_tables")
    parser.add_argument("--envs", nargs="+", default=[env for env, _, _ in GAMES])
    arguments = parser.parse_args()
    out = Path(arguments.out)
    out.mkdir(parents=True, exist_ok=True)
    print(f"{arguments.games} games per seat and opponent, {arguments.workers} worker(s)")
    print(f"| game | seat | vs | ReBeL ({arguments.spec}) [95% CI] | games | paper CFR-only | paper CFR+NN | wall s |")
    print("|---|---|---|---|---|---|---|---|")
    for env, bot, paper in GAMES:
        if env not in arguments.envs:
            continue
        db = out / f"{env}.sqlite"
        start = time.perf_counter()
        evaluate(env, {}, [arguments.spec, "random", bot], arguments.games, db, mode="gauntlet",
                 workers=arguments.workers, exploitability_max_nodes=0, progress=False)
        seconds = time.perf_counter() - start
        for index, opponent in enumerate(("random", bot)):
            for seat, (score, low, high, games) in seat_scores(db, env, arguments.spec, opponent).items():
                print(f"| {env} | {seat} | {opponent} | {score:.1f} [{low:.1f}, {high:.1f}] | {games} "
                      f"| {paper[seat][0][index]} | {paper[seat][1][index]} | {seconds:.0f} |", flush=True)


if __name__ == "__main__":
    main()
