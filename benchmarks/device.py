"""Each trainer's speed on the CPU and on a CUDA GPU, and one flagship run on the GPU.

    python -m benchmarks device                          # speed: every cell, cpu and cuda
    python -m benchmarks device --device cpu --seconds 5 --cells nfsp_leduc   # CPU only, here
    python -m benchmarks device --flagship               # nfsp_meier as shipped, on cuda
    python -m benchmarks device --publish                # docs/results/device.md (needs CUDA)

**Speed.** A cell is a trainer with networks (NFSP, ANFSP, MCNFSP, ExIt-OOS, ReBeL) on
Leduc, Meier or combat (commander), with its shipped config ``configs/<trainer>_<env>.yaml``
(a cell without one is listed, never run with an invented config). Each cell and device is
a child process that builds the shipped config's learner with ``trainer.params.device=<device>``
and calls its ``step`` (self-play and updates, as the training loop does, without evaluations
or checkpoints; the memories' warm-up ``min_buffer_size`` cut to one minibatch) until the timed steps add up to ``--seconds``; CUDA is synchronised before the
clock is read, and the first step is untimed (Ray's start, CUDA's context, caches). *Episodes per
second* are the episodes of the timed steps over their seconds; *updates per second* are the
optimiser steps the learner took in them (every ``Optimizer.step``, counted by torch's global
hook: NFSP's fused step is two, one per network) over the same seconds. Each result is kept
in ``<runs>/speed.json`` as it comes, so a command stopped or cut by a time limit resumes
(``--again`` measures again). The row also says what ``device: auto`` picks for the cell: the
rule (agents/device.py) is right where it picks the faster device.

**Flagship.** ``--flagship`` trains the shipped ``nfsp_meier`` (or ``--flagship-cell``) with
``trainer.params.device=cuda`` through :mod:`benchmarks.training` (``train.py`` in a child
process, its budget as shipped; ``--time-limit`` minutes per call, the next call resumes from
the checkpoint), then evaluates it against the cell's opponents (``--games`` per pairing) and
reports each target of issue 46: met when the Wilson interval's lower bound reaches it.

**Publishing.** ``--publish`` rewrites the measured part of ``docs/results/device.md`` from
what is stored, naming the card, the CPU, torch and CUDA, the commit, the date and the
command. It is refused where torch has no CUDA device, and when the stored speed rows have
no GPU measurement: GPU figures come from a GPU.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.timing import checkout_commit

REPO = Path(__file__).resolve().parent.parent
CONFIGS = REPO / "configs"
PAGE = REPO / "docs" / "results" / "device.md"
RUNS = REPO / "runs" / "device"
TRAINERS = ("nfsp", "anfsp", "mcnfsp", "exit_oos", "rebel")
ENVS = {"leduc": "Leduc", "meier": "Meier", "combat": "combat, commander"}
CELLS = tuple(f"{trainer}_{env}" for env in ENVS for trainer in TRAINERS)
DEFAULT_FLAGSHIP = "nfsp_meier"
MEASURED_START = "<!-- device: measured from here (python -m benchmarks device --publish) -->"
MEASURED_END = "<!-- device: measured until here -->"
CHILD_SLACK_SECONDS = 180.0  # a cell's child may take this long beyond its budget (start-up)


def cell_config(cell: str) -> Path:
    return CONFIGS / f"{cell}.yaml"


# ---- one cell on one device (a child process) ----------------------------------------------------
def measure_cell(cell: str, device: str, seconds: float) -> dict[str, Any]:
    """Step ``cell``'s shipped learner on ``device`` until its timed steps add up to
    ``seconds`` (the first step untimed); the rates of the timed steps."""
    import numpy as np
    import torch
    from torch.optim.optimizer import register_optimizer_step_post_hook

    from agents.checkpoint import seed_everything
    from agents.config import load_config
    from agents.loop import LoopContext
    from agents.runs import build_learner

    updates = [0]
    timing = [False]

    def count(optimizer: Any, args: Any, kwargs: Any) -> None:
        updates[0] += timing[0]

    register_optimizer_step_post_hook(count)
    overrides = [f"trainer.params.device={device}"]
    shipped = load_config(cell_config(cell)).validate().check_env_and_trainer()
    # Updates from the first timed step: a memory's warm-up (no update before it holds
    # min_buffer_size rows) changes how many updates a step takes, not what one costs.
    for warm_up in ("min_buffer_size", "min_reservoir_size"):
        if hasattr(shipped, warm_up) and hasattr(shipped, "batch_size"):
            overrides.append(f"trainer.params.{warm_up}={shipped.batch_size}")
    # Updates are counted by optimizer.step(), which NFSP's compiled step does not call: the
    # devices are compared on the eager step (bench_nfsp_leduc.py times the compiled one).
    if getattr(shipped, "compile_learning_step", False):
        overrides.append("trainer.params.compile_learning_step=false")
    with tempfile.TemporaryDirectory() as directory:
        config = load_config(cell_config(cell), [*overrides, f"output_dir={json.dumps(directory)}"])
    torch.set_num_threads(config.torch_threads)
    seed_everything(config.seed)
    learner = build_learner(config)
    choice = learner.device_choice
    cuda = choice is not None and choice.is_cuda
    context = LoopContext(learner, config, np.random.default_rng(config.seed))
    steps = episodes = 0
    timed_seconds = 0.0
    try:
        for first in itertools.chain([True], itertools.repeat(False)):
            if not first and timed_seconds >= seconds:
                break
            context.max_episodes, context.deadline, context.step_cut = config.num_envs, None, False
            timing[0] = not first
            started = time.perf_counter()
            report = learner.step(context)
            if cuda:
                torch.cuda.synchronize()
            elapsed = time.perf_counter() - started
            timing[0] = False
            if not first:
                steps, episodes, timed_seconds = (
                    steps + 1,
                    episodes + report.episodes,
                    timed_seconds + elapsed,
                )
    finally:
        learner.close()
    auto = auto_choice(config)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    timed = max(timed_seconds, 1e-9)
    return {
        "cell": cell,
        "device": str(choice.device) if choice is not None else "cpu",
        "card": torch.cuda.get_device_name(choice.device) if choice and choice.is_cuda else None,
        "auto": auto,
        "timed_steps": steps,
        "timed_seconds": round(timed_seconds, 3),
        "episodes": episodes,
        "updates": updates[0],
        "episodes_per_second": round(episodes / timed, 2),
        "updates_per_second": round(updates[0] / timed, 2),
        "cpu_seconds": round(
            usage.ru_utime + usage.ru_stime + children.ru_utime + children.ru_stime, 1
        ),
    }


def auto_choice(config: Any) -> str:
    """The device ``device: auto`` picks for the config's trainer on this machine."""
    import dataclasses

    import hiddenenvs
    from agents.config import trainer_class

    params = dataclasses.replace(config.validate().check_env_and_trainer(), device="auto")
    game = hiddenenvs.load_game(config.env.name, **config.env.params)
    learner = trainer_class(config.trainer.name)(game, params, config.seed)
    try:
        choice = learner.device_choice
        return "cpu" if choice is None else str(choice.device)
    finally:
        learner.close()


