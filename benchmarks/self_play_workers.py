"""Episodes per second of a trainer's self-play on 1 and 2 workers (issue 47).

    python -m benchmarks.self_play_workers                       # every trainer with `workers`
    python -m benchmarks.self_play_workers --trainers mcnfsp --workers 1 2 --seconds 60
    python -m benchmarks.self_play_workers --config mcnfsp=mcnfsp_leduc --ray local
    python -m benchmarks.self_play_workers --trainers nfsp --set vector_self_play=false
    python -m benchmarks.self_play_workers --trainers mcnfsp --seconds 1 \\
        --set trainer.params.num_simulations=4                   # a few seconds: does it run

A trainer takes part when its config class (``CONFIG_CLASS`` of its catalogue entry's
learner) has a ``workers`` field. For each trainer and each worker count, a learner is
built from the trainer's shipped config (``<trainer>_kuhn``, else its first
``<trainer>_*``; ``--config trainer=name`` for another; ``--set key=value`` overrides every
config) with ``trainer.params.workers`` set (and ``ray_address``/``address`` with
``--ray``), set up as the loop sets a run up (its ``torch_threads``, its seed) and driven
by the loop's own step (:class:`agents.loop.LoopContext`): one step
untimed (the workers start, tables and caches fill), then steps until ``--seconds`` have
passed. A figure is the episodes those steps played over their wall-clock time; a step is
its self-play and the update that follows, as in training. The CPU time is this process's
alone (the workers' is not counted). The load average is printed with the table: on a
shared machine the figures move with it, so they are published only from a quiet machine.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from agents.catalogue import PROJECT_TRAINERS, TrainerEntry
from agents.config import RunConfig, load_config, trainer_class

CONFIGS = Path(__file__).resolve().parent.parent / "configs"


def trainers_with_workers() -> list[TrainerEntry]:
    """The catalogue's trainers whose config has a ``workers`` field."""
    found = []
    for entry in PROJECT_TRAINERS:
        learner: Any = trainer_class(entry.name)
        fields = {f.name for f in dataclasses.fields(learner.CONFIG_CLASS)}
        if "workers" in fields:
            found.append(entry)
    return found


def shipped_config(trainer: str) -> str:
    """``<trainer>_kuhn`` when shipped, else the first ``<trainer>_*`` config."""
    names = sorted(path.stem for path in CONFIGS.glob(f"{trainer}_*.yaml"))
    if not names:
        raise SystemExit(f"self_play_workers: no shipped config configs/{trainer}_*.yaml")
    return f"{trainer}_kuhn" if f"{trainer}_kuhn" in names else names[0]


def measure(config: RunConfig, seconds: float) -> dict[str, float]:
    """One untimed step, then steps for ``seconds``: episodes, wall and CPU seconds."""
    import torch

    from agents.checkpoint import seed_everything
    from agents.loop import LoopContext
    from agents.runs import build_learner

    # As the loop sets a run up: its torch threads (1 by default: small networks), its seed.
    torch.set_num_threads(config.torch_threads)
    seed_everything(config.seed)
    learner = build_learner(config)
    try:
        context = LoopContext(learner, config, np.random.default_rng(config.seed))
        learner.step(context)
        episodes, steps = 0, 0
        wall, cpu = time.perf_counter(), time.process_time()
        while steps == 0 or time.perf_counter() - wall < seconds:
            context.step_cut = False
            episodes += learner.step(context).episodes
            steps += 1
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    finally:
        learner.close()
    return {"steps": steps, "episodes": episodes, "wall": wall, "cpu": cpu}


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Episodes per second of each trainer's self-play on 1 and 2 workers."
    )
    parser.add_argument("--trainers", nargs="+", help="default: every trainer with `workers`")
    parser.add_argument("--workers", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--seconds", type=float, default=30.0, help="timed seconds per figure")
    parser.add_argument(
        "--config", nargs="+", default=[], metavar="TRAINER=NAME", help="another config"
    )
    parser.add_argument(
        "--set", nargs="+", default=[], metavar="KEY=VALUE", help="config overrides, for all"
    )
    parser.add_argument("--ray", metavar="ADDRESS", help="workers on Ray: local, auto, host:port")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(argv)
    entries = {entry.name: entry for entry in trainers_with_workers()}
    names = arguments.trainers or list(entries)
    unknown = [name for name in names if name not in entries]
    if unknown:
        raise SystemExit(
            f"self_play_workers: {', '.join(unknown)} has no `workers`; trainers that do: "
            f"{', '.join(entries)}"
        )
    chosen = dict(item.split("=", 1) for item in arguments.config)
    print(f"load average at the start: {os.getloadavg()[0]:.2f}")
    print("| trainer | config | workers | steps | episodes | wall s | episodes/s | CPU s (here) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for name in names:
        config_name = chosen.get(name) or shipped_config(name)
        for workers in arguments.workers:
            overrides = [*arguments.set, f"trainer.params.workers={workers}"]
            address = entries[name].address_param
            if arguments.ray and address:
                overrides.append(f"trainer.params.{address}={arguments.ray}")
            figures = measure(load_config(config_name, overrides), arguments.seconds)
            print(
                f"| {name} | {config_name} | {workers} | {figures['steps']} | "
                f"{figures['episodes']} | {figures['wall']:.1f} | "
                f"{figures['episodes'] / figures['wall']:.1f} | {figures['cpu']:.1f} |",
                flush=True,
            )
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
