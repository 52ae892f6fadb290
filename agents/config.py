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
      episodes_vs_random: 1000  # per seat, when not exact: mean return against the opponent
      opponent: random       # or a scripted opponent, e.g. scripted:doctrine (combat)
      seats: null            # the evaluated seats (null: all)
      max_seconds: null      # one evaluation's cap (null: budget.seconds / 10, else 120 s)
    checkpoint_every_episodes: 10000                     # or checkpoint_every_iterations: N
    num_envs: 64                                         # episodes in lockstep (batched inference)
    output_dir: runs/nfsp_kuhn
    progress_bar: true
    torch_threads: 1                                     # PyTorch threads (small nets: 1)
    vector_self_play: false                              # self-play through hiddenenvs.vector (see agents/loop.py)

Every section is a dataclass below; unknown keys and wrongly typed values raise
:class:`ConfigError` naming the key and listing the allowed ones. Overrides use dotted
keys and YAML values: ``budget.episodes=5000 trainer.params.hidden_sizes=[64,64]``.

Reading is bounded (a config is user input; ``docs/guides/limits.md`` has the measurements):

- files of at most :data:`MAX_CONFIG_BYTES`; at most :data:`MAX_ALIASES` YAML aliases and
  :data:`MAX_CONFIG_NODES` values once aliases are expanded (a "billion laughs" config is
  refused before anything expands it); nesting deeper than Python's recursion, tags such as
  ``!!python/object`` and YAML syntax errors are one-line :class:`ConfigError` naming the
  file, line and column;
- scientific notation is a number (``1e-3``, ``5E+4``: YAML 1.2; YAML 1.1 reads ``1e-3``
  as a string), in files and overrides alike; an integer key takes a whole float
  (``budget.episodes=1e5``);
- every number is finite and in the range its field declares (``field(metadata={RANGE:
  POSITIVE})``, or the trainer's :class:`agents.catalogue.TrainerEntry` ``ranges``; every
  other integer is >= 0 and at most :data:`agents.catalogue.MAX_INTEGER`), checked once, as it is read;
- the memory the config asks for is estimated before anything is allocated (environments
  in lockstep, the replay and reservoir memories when full, the networks) and a config
  that needs more than the machine has is refused with the estimate;
- ``output_dir`` must be creatable and writable;
- messages quote at most :data:`QUOTE_CHARS` characters of a value.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import os
import reprlib
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from agents import catalogue
from agents.catalogue import ANY_NUMBER, MAX_INTEGER, POSITIVE, RANGE, SEED, Range, field_range

# The trainer table and the seed's bound live in the catalogue; re-exported for callers.
from agents.catalogue import MAX_SEED as MAX_SEED
from agents.catalogue import TRAINERS as TRAINERS
from agents.catalogue import register_trainer as register_trainer
from agents.errors import ConfigError as ConfigError
from hiddenenvs.params import ValueLoader

EXACT_CHOICES = ("auto", "yes", "no")
MAX_CONFIG_BYTES = 1 << 20  # a config file; the shipped ones are under 3 KB
MAX_ALIASES = 64  # YAML aliases (*name) in one document
MAX_CONFIG_NODES = 100_000  # values in one document once its aliases are expanded
MAX_CONFIG_DEPTH = 32  # nested lists and mappings (PyYAML's scanner is quadratic in [[[ depth)
QUOTE_CHARS = 60  # of an offending value, in a message
PATH_CHARS = 250  # of an offending path


_QUOTE = reprlib.Repr()
_QUOTE.maxstring = _QUOTE.maxother = QUOTE_CHARS
_QUOTE.maxlist = _QUOTE.maxtuple = _QUOTE.maxdict = _QUOTE.maxset = 4
_QUOTE.maxlevel = 3


