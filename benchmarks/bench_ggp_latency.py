"""Move latency over the GGP protocol: how close our HTTP players answer to the play clock.

Two player processes (``python -m agents.ggp_player``, default specs ``uct`` and ``mc``
with no budget, so each searches for the play clock minus the player's ``--margin``) play
``--matches`` matches of a sheet through the manager, seats swapped every match. Every
PLAY answer's time as the manager measured it (send to last byte) is collected; the
``noop`` answers of the player not on turn (a turn-taking sheet's only legal move, answered
at once) are counted apart.

The reference is the protocol's own: the play clock plus the manager's grace (0.2 s),
after which a GGP manager plays a random legal move for the player. Printed: median, 99th
percentile and maximum answer time of the searching moves, their ratio to that deadline,
and how many moves fell back.

    python benchmarks/bench_ggp_latency.py --rules ../shared/gdl/ggp-base/rulesheets/connectFour.kif \\
        --matches 4 --play-clock 1
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from hiddenenvs.ggp.manager import DEFAULT_GRACE_SECONDS, Manager

SHEETS = (
    Path(__file__).resolve().parent.parent.parent / "shared" / "gdl" / "ggp-base" / "rulesheets"
)


def start_player(spec: str, seed: int) -> tuple[subprocess.Popen, str]:
    """A player process on a free port and the URL it announces."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agents.ggp_player",
            "--port",
            "0",
            "--player",
            spec,
            "--seed",
            str(seed),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    line = process.stdout.readline()
    if " listening on " not in line:
        process.kill()
        raise RuntimeError(f"player {spec!r} did not start: {line!r}")
    return process, line.split(" listening on ")[1].strip()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rules", default=str(SHEETS / "connectFour.kif"))
    parser.add_argument("--players", nargs=2, default=["uct", "mc"], metavar="SPEC")
    parser.add_argument("--matches", type=int, default=4)
    parser.add_argument("--play-clock", type=float, default=1.0)
    parser.add_argument("--start-clock", type=float, default=10.0)
    args = parser.parse_args(argv)

    processes = [start_player(spec, seed) for seed, spec in enumerate(args.players)]
    searching, forced, fallbacks = [], 0, []
    try:
        for match in range(args.matches):
            urls = [url for _, url in processes]
            if match % 2:
                urls.reverse()
            record = Manager(
                args.rules,
                urls,
                start_clock=args.start_clock,
                play_clock=args.play_clock,
                seed=match,
                match_id=f"latency{match}",
            ).run()
            for step in record["steps"]:
                for role, answer in step["moves"].items():
                    if answer["fallback"] is not None:
                        fallbacks.append((match, role, answer["fallback"]))
                    if answer["move"] == "noop":
                        forced += 1
                    else:
                        searching.append(answer["seconds"])
    finally:
        for process, _ in processes:
            process.terminate()
            process.wait(timeout=10)

    seconds = np.array(searching)
    deadline = args.play_clock + DEFAULT_GRACE_SECONDS
    print(
        f"{Path(args.rules).name}: {args.matches} matches, players {args.players}, play clock "
        f"{args.play_clock} s, load average {os.getloadavg()[0]:.1f}"
    )
    print(f"searching moves: {len(seconds)}, forced single-move answers: {forced}")
    for name, value in (
        ("median", np.median(seconds)),
        ("99th percentile", np.percentile(seconds, 99)),
        ("maximum", seconds.max()),
    ):
        print(
            f"  {name:16s} {value:.3f} s = {value / deadline:.2f} x the deadline {deadline:.1f} s"
        )
    print(
        f"moves later than the deadline: {int((seconds > deadline).sum())}; fallbacks: {len(fallbacks)}"
    )
    for match, role, reason in fallbacks:
        print(f"  match {match}, {role}: {reason}")


if __name__ == "__main__":
    main()
