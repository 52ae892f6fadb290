"""Every trainer on every env at a tiny budget: the table of docs/results/matrix.md.

    python benchmarks/matrix.py                          # every cell, about an hour on 2 cores
    python benchmarks/matrix.py --trainers nfsp rebel --envs meier combat
    python benchmarks/matrix.py --output docs/results/matrix.md

The cells are those of ``tests/test_matrix.py`` (the contract's table): each admitted cell
trains through :func:`agents.loop.train` with the trainer shrunk to toy sizes for one step
(``budget.iterations=1``) under a ``--seconds`` budget; each refused cell records the
refusal and how long ``check_run_data`` took. A cell that raises is recorded with its error
(the matrix test fails on it). Prints one line per cell and writes a Markdown table with
the date, commit, machine and command.
"""

from __future__ import annotations

import argparse
import os
import platform
import signal
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from agents.capabilities import CapabilityError, check_run_data  # noqa: E402
from agents.catalogue import trainer_names  # noqa: E402
from test_matrix import ANFSP_CELLS, ENVS, admitted, label, run_data  # noqa: E402


class CellTimeout(Exception):
    pass


def run_cell(trainer: str, env: str, params: dict, seconds: float, output: Path) -> tuple[str, str]:
    """``(status, detail)``: "trained", "refused", "no step" (trained nothing) or "error"."""
    from agents.config import config_from_dict
    from agents.loop import TrainingError, train

    data = run_data(trainer, env, params, str(output))
    data["budget"]["seconds"] = seconds
    if not admitted(trainer, env, params):
        started = time.process_time()
        try:
            check_run_data(data)
        except CapabilityError as error:
            reason = str(error).split(": it needs ", 1)[1].split(". Trainers that fit")[0]
            return "refused", f"{reason} ({time.process_time() - started:.2f} s CPU)"
        return "error", "the contract refuses it but check_run_data admitted it"

    def on_alarm(signum, frame):
        raise CellTimeout

    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(int(seconds * 3))  # a step that ignores the deadline: stop it, record it
    started = time.perf_counter()
    try:
        result = train(config_from_dict(data))
    except TrainingError as error:
        return "no step", str(error)
    except CellTimeout:
        return "error", f"still running after {seconds * 3:.0f} s (its step ignores the deadline)"
    except SystemError as error:  # Ray's wait, interrupted by the alarm, wraps it
        if isinstance(error.__cause__ or error.__context__, CellTimeout):
            return (
                "error",
                f"still running after {seconds * 3:.0f} s (its step ignores the deadline)",
            )
        return "error", f"SystemError: {str(error)[:200]}"
    except Exception as error:  # noqa: BLE001 - every failure is a row of the table
        return "error", f"{type(error).__name__}: {str(error)[:200]}"
    finally:
        signal.alarm(0)
    last = result["last_evaluation"]
    metric = next(
        (m for m in ("exploitability", "return_vs_random") if last.get(m) is not None), None
    )
    shown = f"; {metric.replace('_', ' ')} {last[metric]:.3g}" if metric else ""
    return "trained", (
        f"{result['episodes']} episodes, {result['iterations']} iterations in "
        f"{time.perf_counter() - started:.1f} s{shown}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--trainers", nargs="+", default=trainer_names())
    parser.add_argument("--envs", nargs="+", help="env names (default: every env of the matrix)")
    parser.add_argument("--seconds", type=float, default=60.0, help="each cell's budget.seconds")
    parser.add_argument("--output", type=Path, help="Markdown table to write")
    parser.add_argument(
        "--runs", type=Path, default=Path("runs/matrix"), help="where the cells' runs go"
    )
    arguments = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=REPO
    ).stdout.strip()
    started = datetime.now(timezone.utc)
    total = sum(1 for env, _ in ENVS if not arguments.envs or env in arguments.envs) * len(
        arguments.trainers
    )
    rows = []
    for env, params in ENVS:
        if arguments.envs and env not in arguments.envs:
            continue
        for trainer in arguments.trainers:
            cell_dir = arguments.runs / f"{trainer}-{label(env, params)}".replace("/", "_")
            if (
                trainer == "anfsp"
                and (env, params) not in ANFSP_CELLS
                and admitted(trainer, env, params)
            ):
                status, detail = (
                    "not run",
                    "admitted; ANFSP runs on Kuhn, Meier and small commander combat only here",
                )
            else:
                status, detail = run_cell(trainer, env, params, arguments.seconds, cell_dir)
            print(f"{trainer:9s} {label(env, params):45s} {status:8s} {detail}", flush=True)
            rows.append((trainer, label(env, params), status, detail))
            if arguments.output:  # after every cell: an interrupted run leaves its table so far
                write_table(arguments, rows, total, commit, started)
    if arguments.output:
        print(f"table in {arguments.output}")


def write_table(arguments, rows, total: int, commit: str, started: datetime) -> None:
    """The Markdown table of the cells run so far, with the run's provenance."""
    command = "python benchmarks/" + " ".join([Path(sys.argv[0]).name, *sys.argv[1:]])
    lines = [
        "# Every trainer on every env",
        "",
        f"- date: {started:%Y-%m-%d %H:%M} UTC (cells run one after another from then)",
        f"- cells: {len(rows)} of {total}"
        + ("" if len(rows) == total else " (the run was still going)"),
        f"- commit: `{commit}`",
        f"- machine: {platform.machine()}, {os.cpu_count()} cores, load average "
        f"{', '.join(f'{x:.1f}' for x in os.getloadavg())} at the time of writing",
        f"- command: `{command}`",
        f"- budget per cell: one step of the trainer at toy sizes (`tests/test_matrix.py`'s TINY), "
        f"at most {arguments.seconds:g} s",
        "",
        "| trainer | env | result | detail |",
        "|---|---|---|---|",
    ]
    lines += [f"| {t} | `{e}` | {s} | {d.replace('|', '/')} |" for t, e, s, d in rows]
    arguments.output.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
