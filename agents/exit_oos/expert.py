"""The expert (Kitchen & Benedetti 2018, section 3.2): Online Outcome Sampling
(:mod:`agents.search.oos`) targeted at the mover's information set, rolling out with the
apprentice, its move and training target the average strategy ``sigma_oos`` there.

One OOS per seat, reused from game to game (the compiled tree backend builds its tree
once) and reseeded from each game's seed; on the model backend one such set per game a
worker plays in lockstep (``concurrent_games``), each rolling out through the batched
driver (:func:`agents.search.oos.search_concurrently`).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import NamedTuple

import numpy as np

from agents.exit_oos.config import ExItOOSConfig
from agents.exit_oos.deviations import deviation_options
from agents.search.oos import OOS, OOSOptions, RolloutPolicy, RolloutRequest
from hiddenenvs.game import Game


def oos_options(config: ExItOOSConfig) -> OOSOptions:
    """OOS's parameters of a run: the paper's, and the deviations that are on."""
    options: OOSOptions = {
        "delta": config.delta,
        "epsilon": config.epsilon,
        "gamma": config.gamma,
        "targeting": config.targeting,
        "reweighting": config.reweighting,
    }
    options.update(deviation_options(config))
    return options


def expert_searches(game: Game, config: ExItOOSConfig, rollout: RolloutPolicy) -> list[list[OOS]]:
    """One OOS per seat for each game played at once: one set on the tree (the game
    enumerates and ``backend`` allows it; ``rho`` then a table per iteration), otherwise
    ``concurrent_games`` sets on the model rolling out with ``rollout``."""
    options = oos_options(config)
    seats = range(game.info.num_players)
    if config.backend != "model":
        searches = [OOS(game, p, backend=config.backend, **options) for p in seats]
        if all(search.backend == "tree" for search in searches):
            return [searches]
    return [
        [OOS(game, p, backend="model", rollout_policy=rollout, **options) for p in seats]
        for _ in range(config.concurrent_games)
    ]


def reseed(searches: list[OOS], seed: int) -> None:
    """Empty tables, and seat ``p``'s generator seeded from ``(seed, p)``."""
    for player, search in enumerate(searches):
        search.reset()
        # In place: the compiled walk holds a pointer to this generator.
        search.rng.bit_generator.state = np.random.default_rng([seed, player]).bit_generator.state


class ExpertAnswer(NamedTuple):
    """``sigma_oos`` at the searched information set, and the search's counters' increase."""

    sigma: np.ndarray
    missed_targets: int
    restored_searches: int


def expert_answer(
    search: OOS, key: tuple, mask: np.ndarray, iterations: int, deadline: float | None
) -> Generator[RolloutRequest, np.ndarray, ExpertAnswer]:
    """A search of ``iterations`` targeted at ``key`` (suspending at the model path's rollout
    steps), then OOS's average strategy there over ``mask``'s legal actions."""
    missed, restored = search.missed_targets, search.restored_searches
    yield from search.search_steps(key, iterations=iterations, deadline=deadline)
    return ExpertAnswer(
        search.policy(key, tuple(np.flatnonzero(mask))),
        search.missed_targets - missed,
        search.restored_searches - restored,
    )