def quote(value: Any, limit: int = QUOTE_CHARS) -> str:
    """``repr(value)`` cut to ``limit`` characters, however large ``value`` is (reprlib stops
    at a few items per level, so a huge or shared structure is never walked)."""
    if isinstance(value, str) and len(value) <= limit - 2:
        return repr(value)
    if isinstance(value, int) and value.bit_length() > 4 * QUOTE_CHARS:  # repr may refuse it
        return f"an integer of {int(value.bit_length() * math.log10(2)) + 1:,} digits"
    text = _QUOTE.repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def one_line(text: str, limit: int = 300) -> str:
    """``text`` on one line, cut to ``limit`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---- reading YAML -------------------------------------------------------------------------
class ConfigLoader(ValueLoader):
    """The ``key=value`` loader (PyYAML's safe loader reading YAML 1.2's scientific notation,
    ``1e-3``, as a float), bounded: at most :data:`MAX_ALIASES` aliases per document,
    :data:`MAX_CONFIG_DEPTH` levels, numbers of at most 100 digits."""

    alias_count = 0
    depth = 0

    def fetch_flow_collection_start(self, token_class):
        if self.flow_level >= MAX_CONFIG_DEPTH:
            self._too_deep(self.get_mark())
        super().fetch_flow_collection_start(token_class)

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            self.alias_count += 1
            if self.alias_count > MAX_ALIASES:
                mark = self.peek_event().start_mark
                raise ConfigError(
                    f"{mark.line + 1}:{mark.column + 1}: more than {MAX_ALIASES} "
                    f"YAML aliases (*name); a config needs none"
                )
        if self.depth >= MAX_CONFIG_DEPTH:
            self._too_deep(self.peek_event().start_mark)
        self.depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1

    def construct_yaml_int(self, node):
        digits = len(node.value)
        if digits > 100:  # Python refuses to read past 4,300 digits; no config value has 20
            raise ConfigError(
                f"{node.start_mark.line + 1}:{node.start_mark.column + 1}: a number of "
                f"{digits:,} digits"
            )
        return super().construct_yaml_int(node)

    @staticmethod
    def _too_deep(mark) -> None:
        raise ConfigError(
            f"{mark.line + 1}:{mark.column + 1}: values nest more than "
            f"{MAX_CONFIG_DEPTH} levels deep"
        )


ConfigLoader.add_constructor("tag:yaml.org,2002:int", ConfigLoader.construct_yaml_int)


def _expanded_size(node: yaml.Node, sizes: dict[int, int], open_nodes: set[int]) -> int:
    """Values under ``node`` with every alias expanded, stopping past :data:`MAX_CONFIG_NODES`
    (counted once per distinct node: the cost stays linear in the document)."""
    key = id(node)
    if key in sizes:
        return sizes[key]
    if key in open_nodes:
        raise ConfigError(
            f"{node.start_mark.line + 1}:{node.start_mark.column + 1}: a YAML alias "
            f"refers to its own anchor (a recursive value)"
        )
    open_nodes.add(key)
    total = 1
    if isinstance(node, yaml.SequenceNode):
        children = node.value
    elif isinstance(node, yaml.MappingNode):
        children = [item for pair in node.value for item in pair]
    else:
        children = []
    for child in children:
        total += _expanded_size(child, sizes, open_nodes)
        if total > MAX_CONFIG_NODES:
            raise ConfigError(
                f"{node.start_mark.line + 1}:{node.start_mark.column + 1}: expands "
                f"into more than {MAX_CONFIG_NODES:,} values (YAML aliases?), the limit"
            )
    open_nodes.discard(key)
    sizes[key] = total
    return total


def read_yaml(text: str, source: str) -> Any:
    """The value of the YAML document ``text``, or a one-line :class:`ConfigError` naming
    ``source`` (and the line) for a syntax error, a tag, too many aliases or too much nesting."""
    if len(text) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{source}: {len(text):,} characters; the limit is {MAX_CONFIG_BYTES:,}")
    loader = None
    try:
        loader = ConfigLoader(text)
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded_size(node, {}, set())
        return loader.construct_document(node)
    except ConfigError as error:
        raise ConfigError(f"{source}:{error}") from None
    except yaml.constructor.ConstructorError as error:
        tag = quote((error.problem.partition("tag ")[2] or error.problem).strip("'"))
        raise ConfigError(
            f"{source}:{_where(error)}: YAML tag {tag} is not allowed in a config "
            f"(plain values only)"
        ) from None
    except yaml.MarkedYAMLError as error:
        raise ConfigError(
            f"{source}:{_where(error)}: not valid YAML: {error.problem or error.context}"
        ) from None
    except yaml.reader.ReaderError as error:
        raise ConfigError(
            f"{source}: character {error.position + 1} (code point "
            f"{error.character:#x}) is not allowed in YAML"
        ) from None
    except yaml.YAMLError as error:
        raise ConfigError(f"{source}: not valid YAML: {quote(str(error))}") from None
    except RecursionError:
        raise ConfigError(f"{source}: values nest too deeply") from None
    finally:
        if loader is not None:
            loader.dispose()


def _where(error: yaml.MarkedYAMLError) -> str:
    mark = error.problem_mark or error.context_mark
    return f"{mark.line + 1}:{mark.column + 1}" if mark is not None else ""


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
    episodes: int | None = field(default=100_000, metadata={RANGE: POSITIVE})
    # learner steps (CFR iterations; NFSP: batches)
    iterations: int | None = field(default=None, metadata={RANGE: POSITIVE})
    seconds: float | None = field(default=None, metadata={RANGE: POSITIVE})


@dataclass
class EvaluationConfig:
    every_episodes: int | None = field(default=10_000, metadata={RANGE: POSITIVE})
    every_iterations: int | None = field(default=None, metadata={RANGE: POSITIVE})
    # "auto": exact exploitability when the game tree has at most ``max_tree_nodes`` nodes.
    # YAML reads an unquoted yes / no as a boolean: True and False mean "yes" and "no".
    exact: str | bool = "auto"
    max_tree_nodes: int = 200_000
    episodes_vs_random: int = 1_000
    # Who the evaluation agents play when the evaluation is not exact: "random" (uniform
    # random in every other seat) or a scripted opponent spec such as "scripted:doctrine".
    opponent: str = "random"
    # Seats evaluated against the opponent (null: every seat).
    seats: list[int] | None = None
    # Cap on one evaluation's wall time, shared equally by the evaluated seats: episodes still
    # running at a seat's share are dropped (the evaluation_episodes column counts those
    # played). null: a tenth of budget.seconds when that is set, else 120 s.
    max_seconds: float | None = field(default=None, metadata={RANGE: POSITIVE})


@dataclass
class RunConfig:
    env: EnvConfig = field(default_factory=EnvConfig)
    trainer: TrainerConfig = field(default_factory=TrainerConfig)
    seed: int = field(default=0, metadata={RANGE: SEED})
    budget: BudgetConfig = field(default_factory=BudgetConfig)
    evaluation: EvaluationConfig = field(default_factory=EvaluationConfig)
    checkpoint_every_episodes: int | None = field(default=10_000, metadata={RANGE: POSITIVE})
    checkpoint_every_iterations: int | None = field(default=None, metadata={RANGE: POSITIVE})
    num_envs: int = field(default=32, metadata={RANGE: POSITIVE})
    output_dir: str = "runs/run"
    progress_bar: bool = True
    # PyTorch's intra-op threads in the training process. 1 by default: the trainers' networks
    # are small, so more threads cost synchronisation without speed-up, and one thread keeps
    # runs bit-for-bit reproducible; raise it for large networks on a many-core machine.
    torch_threads: int = 1
    # Self-play through the env's compiled vector kernel (hiddenenvs.vector) instead of
    # num_envs PettingZoo envs; see agents/loop.py for which envs and trainers it takes.
    vector_self_play: bool = False

    def validate(self) -> RunConfig:
        """Check every value (:meth:`check_values`), then the env, the trainer's parameters,
        the memory and ``output_dir`` (:meth:`check_env_and_trainer`)."""
        self.check_values()
        self.check_env_and_trainer()
        return self

    def check_env_and_trainer(self) -> Any:
        """After :meth:`check_values`: the env and its parameters, the trainer's parameters,
        the memory the run needs and ``output_dir``; returns the trainer's typed config,
        kept on the config while its values stay (nothing is checked twice)."""
        checked = getattr(self, "_checked", None)
        if checked is not None and checked[0] == self.to_dict():
            return checked[1]
        import hiddenenvs
        from hiddenenvs.registry import REGISTRY

        if self.env.name not in REGISTRY:
            raise ConfigError(
                f"env.name: unknown env {quote(self.env.name)}; registered envs: "
                f"{', '.join(sorted(REGISTRY))}"
            )
        try:
            game = hiddenenvs.load_game(self.env.name, **self.env.params)
        except (ValueError, TypeError, OverflowError) as error:  # a game's own parameter checks
            raise ConfigError(f"env: {one_line(str(error))}") from None
        params = trainer_config(self)  # validates trainer.params (imports the trainer)
        check_memory(self, game, params)
        check_output_dir(self.output_dir)
        self._checked = (self.to_dict(), params)
        return params

    def check_values(self) -> None:
        """The checks that need no game and no trainer: names, choices, a schedule and a
        budget given (the ranges of the values were checked as they were read,
        :func:`from_dict`)."""
        trainers = catalogue.TRAINERS
        if self.trainer.name not in trainers:
            raise ConfigError(
                f"trainer.name: unknown trainer {self.trainer.name!r}; allowed: {sorted(trainers)}"
            )
        if isinstance(self.evaluation.exact, bool):
            self.evaluation.exact = "yes" if self.evaluation.exact else "no"
        if self.evaluation.exact not in EXACT_CHOICES:
            raise ConfigError(
                f"evaluation.exact must be one of {EXACT_CHOICES}, got {self.evaluation.exact!r}"
            )
        if self.evaluation.every_episodes is None and self.evaluation.every_iterations is None:
            raise ConfigError("evaluation: give every_episodes, every_iterations or both")
        if self.checkpoint_every_episodes is None and self.checkpoint_every_iterations is None:
            raise ConfigError("give checkpoint_every_episodes, checkpoint_every_iterations or both")
        if (
            self.budget.episodes is None
            and self.budget.iterations is None
            and self.budget.seconds is None
        ):
            raise ConfigError("budget: give episodes, iterations, seconds or a combination")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# ---- what a run will need --------------------------------------------------------------------
LOCKSTEP_ENVS_MEASURED = 8  # fresh envs whose allocations estimate one environment's
MEASURE_ENVS_ABOVE = 1_024  # environments in lockstep; below, their envs are not measured


def memory_limit() -> int:
    """Bytes this process can have: the machine's memory, or the address-space limit if lower."""
    limit = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            limit = min(limit, soft)
    except ImportError:  # not POSIX
        pass
    return limit


