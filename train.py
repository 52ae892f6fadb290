"""Train any trainer on any hiddenenvs env from a YAML config.

    python train.py --config configs/nfsp_kuhn.yaml                      # a run
    python train.py --config configs/nfsp_kuhn.yaml budget.episodes=5000 seed=3
    python train.py trainer.name=cfr+ env.name=leduc_holdem budget.iterations=200  # no YAML
    python train.py --resume runs/nfsp_kuhn                              # continue it
    python train.py --resume runs/nfsp_kuhn budget.episodes=400000       # ... for longer
    python train.py --config configs/anfsp_leduc.yaml --address auto      # ANFSP on a Ray cluster
    python train.py --list                       # which trainers fit which env (and why not)
    python train.py --list meier combat --param mode=fighter             # ... for some envs

A trainer that does not fit the env (it needs an enumerable tree, chance probabilities, a
belief sampler or two zero-sum players the game does not offer) is refused before any
work, with the trainers that do fit (``agents/capabilities.py``). Exit status: 0 trained,
1 trained nothing within the budget or could not write a file (a full disk; the message
says why), 2 refused (config, fit, a run directory that holds a run, a resume as another
run), 130 interrupted by Ctrl-C (the message says where the last checkpoint is).

Overrides are dotted ``key=value`` pairs with YAML values; ``agents/config.py`` documents
every key; ``--config`` also takes a shipped config's name (``--config cfr_kuhn``), and
without one the run starts from those defaults, naming ``trainer.name`` and ``env.name``
among the overrides (a new trainer needs no YAML file to be trained). A run
writes checkpoint.pt, metrics.csv, tensorboard/, metrics.png and policy_player<p>.pt
(loadable with ``agents.load_agent``) into ``output_dir``, which must be new or empty.
"""

from __future__ import annotations

import argparse
import copy
import errno
import json
import signal
import sys
from pathlib import Path

from agents.capabilities import CapabilityError
from agents.catalogue import trainer_entry, trainer_names
from agents.config import (
    PATH_CHARS,
    ConfigError,
    RunConfig,
    TrainerConfig,
    apply_override,
    check_path_length,
    config_data,
    from_dict,
    quote,
    typed_config,
)
from agents.runs import validate_run
from hiddenenvs.envs.gdl import GdlError
from hiddenenvs.envs.gdl import error_line as gdl_error_line

INTERRUPTED = 130  # the exit status of a run ended by Ctrl-C (128 + SIGINT, as shells use)


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--config",
        help="YAML run config (see configs/); without it, the defaults of agents/config.py "
        "with trainer.name=... and env.name=... among the overrides",
    )
    source.add_argument(
        "--resume", metavar="DIR", help="run directory to continue from its checkpoint"
    )
    source.add_argument(
        "--list",
        nargs="*",
        metavar="ENV",
        help="print which trainers fit each registered env (or the envs named) and exit",
    )
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="with --list: env parameters (YAML values, repeatable)",
    )
    parser.add_argument(
        "--address",
        metavar="ADDRESS",
        help="Ray cluster of a distributed trainer: 'auto' or the host:port `ray start --head` "
        "printed; the same as its address parameter ("
        + ", ".join(
            f"{name}: trainer.params.{trainer_entry(name).address_param}"
            for name in _distributed_trainers()
        )
        + ")",
    )
    parser.add_argument("overrides", nargs="*", metavar="key=value", help="config overrides")
    arguments = parser.parse_intermixed_args(argv)
    if arguments.config is None and arguments.resume is None and arguments.list is None:
        named = {override.split("=", 1)[0].strip() for override in arguments.overrides}
        missing = [key for key in ("trainer.name", "env.name") if key not in named]
        if missing:
            parser.error(
                "give --config, --resume or --list, or name the run's "
                + " and ".join(f"{key}=..." for key in missing)
                + " among the overrides (the other settings then take agents/config.py's defaults)"
            )
    return arguments


def _address_override(data: dict, address: str) -> str:
    """``--address`` as an override of the trainer's address parameter (its catalogue entry
    names it); only distributed trainers take one."""
    trainer = (data.get("trainer") or {}).get("name", TrainerConfig.name)
    known = isinstance(trainer, str) and trainer in trainer_names()
    entry = trainer_entry(trainer) if known else None
    if entry is None or entry.address_param is None:
        raise ConfigError(
            f"--address {address}: trainer {trainer!r} does not run on Ray; "
            f"only distributed trainers ({', '.join(_distributed_trainers())}) take a cluster "
            f"address"
        )
    # Quoted: YAML would read 1:30 as 90.
    return f"trainer.params.{entry.address_param}={json.dumps(address)}"


def _distributed_trainers() -> list[str]:
    return [name for name in trainer_names() if trainer_entry(name).address_param]


def list_fits(envs: list[str], param_pairs: list[str]) -> int:
    """Print the trainer x env table: each env's offers and, per trainer, fits or why not."""
    import hiddenenvs
    from agents.capabilities import capability_table

    params = {}
    for pair in param_pairs:
        apply_override(params, pair)
    names = envs or list(hiddenenvs.registry.REGISTRY)
    for row in capability_table([(name, params if envs else {}) for name in names]):
        offers = row["offers"]
        fits = [trainer for trainer, cell in row["trainers"].items() if cell == "fits"]
        print(
            f"{row['env']}: {offers.num_players} player(s), {'simultaneous' if offers.simultaneous else 'turns'}, "
            f"chance {offers.chance}, {offers.utility}, tree {offers.tree}"
        )
        print(f"  fits: {', '.join(fits) or 'none'}")
        for trainer, cell in row["trainers"].items():
            if cell != "fits":
                print(f"  {trainer}: needs {cell}")
    return 0


