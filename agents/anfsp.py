r"""Asynchronous Neural Fictitious Self-Play on Ray (ANFSP; the NFSP-extensions paper, §4,
"Asynchronous Neural Fictitious Self Play", Algorithm 2).

NFSP (:mod:`agents.nfsp`) learns, per player, a best response ``Q(s, a | theta^Q)`` by DQN
and an average policy ``Pi(s, a | theta^Pi)`` by supervised learning on the best
response's own play. ANFSP keeps the two networks and the anticipatory dynamics but
replaces DQN's replay with A3C-style asynchronous actor-learners (Mnih et al. 2016,
"Asynchronous Methods for Deep Reinforcement Learning", asynchronous one-step Q-learning):

- **Actor-learners** (Ray actors, one per core or spread over a cluster), each with its
  own env and its own exploration rate ``epsilon_0`` drawn from ``epsilon_choices`` (the
  paper's set is lost in its text), decaying like ``1 / sqrt(t)``:
  ``epsilon_t = epsilon_0 / sqrt(1 + t / epsilon_decay_transitions)``, ``t`` the actor
  slot's transitions so far. Per episode and player: epsilon-greedy ``Q`` with
  probability eta (``anticipatory``), otherwise ``Pi`` (as in NFSP).
- **No RL replay.** Each transition contributes the gradient of the one-step TD error

  .. math::

     \mathcal{L}(\theta^Q) = \left(r + \gamma \max_{a' \text{ legal}} Q(s', a' \mid \theta^-) - Q(s, a \mid \theta^Q)\right)^2

  taken at the actor's copy of the shared parameters; a player's gradients are
  accumulated over ``gradient_every`` (32) of its steps and then applied to the shared
  ``theta^Q`` by the parameter server (the driver), asynchronously: other actors keep
  playing with the weights they hold, so a gradient may be a few updates stale
  (``staleness`` metric). With ``windows_in_flight`` 2 an actor's next window waits at
  the actor behind the one it plays, with the weights of when it was sent, so the actor
  never idles through the server's update and the round trip (its gradients are one
  window staler). An actor with ``envs_per_actor`` envs in lockstep plays a
  window of at least ``gradient_every`` steps per player and ships one accumulated
  gradient per 32-step chunk of it, all taken at the window's weights, as that many
  single-env actor-learners would have (their forward passes batched, one Ray round
  trip); the server applies each chunk's mean (the paper: "similar to minibatches").
  With ``vector_envs`` those games are one :mod:`hiddenenvs.vector` env, stepped by one
  compiled call per tick (:func:`agents.vector_self_play.play_vector_episodes`).
- **Shared supervised reservoir** M_SL (:class:`agents.memories.ReservoirBuffer`, per
  player, held by the server): actors ship the ``(s, a)`` pairs their best response
  played; with every applied chunk gradient the server takes one SL step on a minibatch of
  ``batch_size`` (128), minimising ``-log Pi(s, a | theta^Pi)``.
- **Target network** ``theta^-`` refreshed from ``theta^Q`` every
  ``target_update_every_actions`` (50,000) actions counted over all actors.
- SGD with learning rates 0.01 (RL) and 0.005 (SL), the paper's settings.

Beyond the paper (off by default): ``average_policy_ema`` keeps a Polyak-Ruppert average
of Pi's weights, ``theta^Pi_bar <- d_n * theta^Pi_bar + (1 - d_n) * theta^Pi`` after the
n-th SL step (Polyak & Juditsky 1992), and the trainer's output (evaluation, exported
policies) is that average; the actors still play Pi itself, so training is unchanged.
``d_n = min(d, (1 + n) / (10 + n))`` (the warm-up of TensorFlow's
``ExponentialMovingAverage``): early in a run the average follows Pi instead of lagging
behind its start, and from ``n = (10 d - 1) / (1 - d)`` on (90k steps for d = 0.9999) it
is a plain exponential average over about ``1 / (1 - d)`` steps. At a constant learning
rate the SL fit's weights jitter around the reservoir's policy (on Leduc its
exploitability moved by 0.05-0.08 between evaluations late in a run); their average sits
on the reservoir's empirical policy (README, ANFSP: the measurements).
``output_without_exploration`` (also beyond the paper, off by default): M_SL keeps the
best response's epsilon-greedy actions, so its policy is ``(1 - e) * (the best responses'
average) + e * uniform``, with ``e`` the mean exploration rate of that play (known from
the schedule: :meth:`ANFSP.reservoir_exploration_rate`). The output removes that uniform
share (:class:`agents.networks.AveragePolicyAgent`'s ``exploration_share``); training,
where the exploration in Pi's play gives the other player's Q its rare lines, is unchanged.

Running. With ``address: null`` (the default) the first step starts a local Ray with
``num_cpus`` CPUs (default ``ceil(num_actors * actor_num_cpus)``) and stops it at the
end of the run; with ``address`` (``"auto"`` or ``"host:port"`` of ``ray start --head``;
``train.py --address``) it joins that cluster and leaves it running. Every node needs
this package installed (``pip install -e ".[distributed]"``).

Fault tolerance. An actor that dies (``ray.kill``, a lost node) is replaced by a fresh
one in its slot with the current weights; the work of its unfinished window is lost and
the run goes on (``actor_replacements`` counts them).

Checkpoints hold the server's state: the networks, optimisers, reservoirs, the
server's generator, each slot's ``epsilon_0``, transition count and generation. Windows
in flight when a checkpoint is written are not in it (a resumed run drops them).
Determinism: seeds fix every actor's episodes and choices, but the order in which the
server applies asynchronous gradients depends on timing, so runs are *not*
bit-reproducible (use NFSP for that). The loop's evaluation and checkpoint episodes fall
on the first step at or past their schedule (a step applies one window, a few episodes),
not exactly on it.
"""

