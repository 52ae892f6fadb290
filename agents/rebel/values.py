"""ReBeL's values per history: random playouts, or the value/policy network.

A depth-limited subgame needs a value at its frontier. Without a network,
:func:`rollout_values` averages uniform random playouts. The network of Partridge & Thielscher, "Hidden Information General Game Playing with Deep Learning and Search" (ReBeL for
GDL-II) is :class:`ReBeLNetwork`: a shared trunk over the state's features
(:func:`state_features`), a value head (one value per player) and a policy head per
player; :class:`NetworkGuide` hands it to the search as the frontier value and as CFR's
starting policy ("CFR initialised from the policy network"). The value of a public belief
state instead of a history (ReBeL proper, Brown, Bakhtin, Lerer & Gong 2020, "Combining Deep Reinforcement Learning and Search for Imperfect-Information Games") is :mod:`agents.rebel.pbs`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.device import module_device, to_device, to_numpy
from agents.networks import mlp, network_with_weights
from agents.search.classic import GOAL_MAX, playout_goals
from hiddenenvs.game import Game, State

LeafValue = Callable[[list[State]], np.ndarray]
Prior = Callable[[State, int], Any]


def rollout_values(game: Game, rollouts: int, seed: int) -> LeafValue:
    """A frontier value without a network: the mean returns of uniform random playouts
    (GDL: the propnet's compiled depth charge), seeded per call so a search is reproducible."""
    if rollouts < 1:
        raise ValueError(f"rollouts must be >= 1, got {rollouts}")
    info = game.info
    span = (info.max_utility - info.min_utility) / GOAL_MAX

    def values(states: list[State]) -> np.ndarray:
        rng = np.random.default_rng(seed)
        goals = [
            np.mean([playout_goals(state, rng) for _ in range(rollouts)], axis=0)
            for state in states
        ]
        return info.min_utility + span * np.array(goals)

    return values


def state_features(state: State) -> np.ndarray:
    """The network's input: the propnet's base propositions for GDL-II states (the paper's
    grounded state), else every player's information-state tensor, concatenated (a full
    state for the native games, whose hidden information is the players' private parts)."""
    return np.asarray(state.state_tensor(), dtype=np.float32).ravel()


class ReBeLNetwork(nn.Module):
    """The paper's shared-trunk network: grounded state -> trunk -> a value head (one linear
    layer, every role) and one policy head per role (one more hidden layer, then logits)."""

    def __init__(self, input_size: int, num_players: int, num_actions: int, hidden_size: int):
        super().__init__()
        self.architecture = {
            "input_size": input_size,
            "num_players": num_players,
            "num_actions": num_actions,
            "hidden_size": hidden_size,
        }
        self.trunk = nn.Sequential(nn.Linear(input_size, hidden_size), nn.ReLU())
        self.value = nn.Linear(hidden_size, num_players)
        self.policy = nn.ModuleList(
            mlp(hidden_size, [hidden_size], num_actions) for _ in range(num_players)
        )

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Values ``(B, players)`` and logits ``(B, players, actions)``."""
        hidden = self.trunk(features)
        return self.value(hidden), torch.stack([head(hidden) for head in self.policy], dim=1)

    def values(self, features: torch.Tensor) -> torch.Tensor:
        """The value head alone (the search's frontier needs no policy)."""
        return self.value(self.trunk(features))

    def logits(self, features: torch.Tensor, player: int) -> torch.Tensor:
        """One role's policy head alone (CFR's starting policy for that role)."""
        return self.policy[player](self.trunk(features))

    @classmethod
    def from_state_dict(cls, architecture: dict[str, int], weights: dict) -> ReBeLNetwork:
        return network_with_weights(
            lambda: cls(**{k: int(v) for k, v in architecture.items()}), weights, "ReBeL network"
        )


class NetworkGuide:
    """A :class:`ReBeLNetwork` as the search's frontier value and CFR's starting policy.

    The value head works in [-1, 1]: utilities are scaled by the game's bounds (GDL goals
    are 0..100), and :meth:`leaf_value` scales back. A role's policy logits are kept per
    input (searches and the belief sampler ask about the same states again and again);
    :meth:`forget` drops them when the network's weights change.
    """

    MAX_KEPT_LOGITS = 1 << 17

    def __init__(self, network: ReBeLNetwork, game: Game):
        self.network = network
        self._logits: dict[tuple[bytes, int], np.ndarray] = {}
        info = game.info
        self.value_offset = (info.max_utility + info.min_utility) / 2
        self.value_scale = max((info.max_utility - info.min_utility) / 2, 1e-9)

    def value_target(self, returns: np.ndarray) -> np.ndarray:
        return (returns - self.value_offset) / self.value_scale

    @torch.no_grad()
    def leaf_value(self, states: list[State]) -> np.ndarray:
        features = to_device(
            np.stack([state_features(state) for state in states]), module_device(self.network)
        )
        values = to_numpy(self.network.values(features)).astype(np.float64)
        return values * self.value_scale + self.value_offset

    @torch.no_grad()
    def prior(self, state: State, player: int) -> dict[int, float]:
        legal = state.legal_actions(player)
        features = state_features(state)
        key = (features.tobytes(), player)
        logits = self._logits.get(key)
        if logits is None:
            if len(self._logits) >= self.MAX_KEPT_LOGITS:
                self._logits.clear()
            inputs = to_device(features[None], module_device(self.network))
            logits = self._logits[key] = to_numpy(self.network.logits(inputs, player)[0])
        chosen = logits[legal] - logits[legal].max()
        probabilities = np.exp(chosen) / np.exp(chosen).sum()
        return dict(zip(legal, probabilities.tolist()))

    def forget(self) -> None:
        """Drop the kept logits (call after changing the network's weights)."""
        self._logits.clear()

    def search_options(self) -> dict[str, Any]:
        return {"leaf_value": self.leaf_value, "prior": self.prior}
