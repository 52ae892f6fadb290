"""``hiddenenvs leaderboard``: the results store as a browsable site.

    hiddenenvs leaderboard export results/leaderboard.sqlite site/   # then open site/index.html

``export`` writes the static site of :mod:`agents.leaderboard.site` (standings, head-to-head
heat map, a page per agent, a page per match with its replay) for every env variant in the
store. It needs no server: the pages open from the file system and load nothing from the
network.
"""

from __future__ import annotations

import argparse
import sys


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    from agents.leaderboard.report import RANK_BY

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    export = commands.add_parser(
        "export", help="write the static site of a results store (open DIR/index.html)"
    )
    export.add_argument("store", metavar="STORE", help="SQLite results file (evaluate.py --db)")
    export.add_argument("out", metavar="DIR", help="folder to write the site into")
    export.add_argument(
        "--anchor", help="agent whose Elo is fixed at 0 (default: random if present)"
    )
    export.add_argument(
        "--rank-by",
        choices=RANK_BY,
        help="order of the standings (default: the one each evaluation used)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(sys.argv[1:] if argv is None else argv)
    from agents.leaderboard.site import export_site

    try:
        index = export_site(arguments.store, arguments.out, arguments.anchor, arguments.rank_by)
    except ValueError as error:
        print(f"hiddenenvs leaderboard: {error}", file=sys.stderr)
        return 2
    print(f"site written: open {index}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
