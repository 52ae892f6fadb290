"""How long loading GDL sheets takes, and what it peaks at, with the default limits.

Each case runs in a forked child (so its peak RSS is its own) and builds the propnet
(read, validate, ground, compile) with ``Propnet.from_file``:

- every sheet in ``../shared/gdl/ggp-base/rulesheets`` (or those named with ``--sheets``);
- generated hostile sheets: ``facts177k`` (the issue's 3.9 MB sheet of 177k distinct
  facts), ``duplicates177k`` (as many copies of one fact) and ``facts_at_limit`` (distinct
  facts up to just under the size and sentence limits: the largest sheet of facts that
  is read, grounded and compiled rather than refused).

    python benchmarks/bench_gdl_loading.py [--sheets crisscross,racer] [--max-instances N]
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import time
from pathlib import Path

from hiddenenvs.envs.gdl.ground import DEFAULT_MAX_INSTANCES
from hiddenenvs.envs.gdl.parser import GdlError
from hiddenenvs.envs.gdl.propnet import Propnet

GAMES = Path(__file__).resolve().parent.parent / "hiddenenvs" / "envs" / "gdl" / "games"
SHEETS = (
    Path(__file__).resolve().parent.parent.parent / "shared" / "gdl" / "ggp-base" / "rulesheets"
)
GENERATED = ("facts177k", "duplicates177k", "facts_at_limit")


def generated_sheet(case: str, directory: Path) -> Path:
    base = (GAMES / "tictactoe.gdl").read_text()
    if case == "facts177k":
        facts = "".join(f"(fact f{i} g{i % 97} h{i % 13})\n" for i in range(177_000))
    elif case == "duplicates177k":
        facts = "(fact f0 g0 h00000)\n" * 177_000
    else:
        facts = "".join(
            f"(fact (pair f{i} g{i % 97}) (more h{i} (deep k{i} m{i % 13})))\n"
            for i in range(9_500)
        )
    path = directory / f"{case}.kif"
    path.write_text(base + facts)
    return path


def _load(path: Path, limit: int, queue) -> None:
    start, cpu = time.perf_counter(), time.process_time()
    try:
        net = Propnet.from_file(path, max_instances=limit)
        outcome = f"loaded: {net.num_gates:,} gates, {net.num_literals:,} literals"
    except GdlError as error:
        outcome = "refused: " + str(error).split(": ", 1)[1][:80]
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    queue.put((time.perf_counter() - start, time.process_time() - cpu, peak_mb, outcome))


def in_child(path: Path, limit: int):
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    process = context.Process(target=_load, args=(path, limit, queue))
    process.start()
    result = queue.get()
    process.join()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sheets",
        default="",
        help="comma-separated sheet names (default: all, "
        f"then the generated {', '.join(GENERATED)})",
    )
    parser.add_argument("--max-instances", type=int, default=DEFAULT_MAX_INSTANCES)
    parser.add_argument("--tmp", default="/tmp", help="where generated sheets are written")
    args = parser.parse_args()
    names = (
        args.sheets.split(",")
        if args.sheets
        else sorted(p.stem for p in SHEETS.glob("*.kif")) + list(GENERATED)
    )
    print(f"{'sheet':<28}{'wall s':>8}{'CPU s':>8}{'peak MB':>9}  outcome", flush=True)
    worst = (0.0, "")
    for name in names:
        path = (
            generated_sheet(name, Path(args.tmp)) if name in GENERATED else SHEETS / f"{name}.kif"
        )
        wall, cpu, peak, outcome = in_child(path, args.max_instances)
        worst = max(worst, (cpu, name))
        print(f"{name:<28}{wall:>8.2f}{cpu:>8.2f}{peak:>9.0f}  {outcome}", flush=True)
    print(f"\nmost CPU: {worst[1]} ({worst[0]:.2f} s); max_instances {args.max_instances:,}")


if __name__ == "__main__":
    main()
