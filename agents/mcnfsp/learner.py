"""The MCNFSP trainer (:class:`MCNFSP`): one player per trained seat, fixed opponents,
the average policies the searches play against, self-play here or on workers, updates."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from agents.base import Agent, Learner, StepReport
from agents.errors import ConfigError
from agents.mcnfsp.agent import MCNFSPAgent, average_probabilities
from agents.mcnfsp.config import MAX_PIECE_ROWS, MCNFSPConfig, architecture_for
from agents.mcnfsp.self_play import SelfPlayWorker
from agents.networks import network_input
from agents.parallel import WorkerPool, seeded_shares, unix_deadline
from hiddenenvs.game import Game, State


class MCNFSP(Learner):
    """MCNFSP self-play: one :class:`~agents.mcnfsp.agent.MCNFSPAgent` per player; evaluation = average policies.

    A step plays a batch of self-play episodes through the loop; every
    ``learn_every_episodes`` episodes each player takes ``rl_steps`` and ``sl_steps``
    gradient steps. Each player's search samples the others' moves (and weighs its
    beliefs) by their current average policies, memoised per information set until the
    next update.
    """

    CONFIG_CLASS = MCNFSPConfig
    METRICS = (
        "rl_loss",
        "value_loss",
        "prior_spread",
        "sl_loss",
        "replay_size",
        "reservoir_size",
        "searches",
    )

    def __init__(self, game: Game, config: MCNFSPConfig, seed: int):
        super().__init__(game, config, seed)
        self.architecture = architecture_for(game, config)
        self._average_cache: dict[tuple[int, Any], np.ndarray] = {}
        num_players = game.info.num_players
        unknown = sorted(seat for seat in config.opponents if seat >= num_players)
        if unknown or len(config.opponents) >= num_players:
            raise ConfigError(
                f"trainer.params.opponents: {game.spec} has seats 0..{num_players - 1} and at "
                f"least one must be trained; got seats {sorted(config.opponents)}"
            )
        self._opponents = {
            seat: self._fixed_opponent(spec, seat) for seat, spec in config.opponents.items()
        }
        self._agents = [
            MCNFSPAgent(
                game,
                player,
                self.architecture,
                config,
                self.average_policy,
                seed=seed * 1000 + player,
            )
            for player in self.trained_players()
        ]
        self._by_seat = dict(zip(self.trained_players(), self._agents))
        self.device_choice = self._agents[0].device_choice
        self.episodes = 0
        self.learned_at = 0  # episodes at the last update
        self._pool: WorkerPool | None = None
        self._network_version = 0  # bumped when the networks change; sent with them to workers

    def _fixed_opponent(self, spec: str, seat: int) -> Agent:
        from agents.leaderboard.specs import resolve_agent

        agent = resolve_agent(spec, self.game.spec.name, seat, dict(self.game.spec.params))
        agent.rng = np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=(seat,)))
        return agent

    def trained_players(self) -> list[int]:
        return [p for p in range(self.game.info.num_players) if p not in self.config.opponents]

    @property
    def agents(self) -> list[Agent]:
        return [
            self._opponents.get(p) or self._by_seat[p] for p in range(self.game.info.num_players)
        ]

    def average_policy(self, state: State, player: int) -> np.ndarray:
        """Pi_player's probabilities at ``state`` (memoised until the next update); a fixed
        opponent's own policy at ``state``."""
        opponent = self._opponents.get(player)
        if opponent is not None:
            return opponent.policy_at_state(state, player)
        key = (player, state.information_state_key(player))
        probabilities = self._average_cache.get(key)
        if probabilities is None:
            agent = self._by_seat[player]
            tensor = network_input(
                state.information_state_tensor(player)[None], self.architecture, agent.device
            )
            with torch.no_grad():
                probabilities = average_probabilities(
                    agent.policy_network,
                    tensor,
                    state.legal_actions_mask(player)[None],
                )[0]
            self._average_cache[key] = probabilities
        return probabilities

    def step(self, loop) -> StepReport:
        if self.in_workers:
            played = self._self_play_in_workers(loop)
        else:
            played = self._self_play_here(loop)
        if loop.step_cut:
            return StepReport(episodes=0, iterations=0)
        self.episodes += played
        return StepReport(episodes=played, iterations=1, metrics=self.update())

    @property
    def in_workers(self) -> bool:
        """Whether self-play runs in workers (processes or Ray actors), not in this process."""
        return self.config.workers > 1 or self.config.ray_address is not None

    def _self_play_here(self, loop) -> int:
        """The loop's lockstep self-play; the episodes played."""
        # A search past the loop's deadline stops inside its move (the loop then cuts the step).
        for agent in self._agents:
            agent.search.deadline = loop.deadline
        try:
            return len(loop.self_play(loop.max_episodes))
        finally:
            for agent in self._agents:
                agent.search.deadline = None

    def _self_play_in_workers(self, loop) -> int:
        """The step's episodes shared among the workers (one piece each, seeded from the
        loop's generator), their searches stored in piece order; the episodes played, or
        none with ``loop.step_cut`` set when the deadline cut a piece (nothing is kept)."""
        shares = seeded_shares(loop.rng, loop.max_episodes, self.config.workers)
        networks = self.network_arrays()
        send = unix_deadline(loop.deadline)
        pieces = [(self._network_version, networks, seeds, seed, send) for seeds, seed in shares]
        played = self._workers().map_all("play_games", pieces, loop.deadline)
        if played is None:
            loop.step_cut = True
            return 0
        for piece_memories in played:  # piece order: the same run on every machine
            for agent, memories in zip(self._agents, piece_memories):
                agent.store(memories)
        return loop.max_episodes

    def network_arrays(self) -> list[dict[str, dict[str, np.ndarray]]]:
        """Each trained player's f_BR and Pi as numpy arrays (a worker's snapshot)."""
        return [agent.network_arrays() for agent in self._agents]

    def load_network_arrays(self, networks: list[dict[str, dict[str, np.ndarray]]]) -> None:
        """:meth:`network_arrays`' snapshot into the players (a worker's copy)."""
        for agent, arrays in zip(self._agents, networks):
            agent.load_network_arrays(arrays)
        self._average_cache.clear()  # Pi changed

    def start_piece(self, piece_seed: int, deadline: float | None) -> None:
        """A worker's copy before a piece: empty memories that keep every search, the
        players' generators seeded from ``piece_seed`` and the searches' ``deadline``."""
        for player, agent in self._by_seat.items():
            agent.replay, agent.reservoir = agent.new_memories(MAX_PIECE_ROWS, MAX_PIECE_ROWS)
            # In place: the search draws from the same generator.
            agent.rng.bit_generator.state = np.random.default_rng(
                [piece_seed, player]
            ).bit_generator.state
            agent.search.deadline = deadline
        for seat, opponent in self._opponents.items():
            opponent.rng = np.random.default_rng([piece_seed, seat])

    def piece_memories(self, searches_before: list[int]) -> list[dict[str, Any]]:
        """A worker's copy after a piece: per trained player its searches' M_RL and M_SL
        rows, in the order played, and their count (:meth:`~agents.mcnfsp.agent.MCNFSPAgent.store` takes them)."""
        return [
            {
                "replay": agent.replay.state_dict()["data"],
                "reservoir": agent.reservoir.state_dict()["data"],
                "searches": agent.searches - before,
            }
            for agent, before in zip(self._agents, searches_before)
        ]

    def search_counts(self) -> list[int]:
        return [agent.searches for agent in self._agents]

    def _workers(self) -> WorkerPool:
        """The self-play workers, started by the first step that needs them."""
        if self._pool is None:
            self._pool = WorkerPool(
                SelfPlayWorker,
                (type(self), self.game, self.config, self.seed),
                self.config.workers,
                ray_address=self.config.ray_address,
                name="mcnfsp-self-play",
                where="trainer.params.ray_address",
            )
        return self._pool

    def update(self) -> dict[str, float]:
        if self.episodes - self.learned_at < self.config.learn_every_episodes:
            return {}
        self.learned_at = self.episodes
        losses: dict[str, list[float]] = {}
        for agent in self._agents:
            for name, values in agent.learn().items():
                losses.setdefault(name, []).extend(values)
        self._average_cache.clear()  # Pi changed
        self._network_version += 1
        metrics = {name: float(np.mean(values)) for name, values in losses.items() if values}
        metrics.update(
            {
                "replay_size": float(sum(len(a.replay) for a in self._agents)),
                "reservoir_size": float(sum(len(a.reservoir) for a in self._agents)),
                "searches": float(sum(a.searches for a in self._agents)),
            }
        )
        return metrics

    def evaluation_agent(self, player: int) -> Agent:
        if player in self._opponents:
            return self._opponents[player]
        return self._by_seat[player].evaluation_agent()

    def state_dict(self) -> dict[str, Any]:
        return {
            "agents": [agent.state_dict() for agent in self._agents],
            "episodes": self.episodes,
            "learned_at": self.learned_at,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if len(state["agents"]) != len(self._agents):
            raise ValueError(
                f"checkpoint has {len(state['agents'])} MCNFSP players, this game has {len(self._agents)}"
            )
        for agent, agent_state in zip(self._agents, state["agents"]):
            agent.load_state_dict(agent_state)
        self.episodes, self.learned_at = state["episodes"], state["learned_at"]
        self._average_cache.clear()
        self._network_version += 1

    def close(self) -> None:
        """Stop the self-play workers now (running episodes are abandoned); safe to call
        again, and after an exception or Ctrl-C."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()
