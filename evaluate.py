"""Rank agents on any hiddenenvs env: play matches, keep every result, print the leaderboard.

    python evaluate.py --env leduc_holdem --agents random cfr+:200 runs/nfsp_leduc \\
        --games 200 --mode round-robin --db results/leaderboard.sqlite --out results/
    python evaluate.py --show --db results/leaderboard.sqlite            # no play
    python evaluate.py --env kuhn_poker --agents cfr+:500 random cfr:50 --mode gauntlet

Agent specs: 'random'; 'cfr+:<iterations>' / 'cfr:<iterations>'; a path to an agent file,
run checkpoint or run directory (its networks on ``--device``, wherever they were trained); 'scripted:<name>' for a scripted bot; the search specs of
``agents.search`` ('oos:2s', 'ismcts:1000', 'alphabeta:6', 'minimax', 'maxn:1s', 'mc:1s',
'mc-memory:1s', 'uct:1s,c=40', ...: see agents/baselines.py). ``--games`` is
per seat order: a two-player pairing plays each agent in each seat ``--games`` times.
Every match goes to the SQLite database as it ends; re-running the same command skips
the stored matches, so an interrupted evaluation resumes where it stopped. Outputs in
``--out``: <env>_leaderboard.md, <env>_standings.csv, <env>_head_to_head.csv and
<env>_leaderboard.png. ``--html DIR`` also writes a static site of the whole store into
DIR (standings, head-to-head heat map, agent pages, a replay of every match; open
DIR/index.html, no server needed). ``agents/leaderboard/`` documents the statistics.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path

from hiddenenvs.envs.gdl import GdlError
from hiddenenvs.envs.gdl import error_line as gdl_error_line
from hiddenenvs.params import parse_params


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    from agents.leaderboard import MODES, RANK_BY

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--env", help="registered env name (hiddenenvs.list_envs())")
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="env parameter (repeatable)",
    )
    parser.add_argument(
        "--agents",
        nargs="+",
        metavar="SPEC",
        help="agent specs; in a gauntlet the first plays all others",
    )
    parser.add_argument(
        "--games", type=int, default=100, help="games per seat order of each pairing (default 100)"
    )
    parser.add_argument("--mode", choices=MODES, default="round-robin")
    parser.add_argument(
        "--first-seat",
        type=int,
        action="append",
        default=None,
        metavar="SEAT",
        help="play only the seat orders that put the first agent of each pairing in SEAT "
        "(repeatable; default: every seat). For games whose sides differ, e.g. combat "
        "attackers trained for seat 0: --mode gauntlet --first-seat 0",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="series seed: every match seed derives from it (default 0)",
    )
    parser.add_argument(
        "--no-duplicate",
        action="store_true",
        help="independent chance outcomes per seat order (default: mirrored seats share them)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=os.cpu_count() or 1,
        help="processes playing matches (default: all cores)",
    )
    parser.add_argument(
        "--ray",
        metavar="ADDRESS",
        default=None,
        help="play the matches on --workers Ray actors: 'local' starts a Ray on this machine, "
        "'auto' or host:port joins a cluster (`ray start --head`); a match whose actor dies is "
        "replayed (needs the distributed extra)",
    )
    parser.add_argument(
        "--db", default=None, help="SQLite results file (default: OUT/leaderboard.sqlite)"
    )
    parser.add_argument("--out", default="results", help="output directory (default results/)")
    parser.add_argument(
        "--anchor", help="agent whose Elo is fixed at 0 (default: random if present)"
    )
    parser.add_argument(
        "--rank-by",
        choices=RANK_BY,
        help="order of the standings: Elo (games won, the default) or mean return against the "
        "field (better for games with graded payoffs such as poker); --show keeps the one the "
        "evaluation used unless this is given",
    )
    parser.add_argument(
        "--exploitability-max-nodes",
        type=int,
        default=200_000,
        help="compute exploitability on two-player zero-sum games with at most this many "
        "histories; 0 turns it off (default 200000)",
    )
    parser.add_argument(
        "--show", action="store_true", help="print the stored leaderboard(s) without playing"
    )
    parser.add_argument(
        "--html",
        metavar="DIR",
        default=None,
        help="also write the store as a static site into DIR: standings, head-to-head heat "
        "map, a page per agent and a replay of every match (open DIR/index.html)",
    )
    parser.add_argument(
        "--device",
        default="auto",
        help="where the agents loaded from files run: auto, cpu, cuda or cuda:N (default auto: "
        "the CPU, unless CUDA is there and a network is large enough to gain from it one "
        "decision at a time; agents/device.py)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    arguments = parser.parse_args(argv)
    if not arguments.show and (not arguments.env or not arguments.agents):
        parser.error("--env and --agents are required unless --show is given")
    if arguments.db is None:
        arguments.db = str(Path(arguments.out) / "leaderboard.sqlite")
    return arguments


def show(arguments: argparse.Namespace) -> int:
    from agents.leaderboard import EnvVariant, ResultStore, build_leaderboard, print_leaderboard

    if not Path(arguments.db).is_file():
        print(f"evaluate.py: no results database at {arguments.db}", file=sys.stderr)
        return 2
    with ResultStore(arguments.db) as store:
        variants = store.env_variants()
        if arguments.env:
            wanted = EnvVariant.resolve(arguments.env, parse_params(arguments.param))
            variants = [v for v in variants if (v[0], v[1]) == (wanted.name, wanted.params_json)]
        if not variants:
            print(
                f"evaluate.py: {arguments.db} holds no matches"
                + (f" of {arguments.env}" if arguments.env else ""),
                file=sys.stderr,
            )
            return 2
        for env, params_json, _ in variants:
            rank_by = arguments.rank_by or store.rank_by(env, params_json) or "elo"
            print_leaderboard(build_leaderboard(store, env, params_json, arguments.anchor, rank_by))
    write_site(arguments)
    return 0


def write_site(arguments: argparse.Namespace) -> None:
    """``--html DIR``: the whole store as a static site."""
    if arguments.html is None:
        return
    from agents.leaderboard.site import export_site

    index = export_site(arguments.db, arguments.html, arguments.anchor, arguments.rank_by)
    print(f"site written: open {index}")


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(sys.argv[1:] if argv is None else argv)
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        # Started where SIGINT is ignored (a background job of a script): a user's SIGINT
        # was then lost for as long as a CFR solve ran. Ctrl-C stops the evaluation.
        signal.signal(signal.SIGINT, signal.default_int_handler)
    from agents.leaderboard import evaluate, print_leaderboard, write_outputs

    try:
        if arguments.show:
            return show(arguments)
        from agents.capabilities import check_agent_spec
        from agents.device import AGENT_DEVICE_VARIABLE, check_device_setting

        # Read where agent files are loaded, in this process and the workers it starts.
        os.environ[AGENT_DEVICE_VARIABLE] = check_device_setting(arguments.device, "--device")

        params = parse_params(arguments.param)
        for spec in arguments.agents:  # before any match: a search agent that cannot play this game
            check_agent_spec(spec, arguments.env, params)
        board = evaluate(
            arguments.env,
            parse_params(arguments.param),
            arguments.agents,
            arguments.games,
            arguments.db,
            mode=arguments.mode,
            seed=arguments.seed,
            duplicate=not arguments.no_duplicate,
            workers=arguments.workers,
            ray_address=arguments.ray,
            exploitability_max_nodes=arguments.exploitability_max_nodes,
            anchor=arguments.anchor,
            rank_by=arguments.rank_by or "elo",
            progress=not arguments.quiet,
            first_seats=arguments.first_seat,
        )
    except ValueError as error:  # a spec that does not resolve, unknown env, bad parameters
        print(f"evaluate.py: {error}", file=sys.stderr)
        return 2
    except GdlError as error:  # a refused rule sheet: one line, not a traceback
        print(f"evaluate.py: {gdl_error_line(error)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            f"evaluate.py: interrupted; the matches finished so far are in {arguments.db}",
            file=sys.stderr,
        )
        return 130
    print_leaderboard(board)
    paths = write_outputs(board, arguments.out)
    print(f"results in {arguments.db}; tables and plot: {', '.join(str(p) for p in paths)}")
    try:
        write_site(arguments)
    except ValueError as error:
        print(f"evaluate.py: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
