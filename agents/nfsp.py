r"""Neural Fictitious Self-Play (Heinrich & Silver 2016, "Deep Reinforcement Learning from
Self-Play in Imperfect-Information Games", arXiv:1603.01121).

Fictitious play lets every player best-respond to the *average* of its opponents' past
strategies; in two-player zero-sum games the average strategies converge to a Nash
equilibrium. NFSP approximates both halves with networks, per player i:

- a best response ``Q(s, a | theta^Q)`` learned by DQN (Mnih et al. 2015) from a
  circular replay memory M_RL of the player's transitions (s_t, a_t, r_{t+1}, s_{t+1}),
  minimising the squared TD error (paper, Algorithm 1, "update theta^Q with loss")

  .. math::

     \mathcal{L}(\theta^Q) = \mathbb{E}\left[\left(r + \gamma \max_{a' \text{ legal}} Q(s', a' \mid \theta^{Q'}) - Q(s, a \mid \theta^Q)\right)^2\right]

  with a target network theta^{Q'} copied every ``target_update_every`` steps and
  epsilon-greedy exploration, epsilon decaying linearly;
- an average policy ``Pi(s, a | theta^Pi)`` learned by supervised classification of the
  player's own best-response behaviour, kept in a reservoir memory M_SL (Vitter 1985,
  Algorithm R: the n-th item replaces a uniformly chosen slot with probability
  capacity / n, so M_SL is a uniform sample of all best-response play), minimising

  .. math::

     \mathcal{L}(\theta^\Pi) = \mathbb{E}_{(s, a) \sim \mathcal{M}_{SL}}\left[-\log \Pi(s, a \mid \theta^\Pi)\right]

- anticipatory dynamics: at the start of each episode the player follows its best
  response with probability eta (``anticipatory``), otherwise its average policy
  (Algorithm 1, "set policy sigma <- epsilon-greedy(Q) with probability eta, else Pi");
  (s, a) goes into M_SL only when the best response acted, while every transition goes
  into M_RL.

Illegal actions are masked everywhere: in the greedy choice and the TD target's max
(set to -inf), and in the average policy's softmax and its cross-entropy (logits of
illegal actions pushed to a large negative number), so no probability ever leaks to an
illegal move.

Implementation notes. Acting is batched over all episodes in flight (the common loop
plays ``num_envs`` episodes in lockstep), so each decision tick costs one forward pass
per network. Gradient steps happen in :meth:`NFSP.update`, one RL and one SL step per
``learn_every`` new transitions of a player, as in the paper's "every n steps".
The evaluation policy is the average policy ``Pi``.

Cost. On Leduc the networks are tiny (30 inputs, 128 hidden units, 3 actions), so a
gradient step is mostly per-call overhead, not arithmetic. One learning step therefore
fuses the two updates the paper takes at the same moment: L(theta^Q) and L(theta^Pi)
are summed and differentiated in one backward pass (their parameters are disjoint, so
each network gets exactly its own loss's gradient), and Adam runs as PyTorch's fused
kernel (one call per network instead of a dozen tensor operations per parameter).
With ``compile_learning_step`` the fused step is one graph compiled by ``torch.compile``
(inductor): ``torch.func.grad_and_value`` gives both losses' gradients and torch's
functional Adam (``torch.optim.adam.adam``, what ``torch.optim.Adam.step`` runs) updates
the weights and the optimizers' own state, so one Python call does the whole step. Its
first call compiles (about 25 s of wall time on one core, counted in the budget); on Leduc
each step then costs about 2.3 times less CPU than the eager fused step.

Self-play on workers. With ``workers`` > 1 (or a ``ray_address``: ``"local"``, ``"auto"``,
``host:port``; ``train.py --address``) a step's episodes are shared among
:class:`SelfPlayWorker` objects (spawn processes or Ray actors, :class:`agents.parallel.WorkerPool`),
one seeded piece each. A worker holds a snapshot of the current Q and Pi networks and plays
its piece through :func:`agents.episodes.play_episodes` with the learner's behaviour policy
(per episode and player the eta-mixture of epsilon-greedy Q and Pi; epsilon counts the
player's transitions at the step's start plus the piece's own); it sends back the
transitions (M_RL) and the best response's (s, a) pairs (M_SL) in the order played, and the
learner adds them, piece by piece in a fixed order (the reservoir's draws from its own
generator), before its gradient steps. Deviation from the paper: Algorithm 1 of Heinrich &
Silver (2016) updates the networks as the transitions are played; here the behaviour
policy is the networks of the step's start, one step stale (the one-process lockstep too
learns only after a step's episodes). A run on N workers is deterministic for its seed and N, but is not
the one-worker run (each piece draws from its own seeded generators); with ``workers: 1``
and no address the step is the loop's self-play, unchanged. Each worker plays its piece
through the AEC envs: ``vector_self_play`` is the one-process path. A step whose deadline
cuts a piece keeps nothing of it (the loop counts nothing of that step).
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.optim.adam import adam as functional_adam

import hiddenenvs
from agents.base import Agent, Learner, StepReport, Transition, sample_batch
from agents.catalogue import POSITIVE, RANGE
from agents.device import (
    check_device_setting,
    choose_device,
    cpu_state_dict,
    to_device,
    to_numpy,
    weight_count,
)
from agents.episodes import play_episodes
from agents.memories import CircularBuffer, ReservoirBuffer
from agents.networks import (
    AveragePolicyAgent,
    copy_weights,
    masked_logits,
    mlp,
    network_input,
)
from agents.parallel import WorkerPool, local_deadline, seeded_shares, unix_deadline
from hiddenenvs.game import Game

# A self-play worker's memories keep a piece's rows whole (they grow as they fill).
MAX_PIECE_ROWS = 2**62
# The networks a worker acts with (the target network only enters the learner's TD target).
ACTING_NETWORKS = ("q_network", "policy_network")


@dataclass
class NFSPConfig:
    """NFSP hyperparameters (defaults: OpenSpiel's NFSP example, with Adam)."""

    hidden_sizes: list[int] = field(default_factory=lambda: [128])
    anticipatory: float = 0.1  # eta: probability of playing the best response in an episode
    replay_capacity: int = 200_000  # M_RL, circular
    reservoir_capacity: int = 1_000_000  # M_SL, reservoir sampling
    batch_size: int = 128
    learn_every: int = 64  # new transitions of a player per RL+SL gradient step
    min_buffer_size: int = 1_000  # no learning before both memories hold this many
    rl_learning_rate: float = 0.01
    sl_learning_rate: float = 0.01
    target_update_every: int = 300  # RL gradient steps between target-network copies
    discount: float = 1.0
    epsilon_start: float = 0.06
    epsilon_end: float = 0.001
    epsilon_decay_transitions: int = 1_000_000  # linear decay over this many transitions
    optimizer: str = "adam"  # "adam" or "sgd"
    # The fused RL+SL step through torch.compile (Adam only): its first call compiles (tens
    # of seconds, within the budget), then each step is one compiled graph (module docstring)
    compile_learning_step: bool = False
    device: str = "auto"  # auto | cpu | cuda | cuda:N (agents/device.py)
    # Self-play workers (1: the loop's self-play in this process); more, or a ray_address,
    # play each step's episodes in that many workers (module docstring)
    workers: int = field(default=1, metadata={RANGE: POSITIVE})
    # "local" or a cluster ("auto", host:port; train.py --address): the workers are Ray actors
    ray_address: str | None = None

    def __post_init__(self) -> None:
        from agents.config import ConfigError

        check_device_setting(self.device)
        if not 0.0 <= self.anticipatory <= 1.0:
            raise ConfigError(
                f"trainer.params.anticipatory must be in [0, 1], got {self.anticipatory}"
            )
        if self.optimizer not in ("adam", "sgd"):
            raise ConfigError(
                f"trainer.params.optimizer must be 'adam' or 'sgd', got {self.optimizer!r}"
            )
        if self.compile_learning_step and self.optimizer != "adam":
            raise ConfigError(
                "trainer.params.compile_learning_step needs optimizer 'adam', got "
                f"{self.optimizer!r}"
            )
        for name in (
            "replay_capacity",
            "reservoir_capacity",
            "batch_size",
            "learn_every",
            "target_update_every",
        ):
            if getattr(self, name) < 1:
                raise ConfigError(f"trainer.params.{name} must be >= 1, got {getattr(self, name)}")


# ---- agents --------------------------------------------------------------------------------
class NFSPAgent(Agent):
    """One NFSP player: Q (best response), its target, Pi (average policy), M_RL and M_SL."""

    def __init__(self, input_size: int, num_actions: int, config: NFSPConfig, seed: int):
        super().__init__(num_actions, seed)
        self.config = config
        self.architecture = {
            "input_size": input_size,
            "hidden_sizes": list(config.hidden_sizes),
            "num_actions": num_actions,
        }
        self.q_network = mlp(input_size, config.hidden_sizes, num_actions)
        self.target_network = mlp(input_size, config.hidden_sizes, num_actions)
        copy_weights(self.q_network, self.target_network)
        self.policy_network = mlp(input_size, config.hidden_sizes, num_actions)
        # Built on the CPU (the same initial weights everywhere), then moved: updates and
        # batched acting run on the device, the memories stay in host memory.
        self.device_choice = choose_device(
            config.device, weight_count(self.q_network), config.batch_size
        )
        self.device = self.device_choice.device
        for network in (self.q_network, self.target_network, self.policy_network):
            network.to(self.device)
        # The fused kernel: the same update rule in one call per network (see "Cost" above).
        optimizer = torch.optim.Adam if config.optimizer == "adam" else torch.optim.SGD
        self.q_optimizer = optimizer(
            self.q_network.parameters(), lr=config.rl_learning_rate, fused=True
        )
        self.policy_optimizer = optimizer(
            self.policy_network.parameters(), lr=config.sl_learning_rate, fused=True
        )
        observation_column = ((input_size,), np.float32)
        mask_column = ((num_actions,), np.int8)
        self.replay = CircularBuffer(
            config.replay_capacity,
            {
                "observation": observation_column,
                "action_mask": mask_column,
                "action": ((), np.int64),
                "reward": ((), np.float32),
                "next_observation": observation_column,
                "next_action_mask": mask_column,
                "done": ((), np.float32),
            },
        )
        self.reservoir = ReservoirBuffer(
            config.reservoir_capacity,
            {
                "observation": observation_column,
                "action_mask": mask_column,
                "action": ((), np.int64),
            },
        )
        self._compiled_step: Any = None  # built by the first compiled learning step
        self.best_response_mode: dict[int, bool] = {}
        self.transitions = 0  # transitions observed, drives epsilon and the learning schedule
        self.learn_calls = 0
        self.rl_steps = 0

    @property
    def epsilon(self) -> float:
        c = self.config
        progress = min(1.0, self.transitions / max(1, c.epsilon_decay_transitions))
        return c.epsilon_start + (c.epsilon_end - c.epsilon_start) * progress

    # ---- acting (Algorithm 1: sample sigma per episode, act, store) ----------------------
    def start_episode(self, episode_id=0):
        self.best_response_mode[episode_id] = bool(self.rng.random() < self.config.anticipatory)

    def _best_response_probabilities(
        self, observations: torch.Tensor, masks: np.ndarray
    ) -> np.ndarray:
        q_values = self.q_network(observations)
        greedy = to_numpy(masked_logits(q_values, masks).argmax(dim=-1))
        legal = masks.astype(np.float64)
        probabilities = self.epsilon * legal / legal.sum(axis=1, keepdims=True)
        probabilities[np.arange(len(greedy)), greedy] += 1.0 - self.epsilon
        return probabilities

    def _average_probabilities(self, observations: torch.Tensor, masks: np.ndarray) -> np.ndarray:
        logits = masked_logits(self.policy_network(observations), masks)
        return to_numpy(torch.softmax(logits, dim=-1).double())

    def act_batch(self, observations, action_masks, episode_ids=None, views=None):
        observations = network_input(observations, self.architecture).numpy()
        action_masks = np.asarray(action_masks, dtype=np.int8)
        if episode_ids is None:
            episode_ids = range(len(observations))
        best_response = np.array([self.best_response_mode.get(i, False) for i in episode_ids])
        probabilities = np.zeros((len(observations), self.num_actions))
        with torch.inference_mode():
            tensors = to_device(observations, self.device)
            rows = to_device(best_response, self.device)
            if best_response.any():
                probabilities[best_response] = self._best_response_probabilities(
                    tensors[rows], action_masks[best_response]
                )
            if (~best_response).any():
                probabilities[~best_response] = self._average_probabilities(
                    tensors[~rows], action_masks[~best_response]
                )
        actions = sample_batch(probabilities, self.rng)
        if best_response.any():
            self.reservoir.add_batch(
                self.rng,
                observation=observations[best_response],
                action_mask=action_masks[best_response],
                action=actions[best_response],
            )
        return actions, probabilities

    def policy_probabilities_batch(self, observations, action_masks, views=None):
        with torch.inference_mode():
            return self._average_probabilities(
                network_input(observations, self.architecture, self.device),
                np.asarray(action_masks, dtype=np.int8),
            )

    def observe(self, transition: Transition):
        self.replay.add(  # board-shaped tensors are stored flat, as the MLP reads them
            observation=np.ravel(transition.observation),
            action_mask=transition.action_mask,
            action=transition.action,
            reward=transition.reward,
            next_observation=np.ravel(transition.next_observation),
            next_action_mask=transition.next_action_mask,
            done=float(transition.done),
        )
        self.transitions += 1

    def observe_batch(
        self,
        observations,
        action_masks,
        actions,
        rewards,
        next_observations,
        next_action_masks,
        dones,
        episode_ids=None,
    ):
        """:meth:`observe` for ``n`` transitions at once (arrays ``[n, ...]``, in play order):
        the same replay memory, written one column at a time (batched self-play); the
        memory is flat, so ``episode_ids`` are not needed."""
        count = len(actions)
        self.replay.add_batch(
            observation=np.reshape(observations, (count, -1)),
            action_mask=action_masks,
            action=actions,
            reward=rewards,
            next_observation=np.reshape(next_observations, (count, -1)),
            next_action_mask=next_action_masks,
            done=np.asarray(dones, dtype=np.float32),
        )
        self.transitions += count

    # ---- learning ------------------------------------------------------------------------------
    def _rl_loss(self) -> torch.Tensor:
        """L(theta^Q) on a minibatch of M_RL (:meth:`_rl_loss_on`)."""
        batch = self.replay.sample_tensors(self.config.batch_size, self.rng, self.device)
        return self._rl_loss_on(batch)

    def _sl_loss(self) -> torch.Tensor:
        """L(theta^Pi) on a minibatch of M_SL (:meth:`_sl_loss_on`)."""
        batch = self.reservoir.sample_tensors(self.config.batch_size, self.rng, self.device)
        return self._sl_loss_on(batch)

    def _rl_loss_on(
        self, batch: dict[str, torch.Tensor], weights: dict[str, torch.Tensor] | None = None
    ) -> torch.Tensor:
        """L(theta^Q) on ``batch``: the squared TD error against the target network, its max
        taken over the legal next actions only; Q's own weights, or ``weights`` (functional,
        for :func:`torch.func.grad_and_value`)."""
        with torch.no_grad():
            next_q = masked_logits(
                self.target_network(batch["next_observation"]), batch["next_action_mask"]
            )
            next_value = next_q.max(dim=-1).values.masked_fill(batch["done"] > 0, 0.0)
            target = batch["reward"] + self.config.discount * next_value
        q = _forward(self.q_network, weights, batch["observation"])
        chosen = q.gather(1, batch["action"][:, None]).squeeze(1)
        return nn.functional.mse_loss(chosen, target)

    def _sl_loss_on(
        self, batch: dict[str, torch.Tensor], weights: dict[str, torch.Tensor] | None = None
    ) -> torch.Tensor:
        """L(theta^Pi) on ``batch``: cross-entropy over the legal actions; Pi's own weights,
        or ``weights`` (functional)."""
        logits = _forward(self.policy_network, weights, batch["observation"])
        return nn.functional.cross_entropy(
            masked_logits(logits, batch["action_mask"]), batch["action"]
        )

    def _after_rl_step(self) -> None:
        self.rl_steps += 1
        if self.rl_steps % self.config.target_update_every == 0:
            copy_weights(self.q_network, self.target_network)

    def rl_step(self) -> float:
        """One DQN step on a minibatch of M_RL (masked max in the TD target)."""
        loss = self._rl_loss()
        self.q_optimizer.zero_grad()
        loss.backward()
        self.q_optimizer.step()
        self._after_rl_step()
        return loss.item()

    def sl_step(self) -> float:
        """One supervised step on a minibatch of M_SL: cross-entropy over legal actions."""
        loss = self._sl_loss()
        self.policy_optimizer.zero_grad()
        loss.backward()
        self.policy_optimizer.step()
        return loss.item()

    def rl_and_sl_step(self) -> tuple[float, float]:
        """:meth:`rl_step` then :meth:`sl_step`, fused: one backward pass through
        ``L(theta^Q) + L(theta^Pi)``. The two networks share no parameter, so each gets its
        own loss's gradient, bit for bit what the two separate steps compute, and the
        minibatches are drawn in the same order (M_RL, then M_SL)."""
        if self.config.compile_learning_step:
            return self._compiled_rl_and_sl_step()
        rl_loss, sl_loss = self._rl_loss(), self._sl_loss()
        self.q_optimizer.zero_grad()
        self.policy_optimizer.zero_grad()
        (rl_loss + sl_loss).backward()
        self.q_optimizer.step()
        self.policy_optimizer.step()
        self._after_rl_step()
        return rl_loss.item(), sl_loss.item()

    def _compiled_rl_and_sl_step(self) -> tuple[float, float]:
        """:meth:`rl_and_sl_step` as one graph compiled by ``torch.compile``: the same
        minibatches, losses and Adam update (``torch.func.grad_and_value`` for the gradients,
        torch's functional Adam on the optimizers' own state and settings; the update runs
        without autograd, as ``optimizer.step()`` does)."""
        compiling = self._compiled_step is None
        if compiling:
            for optimizer in (self.q_optimizer, self.policy_optimizer):
                _initialise_adam_state(optimizer)
            self._compiled_step = torch.compile(self._functional_step, fullgraph=True)
        rl_batch = self.replay.sample_tensors(self.config.batch_size, self.rng, self.device)
        sl_batch = self.reservoir.sample_tensors(self.config.batch_size, self.rng, self.device)
        with torch.no_grad():
            try:
                rl_loss, sl_loss = self._compiled_step(rl_batch, sl_batch)
            except Exception as error:
                if not compiling:
                    raise
                # No working C++ compiler for inductor, say: the same step, uncompiled (a
                # fault of the step itself raises again here).
                first_line = (str(error).strip().splitlines() or [""])[0]
                warnings.warn(
                    "trainer.params.compile_learning_step: torch.compile failed "
                    f"({type(error).__name__}: {first_line}); this run's learning steps "
                    "run uncompiled",
                    stacklevel=2,
                )
                self._compiled_step = self._functional_step
                rl_loss, sl_loss = self._compiled_step(rl_batch, sl_batch)
        self._after_rl_step()
        return rl_loss.item(), sl_loss.item()

    def _functional_step(
        self, rl_batch: dict[str, torch.Tensor], sl_batch: dict[str, torch.Tensor]
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The compiled step's body: both losses, their gradients, one Adam update each."""
        losses = []
        for network, optimizer, loss_of, batch in (
            (self.q_network, self.q_optimizer, self._rl_loss_on, rl_batch),
            (self.policy_network, self.policy_optimizer, self._sl_loss_on, sl_batch),
        ):
            parameters = dict(network.named_parameters())
            gradients, loss = torch.func.grad_and_value(
                lambda weights: loss_of(batch, weights)  # noqa: B023 (called at once)
            )(parameters)
            _adam_update(optimizer, [gradients[name] for name in parameters])
            losses.append(loss)
        return losses[0], losses[1]

    def learn(self) -> tuple[list[float], list[float]]:
        """The gradient steps due since the last call (one per ``learn_every`` transitions)."""
        due = self.transitions // self.config.learn_every - self.learn_calls
        self.learn_calls += due
        rl_losses, sl_losses = [], []
        minimum = max(self.config.min_buffer_size, 1)
        for _ in range(due):
            rl_ready, sl_ready = len(self.replay) >= minimum, len(self.reservoir) >= minimum
            if rl_ready and sl_ready:
                rl_loss, sl_loss = self.rl_and_sl_step()
                rl_losses.append(rl_loss)
                sl_losses.append(sl_loss)
            elif rl_ready:
                rl_losses.append(self.rl_step())
            elif sl_ready:
                sl_losses.append(self.sl_step())
        return rl_losses, sl_losses

    def evaluation_agent(self) -> AveragePolicyAgent:
        return AveragePolicyAgent(self.policy_network, self.architecture)

    # ---- self-play on workers (module docstring) -----------------------------------------------
    def network_arrays(self) -> dict[str, dict[str, np.ndarray]]:
        """Q's and Pi's weights as numpy arrays (what a self-play worker is sent)."""
        return {
            name: {k: v.numpy().copy() for k, v in cpu_state_dict(getattr(self, name)).items()}
            for name in ACTING_NETWORKS
        }

    def load_network_arrays(self, arrays: dict[str, dict[str, np.ndarray]]) -> None:
        for name, state in arrays.items():
            # A copy: arrays from Ray's object store are read-only.
            network = getattr(self, name)
            network.load_state_dict({k: torch.tensor(v) for k, v in state.items()})

    def start_piece(self, transitions: int, piece_seed: int, player: int) -> None:
        """A worker's player before a piece: empty memories that keep every row, the
        learner's transition count (its epsilon) and a generator seeded from the piece."""
        self.replay = CircularBuffer(MAX_PIECE_ROWS, self.replay.columns)
        self.reservoir = ReservoirBuffer(MAX_PIECE_ROWS, self.reservoir.columns)
        self.transitions = transitions
        self.best_response_mode.clear()
        self.rng = np.random.default_rng([piece_seed, player])

    def piece_memories(self, transitions_before: int) -> dict[str, Any]:
        """A worker's player after a piece: its M_RL and M_SL rows in the order played."""
        return {
            "replay": self.replay.state_dict()["data"],
            "reservoir": self.reservoir.state_dict()["data"],
            "transitions": self.transitions - transitions_before,
        }

    def store(self, memories: dict[str, Any]) -> None:
        """A worker's piece (:meth:`piece_memories`) into M_RL and M_SL, as if played here in
        that order (the reservoir draws from this player's generator)."""
        if memories["transitions"]:
            self.replay.add_batch(**memories["replay"])
        if len(memories["reservoir"]["action"]):
            self.reservoir.add_batch(self.rng, **memories["reservoir"])
        self.transitions += memories["transitions"]

    # ---- checkpoints -----------------------------------------------------------------------------
    def state_dict(self):
        return {
            "q_network": self.q_network.state_dict(),
            "target_network": self.target_network.state_dict(),
            "policy_network": self.policy_network.state_dict(),
            "q_optimizer": self.q_optimizer.state_dict(),
            "policy_optimizer": self.policy_optimizer.state_dict(),
            "replay": self.replay.state_dict(),
            "reservoir": self.reservoir.state_dict(),
            "rng": self.rng.bit_generator.state,
            "counters": {
                "transitions": self.transitions,
                "learn_calls": self.learn_calls,
                "rl_steps": self.rl_steps,
            },
        }

    def load_state_dict(self, state):
        for name in (
            "q_network",
            "target_network",
            "policy_network",
            "q_optimizer",
            "policy_optimizer",
        ):
            getattr(self, name).load_state_dict(state[name])
        self.replay.load_state_dict(state["replay"])
        self.reservoir.load_state_dict(state["reservoir"])
        self.rng.bit_generator.state = state["rng"]
        counters = state["counters"]
        self.transitions = counters["transitions"]
        self.learn_calls = counters["learn_calls"]
        self.rl_steps = counters["rl_steps"]


def _forward(
    network: nn.Module, weights: dict[str, torch.Tensor] | None, inputs: torch.Tensor
) -> torch.Tensor:
    """``network(inputs)``, with ``weights`` in place of its parameters when given."""
    if weights is None:
        return network(inputs)
    return torch.func.functional_call(network, weights, (inputs,))


def _initialise_adam_state(optimizer: torch.optim.Optimizer) -> None:
    """The state ``torch.optim.Adam`` creates at its first step (a zero step count and
    moments), for the parameters that have none yet; a loaded state is kept."""
    for group in optimizer.param_groups:
        for parameter in group["params"]:
            if not optimizer.state[parameter]:
                optimizer.state[parameter] = {
                    "step": torch.tensor(0.0, dtype=torch.float32, device=parameter.device),
                    "exp_avg": torch.zeros_like(parameter, memory_format=torch.preserve_format),
                    "exp_avg_sq": torch.zeros_like(parameter, memory_format=torch.preserve_format),
                }


def _adam_update(optimizer: torch.optim.Optimizer, gradients: list[torch.Tensor]) -> None:
    """``optimizer.step()`` with ``gradients`` for its one parameter group, through torch's
    functional Adam (``torch.optim.adam.adam``: the update ``torch.optim.Adam`` computes,
    traceable by ``torch.compile``), on the optimizer's own state and settings."""
    (group,) = optimizer.param_groups
    parameters = group["params"]
    states = [optimizer.state[parameter] for parameter in parameters]
    functional_adam(
        parameters,
        gradients,
        [state["exp_avg"] for state in states],
        [state["exp_avg_sq"] for state in states],
        [],
        [state["step"] for state in states],
        foreach=False,
        fused=False,
        amsgrad=group["amsgrad"],
        beta1=group["betas"][0],
        beta2=group["betas"][1],
        lr=group["lr"],
        weight_decay=group["weight_decay"],
        eps=group["eps"],
        maximize=group["maximize"],
    )


class NFSP(Learner):
    """NFSP self-play: one :class:`NFSPAgent` per player; evaluation = average policies."""

    CONFIG_CLASS = NFSPConfig
    METRICS = ("rl_loss", "sl_loss", "epsilon", "replay_size", "reservoir_size")

    def __init__(self, game: Game, config: NFSPConfig, seed: int):
        super().__init__(game, config, seed)
        info = game.info
        input_size = int(np.prod(info.information_state_tensor_shape))
        self._agents = [
            NFSPAgent(input_size, info.num_distinct_actions, config, seed=seed * 1000 + player)
            for player in range(info.num_players)
        ]
        self.device_choice = self._agents[0].device_choice
        self._pool: WorkerPool | None = None
        self._network_version = 0  # bumped when the networks change; sent with them to workers

    @property
    def agents(self) -> list[Agent]:
        return list(self._agents)

    @property
    def in_workers(self) -> bool:
        """Whether self-play runs in workers (processes or Ray actors), not in this process."""
        return self.config.workers > 1 or self.config.ray_address is not None

    def step(self, loop: Any) -> StepReport:
        """The loop's self-play (one process), or the step's episodes on the workers; then
        the gradient steps due."""
        if not self.in_workers:
            return super().step(loop)
        played = self._self_play_in_workers(loop)
        if loop.step_cut:
            return StepReport(episodes=0, iterations=0)
        return StepReport(episodes=played, iterations=1, metrics=self.update())

    def _self_play_in_workers(self, loop: Any) -> int:
        """The step's episodes shared among the workers (one piece each, seeded from the
        loop's generator), their rows stored in piece order; the episodes played, or none
        with ``loop.step_cut`` set when the deadline cut a piece (nothing is kept)."""
        shares = seeded_shares(loop.rng, loop.max_episodes, self.config.workers)
        networks = [agent.network_arrays() for agent in self._agents]
        transitions = [agent.transitions for agent in self._agents]
        send = unix_deadline(loop.deadline)
        pieces = [
            (self._network_version, networks, transitions, seeds, seed, send)
            for seeds, seed in shares
        ]
        played = self._workers().map_all("play_games", pieces, loop.deadline)
        if played is None:
            loop.step_cut = True
            return 0
        for piece_memories in played:  # piece order: the same run on every machine
            for agent, memories in zip(self._agents, piece_memories):
                agent.store(memories)
        return loop.max_episodes

    def load_network_arrays(self, networks: Sequence[dict[str, dict[str, np.ndarray]]]) -> None:
        """The players' Q and Pi from a learner's snapshot (a worker's copy)."""
        for agent, arrays in zip(self._agents, networks):
            agent.load_network_arrays(arrays)

    def _workers(self) -> WorkerPool:
        """The self-play workers, started by the first step that needs them."""
        if self._pool is None:
            self._pool = WorkerPool(
                SelfPlayWorker,
                (self.game, self.config, self.seed),
                self.config.workers,
                ray_address=self.config.ray_address,
                name="nfsp-self-play",
                where="trainer.params.ray_address",
            )
        return self._pool

    def close(self) -> None:
        """Stop the self-play workers now (running episodes are abandoned); safe to call
        again, and after an exception or Ctrl-C."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.close()

    def update(self) -> dict[str, float]:
        rl_losses: list[float] = []
        sl_losses: list[float] = []
        for agent in self._agents:
            rl, sl = agent.learn()
            rl_losses += rl
            sl_losses += sl
        if not rl_losses and not sl_losses:
            return {}
        self._network_version += 1
        metrics = {
            "epsilon": float(np.mean([a.epsilon for a in self._agents])),
            "replay_size": float(sum(len(a.replay) for a in self._agents)),
            "reservoir_size": float(sum(len(a.reservoir) for a in self._agents)),
        }
        if rl_losses:
            metrics["rl_loss"] = float(np.mean(rl_losses))
        if sl_losses:
            metrics["sl_loss"] = float(np.mean(sl_losses))
        return metrics

    def evaluation_agent(self, player: int) -> AveragePolicyAgent:
        return self._agents[player].evaluation_agent()

    def state_dict(self) -> dict[str, Any]:
        return {"agents": [agent.state_dict() for agent in self._agents]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if len(state["agents"]) != len(self._agents):
            raise ValueError(
                f"checkpoint has {len(state['agents'])} NFSP players, this game has {len(self._agents)}"
            )
        for agent, agent_state in zip(self._agents, state["agents"]):
            agent.load_state_dict(agent_state)
        self._network_version += 1


class SelfPlayWorker:
    """A self-play worker of :class:`agents.parallel.WorkerPool` (a process or a Ray actor):
    a copy of the learner's players on the CPU and envs, playing pieces of a step's episodes
    with a snapshot of the networks through :func:`agents.episodes.play_episodes`. A piece's
    episodes depend on the piece alone (its seeds, ``piece_seed`` for the players'
    generators, the learner's transition counts), not on the worker."""

    def __init__(self, game: Game, config: NFSPConfig, seed: int):
        torch.set_num_threads(1)
        local = dataclasses.replace(config, workers=1, ray_address=None, device="cpu")
        self.learner = NFSP(game, local, seed)
        self.network_version: int | None = None
        self.envs: list = []

    def play_games(
        self,
        network_version: int,
        networks: list[dict[str, dict[str, np.ndarray]]],
        transitions: list[int],
        seeds: list[int],
        piece_seed: int,
        unix_deadline: float | None = None,
    ) -> list[dict[str, Any]] | None:
        """The episodes of ``seeds``; per player its transitions and best-response pairs (in
        the order played, :meth:`NFSPAgent.piece_memories`); None when the deadline cut one."""
        if network_version != self.network_version:
            self.learner.load_network_arrays(networks)
            self.network_version = network_version
        players = self.learner._agents
        for player, (agent, count) in enumerate(zip(players, transitions)):
            agent.start_piece(count, piece_seed, player)
        spec = self.learner.game.spec
        while len(self.envs) < len(seeds):
            self.envs.append(hiddenenvs.make(spec.name, **dict(spec.params)).unwrapped)
        seat_agents: dict[str, Agent] = dict(zip(self.envs[0].possible_agents, players))
        returns = play_episodes(
            self.envs[: len(seeds)],
            seat_agents,
            np.asarray(seeds),
            deadline=local_deadline(unix_deadline),
        )
        if len(returns) < len(seeds):
            return None
        return [agent.piece_memories(count) for agent, count in zip(players, transitions)]
