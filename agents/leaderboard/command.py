"""``hiddenenvs leaderboard``: the results store as a browsable site.

    hiddenenvs leaderboard export results/leaderboard.sqlite site/   # then open site/index.html
    hiddenenvs leaderboard serve results/leaderboard.sqlite          # http://127.0.0.1:8000/

``export`` writes the static site of :mod:`agents.leaderboard.site` (standings, head-to-head
heat map, a page per agent, a page per match with its replay) for every env variant in the
store. It needs no server: the pages open from the file system and load nothing from the
network. ``serve`` shows the same pages from a local server, rendered from the store at
each request: live while an evaluation writes to it, and a person can play any agent on
the board there (the game is stored like any other match).
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
    serve = commands.add_parser(
        "serve", help="show the site from a local server, live while an evaluation runs"
    )
    serve.add_argument("store", metavar="STORE", help="SQLite results file (evaluate.py --db)")
    serve.add_argument(
        "--host", default="127.0.0.1", help="address to listen at (default 127.0.0.1)"
    )
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000; 0: any free)")
    serve.add_argument(
        "--refresh",
        type=int,
        default=10,
        metavar="SECONDS",
        help="index pages reload themselves this often; 0: never (default 10)",
    )
    serve.add_argument("--anchor", help="agent whose Elo is fixed at 0 (default: random)")
    serve.add_argument("--rank-by", choices=RANK_BY, help="order of the standings")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(sys.argv[1:] if argv is None else argv)
    from agents.leaderboard.site import LeaderboardServer, export_site

    try:
        if arguments.command == "export":
            index = export_site(arguments.store, arguments.out, arguments.anchor, arguments.rank_by)
            print(f"site written: open {index}")
            return 0
        server = LeaderboardServer(
            arguments.store,
            arguments.host,
            arguments.port,
            arguments.anchor,
            arguments.rank_by,
            arguments.refresh or None,
        )
    except (ValueError, OSError) as error:  # no store, an empty one, a port in use
        print(f"hiddenenvs leaderboard: {error}", file=sys.stderr)
        return 2
    print(f"serving {arguments.store} at {server.url} (Ctrl-C stops)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
