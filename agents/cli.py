"""The ``hiddenenvs`` command: one entry point for what the package does from a shell.

    hiddenenvs train --config quickstart              # a shipped config, by name
    hiddenenvs train --config my_run.yaml seed=3      # any config file, with overrides
    hiddenenvs evaluate runs/nfsp_kuhn --show
    hiddenenvs play leduc_holdem --opponent random
    hiddenenvs ggp-player --port 9147
    hiddenenvs record --steps 60 --out battle.gif     # a combat episode as a GIF or PNG strip
    hiddenenvs leaderboard export results/leaderboard.sqlite site/   # a browsable site

Each subcommand takes exactly the arguments of the program it runs (``hiddenenvs train
--help``): ``train`` and ``evaluate`` are the checkout's ``train.py`` and ``evaluate.py``
(a wheel carries copies of them and of ``configs/``, made when it is built: see setup.py),
``play`` is ``python -m agents.play``, ``ggp-player`` ``python -m agents.ggp_player``,
``record`` ``python -m hiddenenvs.envs.combat.record`` and ``leaderboard``
``python -m agents.leaderboard.command``.

``--config NAME`` (no ``/``, no ``.yaml``) names a shipped config: ``configs/NAME.yaml``
under the current directory when there is one (a checkout), else the copy that ships with
the package, so ``hiddenenvs train --config quickstart`` runs from a plain install too.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import re
import sys
import types
from collections.abc import Callable
from pathlib import Path

# Where a built wheel keeps its copies of train.py, evaluate.py and configs/ (setup.py).
SHIPPED = Path(__file__).resolve().parent / "_shipped"
CHECKOUT = Path(__file__).resolve().parent.parent  # holds train.py beside agents/ in a checkout

COMMANDS = {
    "train": "train a trainer on an env from a YAML config (train.py)",
    "evaluate": "evaluate a run's checkpoints, or --show its stored results (evaluate.py)",
    "play": "play a game against agents in the terminal (agents.play)",
    "ggp-player": "serve an agent as a General Game Playing player over HTTP (agents.ggp_player)",
    "record": "record a combat episode as a GIF or PNG strip (hiddenenvs.envs.combat.record)",
    "leaderboard": "export a results store as a static site (agents.leaderboard.command)",
}


def _shipped_root() -> Path:
    """The folder with train.py, evaluate.py and configs/: the checkout this package runs
    from (an editable install), else the copies inside the installed package."""
    if (CHECKOUT / "train.py").is_file() and (CHECKOUT / "configs").is_dir():
        return CHECKOUT
    if (SHIPPED / "train.py").is_file():
        return SHIPPED
    raise FileNotFoundError(
        f"hiddenenvs: neither a checkout ({CHECKOUT}/train.py) nor the package's copies "
        f"({SHIPPED}/train.py) are here; reinstall the package (pip install hiddenenvs)"
    )


def shipped_configs() -> dict[str, Path]:
    """Every shipped config by name (``quickstart`` -> its YAML file)."""
    return {path.stem: path for path in sorted((_shipped_root() / "configs").glob("*.yaml"))}


def resolve_config(value: str) -> str:
    """``--config``'s value as a file: an existing path as given; a bare name (no ``/``,
    no ``.yaml``) as ``configs/NAME.yaml`` here, else the shipped config of that name."""
    if Path(value).is_file() or "/" in value or "\\" in value or value.endswith((".yaml", ".yml")):
        return value
    local = Path("configs") / f"{value}.yaml"
    if local.is_file():
        return str(local)
    configs = shipped_configs()
    if value not in configs:
        raise SystemExit(
            f"hiddenenvs: no config named {value!r} (no file {value!r}, no {local}); "
            f"shipped configs: {', '.join(configs)}"
        )
    return str(configs[value])


def _with_resolved_config(argv: list[str]) -> list[str]:
    """``argv`` with the value of ``--config`` (``--config X`` or ``--config=X``) resolved."""
    resolved = list(argv)
    for index, argument in enumerate(resolved):
        if argument == "--config" and index + 1 < len(resolved):
            resolved[index + 1] = resolve_config(resolved[index + 1])
        elif argument.startswith("--config="):
            resolved[index] = "--config=" + resolve_config(argument.partition("=")[2])
    return resolved


def _script_module(name: str) -> types.ModuleType:
    """The root script ``name``.py (the checkout's, or the package's copy) as a module."""
    path = _shipped_root() / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"hiddenenvs_{name}_command", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path}: not a loadable Python script")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _module_main(module: str) -> Callable[[list[str]], int | None]:
    return importlib.import_module(module).main


# The programs' help is their docstring, written for the docs site: reST's inline markup
# (``code``, :func:`name`, :mod:`~name`) is shown as plain text in a terminal.
_RST_INLINE = re.compile(r":[a-z]+:`~?([^`]+)`|``([^`]+)``")


def plain_text(text: str) -> str:
    """``text`` with reST's inline literals and roles replaced by their plain text."""
    return _RST_INLINE.sub(lambda match: match.group(1) or match.group(2), text)


def _run_showing_plain_help(
    run: Callable[[list[str]], int | None], arguments: list[str]
) -> str | int | None:
    """``run(arguments)``, its ``--help`` output printed as plain text."""
    if "-h" not in arguments and "--help" not in arguments:
        return run(arguments)
    captured = io.StringIO()
    status: str | int | None
    try:
        with contextlib.redirect_stdout(captured):
            status = run(arguments)
    except SystemExit as exit_:
        status = exit_.code
    print(plain_text(captured.getvalue()), end="")
    return status


def _usage() -> str:
    width = max(map(len, COMMANDS))
    lines = [f"  {name.ljust(width)}  {summary}" for name, summary in COMMANDS.items()]
    return (
        "usage: hiddenenvs COMMAND [ARGUMENTS...]\n\ncommands:\n"
        + "\n".join(lines)
        + (
            "\n\nhiddenenvs COMMAND --help shows a command's arguments; hiddenenvs --version its version."
        )
    )


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(_usage())
        return 0 if argv else 2
    if argv[0] == "--version":
        from hiddenenvs import __version__

        print(f"hiddenenvs {__version__}")
        return 0
    command, arguments = argv[0], argv[1:]
    if command not in COMMANDS:
        print(f"hiddenenvs: no command {command!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    sys.argv[0] = f"hiddenenvs {command}"  # what argparse names in usage lines and errors
    script = None
    if command == "train":
        script = _script_module("train")
        run = script.main
        arguments = _with_resolved_config(arguments)
    elif command == "evaluate":
        run = _script_module("evaluate").main
    else:
        run = _module_main(
            {
                "play": "agents.play",
                "ggp-player": "agents.ggp_player",
                "record": "hiddenenvs.envs.combat.record",
                "leaderboard": "agents.leaderboard.command",
            }[command]
        )
    status = _run_showing_plain_help(run, arguments)
    if script is not None and status == script.INTERRUPTED:
        script.exit_now(status)  # as train.py's own __main__: no seconds of Python teardown
    return status if isinstance(status, int) else 0


if __name__ == "__main__":
    sys.exit(main())
