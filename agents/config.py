"""Typed, validated run configurations (YAML file + ``key=value`` overrides).

A run config reads::

    env:            {name: kuhn_poker, params: {}}       # a registered env and its parameters
    trainer:        {name: nfsp, params: {...}}          # params: the trainer's CONFIG_CLASS
    seed: 0
    budget:         {episodes: 200000, iterations: null, seconds: null}  # whichever comes first
    evaluation:                                          # see agents/loop.py
      every_episodes: 10000  # or every_iterations: N (learner steps, e.g. CFR iterations)
      exact: auto            # exact exploitability: "yes", "no", or "auto" (tree small enough)
      max_tree_nodes: 200000 # what "auto" calls small enough
      episodes_vs_random: 1000  # per seat, when not exact: mean return against uniform random
    checkpoint_every_episodes: 10000                     # or checkpoint_every_iterations: N
    num_envs: 64                                         # episodes in lockstep (batched inference)
    output_dir: runs/nfsp_kuhn
    progress_bar: true

Every section is a dataclass below; unknown keys and wrongly typed values raise
:class:`ConfigError` naming the key and listing the allowed ones. Overrides use dotted
keys and YAML values: ``budget.episodes=5000 trainer.params.hidden_sizes=[64,64]``.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

TRAINERS = {
    "nfsp": "agents.nfsp:NFSP",
    "anfsp": "agents.anfsp:ANFSP",
    "mcnfsp": "agents.mcnfsp:MCNFSP",
    "exit_oos": "agents.exit_oos:ExItOOS",
    "cfr": "agents.cfr:CFRLearner",
    "cfr+": "agents.cfr:CFRPlusLearner",
    "rebel": "agents.rebel:ReBeLLearner",
    "es-mccfr": "agents.search.external_sampling_mccfr:ExternalSamplingMCCFRLearner",
    "os-mccfr": "agents.search.outcome_sampling_mccfr:OutcomeSamplingMCCFRLearner",
}
EXACT_CHOICES = ("auto", "yes", "no")


class ConfigError(ValueError):
    """A config key or value is wrong; the message names it and what is allowed."""


@dataclass
class EnvConfig:
    name: str = "kuhn_poker"
    params: dict = field(default_factory=dict)


@dataclass
class TrainerConfig:
    name: str = "nfsp"
    params: dict = field(default_factory=dict)


@dataclass
class BudgetConfig:
    episodes: int | None = 100_000
    iterations: int | None = None  # learner steps (CFR iterations; NFSP: batches)
    seconds: float | None = None


@dataclass
class EvaluationConfig:
    every_episodes: int | None = 10_000
    every_iterations: int | None = None
    # "auto": exact exploitability when the game tree has at most ``max_tree_nodes`` nodes.
    # YAML reads an unquoted yes / no as a boolean: True and False mean "yes" and "no".
    exact: str | bool = "auto"
    max_tree_nodes: int = 200_000
    episodes_vs_random: int = 1_000


@dataclass
class RunConfig:
    env: EnvConfig = field(default_factory=EnvConfig)
    trainer: TrainerConfig = field(default_factory=TrainerConfig)
    seed: int = 0
    budget: BudgetConfig = field(default_factory=BudgetConfig)
    evaluation: EvaluationConfig = field(default_factory=EvaluationConfig)
    checkpoint_every_episodes: int | None = 10_000
    checkpoint_every_iterations: int | None = None
    num_envs: int = 32
    output_dir: str = "runs/run"
    progress_bar: bool = True

    def validate(self) -> RunConfig:
        if self.trainer.name not in TRAINERS:
            raise ConfigError(
                f"trainer.name: unknown trainer {self.trainer.name!r}; allowed: {sorted(TRAINERS)}"
            )
        if isinstance(self.evaluation.exact, bool):
            self.evaluation.exact = "yes" if self.evaluation.exact else "no"
        if self.evaluation.exact not in EXACT_CHOICES:
            raise ConfigError(
                f"evaluation.exact must be one of {EXACT_CHOICES}, got {self.evaluation.exact!r}"
            )
        positive = {
            "num_envs": self.num_envs,
            "checkpoint_every_episodes": self.checkpoint_every_episodes,
            "checkpoint_every_iterations": self.checkpoint_every_iterations,
            "evaluation.every_episodes": self.evaluation.every_episodes,
            "evaluation.every_iterations": self.evaluation.every_iterations,
            "budget.episodes": self.budget.episodes,
            "budget.iterations": self.budget.iterations,
        }
        for key, value in positive.items():
            if value is not None and value < 1:
                raise ConfigError(f"{key} must be >= 1, got {value}")
        if self.evaluation.every_episodes is None and self.evaluation.every_iterations is None:
            raise ConfigError("evaluation: give every_episodes, every_iterations or both")
        if self.checkpoint_every_episodes is None and self.checkpoint_every_iterations is None:
            raise ConfigError("give checkpoint_every_episodes, checkpoint_every_iterations or both")
        if self.budget.episodes is None and self.budget.iterations is None and self.budget.seconds is None:
            raise ConfigError("budget: give episodes, iterations, seconds or a combination")
        import hiddenenvs

        try:
            hiddenenvs.load_game(self.env.name, **self.env.params)
        except ValueError as error:
            raise ConfigError(f"env: {error}") from None
        trainer_config(self)  # validates trainer.params
        return self

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def trainer_class(name: str) -> type:
    import importlib

    module_name, class_name = TRAINERS[name].split(":")
    return getattr(importlib.import_module(module_name), class_name)


def trainer_config(config: RunConfig) -> Any:
    """``trainer.params`` as the trainer's own typed config."""
    cls = trainer_class(config.trainer.name)
    return from_dict(cls.CONFIG_CLASS, config.trainer.params, "trainer.params")