from __future__ import annotations

import copy
import functools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn.utils import parameters_to_vector, vector_to_parameters

import hiddenenvs
from agents.actor_pool import ActorPool, ClusterError, Lost, import_ray
from agents.base import Agent, Learner, StepReport, Transition, sample_batch
from agents.device import check_device_setting, choose_device, to_device, to_numpy, weight_count
from agents.memories import ReservoirBuffer
from agents.networks import AveragePolicyAgent, masked_logits, mlp, network_input
from agents.run import TrainingError
from hiddenenvs.game import Game


@dataclass
class ANFSPConfig:
    """ANFSP hyperparameters (defaults: the paper's Leduc settings where it gives them)."""

    hidden_sizes: list[int] = field(default_factory=lambda: [128])
    anticipatory: float = 0.1  # eta
    num_actors: int = 2  # actor-learners (the paper: 4 threads)
    actor_num_cpus: float = 1.0  # Ray CPUs each actor reserves (below 1: oversubscription)
    envs_per_actor: int = 1  # episodes an actor plays in lockstep (1: the paper's one env)
    vector_envs: bool = False  # actors play their envs_per_actor games through hiddenenvs.vector
    epsilon_choices: list[float] = field(default_factory=lambda: [0.06, 0.1, 0.2])
    epsilon_decay_transitions: int = 100_000  # epsilon_0 / sqrt(1 + t / this)
    gradient_every: int = 32  # actor steps per accumulated gradient
    windows_in_flight: int = (
        1  # windows queued at each actor (1: it waits for the weights of its last)
    )
    target_update_every_actions: int = 50_000
    reservoir_capacity: int = 2_000_000
    batch_size: int = 128  # SL minibatch
    min_reservoir_size: int = 1_000  # no SL step before the reservoir holds this many
    rl_learning_rate: float = 0.01
    sl_learning_rate: float = 0.005
    optimizer: str = "sgd"  # "sgd" (the paper) or "adam"
    average_policy_ema: float = 0.0  # d of the Polyak average of Pi's weights, the output (0: off)
    output_without_exploration: bool = False  # the output drops M_SL's mean exploration rate
    discount: float = 1.0
    address: str | None = None  # a Ray cluster ("auto", "host:port"); None: start a local Ray
    num_cpus: int | None = None  # CPUs of the local Ray (None: what the actors reserve)
    # The learner's networks and updates (auto | cpu | cuda | cuda:N, agents/device.py); the
    # actor-learners play and compute their gradients on their own CPUs.
    device: str = "auto"

    def __post_init__(self):
        from agents.config import ConfigError

        check_device_setting(self.device)
        if not 0.0 <= self.anticipatory <= 1.0:
            raise ConfigError(
                f"trainer.params.anticipatory must be in [0, 1], got {self.anticipatory}"
            )
        if not 0.0 <= self.average_policy_ema < 1.0:
            raise ConfigError(
                f"trainer.params.average_policy_ema must be in [0, 1) (0: off), got {self.average_policy_ema}"
            )
        if self.optimizer not in ("adam", "sgd"):
            raise ConfigError(
                f"trainer.params.optimizer must be 'adam' or 'sgd', got {self.optimizer!r}"
            )
        for name in (
            "num_actors",
            "envs_per_actor",
            "epsilon_decay_transitions",
            "gradient_every",
            "windows_in_flight",
            "target_update_every_actions",
            "reservoir_capacity",
            "batch_size",
        ):
            if getattr(self, name) < 1:
                raise ConfigError(f"trainer.params.{name} must be >= 1, got {getattr(self, name)}")
        if not self.hidden_sizes or min(self.hidden_sizes) < 1:
            raise ConfigError(
                f"trainer.params.hidden_sizes must be positive sizes, got {self.hidden_sizes}"
            )
        if not self.epsilon_choices or not all(0.0 <= e <= 1.0 for e in self.epsilon_choices):
            raise ConfigError(
                f"trainer.params.epsilon_choices must be a non-empty list of rates in [0, 1], "
                f"got {self.epsilon_choices}"
            )
        if not self.actor_num_cpus > 0:
            raise ConfigError(
                f"trainer.params.actor_num_cpus must be > 0, got {self.actor_num_cpus}"
            )
        if self.address is not None:
            if not self.address.strip():
                raise ConfigError(
                    "trainer.params.address must be 'auto' or host:port, got an empty string"
                )
            if self.num_cpus is not None:
                raise ConfigError(
                    "trainer.params.num_cpus sizes the local Ray; with an address the cluster's CPUs "
                    "are what `ray start --num-cpus` gave each node: drop num_cpus"
                )
        elif self.num_cpus is not None:
            if self.num_cpus < 1:
                raise ConfigError(f"trainer.params.num_cpus must be >= 1, got {self.num_cpus}")
            needed = self.num_actors * self.actor_num_cpus
            if needed > self.num_cpus + 1e-9:
                raise ConfigError(
                    f"trainer.params: {self.num_actors} actors x actor_num_cpus {self.actor_num_cpus} "
                    f"need {needed:g} CPUs but num_cpus is {self.num_cpus}; raise num_cpus or lower "
                    f"actor_num_cpus (e.g. {self.num_cpus / self.num_actors:g} to oversubscribe)"
                )

    def local_num_cpus(self) -> int:
        return self.num_cpus or max(1, math.ceil(self.num_actors * self.actor_num_cpus - 1e-9))


