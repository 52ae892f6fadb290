"""What building ``num_envs`` instances of one GDL env costs, with and without sharing.

For each GDL-backed env of the registry (Meier, Monty Hall, blind and biased blind
tic-tac-toe, biased RPS, tic-tac-toe), builds ``--count`` PettingZoo envs with
``hiddenenvs.make`` in a fresh child process and reports the wall and CPU time:

- ``shared``: as shipped; the first instance parses, grounds and compiles the sheet and
  searches its reachable states, the others reuse that work (``Propnet.shared``);
- ``per instance``: the process's compiled-sheet cache emptied before every instance, so
  each one parses, grounds, compiles and searches again (the behaviour before sharing).

    python benchmarks/bench_gdl_instances.py [--count 64] [--envs meier,monty_hall]
"""

from __future__ import annotations

import argparse
import multiprocessing
import time

GDL_ENVS = (
    "meier",
    "monty_hall",
    "blind_tictactoe",
    "biased_blind_tictactoe",
    "gdl_biased_rps",
    "gdl_tictactoe",
)


def _build(name: str, count: int, shared: bool, queue) -> None:
    import hiddenenvs
    from hiddenenvs.envs.gdl import propnet

    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(count):
        if not shared:
            propnet._SHEETS.clear()
        hiddenenvs.make(name)
    queue.put((time.perf_counter() - start, time.process_time() - cpu))


def measure(name: str, count: int, shared: bool) -> tuple[float, float]:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=_build, args=(name, count, shared, queue))
    process.start()
    result = queue.get()
    process.join()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=64, help="instances per env")
    parser.add_argument("--envs", default=",".join(GDL_ENVS), help="comma-separated env names")
    args = parser.parse_args()
    print(f"{'env':24} {'mode':13} {'instances':>9} {'wall s':>8} {'CPU s':>8} {'CPU s/inst':>10}")
    for name in args.envs.split(","):
        for shared in (False, True):
            wall, cpu = measure(name, args.count, shared)
            mode = "shared" if shared else "per instance"
            print(
                f"{name:24} {mode:13} {args.count:9d} {wall:8.2f} {cpu:8.2f} "
                f"{cpu / args.count:10.4f}"
            )


if __name__ == "__main__":
    main()