def _resumed_config(arguments: argparse.Namespace) -> RunConfig:
    """The config saved in ``--resume``'s checkpoint with the overrides applied, refused in
    one line when they make it another run (env, env parameters, trainer)."""
    from agents.checkpoint import load_checkpoint
    from agents.runs import CHECKPOINT_NAME, check_same_run

    where = quote(arguments.resume, PATH_CHARS)
    check_path_length(arguments.resume, "--resume")
    checkpoint = Path(arguments.resume) / CHECKPOINT_NAME
    if not checkpoint.is_file():
        raise ConfigError(f"--resume {where}: no {CHECKPOINT_NAME} there")
    payload = load_checkpoint(checkpoint)  # data only: a hostile file runs nothing
    if not isinstance(payload, dict) or not isinstance(payload.get("config"), dict):
        raise ConfigError(f"--resume {where}: {CHECKPOINT_NAME} there is not a run checkpoint")
    saved = payload["config"]
    data = copy.deepcopy(saved)
    for override in arguments.overrides:
        apply_override(data, override)
    check_same_run(saved, data, arguments.resume)
    data["output_dir"] = str(arguments.resume)
    if arguments.address is not None:
        apply_override(data, _address_override(data, arguments.address))
    config = from_dict(RunConfig, data)
    validate_run(config)
    return config


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(sys.argv[1:] if argv is None else argv)
    if arguments.list is not None:
        try:
            return list_fits(arguments.list, arguments.param)
        except (ConfigError, ValueError) as error:
            print(f"train.py: {error}", file=sys.stderr)
            return 2
    try:
        if arguments.resume:
            config = _resumed_config(arguments)
        else:
            # Read once, validated once, the fit first: a trainer that does not fit is
            # refused before torch loads.
            data = config_data(arguments.config, arguments.overrides)
            if arguments.address is not None:
                apply_override(data, _address_override(data, arguments.address))
            overridden = bool(arguments.overrides) or arguments.address is not None
            config = typed_config(data, arguments.config, overridden, validate=validate_run)
    except ConfigError as error:
        print(f"train.py: config error: {error}", file=sys.stderr)
        return 2
    except CapabilityError as error:
        print(f"train.py: {error}", file=sys.stderr)
        return 2
    except ValueError as error:  # agents.checkpoint.UnsafeFileError: not a data-only file
        print(f"train.py: {error}", file=sys.stderr)
        return 2
    except GdlError as error:  # a refused rule sheet: one line, not a traceback
        print(f"train.py: {gdl_error_line(error)}", file=sys.stderr)
        return 2
    from agents.actor_pool import ClusterError
    from agents.checkpoint import FileWriteError
    from agents.loop import RunInterrupted, TrainingError, train

    try:
        result = train(config, resume=bool(arguments.resume))
    except RunInterrupted as interrupted:  # Ctrl-C: the last checkpoint stands
        print(f"train.py: {interrupted}", file=sys.stderr)
        return INTERRUPTED
    except FileWriteError as error:  # a full disk: the previous checkpoint stands
        print(f"train.py: {error}", file=sys.stderr)
        return 1
    except OSError as error:  # another file of the run (metrics, plot) on a full disk, say
        code = errno.errorcode.get(error.errno or 0, "")
        where = quote(str(error.filename), PATH_CHARS) + ": " if error.filename else ""
        print(f"train.py: {where}{error.strerror or error} ({code})", file=sys.stderr)
        return 1
    except CapabilityError as error:
        print(f"train.py: {error}", file=sys.stderr)
        return 2
    except (TrainingError, ClusterError) as error:
        print(f"train.py: {error}", file=sys.stderr)
        return 1
    except ConfigError as error:  # found once the game is built (an evaluation opponent, seats)
        print(f"train.py: config error: {error}", file=sys.stderr)
        return 2
    except GdlError as error:
        print(f"train.py: {gdl_error_line(error)}", file=sys.stderr)
        return 2
    metric = result["metric"]  # the run's own (agents.loop.Evaluator chose it)
    print(
        f"{config.trainer.name} on {config.env.name}: {result['episodes']} episodes, "
        f"{result['iterations']} iterations in {result['wall_seconds']:.1f} s; {metric} "
        f"{_rounded(result['last_evaluation'].get(metric))}; outputs in {config.output_dir}"
    )
    return 0


def _rounded(value):
    """A result as printed: 4 significant digits (0.03012, not 0.030123456789012345)."""
    return value if value is None else f"{value:.4g}"


def exit_now(status: int) -> None:
    """Exit at once after Ctrl-C: the exit handlers run (Ray's and multiprocessing's among
    them; the run has closed its learner), then the process ends without Python's teardown."""
    import atexit
    import os

    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


if __name__ == "__main__":
    # A background job of a non-interactive shell starts with SIGINT ignored, and Python then
    # installs no handler; Ctrl-C, the benchmark harness and its time limit stop runs by SIGINT.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        status = main()
    except KeyboardInterrupt:  # before the run started; a run says more (RunInterrupted)
        print("train.py: interrupted (Ctrl-C) before the run started", file=sys.stderr)
        status = INTERRUPTED
    if status == INTERRUPTED:
        exit_now(status)
    sys.exit(status)