def epsilon_at(epsilon_start: float, transitions: int, decay_transitions: int) -> float:
    """``epsilon_0 / sqrt(1 + t / decay)``: 1/sqrt(t) decay towards 0 (the paper, §4.2.1)."""
    return epsilon_start / math.sqrt(1.0 + transitions / decay_transitions)


def mean_epsilon(epsilon_start: float, transitions: int, decay_transitions: int) -> float:
    """The mean of :func:`epsilon_at` over a slot's first ``transitions`` transitions:
    ``(1/T) * integral_0^T epsilon_0 / sqrt(1 + t/d) dt = 2 epsilon_0 d (sqrt(1 + T/d) - 1) / T``."""
    if transitions <= 0:
        return epsilon_start
    return (
        2.0
        * epsilon_start
        * decay_transitions
        * (math.sqrt(1.0 + transitions / decay_transitions) - 1.0)
        / transitions
    )


# ---- the actor side ----------------------------------------------------------------------------
class _ActorAgent(Agent):
    """One player inside an actor: plays Q (epsilon-greedy) or Pi per episode, records
    its transitions and its best-response (s, a) pairs for the server."""

    def __init__(self, architecture: dict[str, Any], anticipatory: float, seed: int):
        super().__init__(architecture["num_actions"], seed)
        self.architecture = architecture
        sizes = (
            architecture["input_size"],
            architecture["hidden_sizes"],
            architecture["num_actions"],
        )
        self.q_network, self.target_network, self.policy_network = (
            mlp(*sizes),
            mlp(*sizes),
            mlp(*sizes),
        )
        self.anticipatory = anticipatory
        self.epsilon = 0.0
        self.best_response_mode: dict[int, bool] = {}
        self.transitions: list[Transition] = []
        self.best_response_play: list[tuple[np.ndarray, np.ndarray, int]] = []

    def start_episode(self, episode_id=0):
        self.best_response_mode[episode_id] = bool(self.rng.random() < self.anticipatory)

    def policy_probabilities_batch(self, observations, action_masks, views=None):
        with torch.no_grad():
            logits = self.policy_network(network_input(observations, self.architecture))
            return torch.softmax(masked_logits(logits, action_masks), -1).double().numpy()

    def act_batch(self, observations, action_masks, episode_ids=None, views=None):
        observations = network_input(observations, self.architecture).numpy()
        masks = np.asarray(action_masks, dtype=np.int8)
        best_response = np.array(
            [
                self.best_response_mode.get(i, False)
                for i in (episode_ids if episode_ids is not None else range(len(masks)))
            ]
        )
        probabilities = self.policy_probabilities_batch(observations, masks)
        if best_response.any():
            with torch.no_grad():
                q_values = masked_logits(
                    self.q_network(torch.from_numpy(observations[best_response])),
                    torch.from_numpy(masks[best_response]),
                )
            greedy = q_values.argmax(dim=-1).numpy()
            legal = masks[best_response].astype(np.float64)
            explore = self.epsilon * legal / legal.sum(axis=1, keepdims=True)
            explore[np.arange(len(greedy)), greedy] += 1.0 - self.epsilon
            probabilities[best_response] = explore
        actions = sample_batch(probabilities, self.rng)
        for row in np.flatnonzero(best_response):
            self.best_response_play.append((observations[row], masks[row], int(actions[row])))
        return actions, probabilities

    def observe(self, transition: Transition):
        self.transitions.append(transition)

    def td_gradients(
        self, discount: float, chunk_size: int
    ) -> tuple[list[tuple[list[np.ndarray], int]], float]:
        """This window's transitions cut into consecutive chunks of at least ``chunk_size``
        (one chunk when fewer), and per chunk the sum of its squared-TD-error gradients, all
        at the window's fixed weights (so one forward pass for the window); with the mean
        loss. Each chunk is one of the paper's 32-step accumulated gradients."""
        batch = self.transitions
        observations = network_input(
            np.stack([np.ravel(t.observation) for t in batch]), self.architecture
        )
        next_observations = network_input(
            np.stack([np.ravel(t.next_observation) for t in batch]), self.architecture
        )
        next_masks = torch.from_numpy(np.stack([t.next_action_mask for t in batch]).astype(np.int8))
        rewards = torch.tensor([t.reward for t in batch], dtype=torch.float32)
        done = torch.tensor([t.done for t in batch])
        actions = torch.tensor([t.action for t in batch], dtype=torch.int64)
        with torch.no_grad():
            next_value = (
                masked_logits(self.target_network(next_observations), next_masks).max(dim=-1).values
            )
            target = rewards + discount * torch.where(done, torch.zeros_like(rewards), next_value)
        q = self.q_network(observations).gather(1, actions[:, None]).squeeze(1)
        squared_errors = (target - q) ** 2
        chunks = np.array_split(np.arange(len(batch)), max(1, len(batch) // chunk_size))
        parameters = list(self.q_network.parameters())
        gradients = []
        for number, rows in enumerate(chunks):
            chunk_loss = squared_errors[torch.from_numpy(rows)].sum()
            summed = torch.autograd.grad(
                chunk_loss, parameters, retain_graph=number + 1 < len(chunks)
            )
            gradients.append(([g.numpy() for g in summed], len(rows)))
        return gradients, squared_errors.mean().item()


class ActorLearner:
    """A Ray actor: its own env(s), local copies of every player's networks; one call of
    :meth:`play_window` plays until ``gradient_every`` steps per player and returns their
    chunk gradients."""

    def __init__(
        self,
        game_spec: dict[str, Any],
        architecture: dict[str, Any],
        anticipatory: float,
        discount: float,
        envs_per_actor: int,
        seed_entropy: tuple[int, ...],
        vector_envs: bool = False,
    ):
        from agents.vector_self_play import self_play_vector_env

        torch.set_num_threads(1)  # tiny networks; the core belongs to this actor alone
        name, params = game_spec["name"], game_spec["params"]
        self.vector_env = None
        self.envs = []
        if vector_envs:
            self.vector_env = self_play_vector_env(
                name, params, envs_per_actor, "trainer.params.vector_envs"
            )
            num_players = self.vector_env.num_players
        else:
            self.envs = [hiddenenvs.make(name, **params).unwrapped for _ in range(envs_per_actor)]
            num_players = len(self.envs[0].possible_agents)
        seeds = np.random.SeedSequence(list(seed_entropy)).spawn(1 + num_players)
        self.rng = np.random.default_rng(seeds[0])
        self.agents = [_ActorAgent(architecture, anticipatory, seed=s) for s in seeds[1:]]
        self.seat_agents = dict(zip(self.envs[0].possible_agents, self.agents)) if self.envs else {}
        self.discount = discount

    def play_window(
        self, weights: dict[str, list], epsilon: float, gradient_every: int
    ) -> dict[str, Any]:
        import ray

        from agents.episodes import play_episodes
        from agents.vector_self_play import play_vector_episodes

        for agent, q, target, policy in zip(
            self.agents, weights["q"], weights["target"], weights["policy"]
        ):
            for network, vector in (
                (agent.q_network, q),
                (agent.target_network, target),
                (agent.policy_network, policy),
            ):
                vector_to_parameters(torch.from_numpy(vector), network.parameters())
            agent.epsilon = epsilon
            agent.transitions, agent.best_response_play = [], []
        episodes = 0
        while sum(len(agent.transitions) for agent in self.agents) < gradient_every * len(
            self.agents
        ):
            if self.vector_env is not None:
                play_vector_episodes(self.vector_env, self.agents, int(self.rng.integers(2**31)))
                episodes += self.vector_env.num_envs
            else:
                play_episodes(
                    self.envs, self.seat_agents, self.rng.integers(2**31, size=len(self.envs))
                )
                episodes += len(self.envs)
        gradients, losses, reservoir = [], [], []
        for agent in self.agents:
            if agent.transitions:
                chunks, loss = agent.td_gradients(self.discount, gradient_every)
                gradients.append(chunks)
                losses.append(loss)
            else:
                gradients.append([])
            play = agent.best_response_play
            reservoir.append(
                {
                    "observation": np.stack([o for o, _, _ in play]) if play else None,
                    "action_mask": np.stack([m for _, m, _ in play]) if play else None,
                    "action": np.array([a for _, _, a in play], dtype=np.int64),
                }
            )
        return {
            "episodes": episodes,
            "transitions": [len(agent.transitions) for agent in self.agents],
            "gradients": gradients,
            "td_loss": float(np.mean(losses)) if losses else None,
            "reservoir": reservoir,
            # In-process (no Ray, e.g. benchmarks/anfsp_frozen_pi.py) there is no node to name.
            "node": ray.get_runtime_context().get_node_id() if ray.is_initialized() else "local",
        }


# ---- the server side (the driver) -------------------------------------------------------------
class ANFSP(Learner):
    """ANFSP through the common loop: one :meth:`step` applies one actor's window."""

    CONFIG_CLASS = ANFSPConfig
    METRICS = (
        "td_loss",
        "sl_loss",
        "epsilon",
        "reservoir_size",
        "actions",
        "staleness",
        "actor_replacements",
        "actor_nodes",
    )

    def __init__(self, game: Game, config: ANFSPConfig, seed: int):
        super().__init__(game, config, seed)
        import_ray()  # fail at construction, not at the first step, when Ray is absent
        if config.vector_envs:  # here, not in the actors, so that no Ray starts for nothing
            from agents.config import ConfigError
            from hiddenenvs.vector import VECTOR_GAMES

            if game.spec.name not in VECTOR_GAMES:
                raise ConfigError(
                    f"trainer.params.vector_envs: env {game.spec.name!r} has no vector kernel "
                    f"(hiddenenvs.vector has {', '.join(VECTOR_GAMES.names())}); set "
                    f"trainer.params.vector_envs: false"
                )
        info = game.info
        input_size = int(np.prod(info.information_state_tensor_shape))
        self.architecture = {
            "input_size": input_size,
            "hidden_sizes": list(config.hidden_sizes),
            "num_actions": info.num_distinct_actions,
        }
        torch.manual_seed(seed)
        sizes = (input_size, config.hidden_sizes, info.num_distinct_actions)
        players = range(info.num_players)
        self.q_networks = [mlp(*sizes) for _ in players]
        self.target_networks = [mlp(*sizes) for _ in players]
        self.policy_networks = [mlp(*sizes) for _ in players]
        for q, target in zip(self.q_networks, self.target_networks):
            target.load_state_dict(q.state_dict())
        # What is evaluated and exported as Pi: its Polyak average when asked for, else itself.
        self.average_networks = (
            [copy.deepcopy(n) for n in self.policy_networks]
            if config.average_policy_ema
            else self.policy_networks
        )
        # Built on the CPU (the same initial weights everywhere), then moved.
        self.device_choice = choose_device(
            config.device, weight_count(self.q_networks[0]), config.batch_size
        )
        self.device = self.device_choice.device
        for networks in (
            self.q_networks,
            self.target_networks,
            self.policy_networks,
            self.average_networks,
        ):
            for network in networks:
                network.to(self.device)  # in place: the average, when it is Pi, moves twice
        # Adam's fused kernel: the same update in one call per step (0.11 ms against the
        # per-tensor path's 0.31 for Leduc's networks; the server takes several per window).
        optimizer = (
            functools.partial(torch.optim.Adam, fused=True)
            if config.optimizer == "adam"
            else torch.optim.SGD
        )
        self.q_optimizers = [
            optimizer(n.parameters(), lr=config.rl_learning_rate) for n in self.q_networks
        ]
        self.policy_optimizers = [
            optimizer(n.parameters(), lr=config.sl_learning_rate) for n in self.policy_networks
        ]
        observation_column = ((self.architecture["input_size"],), np.float32)
        self.reservoirs = [
            ReservoirBuffer(
                config.reservoir_capacity,
                {
                    "observation": observation_column,
                    "action_mask": ((info.num_distinct_actions,), np.int8),
                    "action": ((), np.int64),
                },
            )
            for _ in players
        ]
        self.rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(16,)))
        self.epsilon_starts = [
            float(self.rng.choice(config.epsilon_choices)) for _ in range(config.num_actors)
        ]
        self.slot_transitions = [0] * config.num_actors
        self.actions = 0
        self.updates = 0
        self.target_updates = 0
        self.sl_steps = [0] * info.num_players  # per player: the Polyak average's warm-up
        # Runtime only (not checkpointed): the actors and Ray ownership.
        self.pool = ActorPool(
            ActorLearner,
            self._actor_arguments,
            config.num_actors,
            config.actor_num_cpus,
            config.address,
            config.local_num_cpus(),
            name="anfsp-actor",
            where="trainer.params.address",
        )
        self.earlier_replacements = 0  # actors replaced before this process (a resumed run)
        self.actor_nodes: set[str] = set()

    @property
    def actor_replacements(self) -> int:
        return self.earlier_replacements + self.pool.replacements

    # ---- Ray actors ---------------------------------------------------------------------------
    def _actor_arguments(self, slot: int, generation: int) -> tuple:
        return (
            self.game.spec.to_dict(),
            self.architecture,
            self.config.anticipatory,
            self.config.discount,
            self.config.envs_per_actor,
            (self.seed, slot, generation),
            self.config.vector_envs,
        )

    def _ensure_running(self, loop) -> None:
        if not self.pool.running:
            # Ray's start counts against the budget: the actors are not waited for past it.
            try:
                self.pool.start(None if loop.deadline is None else max(0.0, loop.time_left()))
            except ClusterError:  # the pool's own one-line errors (no cluster, too few CPUs)
                raise
            except Exception as error:  # Ray's start-up failures are plain Exceptions
                first_line = str(error).strip().splitlines()[0] if str(error).strip() else ""
                raise TrainingError(
                    f"trainer anfsp: Ray did not start ({type(error).__name__}: {first_line}); "
                    "on a loaded machine try again, or start a cluster with `ray start --head` "
                    "and pass train.py --address"
                ) from error
            for _ in range(self.config.windows_in_flight):
                for slot in range(self.config.num_actors):
                    self._submit(slot)

    def _weights(self) -> dict[str, list[np.ndarray]]:
        """Every network as one flat float32 vector: numpy pickles without copies, where
        a state_dict of tensors went through torch.save (most of the driver's time)."""

        def flat(networks):
            return [to_numpy(parameters_to_vector(n.parameters())).copy() for n in networks]

        return {
            "q": flat(self.q_networks),
            "target": flat(self.target_networks),
            "policy": flat(self.policy_networks),
        }

    def slot_epsilon(self, slot: int) -> float:
        return epsilon_at(
            self.epsilon_starts[slot],
            self.slot_transitions[slot],
            self.config.epsilon_decay_transitions,
        )

    def _submit(self, slot: int) -> None:
        self.pool.submit(
            slot,
            "play_window",
            self._weights(),
            self.slot_epsilon(slot),
            self.config.gradient_every,
            tag=self.updates,
        )

    def close(self) -> None:
        """Stop the actors (their windows in flight are dropped), and the local Ray if this
        learner started it; safe to call again."""
        self.pool.close()

    # ---- one step: wait for any actor's window, apply it, send that actor new weights -----
    def step(self, loop) -> StepReport:
        self._ensure_running(loop)
        while True:
            # A window not back by the loop's deadline cuts the step (the actors keep it).
            timeout = None if loop.deadline is None else max(0.0, loop.time_left())
            result = self.pool.next(timeout=timeout)
            if result is None:
                loop.step_cut = True
                return StepReport(episodes=0, iterations=0)
            if not isinstance(result, Lost):
                break
            self._submit(result.slot)  # a fresh actor took the slot: one call for each lost
        slot, window = result.slot, result.value
        self.actor_nodes.add(window["node"])
        metrics = self._apply(slot, window)
        metrics["staleness"] = float(self.updates - 1 - result.tag)
        metrics["actor_nodes"] = float(len(self.actor_nodes))  # Ray nodes the actors ran on
        self._submit(slot)
        return StepReport(episodes=window["episodes"], iterations=1, metrics=metrics)

    def _apply(self, slot: int, window: dict[str, Any]) -> dict[str, float]:
        steps = sum(window["transitions"])
        sl_losses = []
        for player, chunks in enumerate(window["gradients"]):
            play = window["reservoir"][player]
            reservoir = self.reservoirs[player]
            for row in range(len(play["action"])):
                reservoir.add(
                    self.rng,
                    observation=play["observation"][row],
                    action_mask=play["action_mask"][row],
                    action=play["action"][row],
                )
            for gradient, count in chunks:  # each chunk's mean gradient on the shared theta^Q
                for parameter, summed in zip(self.q_networks[player].parameters(), gradient):
                    parameter.grad = to_device(summed / count, self.device)
                self.q_optimizers[player].step()
                if len(reservoir) >= max(1, self.config.min_reservoir_size):
                    sl_losses.append(self._sl_step(player))
        self.updates += 1
        self.slot_transitions[slot] += steps
        self.actions += steps
        if self.actions // self.config.target_update_every_actions > self.target_updates:
            self.target_updates = self.actions // self.config.target_update_every_actions
            for q, target in zip(self.q_networks, self.target_networks):
                target.load_state_dict(q.state_dict())
        metrics = {
            "epsilon": float(
                np.mean([self.slot_epsilon(s) for s in range(self.config.num_actors)])
            ),
            "reservoir_size": float(sum(len(r) for r in self.reservoirs)),
            "actions": float(self.actions),
            "actor_replacements": float(self.actor_replacements),
        }
        if window["td_loss"] is not None:
            metrics["td_loss"] = window["td_loss"]
        if sl_losses:
            metrics["sl_loss"] = float(np.mean(sl_losses))
        return metrics

    def _sl_step(self, player: int) -> float:
        batch = self.reservoirs[player].sample_tensors(
            self.config.batch_size, self.rng, self.device
        )
        logits = masked_logits(
            self.policy_networks[player](batch["observation"]), batch["action_mask"]
        )
        loss = nn.functional.cross_entropy(logits, batch["action"])
        self.policy_optimizers[player].zero_grad()
        loss.backward()
        self.policy_optimizers[player].step()
        if self.config.average_policy_ema:
            steps = self.sl_steps[player]
            decay = min(self.config.average_policy_ema, (1 + steps) / (10 + steps))
            with torch.no_grad():
                for average, current in zip(
                    self.average_networks[player].parameters(),
                    self.policy_networks[player].parameters(),
                ):
                    average.lerp_(current, 1.0 - decay)
        self.sl_steps[player] += 1
        return loss.item()

    # ---- evaluation and checkpoints ---------------------------------------------------------
    def reservoir_exploration_rate(self) -> float:
        """The mean exploration rate of the best-response play M_SL was offered, which its
        uniform sample of that play holds too: each slot's mean epsilon weighted by its
        transitions (a slot's best-response play is the share eta of them)."""
        if not any(self.slot_transitions):
            return 0.0
        rates = [
            mean_epsilon(start, transitions, self.config.epsilon_decay_transitions)
            for start, transitions in zip(self.epsilon_starts, self.slot_transitions)
        ]
        return float(np.average(rates, weights=self.slot_transitions))

    def evaluation_agent(self, player: int) -> AveragePolicyAgent:
        share = self.reservoir_exploration_rate() if self.config.output_without_exploration else 0.0
        return AveragePolicyAgent(
            self.average_networks[player], self.architecture, exploration_share=share
        )

    def state_dict(self) -> dict[str, Any]:
        return {
            "q_networks": [n.state_dict() for n in self.q_networks],
            "target_networks": [n.state_dict() for n in self.target_networks],
            "policy_networks": [n.state_dict() for n in self.policy_networks],
            "average_networks": [n.state_dict() for n in self.average_networks],
            "q_optimizers": [o.state_dict() for o in self.q_optimizers],
            "policy_optimizers": [o.state_dict() for o in self.policy_optimizers],
            "reservoirs": [r.state_dict() for r in self.reservoirs],
            "rng": self.rng.bit_generator.state,
            "slots": {
                "epsilon_starts": list(self.epsilon_starts),
                "transitions": list(self.slot_transitions),
                "generations": list(self.pool.generations),
            },
            "counters": {
                "actions": self.actions,
                "updates": self.updates,
                "target_updates": self.target_updates,
                "actor_replacements": self.actor_replacements,
                "sl_steps": list(self.sl_steps),
            },
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if len(state["q_networks"]) != len(self.q_networks):
            raise ValueError(
                f"checkpoint has {len(state['q_networks'])} ANFSP players, this game "
                f"has {len(self.q_networks)}"
            )
        slots = state["slots"]
        if len(slots["epsilon_starts"]) != self.config.num_actors:
            raise ValueError(
                f"checkpoint has {len(slots['epsilon_starts'])} actor slots, the config "
                f"asks for num_actors={self.config.num_actors}; resume with the same number"
            )
        for name in (
            "q_networks",
            "target_networks",
            "policy_networks",
            "q_optimizers",
            "policy_optimizers",
        ):
            for item, item_state in zip(getattr(self, name), state[name]):
                item.load_state_dict(item_state)
        if self.average_networks is not self.policy_networks:
            # A checkpoint from a run without the average starts it at Pi.
            for average, average_state in zip(
                self.average_networks, state.get("average_networks", state["policy_networks"])
            ):
                average.load_state_dict(average_state)
        for reservoir, reservoir_state in zip(self.reservoirs, state["reservoirs"]):
            reservoir.load_state_dict(reservoir_state)
        self.rng.bit_generator.state = state["rng"]
        self.epsilon_starts = [float(e) for e in slots["epsilon_starts"]]
        self.slot_transitions = [int(t) for t in slots["transitions"]]
        self.pool.generations = [int(g) for g in slots["generations"]]
        counters = state["counters"]
        self.actions, self.updates = int(counters["actions"]), int(counters["updates"])
        self.target_updates = int(counters["target_updates"])
        self.earlier_replacements = int(counters["actor_replacements"])
        # Checkpoints written before the count existed restart the average's warm-up.
        self.sl_steps = [int(n) for n in counters.get("sl_steps", [0] * len(self.sl_steps))]
