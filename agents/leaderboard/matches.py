"""Scheduling and playing matches: gauntlets and round robins on any registered AEC env.

A *pairing* is two agent specs. Its *seat orders* put each agent in every role equally
often: in a two-player game ``(A, B)`` and ``(B, A)``; with ``n`` players, one agent alone
in each seat against copies of the other, both ways round (``2n`` orders). Each seat order
plays ``games`` matches, game index ``0 .. games-1``.

Duplicate matches (the default): game ``i`` of every seat order of a pairing gets the same
env seed, so the env deals the same chance outcomes (cards, dice) in each, and what one
agent gains from a lucky deal in one seat it gives back in the mirrored seat. In a game
without chance this changes nothing. ``duplicate=False`` draws an independent seed per
seat order.

Every match is reproducible from what the store records: the env is reset with
``env_seed`` and the agent in seat ``s`` samples its actions from child stream ``s`` of
that seed (:func:`agent_generator`), independent of the env's chance draws. The store
also keeps the actions played, so a replay re-simulates the match from ``env_seed`` and
those actions without the agents (:mod:`.replay`).
"""

from __future__ import annotations

import hashlib
import itertools
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import hiddenenvs
from agents.leaderboard.store import MatchKey, MatchResult, canonical_json

MODES = ("round-robin", "gauntlet")


@dataclass(frozen=True)
class EnvVariant:
    """A registered env with its parameters (registry-fixed ones left out)."""

    name: str
    params: dict[str, Any]

    @classmethod
    def resolve(cls, name: str, params: dict[str, Any]) -> EnvVariant:
        """Validate against the registry and fill in defaults, so equal games compare equal."""
        from hiddenenvs.registry import REGISTRY

        game = hiddenenvs.load_game(name, **params)
        fixed = REGISTRY[name].fixed_params
        return cls(name, {k: v for k, v in game.params.items() if k not in fixed})

    @property
    def params_json(self) -> str:
        return canonical_json(self.params)

    def game(self):
        return hiddenenvs.load_game(self.name, **self.params)


def pairings(agents: Sequence[str], mode: str) -> list[tuple[str, str]]:
    """Round robin: every pair. Gauntlet: the first agent against each of the others."""
    if len(set(agents)) != len(agents):
        raise ValueError(f"agent specs must be distinct, got {list(agents)}")
    if len(agents) < 2:
        raise ValueError(f"an evaluation needs at least two agents, got {list(agents)}")
    if mode == "round-robin":
        return list(itertools.combinations(agents, 2))
    if mode == "gauntlet":
        return [(agents[0], other) for other in agents[1:]]
    raise ValueError(f"mode must be one of {MODES}, got {mode!r}")


def seat_orders(first: str, second: str, num_players: int) -> list[tuple[str, ...]]:
    """Seat assignments that give each agent every role equally often (module docstring)."""
    orders = []
    for alone, others in ((first, second), (second, first)):
        for seat in range(num_players):
            order = tuple(alone if s == seat else others for s in range(num_players))
            if order not in orders:
                orders.append(order)
    return orders


