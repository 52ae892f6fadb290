"""Self-play (Kitchen & Benedetti 2018, section 3.3): games of the expert against itself,
each decision's ``(tensor(I_cur), mask, sigma_oos)`` stored for the apprentice.

:class:`SelfPlayer` plays games in the trainer's process (``workers: 0``) or in a
:class:`SelfPlayWorker` of the project's one parallel map
(:class:`agents.parallel.WorkerPool`: a ``spawn`` process or a Ray actor). Every game is
seeded: its chance, its moves and its searches' generators, so the stored games do not
depend on which worker plays them.
"""

from __future__ import annotations

import time
from collections.abc import Generator
from typing import Any

import numpy as np
import torch

from agents.episodes import model_episode
from agents.exit_oos.apprentice import (
    ApprenticeRollout,
    Architecture,
    apprentice_network,
)
from agents.exit_oos.config import ExItOOSConfig
from agents.exit_oos.deviations import PublicStateTargets
from agents.exit_oos.expert import expert_answer, expert_searches, reseed
from agents.networks import AveragePolicyAgent
from agents.parallel import local_deadline
from agents.search import DeadlinePassed
from agents.search.oos import (
    OOS,
    RolloutPolicy,
    RolloutRequest,
    answer_rollouts,
    search_concurrently,
)
from hiddenenvs.game import Game, State, draw_index


class GameRecord:
    """One self-play game's stored decisions and its searches' counters."""

    def __init__(self) -> None:
        self.tensors: list[np.ndarray] = []
        self.masks: list[np.ndarray] = []
        self.targets: list[np.ndarray] = []
        self.decisions = self.missed_targets = self.restored_searches = 0

    def store(self, tensor: np.ndarray, mask: np.ndarray, sigma: np.ndarray) -> None:
        self.tensors.append(tensor)
        self.masks.append(mask)
        self.targets.append(sigma)

    def result(self, state: State, searches: list[OOS]) -> dict[str, Any]:
        """The game as a worker sends it back: its rows, returns and counters."""
        return {
            "game": {
                "observation": np.stack(self.tensors),
                "action_mask": np.stack(self.masks),
                "target": np.stack(self.targets),
            },
            "returns": np.asarray(state.returns(), dtype=np.float64),
            "decisions": self.decisions,
            "missed_targets": self.missed_targets,
            "restored_searches": self.restored_searches,
            "ema_ratio": float(np.mean([s.ema_ratio for s in searches])),
        }


class SelfPlayer:
    """One OOS per seat, reused from game to game (the tree backend builds its tree once);
    on the model backend one such set per game played concurrently."""

    def __init__(self, game: Game, config: ExItOOSConfig, architecture: Architecture):
        torch.set_num_threads(1)
        self.game = game
        self.config = config
        self.agent = AveragePolicyAgent(apprentice_network(architecture), architecture)
        self.rollout: RolloutPolicy = ApprenticeRollout(self.agent)
        self.concurrent_searches = expert_searches(game, config, self.rollout)
        self.searches = self.concurrent_searches[0]
        self.public_state_targets = PublicStateTargets() if config.public_state_targets else None

    def set_network(self, network_state: dict[str, Any]) -> None:
        """A new apprentice: on the tree backend one batched forward per search's table."""
        self.agent.network.load_state_dict(network_state)
        for search in self.searches:
            search.set_rollout_policy(self.rollout)

    def play_many(self, seeds: list[int], deadline: float | None = None) -> list[dict[str, Any]]:
        """The games of ``seeds``, ``concurrent_games`` at a time on the model backend; at
        ``deadline`` (a ``time.perf_counter()`` time) the searches stop inside their move and
        only the groups finished before it are returned."""
        group = len(self.concurrent_searches)
        results: list[dict[str, Any]] = []
        for start in range(0, len(seeds), group):
            if deadline is not None and time.perf_counter() >= deadline:
                break
            chunk = seeds[start : start + group]
            try:
                results += search_concurrently(
                    [
                        self.play_steps(seed, searches, deadline)
                        for seed, searches in zip(chunk, self.concurrent_searches)
                    ],
                    self.rollout,
                )
            except DeadlinePassed:
                break
        return results

    def play(self, seed: int) -> dict[str, Any]:
        """One self-play game; every decision's (tensor, mask, sigma_oos) and search counters."""
        return answer_rollouts(self.play_steps(seed, self.searches), self.rollout)

    def play_steps(
        self, seed: int, searches: list[OOS], deadline: float | None = None
    ) -> Generator[RolloutRequest, np.ndarray, dict[str, Any]]:
        """:meth:`play` as a state machine (see
        :meth:`agents.search.oos.OOS.search_steps`) with one OOS per seat."""
        rng = np.random.default_rng(seed)
        reseed(searches, seed)
        record = GameRecord()

        def decide(state: State, movers: list[int], joint: list[int] | None):
            return self._decide(record, searches, state, movers, joint is not None, deadline, rng)

        state = yield from model_episode(self.game.new_initial_state(), decide, rng)
        return record.result(state, searches)

    def _decide(
        self,
        record: GameRecord,
        searches: list[OOS],
        state: State,
        movers: list[int],
        joint: bool,
        deadline: float | None,
        rng: np.random.Generator,
    ) -> Generator[RolloutRequest, np.ndarray, list[int]]:
        """Each mover's move: an OOS search at its information set, the move drawn from
        OOS's average strategy there, and the (tensor, mask, sigma_oos) targets stored."""
        actions = []
        for mover in movers:
            search = searches[mover]
            key = state.information_state_key(mover)
            mask = state.legal_actions_mask(mover if joint else None)
            answer = yield from expert_answer(
                search, key, mask, self.config.simulations_per_move, deadline
            )
            record.decisions += 1
            record.missed_targets += answer.missed_targets
            record.restored_searches += answer.restored_searches
            tensor = np.ravel(state.information_state_tensor(mover)).astype(np.float32)
            record.store(tensor, np.asarray(mask, dtype=np.int8), answer.sigma.astype(np.float32))
            if self.public_state_targets is not None:
                for target in self.public_state_targets(search, mover, key, joint):
                    record.store(*target)
            actions.append(draw_index(answer.sigma, rng))
        return actions


class SelfPlayWorker:
    """A self-play worker of :class:`agents.parallel.WorkerPool` (a process or a Ray actor):
    its :class:`SelfPlayer`, and the apprentice it holds (``set_network`` is not free)."""

    def __init__(self, game: Game, config: ExItOOSConfig, architecture: Architecture):
        self.player = SelfPlayer(game, config, architecture)
        self.network_version: int | None = None

    def play_games(
        self,
        network_version: int,
        network_state: dict[str, np.ndarray],
        seeds: list[int],
        unix_deadline: float | None = None,
    ) -> list[dict[str, Any]]:
        if network_version != self.network_version:
            # A copy: arrays from Ray's object store are read-only.
            self.player.set_network({k: torch.tensor(v) for k, v in network_state.items()})
            self.network_version = network_version
        return self.player.play_many(seeds, local_deadline(unix_deadline))
