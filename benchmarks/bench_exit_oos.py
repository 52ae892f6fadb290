"""ExIt-OOS (Kitchen & Benedetti 2018): the apprentice's exact exploitability on Leduc
against NFSP at equal wall time, and its matches on Liar's Dice(1) / II-Goofspiel(6).

    python benchmarks/bench_exit_oos.py leduc --seconds 300 --output runs/bench_exit_oos
    python benchmarks/bench_exit_oos.py matches --run runs/exit_oos_liars_dice --games 1000
    python benchmarks/bench_exit_oos.py elo --config configs/exit_oos_liars_dice.yaml --iterations 25 100 300

``leduc`` trains ``configs/exit_oos_leduc.yaml`` for ``--seconds`` of wall time, then the
peer, NFSP (``configs/nfsp_leduc.yaml``), for the same time in the same process, and
prints both exploitability tables, the ratio at the end and ``leduc_curves.png``
(exploitability against wall time, both trainers).

``matches`` plays the run's apprentice (its ``policy_player<p>.pt``, one network for
every seat) against uniform random and against OOS at the teacher's budget (the run's
``simulations_per_move`` OOS iterations per move, uniform rollouts) through
``evaluate.py`` in gauntlet mode: ``--games`` per seat order, so 2 x ``--games`` games per
pairing, every match stored in ``<output>/leaderboard.sqlite``; the leaderboard it prints
has Wilson 95% intervals and Elo. The paper's figures are printed beside ours.

``batching`` measures the paper's state machine on a game too large to enumerate
(II-Goofspiel(13), OOS's model backend): self-play games per second of one worker with
``concurrent_games`` games in lockstep (one batched apprentice forward per round of
suspended rollout steps) against the same worker playing its games one at a time (one
forward per rollout step), in turns, same network and seeds.

    python benchmarks/bench_exit_oos.py batching --cards 8 --concurrent 8 --simulations 20 --games 8

``workers`` measures self-play on the parallel map (:mod:`agents.parallel`): games per
second of one step's ``--games`` games (the config's search, a fresh apprentice each step
as in training) on 1 and 2 workers, processes or (``--ray local``/an address) Ray actors,
after a warm-up step that starts the workers; with the CPU seconds all processes spent
(the driver's and the worker processes', read from /proc; Ray actors' are not counted).

    python benchmarks/bench_exit_oos.py workers --config configs/exit_oos_leduc.yaml --simulations 1000 --steps 3

``elo`` rates training checkpoints, as the paper's Goofspiel(13) table: the config is
trained to each of ``--iterations`` in turn (resuming the same run, which is bit for bit
the uninterrupted run, and copying the run directory at each stop), then the
checkpoints, uniform random and OOS at the teacher's budget play a round robin through
``evaluate.py`` (``--games`` per seat order and pairing), Elo anchored at random = 0.
"""

from __future__ import annotations

import argparse
import csv
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agents.checkpoint import load_checkpoint  # noqa: E402
from agents.config import load_config  # noqa: E402
from agents.loop import train  # noqa: E402
from timing import print_exploitability_rows  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
# Kitchen & Benedetti 2018, Table 1 (network alone, 5,000 games, OOS at 10,000 simulations).
PAPER = {
    "liars_dice": "vs random 65/65/66%, vs OOS(10k) 53/53/51% (iterations 100/500/1000)",
    "goofspiel": "vs random 66/63/69/68/67%, vs OOS(10k) 30/34/26/27/25% (iterations 100/200/1000/2000/2500)",
}


def _rows(run_dir: Path) -> list[dict]:
    with (run_dir / "metrics.csv").open() as handle:
        return list(csv.DictReader(handle))


def leduc(arguments: argparse.Namespace) -> None:
    output = Path(arguments.output)
    runs = {
        "ExIt-OOS": load_config(
            REPO / "configs" / "exit_oos_leduc.yaml",
            [
                f"budget.seconds={arguments.seconds}",
                f"output_dir={output / 'exit_oos'}",
                "progress_bar=false",
            ],
        ),
        "NFSP": load_config(
            REPO / "configs" / "nfsp_leduc.yaml",
            [
                f"budget.seconds={arguments.seconds}",
                "budget.episodes=null",
                f"output_dir={output / 'nfsp'}",
                "evaluation.every_episodes=10000",
                "progress_bar=false",
            ],
        ),
    }
    curves = {}
    for name, config in runs.items():
        started = time.perf_counter()
        train(config)
        rows = _rows(Path(config.output_dir))
        curves[name] = rows
        print(f"\n{name} on leduc_holdem ({time.perf_counter() - started:.0f} s):")
        if name == "ExIt-OOS":
            print(f"{'iteration':>10} {'games':>8} {'wall s':>8} {'exploitability':>15}")
            for row in rows:
                print(
                    f"{int(row['iterations']):>10} {int(row['episodes']):>8} {float(row['wall_seconds']):>8.0f} "
                    f"{float(row['exploitability']):>15.4f}"
                )
        else:
            print_exploitability_rows(rows)
    ours, peer = (float(curves[name][-1]["exploitability"]) for name in ("ExIt-OOS", "NFSP"))
    print(
        f"\nafter {arguments.seconds:.0f} s each: ExIt-OOS apprentice {ours:.4f}, NFSP average policy {peer:.4f}; "
        f"ratio ExIt-OOS / NFSP = {ours / peer:.2f}"
    )
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
    axis.set_xlabel("wall time (s), 2 shared cores")
    axis.set_ylabel("exact exploitability (chips)")
    axis.set_yscale("log")
    axis.set_title("Leduc hold'em: ExIt-OOS apprentice vs NFSP")
    axis.legend()
    figure.tight_layout()
    figure.savefig(output / "leduc_curves.png", dpi=100)
    print(f"plot: {output / 'leduc_curves.png'}")


