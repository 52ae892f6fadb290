"""ANFSP against NFSP on Leduc hold'em, same cores, same wall time; ANFSP throughput.

    python benchmarks/bench_anfsp_leduc.py                       # 30 minutes each (the issue's budget)
    python benchmarks/bench_anfsp_leduc.py --seconds 300         # a short version, 5 minutes each
    python benchmarks/bench_anfsp_leduc.py --seconds 0 --throughput-seconds 30   # throughput only
    python benchmarks/bench_anfsp_leduc.py --trainers anfsp --throughput-seconds 0   # one curve
    python benchmarks/bench_anfsp_leduc.py --trainers nfsp --throughput-seconds 0    # the other, same plot
    python benchmarks/bench_anfsp_leduc.py trainer.params.optimizer=adam          # an ANFSP variant

1. Exact exploitability (the average policy, NashConv / 2) against wall time: ANFSP
   (``configs/anfsp_leduc.yaml``: one actor-learner per core of a local Ray with
   ``--cores`` CPUs, the server in the driver) and then NFSP (``configs/nfsp_leduc.yaml``,
   one process), each for ``--seconds``. Ray's start-up counts in ANFSP's wall time.
   Both curves go to ``<output>/anfsp_vs_nfsp.png`` and are printed.
2. Throughput: ANFSP episodes per second after ``--warmup-seconds`` (Ray's start-up
   excluded; early in a run, whose episodes are longer than later ones) with 1, 2 and 4
   actors on a local Ray of ``--cores`` CPUs; more actors than cores share them
   (``actor_num_cpus`` = cores / actors) and are labelled oversubscribed. The overrides
   apply to both parts.

Note the machine's load (printed at the start and end): on a shared machine both
figures move with other jobs.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agents.config import load_config  # noqa: E402
from agents.loop import LoopContext, train  # noqa: E402
from agents.runs import build_learner  # noqa: E402
from timing import print_exploitability_rows  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


def exploitability_curve(
    config_name: str, seconds: float, output: Path, every: int, seed: int, overrides: list[str]
) -> list[dict]:
    config = load_config(
        REPO / "configs" / config_name,
        [
            f"budget.seconds={seconds}",
            "budget.episodes=null",
            f"output_dir={output}",
            f"evaluation.every_episodes={every}",
            f"seed={seed}",
            "progress_bar=false",
            *overrides,
        ],
    )
    train(config)
    return evaluated_rows(output / "metrics.csv")


def evaluated_rows(metrics: Path) -> list[dict]:
    """The rows of a run's ``metrics.csv`` that carry an exploitability."""
    with metrics.open() as handle:
        return [row for row in csv.DictReader(handle) if row["exploitability"]]


def throughput(
    num_actors: int, cores: int, warmup_seconds: float, seconds: float, overrides: list[str]
) -> float:
    """Episodes per second of ANFSP on Leduc with ``num_actors`` actors, after a warm-up."""
    share = min(1.0, cores / num_actors)
    config = load_config(
        REPO / "configs" / "anfsp_leduc.yaml",
        [
            *overrides,
            f"trainer.params.num_actors={num_actors}",
            f"trainer.params.actor_num_cpus={share}",
            f"trainer.params.num_cpus={cores}",
            "progress_bar=false",
        ],
    )
    learner = build_learner(config)
    context = LoopContext(learner, config, rng=None)
    try:
        started = time.perf_counter()
        while time.perf_counter() - started < warmup_seconds:
            learner.step(context)
        episodes, started = 0, time.perf_counter()
        while time.perf_counter() - started < seconds:
            episodes += learner.step(context).episodes
        return episodes / (time.perf_counter() - started)
    finally:
        learner.close()


