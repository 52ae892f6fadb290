r"""ExIt-OOS: expert iteration with an Online Outcome Sampling expert and a neural
apprentice (Kitchen & Benedetti 2018, "ExIt-OOS: Towards Learning from Planning in
Imperfect Information Games", arXiv:1808.10120).

Expert iteration (Anthony et al. 2017) alternates two steps. The *expert* is a search,
here OOS (:mod:`agents.search.oos`), whose rollout policy ``rho`` is the apprentice
``f_theta``; the *apprentice* is a network trained to imitate the expert. One iteration:

1. **Self-play.** ``games_per_iteration`` games (paper: 32, one per core), each move
   chosen by a fresh OOS search of ``simulations_per_move`` iterations (paper: 10,000)
   targeted at the mover's information set (``targeting``: PST for Leduc and Liar's Dice,
   IST for Goofspiel, as the paper), rolling out with ``rho = f_theta``. The move is
   drawn from OOS's average strategy ``sigma_oos`` at ``I_cur`` (S1: "only the average
   converges"), and ``(tensor(I_cur), mask, sigma_oos)`` is stored.
2. **Memory.** The game's moves go into a reservoir of 32,000 games with the paper's
   "decay ratio" 2 (:class:`agents.memories.GameReservoir`: the n-th game is kept with
   probability ``min(1, 2 K / n)``, replacing a random one).
3. **Training.** ``train_steps`` (paper: 128) Adam steps (lr 1e-3) on minibatches of the
   reservoir, minimising the divergence of the apprentice from the expert's answer

   .. math::

      \mathrm{KL}(\sigma_{oos} \,\|\, f_\theta) = \sum_{a \text{ legal}} \sigma_{oos}(a)
      \bigl(\log \sigma_{oos}(a) - \log f_\theta(a)\bigr)

The apprentice is an MLP with ReLUs and a softmax over the legal actions (illegal logits
masked): Leduc [128], II-Goofspiel(6) [128, 64] (the paper's sizes); Liar's Dice, where
the paper is silent, [128, 64] like Goofspiel(6), a game of similar size. It is what the
loop evaluates and exports (``policy_player<p>.pt``; one network plays every seat, its
input being the seat's information-state tensor).

Average strategy: OOS weighs each average-strategy update by the mover's own reach under
its current strategy, so a decision that strategy does not lead to (reached in self-play
by an earlier move drawn from the average, or by the targeted samples) gets no average and
its target is uniform, however clear its regrets are (Leduc: ``tests/test_exit_oos.py``).
``average_tremble`` ``t`` weighs with the reach under ``(1 - t) sigma + t uniform``
instead (tree backend; 0, the default, is OOS as published). Two more switches, off by
default (the paper's design), on the tree backend: ``public_state_targets`` stores OOS's
answer at every information set of the mover in the current public state (PST targets
them all alike), not only at the hand held; ``prior_regret`` starts each search's regrets
at ``prior_regret`` times the apprentice's probabilities, so OOS's current strategy starts
at ``f_theta`` instead of uniform (as published the apprentice reaches the search only
through rollouts, which a small game's incremental tree soon leaves behind).

Importance weights: ``reweighting`` is ``"ema"`` (the paper: OOS's weight replaced by
``1 / (q_u(z) r)`` with ``r`` an exponential moving average of ``q(z) / q_u(z)``) or
``"none"`` (OOS's mixture weight); both backends implement both.

Design choices (the paper's engineering, on this code base):

- *The apprentice is fixed during an iteration's self-play*, so on an enumerable game
  (Kuhn, Leduc, II-Goofspiel(6), Liar's Dice(1): OOS's compiled ``tree`` backend) ``rho``
  is evaluated for every information set in ONE batched forward per iteration
  (:meth:`agents.search.oos.OOS.set_rollout_policy`) and the compiled walk reads the
  table: the same probabilities as a forward at every rollout step (tested), without a
  network call inside the search. This replaces the paper's state-machine batching of
  concurrent simulations, which exists to amortise exactly those per-step calls.
- On the ``model`` backend (games too large to enumerate, e.g. II-Goofspiel(13)) the
  paper's state machine: a worker plays ``concurrent_games`` games in lockstep, every
  OOS simulation suspends when its rollout needs ``rho`` (:meth:`OOS.search_steps`), and
  when none can progress one batched forward answers them all
  (:func:`agents.search.oos.search_concurrently`). Each game keeps its own searches and
  seeded generators, so its moves do not depend on the games beside it, up to the last
  bits of a batched forward pass (runs are reproducible with the same ``workers`` and
  ``concurrent_games``).
- *Workers.* Self-play games run on ``workers`` workers of the project's one parallel
  map (:class:`agents.parallel.WorkerPool`, living as long as the learner): ``spawn``
  processes, or with ``ray_address`` (``"local"``, ``"auto"`` or ``host:port``;
  ``train.py --address``) Ray actors, on one machine or a cluster, with the same games (a
  piece whose actor dies is played again by its replacement). Each worker has its own OOS
  per seat; every game's OOS generators are seeded from the game's seed, which the loop's
  generator draws, so the stored games do not depend on the number of workers or on which
  worker plays which game, and a run resumed after SIGKILL produces the same networks as
  an uninterrupted one.
- *Budget.* ``simulations_per_move`` is the knob scaled down from the paper's 10,000: a
  move's search time grows linearly with it (configs use 1,000-2,000; each config states
  its run's budget). The run's deadline reaches every search, in the workers too: a game
  still in play there is dropped (the step is cut), and workers that do not stop within
  :data:`agents.parallel.STOP_SECONDS` are terminated, as :meth:`ExItOOS.close` terminates
  them on an error or Ctrl-C.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from agents.base import Learner, StepReport
from agents.device import check_device_setting, choose_device, cpu_state_dict, weight_count
from agents.episodes import model_episode
from agents.memories import GameReservoir
from agents.networks import AveragePolicyAgent, masked_logits, mlp
from agents.parallel import WorkerPool, local_deadline, unix_deadline
from agents.search import DeadlinePassed
from agents.search.oos import (
    OOS,
    REWEIGHTING,
    TARGETING,
    answer_rollouts,
    search_concurrently,
)
from hiddenenvs.game import Game, draw_index


@dataclass
class ExItOOSConfig:
    """ExIt-OOS hyperparameters (defaults: the paper's Leduc settings, the search scaled down)."""

    hidden_sizes: list[int] = field(default_factory=lambda: [128])
    games_per_iteration: int = 32
    simulations_per_move: int = 1_000  # the paper: 10,000
    delta: float = 0.9  # OOS targeting probability (Lisý, Lanctot & Bowling 2015)
    epsilon: float = 0.4  # OOS exploration of the update player
    gamma: float = 0.01  # uniform share of the biased sampler at others' nodes
    targeting: str = "pst"
    reweighting: str = "ema"
    # OOS's average strategy weighs its own reach under (1 - t) sigma + t uniform (tree
    # backend; 0: as published, and a decision the search's current strategy does not lead
    # to gets no average, so its target is uniform).
    average_tremble: float = 0.0
    # PST on the tree backend: store the search's answer at every information set of the
    # mover with the current public state (all targeted alike), not only at the one held.
    public_state_targets: bool = False
    # Tree backend: each search's regrets start at prior_regret times the apprentice's
    # probabilities, so OOS's current strategy starts at f_theta (0: from zero, as published).
    prior_regret: float = 0.0
    backend: str = "auto"  # OOS backend: "tree" (compiled, enumerable games), "model" or "auto"
    reservoir_games: int = 32_000
    reservoir_decay: float = 2.0
    train_steps: int = 128  # Adam steps per iteration
    batch_size: int = 128  # the paper does not say
    learning_rate: float = 1e-3
    workers: int = 2  # self-play processes; 0 plays in the training process
    concurrent_games: int = (
        8  # model backend: games a worker plays in lockstep, one forward per round
    )
    ray_address: str | None = (
        None  # "local" or a cluster ("auto", host:port): workers are Ray actors
    )
    # The apprentice's training (auto | cpu | cuda | cuda:N, agents/device.py); the self-play
    # searches run on the CPU of their workers.
    device: str = "auto"

    def __post_init__(self):
        from agents.config import ConfigError

        check_device_setting(self.device)
        if self.targeting not in TARGETING:
            raise ConfigError(
                f"trainer.params.targeting must be one of {TARGETING}, got {self.targeting!r}"
            )
        if self.reweighting not in REWEIGHTING:
            raise ConfigError(
                f"trainer.params.reweighting must be one of {REWEIGHTING}, got {self.reweighting!r}"
            )
        if self.backend not in ("auto", "tree", "model"):
            raise ConfigError(
                f"trainer.params.backend must be 'auto', 'tree' or 'model', got {self.backend!r}"
            )
        for name in ("delta", "epsilon", "gamma", "average_tremble"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ConfigError(
                    f"trainer.params.{name} must be in [0, 1], got {getattr(self, name)}"
                )
        for name in (
            "games_per_iteration",
            "simulations_per_move",
            "reservoir_games",
            "train_steps",
            "batch_size",
            "concurrent_games",
        ):
            if getattr(self, name) < 1:
                raise ConfigError(f"trainer.params.{name} must be >= 1, got {getattr(self, name)}")
        if self.workers < 0:
            raise ConfigError(f"trainer.params.workers must be >= 0, got {self.workers}")
        if self.public_state_targets and (self.targeting != "pst" or self.backend == "model"):
            raise ConfigError(
                "trainer.params.public_state_targets needs targeting: pst and the tree backend"
            )
        if self.ray_address is not None and self.workers < 1:
            raise ConfigError(
                "trainer.params.ray_address plays on `workers` Ray actors: workers must be >= 1"
            )
        if self.prior_regret < 0.0:
            raise ConfigError(f"trainer.params.prior_regret must be >= 0, got {self.prior_regret}")
        if self.reservoir_decay <= 0.0 or self.learning_rate <= 0.0:
            raise ConfigError("trainer.params.reservoir_decay and learning_rate must be > 0")


class ApprenticeRollout:
    """``rho = f_theta`` as an OOS rollout policy: ``(states, players, masks) -> probabilities``."""

    def __init__(self, agent: AveragePolicyAgent):
        self.agent = agent

    def __call__(self, states, players, masks) -> np.ndarray:
        tensors = np.stack(
            [np.ravel(s.information_state_tensor(int(p))) for s, p in zip(states, players)]
        )
        return self.agent.policy_probabilities_batch(tensors.astype(np.float32), masks)


# ---- self-play (in worker processes, or in the trainer's process with workers=0) -----------------
class SelfPlayer:
    """One OOS per seat, reused from game to game (the tree backend builds its tree once);
    on the model backend one such set per game played concurrently."""

    def __init__(self, game: Game, config: ExItOOSConfig, architecture: dict):
        torch.set_num_threads(1)
        self.game = game
        self.config = config
        self.agent = AveragePolicyAgent(
            mlp(
                architecture["input_size"],
                architecture["hidden_sizes"],
                architecture["num_actions"],
            ),
            architecture,
        )
        self.rollout = ApprenticeRollout(self.agent)
        options = dict(
            delta=config.delta,
            epsilon=config.epsilon,
            gamma=config.gamma,
            targeting=config.targeting,
            reweighting=config.reweighting,
        )
        if config.average_tremble > 0.0:  # tree backend only (a ValueError otherwise)
            options["average_tremble"] = config.average_tremble
        if config.prior_regret > 0.0:
            options["prior_regret"] = config.prior_regret
        seats = range(self.game.info.num_players)
        self.searches = None
        if (
            config.backend != "model"
        ):  # the tree when the game enumerates ("auto"), rho a table per iteration
            self.searches = [OOS(self.game, p, backend=config.backend, **options) for p in seats]
        if self.searches is None or any(s.backend == "model" for s in self.searches):
            self.searches = [
                OOS(self.game, p, backend="model", rollout_policy=self.rollout, **options)
                for p in seats
            ]
            self.concurrent_searches = [self.searches] + [
                [
                    OOS(self.game, p, backend="model", rollout_policy=self.rollout, **options)
                    for p in seats
                ]
                for _ in range(config.concurrent_games - 1)
            ]
        else:
            self.concurrent_searches = [self.searches]
        self._representatives: list | None = None  # a state per information set (tree)

    def set_network(self, network_state: dict) -> None:
        """A new apprentice: on the tree backend one batched forward per search's table."""
        self.agent.network.load_state_dict(network_state)
        for search in self.searches:
            search.set_rollout_policy(self.rollout)

    def play_many(self, seeds: list[int], deadline: float | None = None) -> list[dict[str, Any]]:
        """The games of ``seeds``, ``concurrent_games`` at a time on the model backend; at
        ``deadline`` (a ``time.perf_counter()`` time) the searches stop inside their move and
        only the groups finished before it are returned."""
        group = len(self.concurrent_searches)
        results = []
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

    def play_steps(self, seed: int, searches: list[OOS], deadline: float | None = None):
        """:meth:`play` as a state machine (see :meth:`OOS.search_steps`) with one OOS per seat."""
        rng = np.random.default_rng(seed)
        for player, search in enumerate(searches):
            search.reset()
            # In place: the compiled walk holds a pointer to this generator.
            search.rng.bit_generator.state = np.random.default_rng(
                [seed, player]
            ).bit_generator.state
        tensors, masks, targets = [], [], []
        missed = restored = decisions = 0

        def decide(state, movers: list[int], joint: list[int] | None):
            """Each mover's move: an OOS search at its information set, the move drawn from
            OOS's average strategy there, and the (tensor, mask, sigma_oos) targets stored."""
            nonlocal missed, restored, decisions
            actions = []
            for mover in movers:
                search = searches[mover]
                key = state.information_state_key(mover)
                mask = state.legal_actions_mask(mover if joint is not None else None)
                before = (search.missed_targets, search.restored_searches)
                yield from search.search_steps(
                    key, iterations=self.config.simulations_per_move, deadline=deadline
                )
                decisions += 1
                missed += search.missed_targets - before[0]
                restored += search.restored_searches - before[1]
                sigma = search.policy(key, tuple(np.flatnonzero(mask)))
                tensors.append(np.ravel(state.information_state_tensor(mover)).astype(np.float32))
                masks.append(np.asarray(mask, dtype=np.int8))
                targets.append(sigma.astype(np.float32))
                if self.config.public_state_targets:
                    for tensor, other_mask, other_sigma in self._public_state_targets(
                        search, mover, key, joint is not None
                    ):
                        tensors.append(tensor)
                        masks.append(other_mask)
                        targets.append(other_sigma)
                actions.append(draw_index(sigma, rng))
            return actions

        state = yield from model_episode(self.game.new_initial_state(), decide, rng)
        return {
            "game": {
                "observation": np.stack(tensors),
                "action_mask": np.stack(masks),
                "target": np.stack(targets),
            },
            "returns": np.asarray(state.returns(), dtype=np.float64),
            "decisions": decisions,
            "missed_targets": missed,
            "restored_searches": restored,
            "ema_ratio": float(np.mean([s.ema_ratio for s in searches])),
        }

    def _public_state_targets(self, search: OOS, mover: int, key: tuple, joint: bool):
        """``(tensor, mask, sigma)`` at the mover's other information sets of ``key``'s
        public state that the search holds with an average (PST targeted them as ``key``)."""
        if search.tree is None:
            raise ValueError("public_state_targets needs OOS's tree backend")
        tree = search.tree
        if self._representatives is None:
            self._representatives = tree.representative_states()
        held = tree.infoset_index[(mover, tuple(key))]
        for infoset in search.public_state_infosets(key):
            start, stop = tree.infoset_slot_start[infoset : infoset + 2]
            if infoset == held or search.tables.average[start:stop].sum() <= 0.0:
                continue
            state = self._representatives[infoset]
            mask = np.asarray(state.legal_actions_mask(mover if joint else None), dtype=np.int8)
            sigma = search.policy(tree.infoset_keys[infoset][1], tuple(np.flatnonzero(mask)))
            tensor = np.ravel(state.information_state_tensor(mover)).astype(np.float32)
            yield tensor, mask, sigma.astype(np.float32)


class SelfPlayWorker:
    """A self-play worker of :class:`agents.parallel.WorkerPool` (a process or a Ray actor):
    its :class:`SelfPlayer`, and the apprentice it holds (``set_network`` is not free)."""

    def __init__(self, game: Game, config: ExItOOSConfig, architecture: dict):
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


# ---- the trainer ---------------------------------------------------------------------------------
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
        info = game.info
        self.architecture = {
            "input_size": int(np.prod(info.information_state_tensor_shape)),
            "hidden_sizes": list(config.hidden_sizes),
            "num_actions": info.num_distinct_actions,
        }
        self.network = mlp(
            self.architecture["input_size"], config.hidden_sizes, info.num_distinct_actions
        )
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
        """The games of ``seeds`` in order; past ``deadline`` fewer (the step is then cut).

        Each worker's share is sent in pieces of ``concurrent_games`` (the groups it would
        play in lockstep anyway), so the deadline stops a step within one piece."""
        self._network_version += 1
        network_state = {k: v.clone() for k, v in cpu_state_dict(self.network).items()}
        game_args = (self.game, self.config, self.architecture)
        if self.config.workers == 0:
            if self._local is None:
                self._local = SelfPlayer(*game_args)
            self._local.set_network(network_state)
            return self._local.play_many(seeds, deadline)
        shares = [
            [int(s) for s in share]
            for share in np.array_split(seeds, self.config.workers)
            if len(share)
        ]
        # The groups are cut from each worker's share as before the pool was shared (so a
        # batched forward's last bits stay those of the same workers and concurrent_games).
        pieces = [
            share[i : i + self.config.concurrent_games]
            for share in shares
            for i in range(0, len(share), self.config.concurrent_games)
        ]
        if self._pool is None:
            self._pool = WorkerPool(
                SelfPlayWorker,
                game_args,
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

    # ---- learning ------------------------------------------------------------------------------
    def train_step(self) -> float:
        """One Adam step on KL(sigma_oos || f_theta) over the legal actions of a minibatch."""
        batch = self.reservoir.sample_tensors(self.config.batch_size, self.rng, self.device)
        log_p = torch.log_softmax(
            masked_logits(self.network(batch["observation"]), batch["action_mask"]), dim=-1
        )
        sigma = batch["target"]
        loss = (torch.xlogy(sigma, sigma) - sigma * log_p).sum(dim=-1).mean()
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