def _env_bytes(config: RunConfig) -> int:
    """Bytes allocated by one PettingZoo env of the config's game, made and reset as the
    training loop does (the mean over a few, after a first that may fill the game's caches)."""
    import tracemalloc

    import hiddenenvs

    def reset_env():
        env = hiddenenvs.make(config.env.name, **config.env.params).unwrapped
        env.reset(seed=0)
        return env

    reset_env()
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        envs = [reset_env() for _ in range(LOCKSTEP_ENVS_MEASURED)]
        allocated = tracemalloc.get_traced_memory()[0] - before
    finally:
        if started:
            tracemalloc.stop()
    del envs
    return max(0, allocated) // LOCKSTEP_ENVS_MEASURED


def memory_estimate(config: RunConfig, game, params: Any) -> dict[str, int]:
    """Bytes the run needs *at least*, by the key that asks for them: the environments in
    lockstep (their envs, measured above :data:`MEASURE_ENVS_ABOVE`, and tensors), the replay and reservoir memories when full (one
    float32 tensor per row, for one player) and one copy of the networks' weights."""
    info = game.info
    tensor = min(
        math.prod(info.information_state_tensor_shape or (0,)),
        math.prod(info.observation_tensor_shape or (0,)),
    )
    per_env = 4 * tensor + (_env_bytes(config) if config.num_envs > MEASURE_ENVS_ABOVE else 0)
    needs = {"num_envs": config.num_envs * per_env}
    for name in ("replay_capacity", "reservoir_capacity"):
        rows = getattr(params, name, None)
        if isinstance(rows, int):
            needs[f"trainer.params.{name}"] = rows * 4 * tensor
    hidden = getattr(params, "hidden_sizes", None)
    if isinstance(hidden, list) and hidden:
        layers = [tensor, *hidden, info.num_distinct_actions]
        needs["trainer.params.hidden_sizes"] = 4 * sum(a * b for a, b in itertools.pairwise(layers))
    return needs


