"""Run directories and checkpoints: what the loop writes and what agent specs read.

A run directory holds ``checkpoint.pt`` (format :data:`RUN_CHECKPOINT_FORMAT`: the run's
config, the learner's state and the loop's counters and generators). Rebuilding the
learner from it needs only the config and the trainer registry, so the spec resolver
(:func:`agents.specs.load_agent`) and the loop (:mod:`agents.loop`) both import this
module and not each other. It imports no torch: :func:`validate_run` answers first.

A run is validated once (:func:`validate_run`): the config's values, the trainer's fit
to the env (before the trainer, and torch, is imported), then the rest of
:meth:`agents.config.RunConfig.validate`; the result, a :class:`ValidatedRun`, is kept
on the config, so ``train.py`` and the loop never check a run twice.

A run directory belongs to one run. A new run refuses a directory that holds anything
(:func:`check_new_run_dir`): re-running a shipped config, whose ``output_dir`` is fixed,
never replaces an earlier run. A resumed run must be the same run: the same env, env
parameters and trainer (:func:`check_same_run`); its budget, schedules and the
trainer's parameters may change.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import hiddenenvs
from agents.capabilities import check_exact_evaluation, check_trainer, offers_for
from agents.config import (
    PATH_CHARS,
    ConfigError,
    RunConfig,
    config_from_dict,
    quote,
    trainer_class,
    trainer_config,
)

if TYPE_CHECKING:  # torch-free at import: train.py validates a run before torch loads
    from agents.base import Learner

RUN_CHECKPOINT_FORMAT = "hiddenenvs-run-v1"
CHECKPOINT_NAME = "checkpoint.pt"


@dataclass(frozen=True)
class ValidatedRun:
    """A run config checked once: the config, the trainer's typed config (its
    ``CONFIG_CLASS``) and the env's offers (:class:`hiddenenvs.analysis.capabilities.GameOffers`,
    from which the loop decides whether the exact evaluation's tree is small enough)."""

    config: RunConfig
    trainer_params: Any
    offers: Any


def validate_run(config: RunConfig) -> ValidatedRun:
    """Check ``config`` as a run, once (the result is kept on it while its values stay):
    its values, then the trainer's fit to the env and an exact evaluation's to the tree
    (:class:`agents.capabilities.CapabilityError`, before the trainer is imported), then
    the rest of :meth:`agents.config.RunConfig.validate` (the env's parameters in words,
    the trainer's parameters, memory, ``output_dir``)."""
    cached = getattr(config, "_validated_run", None)
    if cached is not None and cached[0] == config.to_dict():
        return cached[1]
    config.check_values()
    try:
        offers_for(config.env.name, config.env.params)
    except (ValueError, TypeError):  # an unknown env or a bad parameter: the config words it
        config.check_env_and_trainer()
        raise
    offers = check_trainer(
        config.trainer.name, config.trainer.params, config.env.name, config.env.params
    )
    evaluation = config.evaluation
    if evaluation.exact == "yes":
        check_exact_evaluation(config.env.name, config.env.params, evaluation.max_tree_nodes)
    run = ValidatedRun(config, config.check_env_and_trainer(), offers)
    config._validated_run = (config.to_dict(), run)  # type: ignore[attr-defined]
    return run


def build_learner(config: RunConfig) -> Learner:
    game = hiddenenvs.load_game(config.env.name, **config.env.params)
    return trainer_class(config.trainer.name)(game, trainer_config(config), config.seed)


def learner_from_checkpoint(payload: dict[str, Any]) -> Learner:
    learner = build_learner(config_from_dict(payload["config"]))
    learner.load_state_dict(payload["learner"])
    return learner


# What makes a run the run it is: a resume may change anything else (budget, schedules,
# the trainer's parameters), not these.
RUN_IDENTITY = (("env", "name"), ("env", "params"), ("trainer", "name"))


class RunDirectoryError(ConfigError):
    """A new run pointed at a directory that already holds files (another run's)."""


def check_new_run_dir(output_dir: str | Path) -> None:
    """Refuse (:class:`RunDirectoryError`, one line) to start a new run in a directory that
    holds anything: it would replace that run's checkpoint, metrics and policies."""
    directory = Path(output_dir)
    if not directory.is_dir():
        return
    held = sorted(entry.name for entry in directory.iterdir())
    if not held:
        return
    shown = ", ".join(held[:4]) + (f" and {len(held) - 4} more" if len(held) > 4 else "")
    where = quote(str(output_dir), PATH_CHARS)
    if CHECKPOINT_NAME in held:
        advice = f"continue that run with train.py --resume {where}"
    else:
        advice = f"it holds no {CHECKPOINT_NAME} to resume from; remove it"
    raise RunDirectoryError(
        f"output_dir {where} already holds a run ({shown}); a new run never replaces one: "
        f"{advice}, or give another output_dir=..."
    )


def check_same_run(saved: dict[str, Any], asked: dict[str, Any], run_dir: str | Path) -> None:
    """Refuse (:class:`ConfigError`, one line) to resume the run saved in ``run_dir`` (its
    checkpoint's config, ``saved``) as a run of another env, env parameters or trainer
    (``asked``, the config with the resume's overrides)."""
    changed = []
    for section, key in RUN_IDENTITY:
        before = (saved.get(section) or {}).get(key)
        after = (asked.get(section) or {}).get(key)
        if before != after:
            changed.append(f"{section}.{key} {quote(before)} -> {quote(after)}")
    if changed:
        raise ConfigError(
            f"--resume {quote(str(run_dir), PATH_CHARS)}: that run is "
            f"{saved['trainer']['name']} on {saved['env']['name']}; a resumed run keeps its env, "
            f"env.params and trainer ({'; '.join(changed)}); start a new run with --config and "
            f"another output_dir instead"
        )


def load_learner_state(learner: Learner, state: Any, checkpoint: str | Path) -> None:
    """``learner.load_state_dict(state)``, a state that does not fit the learner (the
    trainer's parameters changed its networks' sizes) refused in one line."""
    try:
        learner.load_state_dict(state)
    except (RuntimeError, KeyError, ValueError, TypeError, IndexError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise ConfigError(
            f"{quote(str(checkpoint), PATH_CHARS)}: the saved {type(learner).__name__} does not "
            f"fit this run's trainer.params (a size or a key changed: {quote(first, 160)}); "
            f"resume with the run's own trainer.params"
        ) from None
