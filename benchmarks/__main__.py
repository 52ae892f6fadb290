"""The benchmark commands: ``python -m benchmarks <command> [arguments]``.

    python -m benchmarks train --seeds 0 1 2          # every flagship cell (benchmarks/training.py)
    python -m benchmarks train --quick                # the few-minute profile CI runs
    python -m benchmarks train --help
    python -m benchmarks speed --help                 # ours against each peer (benchmarks/speed.py)
    python -m benchmarks device --device cpu          # trainers on CPU and GPU (benchmarks/device.py)

A command is a name mapped to ``"module:function"``; the function takes the remaining
arguments (a list of strings) and returns the exit status. A new command is one line in
:data:`COMMANDS`.
"""

from __future__ import annotations

import importlib
import sys

# name -> ("module:function", what it does)
COMMANDS: dict[str, tuple[str, str]] = {
    "train": (
        "benchmarks.training:main",
        "train every flagship trainer x env cell for N seeds, evaluate each, write "
        "docs/results/comparison.md and its curves",
    ),
    "device": (
        "benchmarks.device:main",
        "each trainer's episodes/s and updates/s on the CPU and a CUDA GPU, and a flagship run "
        "on the GPU; writes docs/results/device.md (needs CUDA to publish)",
    ),
    "speed": (
        "benchmarks.speed:main",
        "every speed comparison against its peer, pinned and repeated; rewrites "
        "docs/results/benchmarks.md and vector.md",
    ),
}


def usage() -> str:
    width = max(len(name) for name in COMMANDS)
    lines = [f"  {name:<{width}}  {about}" for name, (_, about) in COMMANDS.items()]
    return "usage: python -m benchmarks <command> [arguments]\n\ncommands:\n" + "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    if not arguments or arguments[0] in ("-h", "--help"):
        print(usage())
        return 0 if arguments else 2
    name, rest = arguments[0], arguments[1:]
    if name not in COMMANDS:
        print(
            f"python -m benchmarks: unknown command {name!r}; commands: {', '.join(COMMANDS)}",
            file=sys.stderr,
        )
        return 2
    module_name, _, function_name = COMMANDS[name][0].partition(":")
    function = getattr(importlib.import_module(module_name), function_name)
    return int(function(rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