def check_memory(config: RunConfig, game, params: Any) -> None:
    """Refuse a config whose :func:`memory_estimate` exceeds :func:`memory_limit`."""
    needs = memory_estimate(config, game, params)
    total, limit = sum(needs.values()), memory_limit()
    if total > limit:
        largest = max(needs, key=lambda name: needs[name])
        raise ConfigError(
            f"the run needs at least {_gigabytes(total)} of memory ({largest}="
            f"{quote(_value_at(config, largest))}: {_gigabytes(needs[largest])}); "
            f"the limit here is {_gigabytes(limit)}"
        )


def _value_at(config: RunConfig, key: str) -> Any:
    if key.startswith("trainer.params."):
        return config.trainer.params.get(key.removeprefix("trainer.params."))
    return getattr(config, key)


def _gigabytes(size: int) -> str:
    return f"{size / 2**30:,.1f} GiB"


def check_output_dir(output_dir: str) -> None:
    """``output_dir`` exists as a writable directory or can be created: a file is written and
    removed in its nearest existing ancestor."""
    import tempfile

    check_path_length(output_dir, "output_dir")
    try:
        existing = Path(output_dir).absolute()
        while not existing.exists():
            existing = existing.parent
        if not existing.is_dir():
            raise ConfigError(
                f"output_dir {quote(output_dir, PATH_CHARS)}: {quote(str(existing), PATH_CHARS)} is a file, "
                f"not a directory"
            )
        with tempfile.TemporaryFile(dir=existing):
            pass
    except (OSError, ValueError) as error:
        if isinstance(error, ConfigError):
            raise
        reason = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise ConfigError(
            f"output_dir {quote(output_dir, PATH_CHARS)}: cannot write there ({reason})"
        ) from None


