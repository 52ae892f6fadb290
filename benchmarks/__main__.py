"""``python -m benchmarks <command> [options]``: the benchmark pages' commands.

python -m benchmarks speed --help
"""

from __future__ import annotations

import importlib
import sys

# command -> module with a main(argv)
COMMANDS = {
    "speed": "benchmarks.speed",
}


def main(argv: list[str]) -> None:
    if not argv or argv[0] not in COMMANDS:
        sys.exit(f"usage: python -m benchmarks {{{','.join(COMMANDS)}}} [options]")
    importlib.import_module(COMMANDS[argv[0]]).main(argv[1:])


if __name__ == "__main__":
    main(sys.argv[1:])