def matches(arguments: argparse.Namespace) -> None:
    run = Path(arguments.run)
    config = load_checkpoint(run / "checkpoint.pt")["config"]
    env, params = config["env"]["name"], config["env"].get("params", {})
    budget = config["trainer"]["params"].get("simulations_per_move", 1000)
    output = Path(arguments.output)
    command = [
        sys.executable,
        str(REPO / "evaluate.py"),
        "--env",
        env,
        "--agents",
        str(run),
        "random",
        f"oos:{budget}",
        "--mode",
        "gauntlet",
        "--games",
        str(arguments.games),
        "--db",
        str(output / "leaderboard.sqlite"),
        "--out",
        str(output),
        "--seed",
        "0",
        "--quiet",
    ]
    for key, value in params.items():
        command += ["--param", f"{key}={str(value).lower() if isinstance(value, bool) else value}"]
    started = time.perf_counter()
    subprocess.run(command, check=True)
    print(
        f"\n{env}: {time.perf_counter() - started:.0f} s for the gauntlet; the paper (network alone): "
        f"{PAPER.get(env, 'no figure')}"
    )


def elo(arguments: argparse.Namespace) -> None:
    output = Path(arguments.output)
    run = output / "run"
    snapshots, started = [], time.perf_counter()
    for stop in arguments.iterations:
        overrides = [
            f"budget.iterations={stop}",
            "budget.seconds=null",
            "budget.episodes=null",
            f"output_dir={run}",
            "progress_bar=false",
        ]
        config = load_config(REPO / arguments.config, overrides)
        train(config, resume=(run / "checkpoint.pt").exists())
        snapshot = output / f"iteration_{stop}"
        shutil.rmtree(snapshot, ignore_errors=True)
        shutil.copytree(run, snapshot, ignore=shutil.ignore_patterns("tensorboard"))
        snapshots.append(snapshot)
        print(f"trained to iteration {stop}: {time.perf_counter() - started:.0f} s")
    env, params = config.env.name, config.env.params
    budget = config.trainer.params.get("simulations_per_move", 1000)
    command = [
        sys.executable,
        str(REPO / "evaluate.py"),
        "--env",
        env,
        "--agents",
        *map(str, snapshots),
        "random",
        f"oos:{budget}",
        "--mode",
        "round-robin",
        "--games",
        str(arguments.games),
        "--db",
        str(output / "leaderboard.sqlite"),
        "--out",
        str(output),
        "--seed",
        "0",
        "--quiet",
    ]
    for key, value in params.items():
        command += ["--param", f"{key}={str(value).lower() if isinstance(value, bool) else value}"]
    started = time.perf_counter()
    subprocess.run(command, check=True)
    print(f"\n{env}: {time.perf_counter() - started:.0f} s for the round robin")


def batching(arguments: argparse.Namespace) -> None:
    import numpy as np
    import torch

    import hiddenenvs
    from agents.exit_oos import ExItOOSConfig, SelfPlayer

    game = hiddenenvs.load_game("goofspiel", num_cards=arguments.cards, imp_info=True)
    info = game.info
    architecture = {
        "input_size": int(np.prod(info.information_state_tensor_shape)),
        "hidden_sizes": arguments.hidden,
        "num_actions": info.num_distinct_actions,
    }
    seeds = list(range(arguments.games))
    rates: dict[int, list[float]] = {1: [], arguments.concurrent: []}
    for _ in range(arguments.turns):
        for concurrent in rates:
            torch.manual_seed(0)
            config = ExItOOSConfig(
                hidden_sizes=arguments.hidden,
                simulations_per_move=arguments.simulations,
                backend="model",
                targeting="ist",
                concurrent_games=concurrent,
                workers=0,
            )
            player = SelfPlayer(game, config, architecture)
            started = time.perf_counter()
            player.play_many(seeds)
            rates[concurrent].append(len(seeds) / (time.perf_counter() - started))
    alone, together = (float(np.median(r)) for r in rates.values())
    print(
        f"II-Goofspiel({arguments.cards}), OOS model backend, {arguments.simulations} iterations per move, "
        f"apprentice {arguments.hidden}, {arguments.games} games x {arguments.turns} turns, median:"
    )
    print(f"one game at a time (peer): {alone:.3f} games/s")
    print(
        f"{arguments.concurrent} games in lockstep:     {together:.3f} games/s  ({together / alone:.2f}x)"
    )


