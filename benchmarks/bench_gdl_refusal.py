"""How long and how much memory a GDL grounding blow-up takes to be refused.

Each case runs in a fresh child process (so the peak RSS is its own) and loads a sheet
whose grounding explodes, at the default ``max_instances`` and at the old default
(3,000,000) for comparison:

- ``join4``: biased RPS plus ``(<= (next (big ?a ?b ?c ?d)) (num ?a) ... (true (round 1)))``
  over 60 numbers (13 million instances, nothing to decompose);
- ``ruleDepthQuadratic`` and ``AlexChess`` from ``../shared/gdl/ggp-base/`` when present.

The peer is clingo's grounder alone (gringo, C++) grounding the same number of ``join4``
instances as the default limit without the counter: the floor any counted grounding sits
on. The ratio says what the counter costs on top.

    python benchmarks/bench_gdl_refusal.py [--old-default]
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import time
from pathlib import Path

import clingo

from hiddenenvs.envs.gdl.ground import DEFAULT_MAX_INSTANCES, Grounder
from hiddenenvs.envs.gdl.parser import GdlGroundingLimitError, parse_file, parse_text
from hiddenenvs.envs.gdl.propnet import Propnet
from hiddenenvs.envs.gdl.validate import validate

GAMES = Path(__file__).resolve().parent.parent / "hiddenenvs" / "envs" / "gdl" / "games"
SHEETS = (
    Path(__file__).resolve().parent.parent.parent / "shared" / "gdl" / "ggp-base" / "rulesheets"
)
OLD_DEFAULT = 3_000_000


def join4(numbers: int) -> str:
    facts = "".join(f"(num {i})" for i in range(numbers))
    rule = "(<= (next (big ?a ?b ?c ?d)) (num ?a) (num ?b) (num ?c) (num ?d) (true (round 1)))"
    return (GAMES / "biased_rps.gdl").read_text() + "\n" + facts + "\n" + rule


def _refuse(case: str, limit: int, queue) -> None:
    start, cpu = time.perf_counter(), time.process_time()
    try:
        if case == "join4":
            Propnet(parse_text(join4(60), "join4.kif"), max_instances=limit)
        else:
            Propnet(parse_file(SHEETS / f"{case}.kif"), max_instances=limit)
        outcome = "LOADED (not refused)"
    except GdlGroundingLimitError as error:
        outcome = str(error).split("; ", 1)[1][:70]
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    queue.put((time.perf_counter() - start, time.process_time() - cpu, peak_mb, outcome))


def _gringo_alone(instances: int, queue) -> None:
    """Uncounted grounding of ``join4`` with about ``instances`` instances."""
    numbers = round(instances**0.25)
    grounder = Grounder(validate(parse_text(join4(numbers), "join4.kif")))
    program = grounder._program(grounder.exact_relations(), counted=False)
    cpu = time.process_time()
    control = clingo.Control(["--warn=none"])
    control.add("base", [], program)
    control.ground([("base", [])])
    queue.put((numbers**4, time.process_time() - cpu))


def in_child(target, *args):
    """``target(*args, queue)`` in a forked process; what it put on the queue."""
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    process = context.Process(target=target, args=(*args, queue))
    process.start()
    process.join()
    if process.exitcode != 0:
        raise RuntimeError(f"{target.__name__}{args} failed with exit code {process.exitcode}")
    return queue.get()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--old-default",
        action="store_true",
        help=f"also refuse at the old default of {OLD_DEFAULT:,} (40-60 s a case)",
    )
    args = parser.parse_args()
    cases = ["join4"] + [
        name for name in ("ruleDepthQuadratic", "AlexChess") if (SHEETS / f"{name}.kif").exists()
    ]
    limits = [DEFAULT_MAX_INSTANCES] + ([OLD_DEFAULT] if args.old_default else [])
    print(
        f"{'case':<20}{'max_instances':>15}{'wall s':>9}{'CPU s':>8}{'peak MB':>9}  refusal",
        flush=True,
    )
    for case in cases:
        for limit in limits:
            wall, cpu, peak, outcome = in_child(_refuse, case, limit)
            print(
                f"{case:<20}{limit:>15,}{wall:>9.1f}{cpu:>8.1f}{peak:>9.0f}  {outcome}", flush=True
            )
    instances, gringo_cpu = in_child(_gringo_alone, DEFAULT_MAX_INSTANCES)
    _, ours_cpu, _, _ = in_child(_refuse, "join4", instances)
    print(
        f"\njoin4, {instances:,} instances: counted refusal {ours_cpu:.1f} s CPU; peer, clingo's "
        f"grounder alone (uncounted) {gringo_cpu:.1f} s CPU; ratio {ours_cpu / gringo_cpu:.2f}x"
    )


if __name__ == "__main__":
    main()
