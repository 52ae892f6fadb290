"""The trainer (Kitchen & Benedetti 2018, Algorithm 1): one :meth:`ExItOOS.step` is one
expert iteration through the common loop: self-play games of the expert
(:mod:`agents.exit_oos.self_play`, on ``workers`` workers), stored in a game reservoir with
the paper's decay, then ``train_steps`` Adam steps of the apprentice on
KL(sigma_oos || f_theta) (:func:`agents.exit_oos.apprentice.kl_loss`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from agents.base import Learner, StepReport
from agents.device import choose_device, cpu_state_dict, weight_count
from agents.exit_oos.apprentice import apprentice_network, architecture_for, kl_loss
from agents.exit_oos.config import ExItOOSConfig
from agents.exit_oos.self_play import SelfPlayer, SelfPlayWorker
from agents.memories import GameReservoir
from agents.networks import AveragePolicyAgent
from agents.parallel import WorkerPool, unix_deadline
from hiddenenvs.game import Game


class ExItOOS(Learner):
    """ExIt-OOS through the common loop: one :meth:`step` is one expert iteration."""

    CONFIG_CLASS = ExItOOSConfig
    METRICS = (
        "kl_loss",
        "reservoir_games",
        "reservoir_moves",
        "missed_target_rate",
        "restored_searches",
        "ema_ratio",
        "mean_first_player_return",
    )

    def __init__(self, game: Game, config: ExItOOSConfig, seed: int):
        super().__init__(game, config, seed)
        self.config: ExItOOSConfig = config
        self.architecture = architecture_for(game, config.hidden_sizes)
        self.network = apprentice_network(self.architecture)
        self.device_choice = choose_device(
            config.device, weight_count(self.network), config.batch_size
        )
        self.device = self.device_choice.device
        self.network.to(self.device)  # built on the CPU: the same initial weights everywhere
        self.optimizer = torch.optim.Adam(self.network.parameters(), lr=config.learning_rate)
        self.reservoir = GameReservoir(config.reservoir_games, config.reservoir_decay)
        self.rng = np.random.default_rng(seed)
        self._pool: WorkerPool | None = None
        self._local: SelfPlayer | None = None
        self._network_version = 0  # the apprentice's number, sent with it to the workers

    # ---- self-play -------------------------------------------------------------------------
    def _self_play(self, seeds: list[int], deadline: float | None) -> list[dict[str, Any]]:
        """The games of ``seeds`` in order; past ``deadline`` fewer (the step is then cut)."""
        self._network_version += 1
        network_state = {k: v.clone() for k, v in cpu_state_dict(self.network).items()}
        if self.config.workers == 0:
            if self._local is None:
                self._local = SelfPlayer(self.game, self.config, self.architecture)
            self._local.set_network(network_state)
            return self._local.play_many(seeds, deadline)
        return self._workers_self_play(seeds, network_state, deadline)

    def _pieces(self, seeds: list[int]) -> list[list[int]]:
        """Each worker's share of ``seeds`` in pieces of ``concurrent_games`` (the groups it
        would play in lockstep anyway), so the deadline stops a step within one piece."""
        shares = [
            [int(s) for s in share]
            for share in np.array_split(seeds, self.config.workers)
            if len(share)
        ]
        # The groups are cut from each worker's share as before the pool was shared (so a
        # batched forward's last bits stay those of the same workers and concurrent_games).
        return [
            share[i : i + self.config.concurrent_games]
            for share in shares
            for i in range(0, len(share), self.config.concurrent_games)
        ]

    def _workers_self_play(
        self, seeds: list[int], network_state: dict[str, torch.Tensor], deadline: float | None
    ) -> list[dict[str, Any]]:
        """:meth:`_self_play` on the pool of ``workers`` (started on the first call)."""
        pieces = self._pieces(seeds)
        if self._pool is None:
            self._pool = WorkerPool(
                SelfPlayWorker,
                (self.game, self.config, self.architecture),
                self.config.workers,
                ray_address=self.config.ray_address,
                name="exit-oos-self-play",
                where="trainer.params.ray_address",
            )
        # Arrays, not tensors: multiprocessing sends a tensor by file descriptor through its
        # resource sharer, whose handshake a worker terminated at a deadline or Ctrl-C breaks.
        arrays = {k: v.numpy() for k, v in network_state.items()}
        send = unix_deadline(deadline)
        played = dict(
            self._pool.map(
                "play_games",
                [(self._network_version, arrays, piece, send) for piece in pieces],
                deadline,
            )
        )
        # Only the games before the first piece not played count: the seeds stay in order.
        games: list[dict[str, Any]] = []
        for index in range(len(pieces)):
            if index not in played:
                break
            games += played[index]
        return games

    def step(self, loop: Any) -> StepReport:
        seeds = [int(s) for s in loop.rng.integers(2**63, size=self.config.games_per_iteration)]
        games = self._self_play(seeds, loop.deadline)
        if len(games) < len(seeds):  # cut at the deadline: nothing of this step is kept
            loop.step_cut = True
            return StepReport(episodes=0, iterations=0)
        for game in games:
            self.reservoir.add(self.rng, game["game"])
        decisions = sum(g["decisions"] for g in games)
        losses = [self.train_step() for _ in range(self.config.train_steps)]
        biased_searches = max(
            1, decisions * self.config.simulations_per_move * self.game.info.num_players
        )
        return StepReport(
            episodes=len(games),
            iterations=1,
            metrics={
                "kl_loss": float(np.mean(losses)),
                "reservoir_games": float(len(self.reservoir)),
                "reservoir_moves": float(self.reservoir.num_moves),
                "missed_target_rate": sum(g["missed_targets"] for g in games) / biased_searches,
                "restored_searches": float(sum(g["restored_searches"] for g in games)),
                "ema_ratio": float(np.mean([g["ema_ratio"] for g in games])),
                "mean_first_player_return": float(np.mean([g["returns"][0] for g in games])),
            },
        )

    # ---- learning ---------------------------------------------------------------------------
    def train_step(self) -> float:
        """One Adam step on KL(sigma_oos || f_theta) over the legal actions of a minibatch."""
        batch = self.reservoir.sample_tensors(self.config.batch_size, self.rng, self.device)
        loss = kl_loss(self.network, batch)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def evaluation_agent(self, player: int) -> AveragePolicyAgent:
        return AveragePolicyAgent(self.network, self.architecture)

    def close(self) -> None:
        """Stop the self-play workers now (running games are abandoned); safe to call again,
        and after an exception or Ctrl-C."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()

    # ---- checkpoints ---------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {
            "network": self.network.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "reservoir": self.reservoir.state_dict(),
            "rng": self.rng.bit_generator.state,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.network.load_state_dict(state["network"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.reservoir.load_state_dict(state["reservoir"])
        self.rng.bit_generator.state = state["rng"]
