"""Networks of the fictitious-play trainers (NFSP, MCNFSP) and the average-policy agent.

An *architecture* is a small dict that rebuilds a network in any process (it is saved
with the weights in agent files and checkpoints):

==================================  ===========================================================
key                                 meaning
==================================  ===========================================================
``num_actions``                     outputs of the policy head (``num_distinct_actions``)
``input_size``                      NFSP's MLP: the flattened information-state tensor
``input_shape``                     MCNFSP: the information-state tensor's shape
``kind``                            ``"mlp"`` (flatten, then fully connected layers) or
                                    ``"conv"`` (a ``(C, H, W)`` board: the MCNFSP paper's
                                    trunk, two 3x3 convolutions with ReLU, flattened and
                                    projected to a ``flatten_size`` (120) vector); absent in
                                    NFSP's architectures (a plain :func:`mlp`)
``conv_channels``, ``flatten_size`` the convolutional trunk (``kind="conv"``)
``hidden_sizes``                    fully connected ReLU layers after the trunk
==================================  ===========================================================

:class:`PolicyNetwork` maps a batch of tensors to action logits (an average policy Pi);
:class:`PolicyValueNetwork` shares the same body between logits and a value in
``[-1, 1]`` (``tanh``; MCNFSP's best response f_BR, AlphaZero-style). Illegal actions are
masked with :func:`masked_logits` everywhere, so no probability leaks to them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from agents.base import Agent

ILLEGAL_LOGIT = -1e9
NETWORK_KINDS = ("mlp", "conv")


def mlp(input_size: int, hidden_sizes: list[int], output_size: int) -> nn.Sequential:
    layers: list[nn.Module] = []
    for size in hidden_sizes:
        layers += [nn.Linear(input_size, size), nn.ReLU()]
        input_size = size
    layers.append(nn.Linear(input_size, output_size))
    return nn.Sequential(*layers)


def masked_logits(logits: torch.Tensor, masks: Any) -> torch.Tensor:
    """``logits`` with illegal actions pushed to ``ILLEGAL_LOGIT``; ``masks`` a tensor or an
    array (a read-only one, e.g. a game's masks made in C, is copied: torch cannot share it)."""
    if not isinstance(masks, torch.Tensor):
        array = np.asarray(masks)
        masks = torch.from_numpy(array if array.flags.writeable else array.copy())
    return torch.where(masks > 0, logits, torch.full_like(logits, ILLEGAL_LOGIT))


def network_input(observations: Any, architecture: dict[str, Any]) -> torch.Tensor:
    """A float32 batch shaped for the network: ``(B, input_size)`` or ``(B, *input_shape)``."""
    shape = architecture.get("input_shape") or [architecture["input_size"]]
    array = np.asarray(observations, dtype=np.float32)
    return torch.from_numpy(array.reshape(len(array), *shape))


def _body(architecture: dict[str, Any]) -> tuple[nn.Sequential, int]:
    """The shared trunk and hidden layers of an MCNFSP network, and its output size."""
    kind = architecture["kind"]
    shape = list(architecture["input_shape"])
    layers: list[nn.Module] = []
    if kind == "conv":
        channels, height, width = shape
        for out_channels in architecture["conv_channels"]:
            layers += [nn.Conv2d(channels, out_channels, kernel_size=3, padding=1), nn.ReLU()]
            channels = out_channels
        layers += [nn.Flatten(), nn.Linear(channels * height * width, architecture["flatten_size"]), nn.ReLU()]
        size = architecture["flatten_size"]
    else:
        layers.append(nn.Flatten())
        size = int(np.prod(shape))
    for hidden in architecture["hidden_sizes"]:
        layers += [nn.Linear(size, hidden), nn.ReLU()]
        size = hidden
    return nn.Sequential(*layers), size


def network_with_weights(build: Any, weights: dict, where: str) -> nn.Module:
    """``build()`` with ``weights`` loaded (an agent file's). The network is first built on
    torch's meta device, which allocates nothing, and every parameter's shape compared with
    the file's: a file declaring a huge network beside small weights is refused before
    anything is allocated, and a mismatch names the parameter."""
    with torch.device("meta"):
        expected = {name: tuple(tensor.shape) for name, tensor in build().state_dict().items()}
    given = {name: tuple(tensor.shape) for name, tensor in weights.items() if isinstance(tensor, torch.Tensor)}
    if given != expected:
        name = min(n for n in expected.keys() | given.keys() if expected.get(n) != given.get(n))
        raise ValueError(f"{where}: the weights do not fit the declared architecture: parameter {name!r} "
                         f"is {given.get(name, 'missing')} in the file, the architecture needs "
                         f"{expected.get(name, 'none')}")
    network = build()
    network.load_state_dict(weights)
    return network


def check_architecture(architecture: dict[str, Any]) -> None:
    kind = architecture["kind"]
    if kind not in NETWORK_KINDS:
        raise ValueError(f"network kind must be one of {NETWORK_KINDS}, got {kind!r}")
    if kind == "conv" and len(architecture["input_shape"]) != 3:
        raise ValueError(
            f"a convolutional network needs a (channels, height, width) information-state "
            f"tensor, got shape {tuple(architecture['input_shape'])}; use network: mlp"
        )


class PolicyNetwork(nn.Module):
    """Body, then action logits: an average policy Pi."""

    def __init__(self, architecture: dict[str, Any]):
        super().__init__()
        check_architecture(architecture)
        self.body, size = _body(architecture)
        self.policy_head = nn.Linear(size, architecture["num_actions"])

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        return self.policy_head(self.body(inputs))


class PolicyValueNetwork(PolicyNetwork):
    """Body, then action logits and a value in [-1, 1]: MCNFSP's best response f_BR."""

    def __init__(self, architecture: dict[str, Any]):
        super().__init__(architecture)
        self.value_head = nn.Linear(self.policy_head.in_features, 1)

    def forward(self, inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        features = self.body(inputs)
        return self.policy_head(features), torch.tanh(self.value_head(features)).squeeze(-1)

    def legal_logits_and_value(self, inputs: torch.Tensor, actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits of ``actions`` only, and the value: what a search expanding one node needs
        (combat's policy head has 12,961 rows, of which a node uses a hundred)."""
        features = self.body(inputs)
        logits = nn.functional.linear(features, self.policy_head.weight[actions], self.policy_head.bias[actions])
        return logits, torch.tanh(self.value_head(features)).squeeze(-1)


def policy_network(architecture: dict[str, Any]) -> nn.Module:
    """The average-policy network an architecture describes (NFSP's plain MLP without ``kind``)."""
    if "kind" not in architecture:
        return mlp(architecture["input_size"], architecture["hidden_sizes"], architecture["num_actions"])
    return PolicyNetwork(architecture)


class AveragePolicyAgent(Agent):
    """Plays an average-policy network Pi (NFSP's and MCNFSP's evaluation and exported agent)."""

    def __init__(self, network: nn.Module, architecture: dict[str, Any], seed: int | None = None):
        super().__init__(architecture["num_actions"], seed)
        self.network = network
        self.architecture = architecture

    def policy_probabilities_batch(self, observations, action_masks, views=None):
        with torch.no_grad():
            logits = self.network(network_input(observations, self.architecture))
            return torch.softmax(masked_logits(logits, action_masks), dim=-1).double().numpy()

    def state_dict(self):
        return {"architecture": self.architecture, "network": self.network.state_dict()}

    @classmethod
    def from_state_dict(cls, state):
        network = network_with_weights(lambda: policy_network(state["architecture"]), state["network"],
                                       "average-policy agent")
        return cls(network, state["architecture"])