def check_path_length(path: str | Path, what: str) -> None:
    """Refuse (one line, the path cut to :data:`PATH_CHARS`) a path with a component longer
    than the file system takes (255 bytes on most), or longer than a whole path may be."""
    encoded = os.fsencode(str(path))
    longest = max((len(part) for part in encoded.split(b"/")), default=0)
    name_max, path_max = 255, 4096
    try:  # the limits of the file system the path would be on (its nearest existing folder)
        existing = Path(path).absolute()
        while not existing.exists():
            existing = existing.parent
        name_max = os.pathconf(existing, "PC_NAME_MAX")
        path_max = os.pathconf(existing, "PC_PATH_MAX")
    except (OSError, ValueError):
        pass
    if longest > name_max:
        raise ConfigError(
            f"{what} {quote(str(path), PATH_CHARS)}: a name of {longest:,} bytes in it; "
            f"the file system takes at most {name_max}"
        )
    if len(encoded) >= path_max:
        raise ConfigError(
            f"{what} {quote(str(path), PATH_CHARS)}: {len(encoded):,} bytes long; "
            f"the file system takes paths of fewer than {path_max:,}"
        )


def trainer_class(name: str) -> catalogue.LearnerClass:
    """The Learner class of trainer ``name``; an unknown name raises
    :class:`hiddenenvs.registries.UnknownNameError` (a KeyError and a ValueError)."""
    return catalogue.TRAINERS[name]


