"""What each trainer needs from a game, what each game offers, and the check between them.

Every trainer declares its :class:`Needs` in its :class:`agents.catalogue.TrainerEntry`
(some depend on the trainer's config, e.g. MCNFSP searching from the true state needs no
belief sampler; the catalogue imports no trainer, so the check runs without importing torch
and answers in well under 2 s), and so does every agent spec that searches or solves (its
:class:`agents.catalogue.SpecEntry`); every game offers a :class:`hiddenenvs.analysis.capabilities.GameOffers` (players, dynamics, chance,
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
from collections.abc import Mapping
from typing import Any

import hiddenenvs
from agents import catalogue
from agents.catalogue import CFR_MAX_TREE_NODES as CFR_MAX_TREE_NODES
from agents.catalogue import ES_MAX_ITERATION_NODES as ES_MAX_ITERATION_NODES
from agents.catalogue import Needs as Needs
from hiddenenvs.analysis.capabilities import GameOffers, game_offers
from hiddenenvs.game import Game


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


def trainer_needs(trainer: str, trainer_params: Mapping[str, Any] | None = None) -> Needs:
    """The needs a trainer's catalogue entry declares for its params (defaults where
    ``trainer_params`` is None)."""
    if trainer not in catalogue.TRAINER_ENTRIES:
        raise CapabilityError(
            f"unknown trainer {trainer!r}; trainers: {', '.join(catalogue.trainer_names())}"
        )
    return catalogue.trainer_entry(trainer).needs(trainer_params or {})


def fitting_trainers(offers: GameOffers) -> list[str]:
    """The trainers that fit a game with their default params, or with a switch (named)."""
    fits = []
    for name in catalogue.trainer_names():
        switch = catalogue.trainer_entry(name).switches
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
def check_agent_spec(spec: str, env: str, env_params: dict[str, Any]) -> None:
    """Refuse an ``evaluate.py`` agent spec that cannot play an env (before any match)."""
    kind = spec.split(":", 1)[0]
    spec_needs = catalogue.spec_needs()
    needs = spec_needs.get(kind)
    if needs is None:
        return
    offers = offers_for(env, env_params)
    lacking = needs.missing(offers)
    if lacking:
        fitting = [name for name, other in spec_needs.items() if not other.missing(offers)]
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
        for trainer in catalogue.trainer_names():
            lacking = trainer_needs(trainer).missing(offers)
            cells[trainer] = "fits" if not lacking else "; ".join(lacking)
            switch = catalogue.trainer_entry(trainer).switches
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
        or trainer_name not in catalogue.TRAINER_ENTRIES
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