# ---- the speed table -----------------------------------------------------------------------------
def read_results(path: Path) -> dict[str, dict[str, Any]]:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise SystemExit(
            f"benchmarks device: {path} is not readable JSON ({error}); delete it"
        ) from None


def write_results(path: Path, results: dict[str, dict[str, Any]]) -> None:
    from hiddenenvs.files import atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(results, indent=1, sort_keys=True).encode()
    atomic_write(path, lambda handle: handle.write(text))


def run_speed(
    cells: list[str], devices: list[str], seconds: float, runs: Path, again: bool
) -> dict[str, dict[str, Any]]:
    """Measure each (cell, device) not yet stored, in a child process each."""
    path = runs / "speed.json"
    results = read_results(path)
    for cell in cells:
        if not cell_config(cell).is_file():
            print(f"{cell}: no shipped config, not measured", flush=True)
            continue
        for device in devices:
            key = f"{cell}@{device}"
            if key in results and not again:
                continue
            command = [
                sys.executable,
                "-m",
                "benchmarks",
                "device",
                "--worker",
                cell,
                device,
                str(seconds),
            ]
            started = time.monotonic()
            try:
                child = subprocess.run(
                    command,
                    cwd=REPO,
                    capture_output=True,
                    text=True,
                    timeout=seconds + CHILD_SLACK_SECONDS,
                )
            except subprocess.TimeoutExpired:
                results[key] = {"cell": cell, "device": device, "error": "timed out"}
            else:
                lines = child.stdout.strip().splitlines()
                if child.returncode == 0 and lines:
                    results[key] = json.loads(lines[-1])
                else:
                    error = (child.stderr.strip().splitlines() or ["no output"])[-1]
                    results[key] = {"cell": cell, "device": device, "error": error[:300]}
            results[key]["wall_seconds"] = round(time.monotonic() - started, 1)
            write_results(path, results)
            print(f"{key}: {brief(results[key])}", flush=True)
    return results