def trainer_config(config: RunConfig) -> Any:
    """``trainer.params`` as the trainer's own typed config (the ranges its entry declares
    for fields its config class does not)."""
    name = config.trainer.name
    cls = trainer_class(name)
    ranges = catalogue.trainer_entry(name).ranges
    return from_dict(cls.CONFIG_CLASS, config.trainer.params, "trainer.params", ranges)


# ---- generic dataclass validation ---------------------------------------------------------
def _check_type(value: Any, annotation: Any, where: str, value_range: Range = ANY_NUMBER) -> Any:
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
                return _check_type(value, option, where, value_range)
            except ConfigError as error:
                errors.append(str(error))
        raise ConfigError(errors[0] if errors else f"{where}: bad value {quote(value)}")
    if isinstance(annotation, type) and dataclasses.is_dataclass(annotation):
        return from_dict(annotation, value, where)
    if origin is list:
        if not isinstance(value, list):
            raise ConfigError(f"{where} must be a list, got {quote(value)}")
        (item_type,) = typing.get_args(annotation)
        return [
            _check_type(item, item_type, f"{where}[{i}]", value_range)
            for i, item in enumerate(value)
        ]
    if annotation is dict or origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{where} must be a mapping, got {quote(value)}")
        return dict(value)
    if annotation is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value) if abs(value) <= MAX_INTEGER else math.inf  # 10**400 is not a float
    if annotation is int and isinstance(value, float) and value.is_integer():
        value = int(value)  # scientific notation: budget.episodes=1e5
    if annotation in (int, float, str, bool):
        if isinstance(value, bool) and annotation is not bool or not isinstance(value, annotation):
            raise ConfigError(f"{where} must be {annotation.__name__}, got {quote(value)}")
        if annotation in (int, float):
            check_range(value, where, value_range)
        return value
    raise ConfigError(f"{where}: unsupported type {annotation!r}")


def check_range(value: float, where: str, value_range: Range = ANY_NUMBER) -> None:
    """The one range check: ``value`` (at ``where``) is finite and in ``value_range``, the
    :class:`agents.catalogue.Range` its field declares."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"{where} must be a finite number, got {value}")
    refusal = value_range.refusal(value)
    if refusal is not None:
        raise ConfigError(f"{where} {refusal}, got {quote(value)}")


def check_field_ranges(config: Any, where: str) -> None:
    """Check each number of dataclass instance ``config`` against the range its field
    declares: the same refusal for a config built in Python as for one read from a file."""
    for config_field in dataclasses.fields(config):
        value = getattr(config, config_field.name)
        if RANGE in config_field.metadata and isinstance(value, (int, float)):
            if not isinstance(value, bool):
                check_range(value, f"{where}.{config_field.name}", config_field.metadata[RANGE])


def from_dict(
    cls: type, data: Any, where: str = "config", ranges: Mapping[str, Range] | None = None
) -> Any:
    """Build dataclass ``cls`` from ``data``, naming any bad key and the allowed ones; each
    number checked against its field's range (declared on the field, else in ``ranges``)."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{where} must be a mapping, got {quote(data)}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted((key for key in data if key not in fields), key=str)
    if unknown:
        prefix = f"{where}." if where != "config" else ""
        names = [
            prefix + (key if isinstance(key, str) else quote(key))[:QUOTE_CHARS]
            for key in unknown[:5]
        ]
        named = f"{names}" + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        raise ConfigError(
            f"unknown key(s) {named}; allowed keys{' of ' + where if where != 'config' else ''}: "
            f"{sorted(fields)}"
        )
    hints = typing.get_type_hints(cls)
    values = {}
    for name, value in data.items():
        key = name if where == "config" else f"{where}.{name}"
        value_range = field_range(fields[name], ranges or {})
        values[name] = _check_type(value, hints[name], key, value_range)
    try:
        return cls(**values)  # a trainer config's own checks (__post_init__) run here
    except ConfigError as error:
        raise ConfigError(one_line(str(error))) from None
    except (ValueError, TypeError) as error:
        raise ConfigError(f"{where}: {one_line(str(error))}") from None


