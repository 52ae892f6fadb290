"""ReBeL's training loop (trainer ``rebel``) and ReBeL as a player (agent spec ``rebel:``).

:class:`ReBeLLearner` is Alg. 1 of Brown, Bakhtin, Lerer & Gong 2020, "Combining Deep Reinforcement Learning and Search for Imperfect-Information Games" (ReBeL) at a small scale, in two kinds: per-history
values and policies as Partridge & Thielscher, "Hidden Information General Game Playing with Deep Learning and Search" train them (``values: history``, :mod:`agents.rebel.values`),
or ReBeL proper's values of public belief states (``values: pbs``,
:mod:`agents.rebel.pbs`). :class:`ReBeLAgent` plays by the search
(:class:`~agents.rebel.search.ReBeLSearch`), guided by a trained network when it has one.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from agents.base import Learner, SearchAgent, StepReport
from agents.catalogue import POSITIVE, RANGE
from agents.device import (
    agent_device,
    check_device_setting,
    choose_device,
    cpu_state_dict,
    weight_count,
)
from agents.errors import ConfigError
from agents.memories import CircularBuffer
from agents.parallel import WorkerPool, unix_deadline
from agents.rebel.options import (
    RESOLVE_MODES,
    VALUE_KINDS,
    SearchOptions,
    search_settings,
)
from agents.rebel.pbs import PBSValue, PBSValueNetwork, train_step
from agents.rebel.search import ReBeLSearch, SubgameStructures, rebel_policy
from agents.rebel.self_play import (
    Example,
    HistorySelfPlay,
    PBSSelfPlay,
    SelfPlay,
    SelfPlayWorker,
)
from agents.rebel.values import NetworkGuide, ReBeLNetwork, state_features
from agents.search import register_spec
from agents.search.classic import parse_spec
from hiddenenvs.analysis import GameTree, TabularPolicy
from hiddenenvs.game import Game, GameSpec, SeatView
from hiddenenvs.registry import load_game


@dataclass
class ReBeLConfig:
    """ReBeL trainer settings (the paper's Alg. 1 at a small scale)."""

    # "history": the GDL-II paper's value/policy network over one history; "pbs": ReBeL
    # proper's value network over public belief states (agents.rebel.pbs)
    values: str = "history"
    resolve: str = "frontier"  # the evaluation search's re-solving: frontier, decision, gadget
    hidden_size: int = 64  # network width (the paper: 199 for blind tic-tac-toe)
    iterations: int = 50  # CFR+ iterations per subgame solve
    max_depth: int = 2  # public steps per subgame (the value network beyond)
    exploration: float = 0.1  # self-play moves: uniform with this probability, else σ
    batches_per_episode: int = 20  # the paper's 20 minibatches per game
    batch_size: int = 64
    buffer_size: int = 20_000  # newest training examples kept
    learning_rate: float = 1e-3
    device: str = "auto"  # auto | cpu | cuda | cuda:N (agents/device.py)
    # Self-play workers (agents.parallel.WorkerPool): 1 plays one game a step in the training
    # process; N > 1 (or a ray_address) plays N seeded games a step, one on each worker.
    workers: int = field(default=1, metadata={RANGE: POSITIVE})
    ray_address: str | None = None  # "local" or a cluster ("auto", host:port): Ray actors

    def __post_init__(self):
        check_device_setting(self.device)
        for name in (
            "hidden_size",
            "iterations",
            "max_depth",
            "batches_per_episode",
            "batch_size",
            "buffer_size",
        ):
            if getattr(self, name) < 1:
                raise ConfigError(f"trainer.params.{name} must be >= 1, got {getattr(self, name)}")
        if not 0.0 <= self.exploration < 1.0:
            raise ConfigError(
                f"trainer.params.exploration must be in [0, 1), got {self.exploration}"
            )
        if self.values not in VALUE_KINDS:
            raise ConfigError(
                f"trainer.params.values must be one of {VALUE_KINDS}, got {self.values!r}"
            )
        if self.resolve not in RESOLVE_MODES:
            raise ConfigError(
                f"trainer.params.resolve must be one of {RESOLVE_MODES}, got {self.resolve!r}"
            )
        if self.learning_rate <= 0:
            raise ConfigError(
                f"trainer.params.learning_rate must be positive, got {self.learning_rate}"
            )

    @property
    def parallel(self) -> bool:
        """Whether self-play runs on a worker pool (else in the training process)."""
        return self.workers > 1 or self.ray_address is not None


class ReBeLLearner(Learner):
    """ReBeL's training loop (Alg. 1): one loop step plays ``workers`` self-play games
    (:mod:`agents.rebel.self_play`), adds their examples to a replay buffer, then takes
    ``batches_per_episode`` minibatches per game. ``ReBeLLearner(game, config, seed)``
    builds the kind ``config.values`` names, which says what the network values:

    - ``"history"``, :class:`HistoryReBeLLearner` (the GDL-II paper's Alg. 1);
    - ``"pbs"``, :class:`PBSReBeLLearner` (ReBeL proper, Brown et al. 2020, value side).

    This class holds what both share: the buffer, the optimiser, the generator, the
    self-play (in process, or on a :class:`agents.parallel.WorkerPool`: with one worker, the
    default, the game is played in the training process from the learner's generator;
    with ``workers`` > 1 or a ``ray_address`` each game is seeded from it and played on a
    worker with a snapshot of the network, so a run is reproducible for the same
    ``workers``), the evaluation search and the checkpoint. A kind builds its network and
    self-play (``_build``), its minibatch step (``_train_batch``) and what guides
    the search at the frontier (``_frontier``).
    """

    CONFIG_CLASS = ReBeLConfig

    def __new__(cls, game: Game, config: ReBeLConfig, seed: int) -> ReBeLLearner:
        if cls is ReBeLLearner:
            cls = PBSReBeLLearner if config.values == "pbs" else HistoryReBeLLearner
        return super().__new__(cls)

    def __init__(self, game: Game, config: ReBeLConfig, seed: int):
        super().__init__(game, config, seed)
        if config.resolve == "gadget" and not game.info.is_two_player_zero_sum:
            raise ConfigError(
                f"trainer.params.resolve: 'gadget' needs a two-player zero-sum game; "
                f"{game.spec} is not"
            )
        torch.manual_seed(seed)  # the network's initial weights
        info = game.info
        self.num_players, self.num_actions = info.num_players, info.num_distinct_actions
        self.network: ReBeLNetwork | PBSValueNetwork
        self.self_play: SelfPlay
        self.structures: SubgameStructures  # the searches' subgame trees
        columns = self._build(game, config, seed)
        self.buffer = CircularBuffer(config.buffer_size, columns)
        # Built on the CPU (the same initial weights everywhere), then moved with its
        # optimiser's state; the searches ask it on the same device.
        self.device_choice = choose_device(
            config.device, weight_count(self.network), config.batch_size
        )
        self.device = self.device_choice.device
        self.network.to(self.device)
        self.optimizer = torch.optim.Adam(self.network.parameters(), lr=config.learning_rate)
        self.rng = np.random.default_rng(seed)
        self.episodes = 0
        self._pool: WorkerPool | None = None
        self._network_version = 0  # the weights' number, sent with them to the workers

    # ---- what a kind provides --------------------------------------------------------------
    def _build(self, game: Game, config: ReBeLConfig, seed: int) -> dict[str, tuple]:
        """Set ``network``, ``self_play`` and ``structures`` (the searches' subgame trees);
        return the buffer's columns."""
        raise NotImplementedError

    def _train_batch(self) -> float:
        """One minibatch step on the buffer; its loss."""
        raise NotImplementedError

    def _frontier(self) -> dict[str, Any]:
        """The search's guide at the subgame frontier (ReBeLSearch keywords)."""
        raise NotImplementedError

    # ---- the search ------------------------------------------------------------------------
    def search(self, seed: int, resolve: str = "frontier") -> ReBeLSearch:
        return ReBeLSearch.for_config(
            self.game,
            self.config,
            resolve,
            seed=seed,
            structures=self.structures,
            **self._frontier(),
        )

    # ---- self-play -------------------------------------------------------------------------
    def _play(self, deadline: float | None) -> list[list[Example]] | None:
        """This step's games' examples; None when the deadline cut one (nothing is kept)."""
        if not self.config.parallel:
            examples = self.self_play.play_game(self.rng, deadline)
            return None if examples is None else [examples]
        seeds = [int(s) for s in self.rng.integers(2**63, size=self.config.workers)]
        if self._pool is None:
            self._pool = WorkerPool(
                SelfPlayWorker,
                (self.game, self.config, dict(self.network.architecture)),
                self.config.workers,
                ray_address=self.config.ray_address,
                name="rebel-self-play",
                where="trainer.params.ray_address",
            )
        self._network_version += 1
        # Arrays, not tensors: multiprocessing sends a tensor by file descriptor through its
        # resource sharer, whose handshake a worker terminated at a deadline or Ctrl-C breaks.
        weights = {k: v.numpy() for k, v in cpu_state_dict(self.network).items()}
        send = unix_deadline(deadline)
        played = dict(
            self._pool.map(
                "play_games",
                [(self._network_version, weights, [seed], send) for seed in seeds],
                deadline,
            )
        )
        games = [game for index in range(len(seeds)) for game in played.get(index, [])]
        return games if len(games) == len(seeds) else None

    def step(self, loop: Any) -> StepReport:
        games = self._play(loop.deadline)
        if games is None:  # the deadline came mid-game: nothing of this step is kept
            loop.step_cut = True
            return StepReport(episodes=0, iterations=0)
        for examples in games:
            for row in examples:
                self.buffer.add(**row)
        batches = self.config.batches_per_episode * len(games)
        losses = [self._train_batch() for _ in range(batches)]
        self.self_play.weights_changed()
        self.episodes += len(games)
        return StepReport(
            episodes=len(games),
            iterations=1,
            metrics={
                "loss": float(np.mean(losses)),
                "examples": float(sum(len(examples) for examples in games)),
                "buffer": float(len(self.buffer)),
            },
        )

    def close(self) -> None:
        """Stop the self-play workers now (running games are abandoned); safe to call again,
        and after an exception or Ctrl-C."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()

    # ---- evaluation and checkpoints -------------------------------------------------------------
    def evaluation_agent(self, player: int) -> ReBeLAgent:
        network = copy.deepcopy(self.network)  # the agent takes it under its kind's keyword
        return ReBeLAgent(
            self.game,
            player,
            seed=self.seed,
            network=network if isinstance(network, ReBeLNetwork) else None,
            pbs_network=network if isinstance(network, PBSValueNetwork) else None,
            **search_settings(self.config, self.config.resolve),
        )

    def evaluation_policy(self, tree: GameTree) -> TabularPolicy:
        return rebel_policy(self.search(self.seed, self.config.resolve), tree)

    def state_dict(self) -> dict[str, Any]:
        return {
            "network": self.network.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "buffer": self.buffer.state_dict(),
            "rng": self.rng.bit_generator.state,
            "episodes": self.episodes,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.network.load_state_dict(state["network"])
        self.self_play.weights_changed()
        self.optimizer.load_state_dict(state["optimizer"])
        self.buffer.load_state_dict(state["buffer"])
        self.rng.bit_generator.state = state["rng"]
        self.episodes = int(state["episodes"])


class HistoryReBeLLearner(ReBeLLearner):
    """``values: history``, the GDL-II paper's Alg. 1: self-play on the game model where
    every decision is a subgame solve guided by the network (:class:`ReBeLNetwork`: its
    values at the frontier, its policy as CFR's start); each solve adds, for every root
    history h, the example (features(h), v(h) under σ for every role, σ at each mover's
    information set); a minibatch: squared value error plus policy cross-entropy."""

    def _build(self, game: Game, config: ReBeLConfig, seed: int) -> dict[str, tuple]:
        input_size = len(state_features(game.new_initial_state()))
        network = ReBeLNetwork(input_size, self.num_players, self.num_actions, config.hidden_size)
        self.network = network
        self.self_play = self.history = HistorySelfPlay(game, config, network)
        self.structures = self.history.structures  # reused across self-play games
        return {
            "features": ((input_size,), np.float32),
            "value": ((self.num_players,), np.float32),
            "policy": ((self.num_players, self.num_actions), np.float32),
            "has_policy": ((self.num_players,), np.float32),
        }

    def _frontier(self) -> dict[str, Any]:
        return self.history.guide.search_options()

    def _train_batch(self) -> float:
        batch = self.buffer.sample_tensors(self.config.batch_size, self.rng, self.device)
        values, logits = self.network(batch["features"])
        value_loss = ((values - batch["value"]) ** 2).mean()
        # Cross-entropy against σ where a role moved (σ is 0 on illegal actions; the prior
        # renormalises over the legal ones).
        log_probabilities = torch.log_softmax(logits, -1)
        policy_loss = -(batch["policy"] * log_probabilities).sum(-1)
        policy_loss = (policy_loss * batch["has_policy"]).sum() / batch["has_policy"].sum().clamp(
            min=1.0
        )
        loss = value_loss + policy_loss
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


class PBSReBeLLearner(ReBeLLearner):
    """``values: pbs``, ReBeL proper (Brown et al. 2020, Alg. 1, value side;
    :mod:`agents.rebel.pbs`): a self-play game over public belief states, each depth-limited
    subgame solved with the PBS value network at its frontier, adds (root PBS,
    information-set values averaged over the iterations); the next root is the frontier PBS
    reached by σ at a random iteration; a minibatch: squared error. The evaluation search
    has the network at the frontier and re-solves as ``resolve`` says (``"gadget"``:
    CFR-D's safe re-solving)."""

    def _build(self, game: Game, config: ReBeLConfig, seed: int) -> dict[str, tuple]:
        try:
            self.pbs = PBSValue(game, hidden_size=config.hidden_size, seed=seed)
        except ValueError as error:
            raise ConfigError(f"trainer.params.values: 'pbs' on {game.spec}: {error}") from None
        self.network = self.pbs.network
        self.self_play = PBSSelfPlay(config, self.pbs)
        self.structures = SubgameStructures()  # the evaluation search's subgame trees
        size = int(self.pbs.offsets[-1])  # private states, all roles
        input_size = self.pbs.network.architecture["public_size"] + size
        return {
            "features": ((input_size,), np.float32),
            "target": ((size,), np.float32),
            "mask": ((size,), np.float32),
        }

    def _frontier(self) -> dict[str, Any]:
        return {"pbs_value": self.pbs}

    def _train_batch(self) -> float:
        batch = self.buffer.sample(self.config.batch_size, self.rng)
        return train_step(
            self.pbs, self.optimizer, batch["features"], batch["target"], batch["mask"]
        )


class ReBeLAgent(SearchAgent):
    """ReBeL search as a player, guided by a :class:`ReBeLNetwork` (per-history values and
    CFR's starting policy) or a :class:`agents.rebel.pbs.PBSValueNetwork` (frontier values
    per public belief state) when given one.

    Solves are kept across decisions and matches: with enumerated beliefs σ is a fixed
    function of the public state, so they stay valid. ``options`` are numbers for
    :class:`ReBeLSearch` (``iterations``, ``seconds``, ``max_depth``, ...); the agent file
    holds them, the game's spec and the network's weights.
    """

    def __init__(
        self,
        game: Game,
        player: int,
        seed: int | None = None,
        network: ReBeLNetwork | None = None,
        pbs_network: PBSValueNetwork | None = None,
        **options: Any,
    ):
        super().__init__(game.info.num_distinct_actions, seed)
        if network is not None and pbs_network is not None:
            raise ValueError(
                "give a ReBeLNetwork (network) or a PBSValueNetwork (pbs_network), not both"
            )
        self.game, self.player, self.network, self.options = game, player, network, options
        self.pbs_network = pbs_network
        self.seed = seed
        guided = NetworkGuide(network, game).search_options() if network is not None else {}
        if pbs_network is not None:
            guided = {"pbs_value": PBSValue(game, pbs_network)}
        self.search = ReBeLSearch(
            game, SearchOptions(**options), seed=int(self.rng.integers(2**31)), **guided
        )

    def search_policy(self, view: SeatView) -> np.ndarray:
        return self.search.policy(view)

    def state_dict(self) -> dict[str, Any]:
        state = {
            "num_actions": self.num_actions,
            "game": self.game.spec.to_dict(),
            "player": self.player,
            "seed": self.seed,
            "options": dict(self.options),
        }
        if self.network is not None:
            state["architecture"] = dict(self.network.architecture)
            state["weights"] = cpu_state_dict(self.network)
        if self.pbs_network is not None:
            state["pbs_architecture"] = dict(self.pbs_network.architecture)
            state["pbs_weights"] = cpu_state_dict(self.pbs_network)
        return state

    @classmethod
    def from_state_dict(cls, state: dict[str, Any]) -> ReBeLAgent:
        network = pbs_network = None
        if "weights" in state:
            network = ReBeLNetwork.from_state_dict(state["architecture"], state["weights"])
            network.to(agent_device(weight_count(network)))
        if "pbs_weights" in state:
            pbs_network = PBSValueNetwork.from_state_dict(
                state["pbs_architecture"], state["pbs_weights"]
            )
            pbs_network.to(agent_device(weight_count(pbs_network)))
        game = load_game(GameSpec.from_dict(state["game"]))
        return cls(
            game,
            int(state["player"]),
            seed=state["seed"],
            network=network,
            pbs_network=pbs_network,
            **state["options"],
        )


SPEC_OPTIONS = {
    "iterations": int,
    "depth": int,
    "rollouts": int,
    "samples": int,
    "resolve": str,
    "sampler": str,
}


@register_spec("rebel")
def _build_agent(argument: str, game: Game, player: int, seed: int | None) -> ReBeLAgent:
    """``rebel:<iterations>`` (CFR+ iterations per solve, deepening to the node cap) or
    ``rebel:<seconds>s`` (deepening per move), with options ``iterations=``, ``depth=``
    (max_depth), ``rollouts=``, ``samples=``, ``resolve=`` (frontier, decision, gadget),
    ``sampler=`` (posterior, proposal, evaluation, particles: who draws ``samples``
    histories when a public state is too large to enumerate):
    ``rebel:1s,depth=2,rollouts=2,samples=16,sampler=evaluation``, ``rebel:200,resolve=gadget``.
    A trained agent is its file: ``runs/rebel_liars_dice/policy_player0.pt``."""
    iterations, seconds, options = parse_spec("rebel", argument, SPEC_OPTIONS)
    if iterations is None and seconds is None:
        raise ValueError(
            f"agent spec 'rebel:{argument}': give a budget, e.g. rebel:200 or rebel:1s"
        )
    if iterations is not None:
        options["iterations"] = iterations
    if "depth" in options:
        options["max_depth"] = options.pop("depth")
    return ReBeLAgent(game, player, seed=seed, seconds=seconds, **options)
