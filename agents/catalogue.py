"""The trainer catalogue: every fact about a trainer (and an agent spec) in one entry.

A trainer is known to the rest of the project through its :class:`TrainerEntry` alone:
``trainer.name`` and the Learner class (:data:`TRAINERS`), the ranges of its config's
fields, what it needs from a game and the switches that widen its fit
(:mod:`agents.capabilities`, ``train.py --list``), the modules whose agents its runs save
(:mod:`agents.checkpoint`), whether it takes a Ray cluster's ``--address`` and whether it
plays the loop's own self-play step (:mod:`agents.loop`'s ``vector_self_play``). An agent
spec (``<prefix>:<argument>`` of ``evaluate.py``) is a :class:`SpecEntry`: the module that
registers its builder (:mod:`agents.search`), its forms in the help texts
(:mod:`agents.specs`, :mod:`agents.leaderboard.specs`) and what it needs from a game.

Adding a trainer is its module, its entry (:func:`register_trainer`, or a line in
:data:`PROJECT_TRAINERS` for the project's own) and a test, with a config if it ships one
(``train.py trainer.name=... env.name=...`` trains without one); nothing else names it.
The catalogue imports no torch and no trainer: reading it (``train.py --list``, the fit
check) answers before torch loads.

Value ranges are declared once per field: ``field(metadata={RANGE: POSITIVE})`` on a config
dataclass, or an entry's ``ranges`` (field name -> :class:`Range`) for a trainer whose config
declares none; :func:`agents.config.from_dict` checks them, in one function.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from hiddenenvs.analysis.capabilities import COUNT_LIMIT, GameOffers
from hiddenenvs.registries import Registry

# ---- value ranges -------------------------------------------------------------------------
MAX_INTEGER = 2**62  # any integer value (seeds, budgets, sizes)
MAX_SEED = 2**63 - 1  # torch.manual_seed takes [-2**63, 2**64); numpy's generators >= 0
RANGE = "range"  # the metadata key of a field's Range


@dataclass(frozen=True)
class Range:
    """The numbers a config field takes: at least (``low_open``: above) ``low`` and at most
    (``high_open``: below) ``high`` where given. Every number must also be finite, and
    every integer is at least 0 and at most ``max_integer``."""

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    max_integer: int = MAX_INTEGER
    max_integer_text: str = "2**62"

    def refusal(self, value: float) -> str | None:
        """Why ``value`` is out of range (``"must be ..."``), or None when it is in range."""
        if isinstance(value, int):
            low = (
                0
                if self.low is None
                else math.floor(self.low) + 1
                if self.low_open
                else math.ceil(self.low)
            )
            if value < max(low, 0):
                return f"must be >= {max(low, 0)}"
            if value > self.max_integer:
                return f"must be at most {self.max_integer_text}"
        below = self.low is not None and (value <= self.low if self.low_open else value < self.low)
        above = self.high is not None and (
            value >= self.high if self.high_open else value > self.high
        )
        if not (below or above):
            return None
        if self.high is None:
            return f"must be {'>' if self.low_open else '>='} {self.low:g}"
        if self.low is None:
            return f"must be {'<' if self.high_open else '<='} {self.high:g}"
        return (
            f"must be in {'(' if self.low_open else '['}{self.low:g}, {self.high:g}"
            f"{')' if self.high_open else ']'}"
        )


ANY_NUMBER = Range()  # finite; an integer in 0..2**62
UNIT_INTERVAL = Range(0, 1)
POSITIVE = Range(0, low_open=True)  # a float > 0, an integer >= 1
SEED = Range(max_integer=MAX_SEED, max_integer_text="2**63 - 1")


def field_range(config_field: dataclasses.Field, ranges: Mapping[str, Range] = {}) -> Range:
    """The range a field declares (its metadata), else the one ``ranges`` (a trainer entry's)
    gives its name, else :data:`ANY_NUMBER`."""
    declared = config_field.metadata.get(RANGE)
    if declared is not None:
        return declared
    return ranges.get(config_field.name, ANY_NUMBER)


# ---- what an algorithm needs from a game ----------------------------------------------------
@dataclass(frozen=True)
class Needs:
    """What an algorithm needs from a game (see :mod:`agents.capabilities`); ``hint`` says
    how a refused user can make it fit (a config switch), when there is a way."""

    max_tree_nodes: int | None = None
    max_external_sampling_nodes: int | None = None
    explicit_chance: bool = False
    two_player_zero_sum: bool = False
    belief_sampler: bool = False
    hint: str = ""

    def missing(self, offers: GameOffers) -> list[str]:
        """What ``offers`` lacks, one short phrase each (empty: it fits)."""
        lacking = []
        if self.two_player_zero_sum and not offers.two_player_zero_sum:
            lacking.append(
                f"a two-player zero-sum game ({offers.env} has {offers.num_players} "
                f"player(s), {offers.utility} utility)"
            )
        if self.explicit_chance and offers.chance == "sampled":
            lacking.append(
                "chance outcomes with probabilities (this game samples chance inside the state)"
            )
        if self.belief_sampler and not offers.belief_sampler:
            lacking.append("a belief sampler (histories consistent with an information state)")
        if self.max_tree_nodes is not None and not offers.tree.fits(self.max_tree_nodes):
            lacking.append(
                f"a game tree of at most {self.max_tree_nodes:,} nodes (this one: {offers.tree})"
            )
        if (
            self.max_external_sampling_nodes is not None
            and offers.chance != "sampled"
            and offers.external_sampling_nodes > self.max_external_sampling_nodes
        ):
            lacking.append(
                f"external-sampling iterations of at most {self.max_external_sampling_nodes:,} nodes "
                f"(this game's: about {offers.external_sampling_nodes:.2g}, estimated; os-mccfr samples "
                f"one path per iteration instead)"
            )
        return lacking


# The largest tree CFR (and the MCCFR tree backend) is offered: enumerating it into arrays runs
# at about 30,000 nodes a second on one core, a build of about a minute before the first iteration.
# It is the count's cap (offers count trees exactly up to it, no further).
CFR_MAX_TREE_NODES = COUNT_LIMIT

# External sampling explores every action of the traverser: on a game where one iteration
# visits more nodes than this (at some 10,000-100,000 model steps a second), a step takes minutes.
ES_MAX_ITERATION_NODES = 100_000


def any_game(params: Mapping[str, Any]) -> Needs:
    """The needs of a trainer that plays through the env alone: none."""
    return Needs()


# ---- the entries --------------------------------------------------------------------------------
class LearnerClass(Protocol):
    """What the catalogue's users read of a trainer's class: an :class:`agents.base.Learner`
    subclass, built as ``cls(game, config, seed)`` from its typed ``CONFIG_CLASS`` (declared
    here so that the catalogue imports no torch)."""

    CONFIG_CLASS: type

    def __call__(self, game: Any, config: Any, seed: int) -> Any: ...


@dataclass(frozen=True)
class TrainerEntry:
    """Everything the project knows about one trainer (see the module docstring)."""

    name: str  # trainer.name
    # Its agents.base.Learner subclass (with CONFIG_CLASS), or "module:Class".
    learner: str | LearnerClass
    method: str = ""  # one line for the README's table: the method and its paper
    # Its needs from a game, given its raw trainer.params (agents.capabilities).
    needs: Callable[[Mapping[str, Any]], Needs] = any_game
    # Settings that widen what it fits, listed when only they make it fit.
    switches: Mapping[str, Any] = field(default_factory=dict)
    # Ranges of its config's fields that the config class does not declare itself.
    ranges: Mapping[str, Range] = field(default_factory=dict)
    # Modules whose import registers the Agent classes its runs save (agents.checkpoint).
    agent_modules: tuple[str, ...] = ()
    # The trainer.params key taking a Ray cluster's address (train.py --address), if any.
    address_param: str | None = None
    # Whether it keeps the loop's self-play step (so vector_self_play: true applies), and,
    # when it does not, how it plays through hiddenenvs.vector instead (if it can).
    loop_self_play: bool = False
    vector_hint: str = ""


@dataclass(frozen=True)
class SpecEntry:
    """One agent-spec prefix of ``evaluate.py`` / :func:`agents.load_agent`: the module whose
    import registers its builder (``@register_spec``; None: resolved in :mod:`agents.specs`
    itself), its forms as the help texts list them, and what it needs from a game (None: it
    acts from observations alone)."""

    prefix: str
    module: str | None
    forms: str
    needs: Needs | None = None


def _mccfr_needs(params: Mapping[str, Any], external_sampling: bool) -> Needs:
    # The model backend walks any game with chance probabilities; the tree backend enumerates it.
    per_iteration = ES_MAX_ITERATION_NODES if external_sampling else None
    if params.get("backend", "auto") == "tree":
        return Needs(
            explicit_chance=True,
            max_tree_nodes=CFR_MAX_TREE_NODES,
            max_external_sampling_nodes=per_iteration,
            hint="backend: model walks the game model instead of enumerating it",
        )
    return Needs(explicit_chance=True, max_external_sampling_nodes=per_iteration)


def _mcnfsp_needs(params: Mapping[str, Any]) -> Needs:
    # The best-response search starts from histories sampled from the seat's beliefs (the
    # paper's self-play), or from the true state when told to (combat: its chance is sampled
    # inside the state, so no belief sampler exists; the search then sees hidden information).
    if params.get("search_from", "beliefs") == "true_state":
        return Needs()
    return Needs(
        belief_sampler=True,
        hint="trainer.params.search_from: true_state searches from the true state",
    )


def _rebel_needs(params: Mapping[str, Any]) -> Needs:
    # Public belief states are built from chance probabilities and the belief sampler; the
    # gadget re-solve is defined for two-player zero-sum games only.
    return Needs(
        explicit_chance=True,
        belief_sampler=True,
        two_player_zero_sum=params.get("resolve", "frontier") == "gadget",
    )


def _cfr_needs(params: Mapping[str, Any]) -> Needs:
    return Needs(max_tree_nodes=CFR_MAX_TREE_NODES, explicit_chance=True)


def _oos_needs(params: Mapping[str, Any]) -> Needs:
    # OOS samples chance by its probabilities and targets histories consistent with the
    # searcher's information state.
    return Needs(explicit_chance=True, belief_sampler=True)


# Ranges of fields whose config classes (in the trainer modules) do not declare them yet;
# a field that declares its own (field metadata) needs no line here. NFSP's family's:
_NFSP_RANGES = {
    "hidden_sizes": POSITIVE,
    "anticipatory": UNIT_INTERVAL,
    "replay_capacity": POSITIVE,
    "reservoir_capacity": POSITIVE,
    "batch_size": POSITIVE,
    "rl_learning_rate": POSITIVE,
    "sl_learning_rate": POSITIVE,
    "discount": UNIT_INTERVAL,
}

# The project's trainers, in the order train.py --list and the tables show them.
PROJECT_TRAINERS = (
    TrainerEntry(
        "nfsp",
        "agents.nfsp:NFSP",
        "Neural Fictitious Self-Play (Heinrich & Silver 2016)",
        ranges={**_NFSP_RANGES, "epsilon_start": UNIT_INTERVAL, "epsilon_end": UNIT_INTERVAL},
        agent_modules=("agents.nfsp",),
        address_param="ray_address",
        loop_self_play=True,
    ),
    TrainerEntry(
        "anfsp",
        "agents.anfsp:ANFSP",
        "asynchronous NFSP on Ray actors, one machine or a cluster",
        ranges={
            **{k: v for k, v in _NFSP_RANGES.items() if k != "replay_capacity"},
            "average_policy_ema": UNIT_INTERVAL,
        },
        address_param="address",
        vector_hint="ANFSP's actors: trainer.params.vector_envs: true",
    ),
    TrainerEntry(
        "mcnfsp",
        "agents.mcnfsp:MCNFSP",
        "NFSP with a tree-search best response (Zhang et al. 2019)",
        needs=_mcnfsp_needs,
        address_param="ray_address",
        switches={"search_from": "true_state"},
        ranges={
            **{k: v for k, v in _NFSP_RANGES.items() if k != "discount"},
            "conv_channels": POSITIVE,
        },
    ),
    TrainerEntry(
        "exit_oos",
        "agents.exit_oos:ExItOOS",
        "expert iteration with an Online Outcome Sampling expert (Kitchen & Benedetti 2018)",
        needs=_oos_needs,
        ranges={"hidden_sizes": POSITIVE, "batch_size": POSITIVE, "learning_rate": POSITIVE},
        address_param="ray_address",
    ),
    TrainerEntry(
        "cfr",
        "agents.cfr:CFRLearner",
        "counterfactual regret minimisation on the enumerated tree (Zinkevich et al. 2007)",
        needs=_cfr_needs,
    ),
    TrainerEntry(
        "cfr+",
        "agents.cfr:CFRPlusLearner",
        "CFR+: regret matching+, alternating updates, linear averaging (Tammelin 2014)",
        needs=_cfr_needs,
    ),
    TrainerEntry(
        "rebel",
        "agents.rebel:ReBeLLearner",
        "ReBeL: belief-weighted subgames re-solved by CFR+ with a value network (Brown et al. 2020)",
        needs=_rebel_needs,
        ranges={
            "hidden_size": POSITIVE,
            "batch_size": POSITIVE,
            "buffer_size": POSITIVE,
            "learning_rate": POSITIVE,
        },
        agent_modules=("agents.rebel",),
        address_param="ray_address",
    ),
    TrainerEntry(
        "es-mccfr",
        "agents.search.external_sampling_mccfr:ExternalSamplingMCCFRLearner",
        "external-sampling MCCFR (Lanctot et al. 2009)",
        needs=lambda params: _mccfr_needs(params, external_sampling=True),
    ),
    TrainerEntry(
        "os-mccfr",
        "agents.search.outcome_sampling_mccfr:OutcomeSamplingMCCFRLearner",
        "outcome-sampling MCCFR (Lanctot et al. 2009)",
        needs=lambda params: _mccfr_needs(params, external_sampling=False),
    ),
)

_BELIEFS = Needs(belief_sampler=True)

# The agent specs, in the order the help texts list them. The kinds with needs search or
# solve on the game model; the others (random, scripted bots, agent files, run directories)
# act from observations alone.
PROJECT_SPECS = (
    SpecEntry("random", None, "'random'"),
    SpecEntry(
        "cfr+",
        None,
        "'cfr+:<iterations>' (or 'cfr:<iterations>')",
        Needs(max_tree_nodes=CFR_MAX_TREE_NODES, explicit_chance=True),
    ),
    SpecEntry("cfr", None, "", Needs(max_tree_nodes=CFR_MAX_TREE_NODES, explicit_chance=True)),
    SpecEntry(
        "es-mccfr",
        "agents.search.external_sampling_mccfr",
        "'es-mccfr:<iterations>'",
        Needs(explicit_chance=True, max_external_sampling_nodes=ES_MAX_ITERATION_NODES),
    ),
    SpecEntry(
        "os-mccfr",
        "agents.search.outcome_sampling_mccfr",
        "'os-mccfr:<iterations>'",
        Needs(explicit_chance=True),
    ),
    SpecEntry(
        "oos",
        "agents.search.oos",
        "'oos:<iterations>' or 'oos:<seconds>s'",
        Needs(explicit_chance=True, belief_sampler=True),
    ),
    SpecEntry(
        "ismcts", "agents.search.ismcts", "'ismcts:<iterations>' or 'ismcts:<seconds>s'", _BELIEFS
    ),
    SpecEntry(
        "alphabeta",
        "agents.search.minimax",
        "'alphabeta:<depth>' / 'minimax' / 'negamax' / 'maxn:<seconds>s' / 'softmaxn'",
        _BELIEFS,
    ),
    SpecEntry("minimax", "agents.search.minimax", "", _BELIEFS),
    SpecEntry("maxn", "agents.search.minimax", "", _BELIEFS),
    SpecEntry("mc", "agents.search.montecarlo", "'mc:<seconds>s'", _BELIEFS),
    SpecEntry("mc-memory", "agents.search.montecarlo", "'mc-memory:<playouts>'", _BELIEFS),
    SpecEntry("uct", "agents.search.montecarlo", "'uct:<seconds>s[,c=40]'", _BELIEFS),
    SpecEntry(
        "rebel",
        "agents.rebel",
        "'rebel:<iterations>' or 'rebel:<seconds>s[,depth=2]'",
        Needs(explicit_chance=True, two_player_zero_sum=True, belief_sampler=True),
    ),
)
FILE_SPEC_FORMS = "an agent file written by Agent.save(), a run checkpoint file or a run directory"
# Resolved by the leaderboard (agents.leaderboard.specs), from agents.scripted's bots per env.
SCRIPTED_SPEC_FORMS = "'scripted:<name>' for a scripted bot"

# ---- the registries -------------------------------------------------------------------------------
# Trainer name -> its entry.
TRAINER_ENTRIES: Registry[TrainerEntry] = Registry(
    "trainer", {entry.name: entry for entry in PROJECT_TRAINERS}
)
# Trainer name (trainer.name) -> its Learner class, imported on lookup (so that reading a
# config imports no torch).
TRAINERS: Registry[LearnerClass] = Registry(
    "trainer", {entry.name: entry.learner for entry in PROJECT_TRAINERS}
)


def register_trainer(name: str | TrainerEntry, trainer: LearnerClass | str | None = None) -> None:
    """Make ``trainer.name: <name>`` train ``trainer``: an :class:`agents.base.Learner`
    subclass with a ``CONFIG_CLASS``, or its ``"module:Class"`` (imported when a run asks
    for it); a trainer registered so fits every game. Or register a whole
    :class:`TrainerEntry` (its needs, switches, ranges ...). ValueError if the name is taken
    by another trainer, or by the same trainer with other facts."""
    if isinstance(name, TrainerEntry):
        entry = name
    elif trainer is None:
        raise TypeError("register_trainer(name, trainer): give the trainer, or an entry alone")
    else:
        entry = TrainerEntry(name, trainer)
    known = TRAINER_ENTRIES.get(entry.name)
    TRAINERS.register(entry.name, entry.learner)  # refuses another trainer under the name
    if known is None:
        TRAINER_ENTRIES.register(entry.name, entry)
    elif (
        isinstance(name, TrainerEntry)
        and dataclasses.replace(entry, learner=known.learner) != known
    ):
        raise ValueError(f"trainer {entry.name!r} is already registered with other facts")


def trainer_entry(name: str) -> TrainerEntry:
    """The entry of trainer ``name``; an unknown name raises
    :class:`hiddenenvs.registries.UnknownNameError` (a KeyError and a ValueError)."""
    return TRAINER_ENTRIES[name]


def trainer_names() -> list[str]:
    """The registered trainers, the project's first in their catalogue order."""
    return list(TRAINER_ENTRIES)


SPEC_ENTRIES: dict[str, SpecEntry] = {entry.prefix: entry for entry in PROJECT_SPECS}


def spec_modules() -> tuple[str, ...]:
    """The modules whose import registers the catalogue's spec builders, each once."""
    return tuple(dict.fromkeys(e.module for e in SPEC_ENTRIES.values() if e.module is not None))


def spec_forms() -> str:
    """Every spec form, as the help texts list them."""
    forms = [entry.forms for entry in SPEC_ENTRIES.values() if entry.forms]
    return ", ".join([*forms, FILE_SPEC_FORMS])


def spec_needs() -> dict[str, Needs]:
    """Spec prefix -> what it needs from a game, for the specs that search or solve."""
    return {prefix: e.needs for prefix, e in SPEC_ENTRIES.items() if e.needs is not None}


def agent_modules() -> tuple[str, ...]:
    """The trainers' modules that define the Agent classes their runs save."""
    return tuple(module for entry in PROJECT_TRAINERS for module in entry.agent_modules)


# ---- the README's trainer table -----------------------------------------------------------
README_TABLE_START = "<!-- trainers-table: written by python -m agents.catalogue --readme -->"
README_TABLE_END = "<!-- /trainers-table -->"


def _module_link(root: Path, learner: str | LearnerClass) -> str:
    """``[agents/nfsp.py](agents/nfsp.py)``: the file (or package folder) defining a learner."""
    module = learner.split(":")[0] if isinstance(learner, str) else learner.__module__
    relative = Path(*module.split("."))
    path = f"{relative}/" if (root / relative).is_dir() else f"{relative}.py"
    return f"[{path}]({path})"


def _configs_cell(page: str, stems: list[str]) -> str:
    """The shipped configs of a trainer, ``nfsp_*.yaml`` (9) for those named after its page."""
    family = [s for s in stems if s.startswith(f"{page}_")]
    if len(family) > 1:
        parts = [f"`{page}_*.yaml` ({len(family)})"]
        rest = [s for s in stems if s not in family]
    else:
        parts, rest = [], stems
    return ", ".join(parts + [f"`{stem}.yaml`" for stem in rest]) or "none shipped"


def readme_trainer_table(root: Path) -> str:
    """The README's trainer table, from :data:`PROJECT_TRAINERS` and the configs in
    ``root/configs`` (each listed under the trainer its ``trainer.name`` names)."""
    import yaml

    by_trainer: dict[str | None, list[str]] = {}  # None: a config without trainer.name
    for config in sorted((root / "configs").glob("*.yaml")):
        trainer = (yaml.safe_load(config.read_text()).get("trainer") or {}).get("name")
        by_trainer.setdefault(trainer, []).append(config.stem)
    lines = [
        "| `trainer.name` | method | module | configs |",
        "|---|---|---|---|",
    ]
    for entry in PROJECT_TRAINERS:
        page = entry.name.replace("+", "_plus").replace("-", "_")
        lines.append(
            f"| `{entry.name}` | {entry.method} | {_module_link(root, entry.learner)} | "
            f"{_configs_cell(page, by_trainer.get(entry.name, []))} |"
        )
    return "\n".join(lines)


def with_readme_table(readme: str, table: str) -> str:
    """``readme`` with the text between its table markers replaced by ``table``."""
    start, end = readme.index(README_TABLE_START), readme.index(README_TABLE_END)
    return f"{readme[: start + len(README_TABLE_START)]}\n{table}\n{readme[end:]}"


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="Tables generated from the trainer catalogue.")
    parser.add_argument(
        "--readme", action="store_true", help="rewrite README.md's trainer table in place"
    )
    arguments = parser.parse_args()
    root = Path(__file__).resolve().parent.parent
    if arguments.readme:
        readme = root / "README.md"
        readme.write_text(with_readme_table(readme.read_text(), readme_trainer_table(root)))
    else:
        print(readme_trainer_table(root))