def apply_override(data: dict, override: str) -> None:
    """Apply one ``dotted.key=yaml_value`` override to a nested dict, in place."""
    if "=" not in override:
        raise ConfigError(
            f"override {quote(override)} must look like key=value (e.g. budget.episodes=5000)"
        )
    key, _, raw = override.partition("=")
    value = read_yaml(raw, f"override {quote(key)}") if raw else None
    parts = key.strip().split(".")
    node = data
    for depth, part in enumerate(parts[:-1]):
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigError(
                f"override {quote(key)}: {'.'.join(parts[: depth + 1])} is not a section"
            )
        node = child
    node[parts[-1]] = value


def load_config(
    path: str | Path | None,
    overrides: Sequence[str] = (),
    validate: Callable[[RunConfig], Any] | None = None,
) -> RunConfig:
    """Read a YAML config (or start from the defaults), apply overrides, validate.

    ``path`` is a YAML file, or the name of a shipped config (``"cfr_kuhn"``:
    :func:`resolve_config_path`), from any working directory. ``validate`` replaces
    :meth:`RunConfig.validate` (``train.py`` gives :func:`agents.runs.validate_run`, which
    checks the trainer's fit too); its errors, like the config's, name ``path``."""
    return typed_config(config_data(path, overrides), path, bool(overrides), validate)


def typed_config(
    data: dict,
    path: str | Path | None = None,
    overridden: bool = False,
    validate: Callable[[RunConfig], Any] | None = None,
) -> RunConfig:
    """The config of ``data`` (:func:`config_data`'s values), validated as by
    :func:`load_config`; errors name ``path`` (and say the values were ``overridden``)."""

    def typed() -> RunConfig:
        config = from_dict(RunConfig, data)
        if validate is None:
            return config.validate()
        validate(config)
        return config

    if path is None:
        return typed()
    try:
        return typed()
    except ConfigError as error:
        raise ConfigError(
            f"{path}" + (" (with overrides)" if overridden else "") + f": {error}"
        ) from None


def config_data(path: str | Path | None, overrides: Sequence[str] = ()) -> dict:
    """The YAML config's values with the overrides applied, not yet validated."""
    data: dict = {}
    if path is not None:
        path = resolve_config_path(path)
        size = path.stat().st_size
        if size > MAX_CONFIG_BYTES:
            raise ConfigError(f"{path}: {size:,} bytes; the limit is {MAX_CONFIG_BYTES:,}")
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as error:
            raise ConfigError(f"{path}: not UTF-8 text (byte {error.start})") from None
        data = read_yaml(text, str(path)) or {}
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: the top level must be a mapping of keys")
    for override in overrides:
        apply_override(data, override)
    return data


def resolve_config_path(value: str | Path) -> Path:
    """The config file ``value`` names: an existing file as given; a bare name (no ``/``, no
    ``.yaml``) as ``configs/NAME.yaml`` under the working directory when there is one, else
    the shipped config of that name (the checkout's ``configs/``, or the copies an installed
    package keeps in ``agents/_shipped/configs``). A one-line :class:`ConfigError` otherwise."""
    text = str(value)
    check_path_length(text, "config file")
    path = Path(text)
    if path.is_file():
        return path
    bare = not ({"/", "\\"} & set(text)) and not text.endswith((".yaml", ".yml"))
    if not bare:
        if path.exists():
            raise ConfigError(f"config file {quote(text, PATH_CHARS)} is not a regular file")
        raise ConfigError(f"config file {quote(text, PATH_CHARS)} not found")
    local = Path("configs") / f"{text}.yaml"
    if local.is_file():
        return local
    from agents.cli import shipped_configs

    try:
        shipped = shipped_configs()
    except FileNotFoundError:
        shipped = {}
    if text in shipped:
        return shipped[text]
    raise ConfigError(
        f"config file {quote(text, PATH_CHARS)} not found, and no shipped config has that name "
        f"(shipped: {', '.join(shipped) or 'none here'})"
    )


def config_from_dict(data: dict) -> RunConfig:
    return from_dict(RunConfig, data).validate()
