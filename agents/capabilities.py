"""What each trainer needs from a game, what each game offers, and the check between them.

Every trainer declares its :class:`Needs` in :data:`TRAINER_NEEDS` (some depend on the
trainer's config, e.g. MCNFSP searching from the true state needs no belief sampler; the
table lives here, not in the trainer modules, so the check runs without importing torch and
answers in well under 2 s); every game offers a :class:`hiddenenvs.analysis.capabilities.GameOffers` (players, dynamics, chance,
utility, belief sampling, tree size counted up to a cap). ``train.py``
and ``evaluate.py`` call :func:`check_trainer` / :func:`check_agent_spec` before any work
and refuse a pair that does not fit with one line naming the trainer, the env, what is
missing and which trainers do fit.

=====================  =========================================================================
Need                   Offered when
=====================  =========================================================================
``max_tree_nodes``     the game tree (histories) has at most that many nodes: counted exactly up
                       to 2,000,000 (refused without counting when a fixed-seed Knuth estimate
                       puts it ten times above), the same answer every time
``explicit_chance``    chance nodes list their outcomes with probabilities (deterministic games
                       too); combat samples chance inside the state and offers none
``max_external_sampling_nodes`` one external-sampling MCCFR iteration (every action of the
                       traverser, one sample elsewhere) visits at most that many nodes (Knuth's
                       estimate from a fixed seed: the same every time)
``two_player_zero_sum`` two players whose returns sum to a constant
``belief_sampler``     histories consistent with an information state can be sampled
                       (explicit chance, or the game's own sampler)
=====================  =========================================================================

``python train.py --list`` prints the whole trainer x env table from these declarations.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import hiddenenvs
from hiddenenvs.analysis.capabilities import COUNT_LIMIT, GameOffers, game_offers
from hiddenenvs.game import Game


@dataclass(frozen=True)
class Needs:
    """What an algorithm needs from a game (see the module docstring); ``hint`` says how a
    refused user can make it fit (a config switch), when there is a way."""

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


class CapabilityError(ValueError):
    """A trainer, agent or evaluation that cannot run on a game; one line says why."""


@functools.lru_cache(maxsize=64)
def _offers_of(spec_name: str, params_items: tuple) -> GameOffers:
    return game_offers(hiddenenvs.load_game(spec_name, **dict(params_items)))


def offers_for(env: str | Game, params: dict[str, Any] | None = None) -> GameOffers:
    """The offers of a registered env (cached per name and parameters) or of a game."""
    if isinstance(env, Game):
        return game_offers(env)
    return _offers_of(env, tuple(sorted((params or {}).items())))


# The largest tree CFR (and the MCCFR tree backend) is offered: enumerating it into arrays runs
# at about 30,000 nodes a second on one core, a build of about a minute before the first iteration.
# It is the count's cap (offers count trees exactly up to it, no further).
CFR_MAX_TREE_NODES = COUNT_LIMIT


# External sampling explores every action of the traverser: on a game where one iteration
# visits more nodes than this (at some 10,000-100,000 model steps a second), a step takes minutes.
ES_MAX_ITERATION_NODES = 100_000


def _mccfr_needs(params: dict[str, Any], external_sampling: bool) -> Needs:
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


def _mcnfsp_needs(params: dict[str, Any]) -> Needs:
    # The best-response search starts from histories sampled from the seat's beliefs (the
    # paper's self-play), or from the true state when told to (combat: its chance is sampled
    # inside the state, so no belief sampler exists; the search then sees hidden information).
    if params.get("search_from", "beliefs") == "true_state":
        return Needs()
    return Needs(
        belief_sampler=True,
        hint="trainer.params.search_from: true_state searches from the true state",
    )


def _rebel_needs(params: dict[str, Any]) -> Needs:
    # Public belief states are built from chance probabilities and the belief sampler; the
    # gadget re-solve is defined for two-player zero-sum games only.
    return Needs(
        explicit_chance=True,
        belief_sampler=True,
        two_player_zero_sum=params.get("resolve", "frontier") == "gadget",
    )


# trainer name -> its needs, from its raw ``trainer.params`` (see the module docstring).
TRAINER_NEEDS: dict[str, Any] = {
    "nfsp": lambda params: Needs(),  # self-play through the env: any game
    "anfsp": lambda params: Needs(),
    "mcnfsp": _mcnfsp_needs,
    # OOS samples chance by its probabilities and targets histories consistent with the
    # searcher's information state.
    "exit_oos": lambda params: Needs(explicit_chance=True, belief_sampler=True),
    "cfr": lambda params: Needs(max_tree_nodes=CFR_MAX_TREE_NODES, explicit_chance=True),
    "cfr+": lambda params: Needs(max_tree_nodes=CFR_MAX_TREE_NODES, explicit_chance=True),
    "rebel": _rebel_needs,
    "es-mccfr": lambda params: _mccfr_needs(params, external_sampling=True),
    "os-mccfr": lambda params: _mccfr_needs(params, external_sampling=False),
}


def trainer_needs(trainer: str, trainer_params: dict[str, Any] | None = None) -> Needs:
    """The needs a trainer declares for its params (defaults where ``trainer_params`` is None);
    a trainer added by :func:`agents.config.register_trainer` declares none."""
    if trainer not in TRAINER_NEEDS:
        from agents.config import TRAINERS

        if trainer in TRAINERS:
            return Needs()
        raise CapabilityError(f"unknown trainer {trainer!r}; trainers: {', '.join(TRAINER_NEEDS)}")
    return TRAINER_NEEDS[trainer](trainer_params or {})


# Settings that widen what a trainer fits (listed when only they make it fit).
TRAINER_SWITCHES: dict[str, dict[str, Any]] = {
    "mcnfsp": {"search_from": "true_state"},
}


def fitting_trainers(offers: GameOffers) -> list[str]:
    """The trainers that fit a game with their default params, or with a switch (named)."""
    fits = []
    for name in TRAINER_NEEDS:
        switch = TRAINER_SWITCHES.get(name, {})
        if not trainer_needs(name).missing(offers):
            fits.append(name)
        elif switch and not trainer_needs(name, switch).missing(offers):
            fits.append(
                f"{name} (" + ", ".join(f"trainer.params.{k}: {v}" for k, v in switch.items()) + ")"
            )
    return fits


def check_trainer(
    trainer: str, trainer_params: dict[str, Any], env: str, env_params: dict[str, Any]
) -> GameOffers:
    """Refuse (:class:`CapabilityError`) a trainer that cannot train on an env; else the offers."""
    offers = offers_for(env, env_params)
    needs = trainer_needs(trainer, trainer_params)
    lacking = needs.missing(offers)
    if lacking:
        fits = fitting_trainers(offers)
        hint = f" ({needs.hint})" if needs.hint else ""
        raise CapabilityError(
            f"trainer {trainer} cannot train on {offers.label}: it needs {'; '.join(lacking)}{hint}. "
            f"Trainers that fit {offers.label}: {', '.join(fits) if fits else 'none'}"
        )
    return offers


def check_exact_evaluation(env: str, env_params: dict[str, Any], max_tree_nodes: int) -> None:
    """Refuse ``evaluation.exact: yes`` on a game whose tree is larger than ``max_tree_nodes``."""
    offers = offers_for(env, env_params)
    lacking = Needs(max_tree_nodes=max_tree_nodes, explicit_chance=True).missing(offers)
    if lacking:
        raise CapabilityError(
            f"evaluation.exact: yes on {offers.label} needs {'; '.join(lacking)}; use evaluation.exact: auto "
            f"(exact where small enough, else returns against random) or raise evaluation.max_tree_nodes"
        )


# ---- agent specs of evaluate.py ------------------------------------------------------------------
# The spec kinds of agents.baselines that search or solve on the game model, and what they need.
# Other kinds (random, scripted, agent files, run directories) act from observations alone.
_SPEC_NEEDS: dict[str, Needs] = {
    "cfr": Needs(max_tree_nodes=CFR_MAX_TREE_NODES, explicit_chance=True),
    "cfr+": Needs(max_tree_nodes=CFR_MAX_TREE_NODES, explicit_chance=True),
    "es-mccfr": Needs(explicit_chance=True, max_external_sampling_nodes=ES_MAX_ITERATION_NODES),
    "os-mccfr": Needs(explicit_chance=True),
    "oos": Needs(explicit_chance=True, belief_sampler=True),
    "ismcts": Needs(belief_sampler=True),
    "rebel": Needs(explicit_chance=True, two_player_zero_sum=True, belief_sampler=True),
    "alphabeta": Needs(belief_sampler=True),
    "minimax": Needs(belief_sampler=True),
    "maxn": Needs(belief_sampler=True),
    "mc": Needs(belief_sampler=True),
    "mc-memory": Needs(belief_sampler=True),
    "uct": Needs(belief_sampler=True),
}


def check_agent_spec(spec: str, env: str, env_params: dict[str, Any]) -> None:
    """Refuse an ``evaluate.py`` agent spec that cannot play an env (before any match)."""
    kind = spec.split(":", 1)[0]
    needs = _SPEC_NEEDS.get(kind)
    if needs is None:
        return
    offers = offers_for(env, env_params)
    lacking = needs.missing(offers)
    if lacking:
        fitting = [name for name, other in _SPEC_NEEDS.items() if not other.missing(offers)]
        raise CapabilityError(
            f"agent {spec!r} cannot play {offers.label}: it needs {'; '.join(lacking)}. Search/solver agents "
            f"that fit: {', '.join(fitting) if fitting else 'none'} (random, scripted and trained agents always do)"
        )


def capability_table(envs: list[tuple[str, dict[str, Any]]] | None = None) -> list[dict[str, Any]]:
    """One row per env: its offers and, per trainer, ``"fits"`` or what is missing (and the
    switch that makes it fit, when one does: MCNFSP's ``search_from: true_state`` on combat)."""
    envs = envs if envs is not None else [(name, {}) for name in hiddenenvs.registry.REGISTRY]
    rows = []
    for env, params in envs:
        offers = offers_for(env, params)
        cells = {}
        for trainer in TRAINER_NEEDS:
            lacking = trainer_needs(trainer).missing(offers)
            cells[trainer] = "fits" if not lacking else "; ".join(lacking)
            switch = TRAINER_SWITCHES.get(trainer, {})
            if lacking and switch and not trainer_needs(trainer, switch).missing(offers):
                cells[trainer] += "; fits with " + ", ".join(
                    f"trainer.params.{key}: {value}" for key, value in switch.items()
                )

        rows.append({"env": offers.label, "offers": offers, "trainers": cells})
    return rows


def check_run_data(data: dict[str, Any]) -> None:
    """:func:`check_trainer` (and the exact-evaluation check) on a run config's raw values,
    before the config is validated: validating builds the trainer's config, which imports the
    trainer (and torch); this answers first. Values it cannot read are left to validation."""
    from agents.config import EvaluationConfig, EnvConfig, TrainerConfig

    def section(name: str) -> dict:
        value = data.get(name)
        return value if isinstance(value, dict) else {}

    env, trainer, evaluation = section("env"), section("trainer"), section("evaluation")
    env_name, env_params = env.get("name", EnvConfig.name), env.get("params") or {}
    trainer_name, trainer_params = (
        trainer.get("name", TrainerConfig.name),
        trainer.get("params") or {},
    )
    if (
        not all(isinstance(v, str) for v in (env_name, trainer_name))
        or trainer_name not in TRAINER_NEEDS
        or not isinstance(env_params, dict)
        or not isinstance(trainer_params, dict)
    ):
        return
    try:
        offers_for(env_name, env_params)
    except (ValueError, TypeError):  # a bad env or parameter: validation words it
        return
    check_trainer(trainer_name, trainer_params, env_name, env_params)
    exact = evaluation.get("exact", EvaluationConfig.exact)
    max_nodes = evaluation.get("max_tree_nodes", EvaluationConfig.max_tree_nodes)
    if exact in ("yes", True) and isinstance(max_nodes, int):
        check_exact_evaluation(env_name, env_params, max_nodes)
