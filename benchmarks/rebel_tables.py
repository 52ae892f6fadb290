"""The GDL-II ReBeL paper's tables, re-measured: ReBeL search only and ReBeL with a trained
network, against random and the scripted bots, each seat separately, with 95% Wilson
intervals.

    python benchmarks/rebel_tables.py --games 10
    python benchmarks/rebel_tables.py --games 50 \\
        --trained meier=runs/rebel_meier/policy_player0.pt \\
        blind_tictactoe=runs/rebel_blind_tictactoe/policy_player0.pt

Score per 100 games as in the paper: the mean goal (0..100) of ReBeL's seat, the
interval a Wilson interval on score/100. ``--spec`` is the search-only agent (random
playouts at the frontier); ``--trained env=file`` adds a column for the agent file a
``rebel`` training run saved (its network at the frontier and as CFR's starting policy,
its own search settings), played in the same run against the same opponents. The
paper's figures (100 games per cell; CFR-only search, and CFR+NN after ~24 h of
training) are printed beside ours. Matches go through :func:`agents.leaderboard.evaluate`
(SQLite store in --out: an interrupted run resumes).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from agents.leaderboard import evaluate
from agents.leaderboard.specs import agent_identity
from agents.leaderboard.stats import wilson_interval
from agents.leaderboard.store import ResultStore

# (env, scripted bot, {seat: ((CFR-only vs random, vs hand-crafted), (CFR+NN vs random, vs
# hand-crafted))}): S0's tables.
GAMES = (
    ("meier", "scripted:meier", {0: ((83, 64), (97, 81)), 1: ((80, 40), (80, 41))}),
    (
        "blind_tictactoe",
        "scripted:blind_tictactoe",
        {0: ((54, 25), (79.5, 48)), 1: ((60, 20), (79.5, 55))},
    ),
    (
        "biased_blind_tictactoe",
        "scripted:blind_tictactoe",
        {0: ((84, 40.5), (89.5, 79.5)), 1: ((36, 14.5), (46, 44))},
    ),
)


def seat_scores(
    db: Path, env: str, spec: str, opponent: str
) -> dict[int, tuple[float, float, float, int]]:
    """``{seat: (score, low, high, games)}`` of ``spec`` (an :func:`agent_identity`)
    against ``opponent``."""
    with ResultStore(db) as store:
        results = [r for r in store.results(env) if set(r.key.seats) == {spec, opponent}]
    scores = {}
    for seat in (0, 1):
        goals = [r.returns[seat] for r in results if r.key.seats[seat] == spec]
        low, high = wilson_interval(sum(goals) / 100.0, len(goals))
        scores[seat] = (sum(goals) / max(len(goals), 1), 100 * low, 100 * high, len(goals))
    return scores


def cell(score: tuple[float, float, float, int]) -> str:
    return f"{score[0]:.1f} [{score[1]:.1f}, {score[2]:.1f}]"


def parse_trained(items: list[str]) -> dict[str, str]:
    """``env=file`` pairs; a file that does not exist is refused before any match."""
    trained = {}
    for item in items:
        env, separator, path = item.partition("=")
        if not separator or not env or not path:
            raise SystemExit(
                f"--trained {item!r}: give env=file, e.g. meier=runs/rebel_meier/policy_player0.pt"
            )
        if not Path(path).is_file():
            raise SystemExit(f"--trained {item!r}: no file {path}")
        trained[env] = path
    return trained


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--spec", default="rebel:0.3s,rollouts=2,samples=16", help="the search-only agent"
    )
    parser.add_argument(
        "--trained",
        nargs="*",
        default=[],
        metavar="ENV=FILE",
        help="a trained rebel agent file per env (a column of its own)",
    )
    parser.add_argument("--games", type=int, default=10, help="games per seat per opponent")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", default="results/rebel_tables")
    parser.add_argument("--envs", nargs="+", default=[env for env, _, _ in GAMES])
    arguments = parser.parse_args()
    trained = parse_trained(arguments.trained)
    out = Path(arguments.out)
    out.mkdir(parents=True, exist_ok=True)
    print(
        f"{arguments.games} games per seat and opponent, {arguments.workers} worker(s); search only: "
        f"{arguments.spec}; trained: {trained or 'none'}"
    )
    print(
        "| game | seat | vs | ReBeL search [95% CI] | ReBeL trained [95% CI] | games | paper CFR-only "
        "| paper CFR+NN | wall s |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for env, bot, paper in GAMES:
        if env not in arguments.envs:
            continue
        db = out / f"{env}.sqlite"
        start = time.perf_counter()
        players = [arguments.spec] + ([trained[env]] if env in trained else [])
        for player in players:
            evaluate(
                env,
                {},
                [player, "random", bot],
                arguments.games,
                db,
                mode="gauntlet",
                workers=arguments.workers,
                exploitability_max_nodes=0,
                progress=False,
            )
        seconds = time.perf_counter() - start
        for index, opponent in enumerate(("random", bot)):
            columns = [seat_scores(db, env, agent_identity(player), opponent) for player in players]
            for seat in (0, 1):
                search = columns[0][seat]
                with_network = cell(columns[1][seat]) if len(columns) > 1 else "-"
                print(
                    f"| {env} | {seat} | {opponent} | {cell(search)} | {with_network} | {search[3]} "
                    f"| {paper[seat][0][index]} | {paper[seat][1][index]} | {seconds:.0f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