def derive_seed(*parts: Any) -> int:
    """A 63-bit seed from any printable parts (stable across runs and machines)."""
    digest = hashlib.sha256(repr(parts).encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def schedule(
    variant: EnvVariant,
    agents: Sequence[str],
    mode: str,
    games: int,
    series_seed: int,
    duplicate: bool = True,
    first_seats: Sequence[int] | None = None,
) -> list[tuple[MatchKey, int]]:
    """Every match of an evaluation as ``(key, env_seed)``, in a fixed order.

    ``first_seats`` keeps only the seat orders that put the first agent of each pairing in
    one of those seats (for games whose sides differ, such as combat's attackers and
    defenders, where an agent was trained for one side)."""
    if games < 1:
        raise ValueError(f"games per seat order must be at least 1, got {games}")
    num_players = variant.game().info.num_players
    if first_seats is not None and not all(0 <= s < num_players for s in first_seats):
        raise ValueError(
            f"first seats must be in 0..{num_players - 1} for {variant.name}, got {list(first_seats)}"
        )
    tasks = []
    for first, second in pairings(agents, mode):
        pairing = tuple(sorted((first, second)))
        for order in seat_orders(first, second, num_players):
            if first_seats is not None and not any(order[s] == first for s in first_seats):
                continue
            for index in range(games):
                seed_parts: tuple[object, ...] = (
                    variant.name,
                    variant.params_json,
                    pairing,
                    series_seed,
                    index,
                )
                if not duplicate:
                    seed_parts += (order,)
                key = MatchKey(variant.name, variant.params_json, order, series_seed, index)
                tasks.append((key, derive_seed(*seed_parts)))
    return tasks


def agent_generator(env_seed: int, seat: int) -> np.random.Generator:
    """The generator of the agent in ``seat``: a child stream of ``env_seed``.

    Never ``default_rng([env_seed, seat])``: SeedSequence pads its entropy with zeros, so
    ``[env_seed, 0]`` is the env's own stream ``default_rng(env_seed)`` and the agent in
    seat 0 would draw the very numbers that dealt the cards. A spawn key gives a stream
    independent of the env's and of the other seats'.
    """
    return np.random.default_rng(np.random.SeedSequence(env_seed, spawn_key=(seat,)))


AgentFactory = Callable[[str, str, int, dict[str, Any]], Any]


class MatchPlayer:
    """Plays matches of one env variant, building each (spec, seat) agent once."""

    def __init__(self, variant: EnvVariant, make_agent: AgentFactory):
        self.variant = variant
        self.make_agent = make_agent
        self.env = hiddenenvs.make(variant.name, **variant.params)
        self._agents: dict[tuple[str, int], Any] = {}

    def agent(self, spec: str, seat: int):
        if (spec, seat) not in self._agents:
            self._agents[(spec, seat)] = self.make_agent(
                spec, self.variant.name, seat, self.variant.params
            )
        return self._agents[(spec, seat)]

    def play(self, key: MatchKey, env_seed: int) -> MatchResult:
        start = time.perf_counter()
        env = self.env
        seated = {}
        for seat, spec in enumerate(key.seats):
            agent = self.agent(spec, seat)
            agent.rng = agent_generator(env_seed, seat)
            seated[env.possible_agents[seat]] = agent
        env.reset(seed=env_seed)
        totals = dict.fromkeys(env.possible_agents, 0.0)
        actions: list[int | None] = []  # what a replay needs besides env_seed (.replay)
        for name in env.agent_iter():
            observation, _, termination, truncation, _ = env.last()
            if termination or truncation:
                action = None
            else:
                action = int(seated[name].act_in_env(env, name, observation))
            actions.append(action)
            env.step(action)
            for rewarded, reward in env.rewards.items():
                totals[rewarded] += reward
        returns = tuple(totals[name] for name in env.possible_agents)
        return MatchResult(key, env_seed, returns, time.perf_counter() - start, tuple(actions))


# ---- parallel execution: one MatchPlayer per worker (agents.parallel) ---------------------
class MatchWorker:
    """A worker of :class:`agents.parallel.WorkerPool` (a process or a Ray actor) playing
    matches of one env variant."""

    def __init__(self, variant: EnvVariant, make_agent: AgentFactory):
        import torch

        torch.set_num_threads(1)  # one core per worker; the pool supplies the parallelism
        self.player = MatchPlayer(variant, make_agent)

    def play(self, key: MatchKey, env_seed: int) -> MatchResult:
        return self.player.play(key, env_seed)


def play_all(
    variant: EnvVariant,
    tasks: Sequence[tuple[MatchKey, int]],
    make_agent: AgentFactory,
    workers: int = 1,
    ray_address: str | None = None,
) -> Iterator[MatchResult]:
    """Play ``tasks``, yielding each result as soon as its match ends (any order).

    With ``workers > 1`` matches run on worker processes, with ``ray_address`` on
    ``workers`` Ray actors (``"local"`` starts a Ray on this machine, ``"auto"`` or
    ``host:port`` joins a cluster): the project's one parallel map
    (:class:`agents.parallel.WorkerPool`), one match per piece so a killed evaluation loses
    only the matches in flight. A match whose actor dies is played again by its
    replacement, and since every match is seeded the result is the one the lost actor
    would have returned.
    """
    if ray_address is None and (workers <= 1 or len(tasks) <= 1):
        player = MatchPlayer(variant, make_agent)
        for task in tasks:
            yield player.play(*task)
        return
    from agents.parallel import WorkerPool

    pool = WorkerPool(
        MatchWorker,
        (variant, make_agent),
        max(1, min(workers, len(tasks))),
        ray_address=ray_address,
        name="match-player",
        where="--ray",
        local_num_cpus=max(1, workers),
    )
    try:
        for _, result in pool.map("play", list(tasks)):
            yield result
    finally:
        pool.close()
