"""One MCNFSP player (:class:`MCNFSPAgent`): f_BR and its search, Pi, M_RL and M_SL, its
anticipatory choice per decision and its gradient steps on both networks."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from torch import nn

import agents.mcnfsp.config
from agents.base import Agent, Transition, sample_batch
from agents.device import (
    choose_device,
    cpu_state_dict,
    tensors_on,
    to_device,
    to_numpy,
    weight_count,
)
from agents.mcnfsp.config import GUMBEL_TARGET_WIDTH, MCNFSPConfig, utility_scale
from agents.mcnfsp.deviations import replay_steps_due
from agents.mcnfsp.search import BestResponseSearch
from agents.memories import CircularBuffer, ReservoirBuffer
from agents.networks import (
    AveragePolicyAgent,
    PolicyNetwork,
    PolicyValueNetwork,
    masked_logits,
    network_input,
)
from agents.search import DeadlinePassed
from hiddenenvs.game import Game


def average_probabilities(
    network: nn.Module, tensors: torch.Tensor, masks: np.ndarray
) -> np.ndarray:
    """Pi's probabilities ``(B, A)``, zero on illegal actions."""
    logits = masked_logits(network(tensors), masks)
    return to_numpy(torch.softmax(logits, dim=-1).double())


# ---- the player -------------------------------------------------------------------------------
class MCNFSPAgent(Agent):
    """One MCNFSP player: f_BR and its search, Pi, M_RL and M_SL (a search agent in self-play)."""

    USES_SEAT_VIEW = True

    def __init__(
        self,
        game: Game,
        player: int,
        architecture: dict[str, Any],
        config: MCNFSPConfig,
        # Qualified: the docs resolve the name (hiddenenvs.vector has an OpponentPolicy too).
        opponent_policy: agents.mcnfsp.config.OpponentPolicy,
        seed: int,
    ):
        super().__init__(game.info.num_distinct_actions, seed)
        self.game = game
        self.player = player
        self.config = config
        self.USES_TRUE_STATE = config.search_from == "true_state"  # the loop then passes roots=
        self.architecture = architecture
        self.best_response_network = PolicyValueNetwork(architecture)
        self.policy_network = PolicyNetwork(architecture)
        # Built on the CPU (the same initial weights everywhere), then moved. The search
        # evaluates one node per call, so ``auto`` weighs a one-row call (agents/device.py).
        self.device_choice = choose_device(
            config.device, weight_count(self.best_response_network), rows=1
        )
        self.device = self.device_choice.device
        self.best_response_network.to(self.device)
        self.policy_network.to(self.device)
        self.rl_optimizer = torch.optim.Adam(
            self.best_response_network.parameters(), lr=config.rl_learning_rate
        )
        self.sl_optimizer = torch.optim.Adam(
            self.policy_network.parameters(), lr=config.sl_learning_rate
        )
        self.search = BestResponseSearch(
            game,
            player,
            self.best_response_network,
            architecture,
            opponent_policy,
            config,
            self.rng,
        )
        self.scale = utility_scale(game)
        # A PUCT search visits at most num_simulations actions at its root: pi is stored sparse.
        # Gumbel's target covers every legal action: its largest GUMBEL_TARGET_WIDTH are kept.
        self.policy_width = min(
            self.num_actions,
            config.num_simulations
            if config.root_selection == "puct"
            else max(config.num_simulations, GUMBEL_TARGET_WIDTH),
        )
        self.replay, self.reservoir = self.new_memories(
            config.replay_capacity, config.reservoir_capacity
        )
        # Per episode in flight: the rewards so far, and the searches waiting for their z.
        self._episode_rewards: dict[int, list[float]] = {}
        # (decision index, observation, packed mask, f_BR's policy target, search value or None)
        self._episode_searches: dict[
            int, list[tuple[int, np.ndarray, np.ndarray, np.ndarray, float | None]]
        ] = {}
        self.searches = 0
        self.rl_steps = 0
        self.sl_steps = 0

    def new_memories(
        self, replay_capacity: int, reservoir_capacity: int
    ) -> tuple[CircularBuffer, ReservoirBuffer]:
        """Empty M_RL ``(s, pi, z)`` and M_SL ``(s, a)`` (they grow as they fill)."""
        observation_column = ((int(np.prod(self.architecture["input_shape"])),), np.float32)
        # Packed bits: combat has 12,961 actions.
        mask_column = ((math.ceil(self.num_actions / 8),), np.uint8)
        replay = CircularBuffer(
            replay_capacity,
            {
                "observation": observation_column,
                "action_mask": mask_column,
                "policy_actions": ((self.policy_width,), np.int64),
                "policy_probabilities": ((self.policy_width,), np.float32),
                "value_target": ((), np.float32),
            },
        )
        reservoir = ReservoirBuffer(
            reservoir_capacity,
            {
                "observation": observation_column,
                "action_mask": mask_column,
                "action": ((), np.int64),
            },
        )
        return replay, reservoir

    def network_arrays(self) -> dict[str, dict[str, np.ndarray]]:
        """f_BR's and Pi's weights as numpy arrays (what a self-play worker is sent)."""
        return {
            name: {k: v.numpy().copy() for k, v in cpu_state_dict(getattr(self, name)).items()}
            for name in ("best_response_network", "policy_network")
        }

    def load_network_arrays(self, arrays: dict[str, dict[str, np.ndarray]]) -> None:
        for name, state in arrays.items():
            # A copy: arrays from Ray's object store are read-only.
            getattr(self, name).load_state_dict({k: torch.tensor(v) for k, v in state.items()})

    # ---- acting ------------------------------------------------------------------------------
    def start_episode(self, episode_id=0):
        self._episode_rewards[episode_id] = []
        self._episode_searches[episode_id] = []

    def act_batch(self, observations, action_masks, episode_ids=None, views=None, roots=None):
        """Search with probability eta per decision (from ``views``, or ``roots`` states), else Pi."""
        if views is None and roots is None:
            raise ValueError(
                "MCNFSPAgent searches from the seat's view: call act_batch with views="
            )
        tensors = network_input(observations, self.architecture)
        flat = tensors.reshape(len(tensors), -1).numpy()
        tensors = tensors.to(self.device)
        action_masks = np.asarray(action_masks, dtype=np.int8)
        episode_ids = range(len(flat)) if episode_ids is None else episode_ids
        searching = self.rng.random(len(flat)) < self.config.anticipatory
        probabilities = np.zeros((len(flat), self.num_actions))
        targets = {}  # f_BR's policy target and the search's value, per searched row
        if (~searching).any():
            with torch.no_grad():
                probabilities[~searching] = average_probabilities(
                    self.policy_network,
                    tensors[to_device(~searching, self.device)],
                    action_masks[~searching],
                )
        for row in np.flatnonzero(searching):
            root = None if roots is None else roots[row]
            view = root.seat_view(self.player) if views is None else views[row]
            try:
                probabilities[row], target, value = self.search.search_result(view, root)
                targets[row] = (target, value)
            except DeadlinePassed:  # the loop abandons this episode: Pi answers, nothing is stored
                searching[row] = False
                with torch.no_grad():
                    probabilities[row] = average_probabilities(
                        self.policy_network, tensors[row : row + 1], action_masks[row : row + 1]
                    )[0]
                continue
            self.searches += 1
        actions = sample_batch(probabilities, self.rng)
        for row, episode_id in zip(
            np.flatnonzero(searching), np.asarray(list(episode_ids))[searching]
        ):
            packed = np.packbits(action_masks[row])
            self.reservoir.add(
                self.rng, observation=flat[row], action_mask=packed, action=actions[row]
            )
            if episode_id in self._episode_searches:  # learning: z comes at the episode's end
                self._episode_searches[episode_id].append(
                    (len(self._episode_rewards[episode_id]), flat[row], packed, *targets[row])
                )
        return actions, probabilities

    def policy_probabilities_batch(self, observations, action_masks, views=None):
        """The average policy Pi (what is evaluated), as NFSP's agents."""
        with torch.no_grad():
            return average_probabilities(
                self.policy_network,
                network_input(observations, self.architecture, self.device),
                np.asarray(action_masks, dtype=np.int8),
            )

    def observe(self, transition: Transition):
        if transition.episode_id in self._episode_rewards:
            self._episode_rewards[transition.episode_id].append(transition.reward)

    def end_episode(self, episode_id=0):
        """Store each search of the episode in M_RL with its value target: z, the return
        earned from it on, or with ``value_target: search`` the search's own root value."""
        rewards = np.asarray(self._episode_rewards.pop(episode_id, []), dtype=np.float64)
        returns_to_go = np.append(np.cumsum(rewards[::-1])[::-1], 0.0)
        for decision, observation, packed, pi, searched_value in self._episode_searches.pop(
            episode_id, []
        ):
            support = np.flatnonzero(pi)
            if (
                len(support) > self.policy_width
            ):  # Gumbel targets: the largest entries, renormalised
                support = np.sort(
                    support[np.argsort(-pi[support], kind="stable")[: self.policy_width]]
                )
                pi = pi / pi[support].sum()
            actions = np.zeros(self.policy_width, dtype=np.int64)
            weights = np.zeros(self.policy_width, dtype=np.float32)
            actions[: len(support)] = support
            weights[: len(support)] = pi[support]
            self.replay.add(
                observation=observation,
                action_mask=packed,
                policy_actions=actions,
                policy_probabilities=weights,
                value_target=self._value_target(returns_to_go[decision], searched_value),
            )

    def _value_target(self, returns_to_go: float, searched_value: float | None) -> float:
        """f_BR's value target in [-1, 1]: z (the paper's), or the search's root value with
        ``value_target: search`` (z where nothing was searched: one legal action)."""
        if self.config.value_target == "search" and searched_value is not None:
            return float(np.clip(searched_value, -1.0, 1.0))
        return float(np.clip(returns_to_go / self.scale, -1.0, 1.0))

    def store(self, memories: dict[str, Any]) -> None:
        """A self-play worker's searches (:meth:`~agents.mcnfsp.self_play.SelfPlayWorker.play_games`) into M_RL and
        M_SL, as if searched here in that order."""
        if len(memories["replay"]["value_target"]):
            self.replay.add_batch(**memories["replay"])
        if len(memories["reservoir"]["action"]):
            self.reservoir.add_batch(self.rng, **memories["reservoir"])
        self.searches += memories["searches"]

    # ---- learning ------------------------------------------------------------------------------
    def _batch(self, memory, size: int) -> dict[str, torch.Tensor]:
        batch = memory.sample(size, self.rng)
        batch["action_mask"] = np.unpackbits(batch["action_mask"], axis=1, count=self.num_actions)
        batch["observation"] = network_input(batch["observation"], self.architecture).numpy()
        return tensors_on(batch, self.device)

    def rl_step(self) -> tuple[float, float, float]:
        """One f_BR step, (z - v)^2 - pi^T log p on a minibatch of M_RL; (policy, value)
        losses and the prior's spread: f_BR's policy entropy as a fraction of the uniform
        one over the legal actions (1 uniform, 0 one action; mean over states with a choice),
        which shows a prior locking onto one action (agents.mcnfsp.deviations)."""
        batch = self._batch(self.replay, self.config.batch_size)
        logits, values = self.best_response_network(batch["observation"])
        log_p = torch.log_softmax(masked_logits(logits, batch["action_mask"]), dim=-1)
        with torch.no_grad():
            legal = batch["action_mask"].sum(dim=-1).float()
            entropy = -(log_p.exp() * log_p).sum(dim=-1)  # illegal: p = 0 at a finite logit
            choice = legal > 1
            spread = (entropy[choice] / legal[choice].log()).mean() if choice.any() else None
        targets = torch.zeros_like(log_p).scatter_add_(
            1, batch["policy_actions"], batch["policy_probabilities"]
        )
        policy_loss = -(targets * log_p).sum(dim=-1).mean()
        value_loss = nn.functional.mse_loss(values, batch["value_target"])
        self.rl_optimizer.zero_grad()
        (policy_loss + value_loss).backward()
        self.rl_optimizer.step()
        self.rl_steps += 1
        return (
            policy_loss.item(),
            value_loss.item(),
            float("nan") if spread is None else spread.item(),
        )

    def sl_step(self) -> float:
        """One Pi step: cross-entropy of the search's actions on a minibatch of M_SL."""
        batch = self._batch(self.reservoir, self.config.batch_size)
        logits = masked_logits(self.policy_network(batch["observation"]), batch["action_mask"])
        loss = nn.functional.cross_entropy(logits, batch["action"])
        self.sl_optimizer.zero_grad()
        loss.backward()
        self.sl_optimizer.step()
        self.sl_steps += 1
        return loss.item()

    def learn(self) -> dict[str, list[float]]:
        """Gradient steps on f_BR and on Pi (``rl_steps`` / ``sl_steps``, or as many as their
        replay ratios call for), each once its memory is big enough."""
        losses: dict[str, list[float]] = {
            "rl_loss": [],
            "value_loss": [],
            "prior_spread": [],
            "sl_loss": [],
        }
        minimum = max(self.config.min_buffer_size, 1)
        config = self.config
        if len(self.replay) >= minimum:
            for _ in range(
                replay_steps_due(
                    config.rl_steps,
                    config.rl_replay_ratio,
                    self.replay.added,
                    self.rl_steps,
                    config.batch_size,
                )
            ):
                policy_loss, value_loss, spread = self.rl_step()
                losses["rl_loss"].append(policy_loss)
                losses["value_loss"].append(value_loss)
                if not np.isnan(spread):
                    losses["prior_spread"].append(spread)
        if len(self.reservoir) >= minimum:
            for _ in range(
                replay_steps_due(
                    config.sl_steps,
                    config.sl_replay_ratio,
                    self.reservoir.seen,
                    self.sl_steps,
                    config.batch_size,
                )
            ):
                losses["sl_loss"].append(self.sl_step())
        return losses

    def evaluation_agent(self) -> AveragePolicyAgent:
        return AveragePolicyAgent(self.policy_network, self.architecture)

    # ---- checkpoints -----------------------------------------------------------------------------
    def state_dict(self):
        return {
            "best_response_network": self.best_response_network.state_dict(),
            "policy_network": self.policy_network.state_dict(),
            "rl_optimizer": self.rl_optimizer.state_dict(),
            "sl_optimizer": self.sl_optimizer.state_dict(),
            "replay": self.replay.state_dict(),
            "reservoir": self.reservoir.state_dict(),
            "rng": self.rng.bit_generator.state,
            "counters": {
                "searches": self.searches,
                "rl_steps": self.rl_steps,
                "sl_steps": self.sl_steps,
            },
        }

    def load_state_dict(self, state):
        for name in ("best_response_network", "policy_network", "rl_optimizer", "sl_optimizer"):
            getattr(self, name).load_state_dict(state[name])
        self.replay.load_state_dict(state["replay"])
        self.reservoir.load_state_dict(state["reservoir"])
        self.rng.bit_generator.state = state["rng"]
        counters = state["counters"]
        self.searches, self.rl_steps, self.sl_steps = (
            counters["searches"],
            counters["rl_steps"],
            counters["sl_steps"],
        )
