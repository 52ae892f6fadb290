"""Train any trainer on any hiddenenvs env from a YAML config.

    python train.py --config configs/nfsp_kuhn.yaml                      # a run
    python train.py --config configs/nfsp_kuhn.yaml budget.episodes=5000 seed=3
    python train.py --resume runs/nfsp_kuhn                              # continue it
    python train.py --resume runs/nfsp_kuhn budget.episodes=400000       # ... for longer
    python train.py --config configs/anfsp_leduc.yaml --address auto      # ANFSP on a Ray cluster
    python train.py --list                       # which trainers fit which env (and why not)
    python train.py --list meier combat --param mode=fighter             # ... for some envs

A trainer that does not fit the env (it needs an enumerable tree, chance probabilities, a
belief sampler or two zero-sum players the game does not offer) is refused before any
work, with the trainers that do fit (``agents/capabilities.py``). Exit status: 0 trained,
1 trained nothing within the budget (the message says why), 2 refused (config or fit).

Overrides are dotted ``key=value`` pairs with YAML values; ``agents/config.py`` documents
every key. A run writes checkpoint.pt, metrics.csv, tensorboard/, metrics.png and
policy_player<p>.pt (loadable with ``agents.load_agent``) into ``output_dir``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from agents.capabilities import CapabilityError, check_run_data
from agents.config import ConfigError, apply_override, config_data, config_from_dict, load_config
from hiddenenvs.envs.gdl import GdlError
from hiddenenvs.envs.gdl import error_line as gdl_error_line


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--config", help="YAML run config (see configs/)")
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
        help="Ray cluster of a distributed trainer (anfsp): 'auto' or the host:port `ray start --head` "
        "printed; the same as trainer.params.address=ADDRESS (without it, a local Ray is started)",
    )
    parser.add_argument("overrides", nargs="*", metavar="key=value", help="config overrides")
    return parser.parse_args(argv)


def _address_override(data: dict, address: str) -> str:
    """``--address`` as an override; only distributed trainers take one."""
    from agents.config import trainer_class

    trainer = (data.get("trainer") or {}).get("name", "nfsp")
    try:
        fields = trainer_class(trainer).CONFIG_CLASS.__dataclass_fields__
    except (KeyError, AttributeError):
        fields = {}
    if "address" not in fields:
        raise ConfigError(
            f"--address {address}: trainer {trainer!r} does not run on Ray; "
            f"only distributed trainers (anfsp) take a cluster address"
        )
    return f"trainer.params.address={json.dumps(address)}"  # quoted: YAML would read 1:30 as 90


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
            from agents.checkpoint import load_checkpoint
            from agents.runs import CHECKPOINT_NAME

            checkpoint = Path(arguments.resume) / CHECKPOINT_NAME
            if not checkpoint.is_file():
                raise ConfigError(f"--resume {arguments.resume}: no {CHECKPOINT_NAME} there")
            payload = load_checkpoint(checkpoint)  # data only: a hostile file runs nothing
            if not isinstance(payload, dict) or not isinstance(payload.get("config"), dict):
                raise ConfigError(
                    f"--resume {arguments.resume}: {checkpoint} is not a run checkpoint"
                )
            data = payload["config"]
            for override in arguments.overrides:
                apply_override(data, override)
            data["output_dir"] = str(arguments.resume)
            if arguments.address is not None:
                apply_override(data, _address_override(data, arguments.address))
            config = config_from_dict(data)
        else:
            overrides = list(arguments.overrides)
            check_run_data(
                config_data(arguments.config, overrides)
            )  # refuse a misfit before torch loads
            if arguments.address is not None:
                probe = load_config(arguments.config, overrides).to_dict()
                overrides.append(_address_override(probe, arguments.address))
            config = load_config(arguments.config, overrides)
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
    from agents.loop import TrainingError, train

    try:
        result = train(config, resume=bool(arguments.resume))
    except CapabilityError as error:
        print(f"train.py: {error}", file=sys.stderr)
        return 2
    except TrainingError as error:
        print(f"train.py: {error}", file=sys.stderr)
        return 1
    except ConfigError as error:  # found once the game is built (an evaluation opponent, seats)
        print(f"train.py: config error: {error}", file=sys.stderr)
        return 2
    except GdlError as error:
        print(f"train.py: {gdl_error_line(error)}", file=sys.stderr)
        return 2
    last = result["last_evaluation"]
    metric = next(
        (
            m
            for m in ("exploitability", "return_vs_random", "return_vs_opponent")
            if last.get(m) is not None
        ),
        "return_vs_random",
    )
    print(
        f"{config.trainer.name} on {config.env.name}: {result['episodes']} episodes, "
        f"{result['iterations']} iterations in {result['wall_seconds']:.1f} s; {metric} "
        f"{last.get(metric)}; outputs in {config.output_dir}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