def brief(row: dict[str, Any]) -> str:
    if "error" in row:
        return f"failed: {row['error']}"
    return (
        f"{row['episodes_per_second']:,.1f} episodes/s, {row['updates_per_second']:,.1f} "
        f"updates/s ({row['timed_steps']} timed steps, {row['timed_seconds']} s; auto picks "
        f"{row['auto']})"
    )


def speed_table(results: dict[str, dict[str, Any]], cells: list[str]) -> str:
    """The markdown table: a line per cell, CPU and GPU side by side, and auto's pick."""
    lines = [
        "| cell | CPU episodes/s | GPU episodes/s | CPU updates/s | GPU updates/s | "
        "GPU / CPU (updates) | auto picks |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for cell in cells:
        cpu, gpu = results.get(f"{cell}@cpu"), results.get(f"{cell}@cuda")
        if cpu is None and gpu is None:
            continue

        def rate(row, key):
            if row is None:
                return "not measured"
            return "failed" if "error" in row else f"{row[key]:,.1f}"

        ratio = ""
        if cpu and gpu and "error" not in cpu and "error" not in gpu and cpu["updates_per_second"]:
            ratio = f"{gpu['updates_per_second'] / cpu['updates_per_second']:.2f}"
        picks = next((r["auto"] for r in (gpu, cpu) if r and "auto" in r), "")
        lines.append(
            f"| {cell} | {rate(cpu, 'episodes_per_second')} | {rate(gpu, 'episodes_per_second')} "
            f"| {rate(cpu, 'updates_per_second')} | {rate(gpu, 'updates_per_second')} | {ratio} "
            f"| {picks} |"
        )
    return "\n".join(lines)


# ---- the flagship --------------------------------------------------------------------------------
def run_flagship(cell_name: str, runs: Path, time_limit_minutes: float, games: int) -> str:
    """Train (or resume) the flagship cell on cuda and evaluate it; its lines for the page."""
    from benchmarks import training

    cell = training.CELLS_BY_NAME[cell_name]
    directory = runs / "flagship" / cell_name / "seed0"
    record = training.read_json(directory / training.RECORD_NAME) or {}
    if record.get("status") not in training.FINAL_STATUSES:
        record = training.train_run(
            cell, 0, directory, ["trainer.params.device=cuda"], time_limit_minutes * 60
        )
    if record.get("status") != "trained":
        return f"{cell_name} on the GPU: {record.get('status')}: {record.get('message')}"
    evaluation = training.evaluate_run(cell, directory, games, os.cpu_count() or 1)
    metrics = training.read_metrics(directory)
    session = record["sessions"][-1]
    lines = [
        f"`{cell_name}` as shipped with `trainer.params.device=cuda`: "
        f"{metrics[-1]['episodes']:.0f} episodes in "
        f"{sum(s['wall_seconds'] for s in record['sessions']):.0f} s "
        f"({len(record['sessions'])} session(s), commit {session['commit']}); "
        f"{games} games per pairing over both seats.",
        "",
        "| against | result [95% Wilson] | target | met |",
        "|---|---|---|---|",
    ]
    for row in training.table_rows(cell):
        value = training.measure(row, evaluation, metrics)
        target = row.target.describe() if row.target else ""
        lines.append(
            f"| {row.label()} | {value.text() if value else 'not measured'} | {target} "
            f"| {training.verdict(row, [value]) if row.target else ''} |"
        )
    return "\n".join(lines)


# ---- the page ------------------------------------------------------------------------------------
def machine() -> str:
    """The card and its CUDA version, then the rest of the machine as every page names it."""
    import torch

    from benchmarks import training

    card = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"
    return f"GPU: {card} (CUDA {torch.version.cuda}); {training.machine_description()}"


def publish(page: Path, table: str, flagship: str | None, command: str) -> None:
    text = page.read_text()
    if MEASURED_START not in text or MEASURED_END not in text:
        raise SystemExit(f"benchmarks device: {page} has no measured section markers")
    head, _, rest = text.partition(MEASURED_START)
    _, _, tail = rest.partition(MEASURED_END)
    body = [
        MEASURED_START,
        "",
        f"Measured {time.strftime('%Y-%m-%d', time.gmtime())}, commit {checkout_commit()}; "
        f"{machine()}; load average {os.getloadavg()[0]:.2f} at the end.",
        "",
        f"```\n{command}\n```",
        "",
        "### Speed",
        "",
        table,
        "",
    ]
    if flagship:
        body += ["### Flagship on the GPU", "", flagship, ""]
    body.append(MEASURED_END)
    from hiddenenvs.files import atomic_write

    content = (head + "\n".join(body) + tail).encode()
    atomic_write(page, lambda handle: handle.write(content))


# ---- the command ---------------------------------------------------------------------------------
def parse_arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks device",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--cells", nargs="+", metavar="CELL", help=f"default: all ({len(CELLS)})")
    parser.add_argument(
        "--device",
        nargs="+",
        choices=("cpu", "cuda"),
        help="devices to measure (default: cpu and cuda; cuda needs a CUDA device)",
    )
    parser.add_argument(
        "--seconds", type=float, default=8.0, help="training budget per cell and device"
    )
    parser.add_argument("--again", action="store_true", help="measure stored results again")
    parser.add_argument("--no-speed", action="store_true", help="skip the speed table")
    parser.add_argument("--flagship", action="store_true", help="train and evaluate the flagship")
    parser.add_argument("--flagship-cell", default=DEFAULT_FLAGSHIP)
    parser.add_argument(
        "--time-limit", type=float, default=9.0, help="minutes of flagship training per call"
    )
    parser.add_argument("--games", type=int, default=400, help="flagship games per pairing")
    parser.add_argument("--runs", type=Path, default=RUNS, help=f"results (default {RUNS})")
    parser.add_argument("--page", type=Path, default=PAGE)
    parser.add_argument("--publish", action="store_true", help="rewrite the page's figures")
    parser.add_argument(
        "--worker", nargs=3, metavar=("CELL", "DEVICE", "S"), help=argparse.SUPPRESS
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    arguments = parse_arguments(argv)
    if arguments.worker:
        cell, device, seconds = arguments.worker
        print(json.dumps(measure_cell(cell, device, float(seconds))))
        return 0
    import torch

    cuda = torch.cuda.is_available()
    devices = arguments.device or ["cpu", "cuda"]
    unknown = sorted(set(arguments.cells or []) - set(CELLS))
    if unknown:
        print(
            f"benchmarks device: unknown cell(s) {', '.join(unknown)}; cells: {', '.join(CELLS)}",
            file=sys.stderr,
        )
        return 2
    if ("cuda" in devices or arguments.flagship or arguments.publish) and not cuda:
        print(
            "benchmarks device: torch finds no CUDA device here, so there are no GPU figures to "
            "take or publish; measure the CPU with --device cpu, the GPU on a machine with one",
            file=sys.stderr,
        )
        return 2
    cells = arguments.cells or list(CELLS)
    results: dict[str, dict[str, Any]] = {}
    if not arguments.no_speed:
        results = run_speed(cells, devices, arguments.seconds, arguments.runs, arguments.again)
    table = speed_table(results or read_results(arguments.runs / "speed.json"), list(CELLS))
    print(table)
    flagship = None
    if arguments.flagship:
        flagship = run_flagship(
            arguments.flagship_cell, arguments.runs, arguments.time_limit, arguments.games
        )
        print(flagship)
    if arguments.publish:
        stored = read_results(arguments.runs / "speed.json")
        if not any(row.get("device", "").startswith("cuda") for row in stored.values()):
            print(
                "benchmarks device: no GPU row is stored; measure with cuda first", file=sys.stderr
            )
            return 2
        command = shlex.join(["python", "-m", "benchmarks", "device", *argv])
        publish(arguments.page, speed_table(stored, list(CELLS)), flagship, command)
        print(f"benchmarks device: {arguments.page} written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