# ---- generic dataclass validation ---------------------------------------------------------
def _check_type(value: Any, annotation: Any, where: str) -> Any:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(annotation)
        if value is None and type(None) in options:
            return None
        errors = []
        for option in options:
            if option is type(None):
                continue
            try:
                return _check_type(value, option, where)
            except ConfigError as error:
                errors.append(str(error))
        raise ConfigError(errors[0] if errors else f"{where}: bad value {value!r}")
    if dataclasses.is_dataclass(annotation):
        return from_dict(annotation, value, where)
    if origin is list:
        if not isinstance(value, list):
            raise ConfigError(f"{where} must be a list, got {value!r}")
        (item_type,) = typing.get_args(annotation)
        return [_check_type(item, item_type, f"{where}[{i}]") for i, item in enumerate(value)]
    if annotation is dict or origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{where} must be a mapping, got {value!r}")
        return dict(value)
    if annotation is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if annotation in (int, float, str, bool):
        if isinstance(value, bool) and annotation is not bool or not isinstance(value, annotation):
            raise ConfigError(f"{where} must be {annotation.__name__}, got {value!r}")
        return value
    raise ConfigError(f"{where}: unsupported type {annotation!r}")


def from_dict(cls: type, data: Any, where: str = "config") -> Any:
    """Build dataclass ``cls`` from ``data``, naming any bad key and the allowed ones."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{where} must be a mapping, got {data!r}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        prefix = f"{where}." if where != "config" else ""
        raise ConfigError(
            f"unknown key(s) {[prefix + key for key in unknown]}; allowed keys "
            f"{'of ' + where if where != 'config' else ''}: {sorted(fields)}".replace("  ", " ")
        )
    hints = typing.get_type_hints(cls)
    values = {}
    for name, value in data.items():
        key = name if where == "config" else f"{where}.{name}"
        values[name] = _check_type(value, hints[name], key)
    return cls(**values)


def apply_override(data: dict, override: str) -> None:
    """Apply one ``dotted.key=yaml_value`` override to a nested dict, in place."""
    if "=" not in override:
        raise ConfigError(f"override {override!r} must look like key=value (e.g. budget.episodes=5000)")
    key, _, raw = override.partition("=")
    value = yaml.safe_load(raw) if raw else None
    parts = key.strip().split(".")
    node = data
    for depth, part in enumerate(parts[:-1]):
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigError(f"override {key!r}: {'.'.join(parts[:depth + 1])} is not a section")
        node = child
    node[parts[-1]] = value


def load_config(path: str | Path | None, overrides: list[str] = ()) -> RunConfig:
    """Read a YAML config (or start from the defaults), apply overrides, validate."""
    data: dict = {}
    if path is not None:
        path = Path(path)
        if not path.is_file():
            raise ConfigError(f"config file {path} not found")
        data = yaml.safe_load(path.read_text()) or {}
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: the top level must be a mapping of keys")
    for override in overrides:
        apply_override(data, override)
    return config_from_dict(data)


def config_from_dict(data: dict) -> RunConfig:
    return from_dict(RunConfig, data).validate()