def _cpu_seconds(process_ids: list[int]) -> float:
    """User + system CPU seconds of this process and of ``process_ids`` (Linux /proc)."""
    import os

    total = sum(os.times()[:2])
    ticks = os.sysconf("SC_CLK_TCK")
    for pid in process_ids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def workers(arguments: argparse.Namespace) -> None:
    import os

    import numpy as np

    import hiddenenvs
    from agents.exit_oos import ExItOOS, ExItOOSConfig

    config = load_config(arguments.config)
    params = dict(config.trainer.params)
    params.update(simulations_per_move=arguments.simulations, games_per_iteration=arguments.games)
    game = hiddenenvs.load_game(config.env.name, **config.env.params)
    print(
        f"{config.env.name}, {arguments.games} games a step, {arguments.simulations} OOS "
        f"iterations per move, {arguments.steps} steps after a warm-up, "
        f"{'Ray ' + arguments.ray if arguments.ray else 'spawn processes'}, "
        f"load before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    for count in arguments.workers:
        learner = ExItOOS(
            game,
            ExItOOSConfig(**{**params, "workers": count, "ray_address": arguments.ray}),
            seed=0,
        )
        rng = np.random.default_rng(0)
        try:
            learner._self_play([int(s) for s in rng.integers(2**63, size=arguments.games)], None)
            pids = learner._pool.process_ids()
            started, cpu_before = time.perf_counter(), _cpu_seconds(pids)
            for _ in range(arguments.steps):
                seeds = [int(s) for s in rng.integers(2**63, size=arguments.games)]
                assert len(learner._self_play(seeds, None)) == arguments.games
            wall, cpu = time.perf_counter() - started, _cpu_seconds(pids) - cpu_before
        finally:
            learner.close()
        games = arguments.steps * arguments.games
        print(
            f"workers {count}: {games / wall:.2f} games/s wall, {wall:.1f} s wall, "
            f"{cpu:.1f} CPU s ({games / cpu:.2f} games per CPU s), "
            f"load after: {os.getloadavg()[0]:.1f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    leduc_parser = commands.add_parser("leduc", help="exploitability curves, ExIt-OOS and NFSP")
    leduc_parser.add_argument(
        "--seconds", type=float, default=300.0, help="wall time of each trainer"
    )
    leduc_parser.add_argument("--output", default="runs/bench_exit_oos")
    matches_parser = commands.add_parser("matches", help="a run's apprentice vs random and OOS")
    matches_parser.add_argument("--run", required=True, help="run directory of an exit_oos run")
    matches_parser.add_argument(
        "--games", type=int, default=1000, help="games per seat order and pairing"
    )
    matches_parser.add_argument("--output", default="runs/bench_exit_oos_matches")
    elo_parser = commands.add_parser("elo", help="Elo of training checkpoints, random and OOS")
    elo_parser.add_argument("--config", required=True, help="an exit_oos config")
    elo_parser.add_argument(
        "--iterations", type=int, nargs="+", required=True, help="checkpoint iterations"
    )
    elo_parser.add_argument(
        "--games", type=int, default=200, help="games per seat order and pairing"
    )
    elo_parser.add_argument("--output", default="runs/bench_exit_oos_elo")
    batching_parser = commands.add_parser(
        "batching", help="self-play games/s, concurrent games vs one at a time"
    )
    batching_parser.add_argument(
        "--cards", type=int, default=13, help="II-Goofspiel's number of cards"
    )
    batching_parser.add_argument("--concurrent", type=int, default=8, help="games in lockstep")
    batching_parser.add_argument(
        "--simulations", type=int, default=200, help="OOS iterations per move"
    )
    batching_parser.add_argument("--games", type=int, default=16, help="games per measurement")
    batching_parser.add_argument(
        "--turns", type=int, default=2, help="measurements per side, alternating"
    )
    batching_parser.add_argument(
        "--hidden", type=int, nargs="+", default=[128, 64], help="apprentice sizes"
    )
    workers_parser = commands.add_parser(
        "workers", help="self-play games/s on 1 and 2 workers (agents.parallel)"
    )
    workers_parser.add_argument("--config", required=True, help="an exit_oos config")
    workers_parser.add_argument(
        "--simulations", type=int, default=1000, help="OOS iterations per move"
    )
    workers_parser.add_argument("--games", type=int, default=32, help="games a step")
    workers_parser.add_argument("--steps", type=int, default=3, help="steps measured")
    workers_parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    workers_parser.add_argument(
        "--ray", default=None, help="'local' or a cluster address: Ray actors, not processes"
    )
    arguments = parser.parse_args()
    commands_by_name = {
        "leduc": leduc,
        "matches": matches,
        "elo": elo,
        "batching": batching,
        "workers": workers,
    }
    commands_by_name[arguments.command](arguments)


if __name__ == "__main__":
    main()