def plot(curves: dict[str, list[dict]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(6, 4))
    for name, rows in curves.items():
        axis.plot(
            [float(r["wall_seconds"]) for r in rows],
            [float(r["exploitability"]) for r in rows],
            marker=".",
            label=name,
        )
    axis.axhline(0.1, color="grey", linestyle="--", linewidth=1, label="the issue's goal (0.1)")
    axis.set_xlabel("wall time (s)")
    axis.set_ylabel("exploitability (exact)")
    axis.set_yscale("log")
    axis.set_title("Leduc hold'em: ANFSP vs NFSP, same cores")
    axis.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def earlier_curves(output: Path, trainers: str) -> dict[str, list[dict]]:
    """The curve of the trainer this run skips, from an earlier run into the same ``output``
    (so one plot can hold both when they ran at different times)."""
    skipped = {
        "anfsp": ("nfsp", "NFSP, 1 process (earlier run)"),
        "nfsp": ("anfsp", "ANFSP (earlier run)"),
    }.get(trainers)
    if skipped is None or not (output / skipped[0] / "metrics.csv").is_file():
        return {}
    return {skipped[1]: evaluated_rows(output / skipped[0] / "metrics.csv")}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--seconds", type=float, default=1800.0, help="wall time of each trainer (0: skip)"
    )
    parser.add_argument(
        "--trainers",
        choices=("both", "anfsp", "nfsp"),
        default="both",
        help="which exploitability curves to run",
    )
    parser.add_argument(
        "--cores", type=int, default=2, help="CPUs of the local Ray: one actor each"
    )
    parser.add_argument("--every", type=int, default=20_000, help="episodes between evaluations")
    parser.add_argument(
        "--throughput-seconds", type=float, default=30.0, help="per actor count (0: skip)"
    )
    parser.add_argument("--warmup-seconds", type=float, default=10.0)
    parser.add_argument("--output", default="runs/bench_anfsp_leduc")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "overrides", nargs="*", metavar="key=value", help="overrides of the ANFSP config"
    )
    arguments = parser.parse_args()
    output = Path(arguments.output)
    print(f"load average at start: {os.getloadavg()}; cores given: {arguments.cores}")

    if arguments.seconds > 0:
        curves = {}
        if arguments.trainers in ("both", "anfsp"):
            curves[f"ANFSP, {arguments.cores} actors"] = exploitability_curve(
                "anfsp_leduc.yaml",
                arguments.seconds,
                output / "anfsp",
                arguments.every,
                arguments.seed,
                [
                    f"trainer.params.num_actors={arguments.cores}",
                    f"trainer.params.num_cpus={arguments.cores}",
                    *arguments.overrides,
                ],
            )
        if arguments.trainers in ("both", "nfsp"):
            curves["NFSP, 1 process"] = exploitability_curve(
                "nfsp_leduc.yaml",
                arguments.seconds,
                output / "nfsp",
                arguments.every,
                arguments.seed,
                [],
            )
        for name, rows in curves.items():
            print(f"\n{name}, {arguments.seconds:.0f} s:")
            best = print_exploitability_rows(rows)
            print(
                f"last {float(rows[-1]['exploitability']):.4f}; best {float(best['exploitability']):.4f} "
                f"at {float(best['wall_seconds']):.0f} s"
            )
        plot({**earlier_curves(output, arguments.trainers), **curves}, output / "anfsp_vs_nfsp.png")
        print(f"plot: {output / 'anfsp_vs_nfsp.png'}")

    if arguments.throughput_seconds > 0:
        print(
            f"\nANFSP throughput on Leduc, local Ray with {arguments.cores} CPUs, "
            f"{arguments.throughput_seconds:.0f} s each after {arguments.warmup_seconds:.0f} s warm-up:"
        )
        for actors in (1, 2, 4):
            rate = throughput(
                actors,
                arguments.cores,
                arguments.warmup_seconds,
                arguments.throughput_seconds,
                arguments.overrides,
            )
            label = " (oversubscribed: actors share cores)" if actors > arguments.cores else ""
            print(f"{actors} actor(s): {rate:,.0f} episodes/s{label}")
    print(f"\nload average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
