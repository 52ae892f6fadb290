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
``order_head``                      optional: a factored head for "send n from area s to
                                    destination d" orders (combat's commander mode), the
                                    dict of :class:`FactoredOrderHead`; absent: one linear
                                    row per action
==================================  ===========================================================

:class:`PolicyNetwork` maps a batch of tensors to action logits (an average policy Pi);
:class:`PolicyValueNetwork` shares the same body between logits and a value in
``[-1, 1]`` (``tanh``; MCNFSP's best response f_BR, AlphaZero-style). Illegal actions are
masked with :func:`masked_logits` everywhere, so no probability leaks to them.

The policy head is one linear map to ``num_actions`` logits, or, for an order action space
(``order_head``), :class:`FactoredOrderHead`: combat's commander chooses among
``1 + areas * destinations * team_size`` = 12,961 flat orders (about a hundred legal at
a time), which a linear head learns one row at a time and pays 12,961 rows for at every
gradient step; the factored head scores an order from its parts, so what is learnt about
one area, destination or count carries over to the others.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
import torch
from torch import nn

from agents.base import Agent
from agents.device import (
    agent_device,
    cpu_state_dict,
    module_device,
    to_device,
    to_numpy,
    weight_count,
)

ILLEGAL_LOGIT = -1e9
NETWORK_KINDS = ("mlp", "conv")


def mlp(input_size: int, hidden_sizes: list[int], output_size: int) -> nn.Sequential:
    layers: list[nn.Module] = []
    for size in hidden_sizes:
        layers += [nn.Linear(input_size, size), nn.ReLU()]
        input_size = size
    layers.append(nn.Linear(input_size, output_size))
    return nn.Sequential(*layers)


def copy_weights(source: nn.Module, target: nn.Module) -> None:
    """Copy ``source``'s parameters into ``target``'s in place (a DQN target network's
    refresh): no state dict is built and no tensor allocated."""
    with torch.no_grad():
        for target_parameter, source_parameter in zip(target.parameters(), source.parameters()):
            target_parameter.copy_(source_parameter)


def masked_logits(logits: torch.Tensor, masks: Any) -> torch.Tensor:
    """``logits`` with illegal actions pushed to ``ILLEGAL_LOGIT``; ``masks`` a tensor or an
    array (a read-only one, e.g. a game's masks made in C, is copied: torch cannot share it),
    taken to the logits' device."""
    if not isinstance(masks, torch.Tensor):
        array = np.asarray(masks)
        masks = torch.from_numpy(array if array.flags.writeable else array.copy())
    return logits.masked_fill(masks.to(logits.device) == 0, ILLEGAL_LOGIT)


def network_input(
    observations: Any, architecture: dict[str, Any], device: torch.device | None = None
) -> torch.Tensor:
    """A float32 batch shaped for the network: ``(B, input_size)`` or ``(B, *input_shape)``,
    on ``device`` (default: the CPU, sharing the array's memory)."""
    shape = architecture.get("input_shape") or [architecture["input_size"]]
    array = np.asarray(observations, dtype=np.float32)
    array = array.reshape(len(array), *shape)
    return torch.from_numpy(array) if device is None else to_device(array, device)


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
        layers += [
            nn.Flatten(),
            nn.Linear(channels * height * width, architecture["flatten_size"]),
            nn.ReLU(),
        ]
        size = architecture["flatten_size"]
    else:
        layers.append(nn.Flatten())
        size = int(np.prod(shape))
    for hidden in architecture["hidden_sizes"]:
        layers += [nn.Linear(size, hidden), nn.ReLU()]
        size = hidden
    return nn.Sequential(*layers), size


NetworkT = TypeVar("NetworkT", bound=nn.Module)


def network_with_weights(build: Callable[[], NetworkT], weights: dict, where: str) -> NetworkT:
    """``build()`` with ``weights`` loaded (an agent file's). The network is first built on
    torch's meta device, which allocates nothing, and every parameter's shape compared with
    the file's: a file declaring a huge network beside small weights is refused before
    anything is allocated, and a mismatch names the parameter."""
    with torch.device("meta"):
        expected = {name: tuple(tensor.shape) for name, tensor in build().state_dict().items()}
    given = {
        name: tuple(tensor.shape)
        for name, tensor in weights.items()
        if isinstance(tensor, torch.Tensor)
    }
    if given != expected:
        name = min(n for n in expected.keys() | given.keys() if expected.get(n) != given.get(n))
        raise ValueError(
            f"{where}: the weights do not fit the declared architecture: parameter {name!r} "
            f"is {given.get(name, 'missing')} in the file, the architecture needs "
            f"{expected.get(name, 'none')}"
        )
    network = build()
    network.load_state_dict(weights)
    return network


class FactoredOrderHead(nn.Module):
    """Logits of the flat orders ``1 + (source * D + destination) * T + (n - 1)`` (send ``n``
    fighters from area ``source`` to destination ``destination``; action 0 holds) as a sum
    of parts, from the trunk's features ``h`` and the input's own per-area features ``x_s``
    (the first ``num_areas * area_features`` input values, area-major):

        logit(s, d, n) = a(s) + b(d | s) + c(n | s),   logit(hold) = w_hold . h

        k_s      = relu(E_area[s] + W_k x_s)                        (an area's key, size e)
        a(s)     = w_a . k_s + (U_a h)[s]                           (which group to move)
        b(d | s) = k_s . (q_d + W_q x_dest(d)) + (U_b h)[d]         (where it goes)
        c(n | s) = (U_c h) . (n / T, n / N_s, [n = N_s]) + beta_n   (how many of its N_s)

    ``q_d`` are rows of ``U_q h`` (one e-vector per destination), ``x_dest(d)`` the
    features of destination d's area (e.g. the enemies believed there), and ``N_s`` the
    fighters in area s, read from feature ``count_feature`` (a share of the team). The
    source-destination interaction is the dot product of the source's key and the
    destination's query. ``forward`` returns all ``1 + S * D * T`` logits (a broadcast
    sum, no ``hidden x 12,961`` matrix); masking them (:func:`masked_logits`) leaves a
    softmax over the legal orders only.

    ``spec`` (the architecture's ``order_head``): ``num_areas``, ``num_destinations``,
    ``team_size``, ``area_features``, ``count_feature``, ``destination_areas`` (the area of
    each destination) and ``embedding_size`` (e).
    """

    SPEC_KEYS = (
        "num_areas",
        "num_destinations",
        "team_size",
        "area_features",
        "count_feature",
        "destination_areas",
        "embedding_size",
    )

    # Buffers (register_buffer): the areas a destination can be, and the counts 1..T.
    destination_areas: torch.Tensor
    counts: torch.Tensor

    def __init__(self, hidden_size: int, spec: dict[str, Any]):
        super().__init__()
        areas, destinations, embedding = (
            spec["num_areas"],
            spec["num_destinations"],
            spec["embedding_size"],
        )
        self.spec = spec
        self.register_buffer(
            "destination_areas",
            torch.as_tensor(spec["destination_areas"], dtype=torch.long),
            persistent=False,
        )
        self.register_buffer(
            "counts", torch.arange(1, spec["team_size"] + 1, dtype=torch.float32), persistent=False
        )
        self.hold = nn.Linear(hidden_size, 1)
        self.area_embedding = nn.Parameter(torch.randn(areas, embedding) * 0.1)
        self.area_key = nn.Linear(spec["area_features"], embedding)
        self.source_score = nn.Linear(embedding, 1, bias=False)
        self.source_context = nn.Linear(hidden_size, areas, bias=False)
        self.destination_query = nn.Linear(hidden_size, destinations * embedding)
        self.destination_features = nn.Linear(spec["area_features"], embedding, bias=False)
        self.destination_context = nn.Linear(hidden_size, destinations, bias=False)
        self.count_weights = nn.Linear(hidden_size, 3)
        self.count_bias = nn.Parameter(torch.zeros(spec["team_size"]))

    def parts(self, features: torch.Tensor, inputs: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """The hold logit ``(B, 1)`` and the parts ``a (B, S)``, ``b (B, S, D)``, ``c (B, S, T)``."""
        spec = self.spec
        batch = len(features)
        areas, destinations, team = spec["num_areas"], spec["num_destinations"], spec["team_size"]
        x = inputs.reshape(batch, -1)[:, : areas * spec["area_features"]].reshape(batch, areas, -1)
        keys = torch.relu(self.area_embedding + self.area_key(x))  # (B, S, e)
        source = self.source_score(keys).squeeze(-1) + self.source_context(features)  # (B, S)
        queries = self.destination_query(features).reshape(batch, destinations, -1)
        queries = queries + self.destination_features(x[:, self.destination_areas])  # (B, D, e)
        destination = (
            torch.einsum("bse,bde->bsd", keys, queries)
            + self.destination_context(features)[:, None, :]
        )
        present = torch.round(x[..., spec["count_feature"]] * team)  # N_s: fighters in each area
        share = self.counts / present.clamp(min=1.0)[..., None]  # (B, S, T)
        count_features = torch.stack(
            [self.counts.expand_as(share) / team, share, (share == 1.0).float()], dim=-1
        )
        count = (
            torch.einsum("bstk,bk->bst", count_features, self.count_weights(features))
            + self.count_bias
        )
        return self.hold(features), source, destination, count

    def forward(self, features: torch.Tensor, inputs: torch.Tensor) -> torch.Tensor:
        hold, source, destination, count = self.parts(features, inputs)
        orders = source[:, :, None, None] + destination[:, :, :, None] + count[:, :, None, :]
        return torch.cat([hold, orders.reshape(len(hold), -1)], dim=1)

    def logits_at(
        self, features: torch.Tensor, inputs: torch.Tensor, actions: torch.Tensor
    ) -> torch.Tensor:
        """The logits of ``actions`` (flat orders, any shape ``(B, ...)``) only: a search
        expanding a node needs a hundred of the 12,961."""
        hold, source, destination, count = self.parts(features, inputs)
        team, destinations = self.spec["team_size"], self.spec["num_destinations"]
        order = (actions - 1).clamp(min=0)
        s, rest = order // (destinations * team), order % (destinations * team)
        d, n = rest // team, rest % team
        rows = torch.arange(len(hold), device=hold.device).reshape(-1, *([1] * (actions.dim() - 1)))
        logits = source[rows, s] + destination[rows, s, d] + count[rows, s, n]
        return torch.where(actions == 0, hold.reshape(-1, *([1] * (actions.dim() - 1))), logits)


def check_architecture(architecture: dict[str, Any]) -> None:
    kind = architecture["kind"]
    if kind not in NETWORK_KINDS:
        raise ValueError(f"network kind must be one of {NETWORK_KINDS}, got {kind!r}")
    if kind == "conv" and len(architecture["input_shape"]) != 3:
        raise ValueError(
            f"a convolutional network needs a (channels, height, width) information-state "
            f"tensor, got shape {tuple(architecture['input_shape'])}; use network: mlp"
        )
    spec = architecture.get("order_head")
    if spec is not None:
        missing = [key for key in FactoredOrderHead.SPEC_KEYS if key not in spec]
        if missing:
            raise ValueError(
                f"order_head is missing {missing}; it needs {list(FactoredOrderHead.SPEC_KEYS)}"
            )
        orders = 1 + spec["num_areas"] * spec["num_destinations"] * spec["team_size"]
        if orders != architecture["num_actions"]:
            raise ValueError(
                f"order_head describes {orders} actions (1 + areas * destinations * team_size), "
                f"the network has num_actions {architecture['num_actions']}"
            )
        if spec["num_areas"] * spec["area_features"] > int(np.prod(architecture["input_shape"])):
            raise ValueError(
                f"order_head reads {spec['num_areas']} x {spec['area_features']} area features, "
                f"the input has only {int(np.prod(architecture['input_shape']))} values"
            )
        if len(spec["destination_areas"]) != spec["num_destinations"]:
            raise ValueError(
                f"order_head has {len(spec['destination_areas'])} destination areas for "
                f"{spec['num_destinations']} destinations"
            )


class _PolicyBody(nn.Module):
    """Body, then action logits (a linear head, or :class:`FactoredOrderHead`): what
    :class:`PolicyNetwork` and :class:`PolicyValueNetwork` share."""

    def __init__(self, architecture: dict[str, Any]):
        super().__init__()
        check_architecture(architecture)
        self.body, self.feature_size = _body(architecture)
        spec = architecture.get("order_head")
        self.policy_head = (
            nn.Linear(self.feature_size, architecture["num_actions"])
            if spec is None
            else FactoredOrderHead(self.feature_size, spec)
        )

    def logits(self, features: torch.Tensor, inputs: torch.Tensor) -> torch.Tensor:
        if isinstance(self.policy_head, FactoredOrderHead):
            return self.policy_head(features, inputs)
        return self.policy_head(features)


class PolicyNetwork(_PolicyBody):
    """Body, then action logits: an average policy Pi."""

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        return self.logits(self.body(inputs), inputs)


class PolicyValueNetwork(_PolicyBody):
    """Body, then action logits and a value in [-1, 1]: MCNFSP's best response f_BR."""

    def __init__(self, architecture: dict[str, Any]):
        super().__init__(architecture)
        self.value_head = nn.Linear(self.feature_size, 1)

    def forward(self, inputs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        features = self.body(inputs)
        return self.logits(features, inputs), torch.tanh(self.value_head(features)).squeeze(-1)

    def value(self, inputs: torch.Tensor) -> torch.Tensor:
        """The value alone (a search's rollout end needs no logits)."""
        return torch.tanh(self.value_head(self.body(inputs))).squeeze(-1)

    def legal_logits_and_value(
        self, inputs: torch.Tensor, actions: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Logits of ``actions`` only, and the value: what a search expanding one node needs
        (a linear head on combat has 12,961 rows, of which a node uses a hundred; the
        factored head's full logits are a cheap broadcast sum)."""
        features = self.body(inputs)
        if isinstance(self.policy_head, FactoredOrderHead):
            logits = self.policy_head.logits_at(features, inputs, actions.expand(len(features), -1))
        else:
            logits = nn.functional.linear(
                features, self.policy_head.weight[actions], self.policy_head.bias[actions]
            )
        return logits, torch.tanh(self.value_head(features)).squeeze(-1)


def policy_network(architecture: dict[str, Any]) -> nn.Module:
    """The average-policy network an architecture describes (NFSP's plain MLP without ``kind``)."""
    if "kind" not in architecture:
        return mlp(
            architecture["input_size"], architecture["hidden_sizes"], architecture["num_actions"]
        )
    return PolicyNetwork(architecture)


class AveragePolicyAgent(Agent):
    """Plays an average-policy network Pi (NFSP's and MCNFSP's evaluation and exported agent).

    ``exploration_share`` (default 0) is the share ``e`` of uniformly random actions in the
    data Pi was fitted to (a reservoir of epsilon-greedy play holds
    ``(1 - e) * greedy + e * uniform``); it is taken back out of Pi's output:
    ``p'(a) ∝ max(0, p(a) - e / |legal|)``. At least one action keeps a positive share, since
    the largest ``p(a)`` is at least ``1 / |legal|``."""

    def __init__(
        self,
        network: nn.Module,
        architecture: dict[str, Any],
        seed: int | None = None,
        exploration_share: float = 0.0,
    ):
        super().__init__(architecture["num_actions"], seed)
        if not isinstance(exploration_share, (int, float)) or not 0.0 <= exploration_share < 1.0:
            raise ValueError(
                f"exploration_share must be a number in [0, 1), got {exploration_share!r}"
            )
        self.network = network
        self.architecture = architecture
        self.exploration_share = float(exploration_share)

    def policy_probabilities_batch(self, observations, action_masks, views=None):
        with torch.no_grad():
            device = module_device(self.network)
            logits = self.network(network_input(observations, self.architecture, device))
            probabilities = to_numpy(
                torch.softmax(masked_logits(logits, action_masks), dim=-1).double()
            )
        if self.exploration_share:
            legal = np.asarray(action_masks, dtype=np.float64).reshape(probabilities.shape)
            uniform = legal / legal.sum(axis=-1, keepdims=True)
            probabilities = np.clip(probabilities - self.exploration_share * uniform, 0.0, None)
            probabilities /= probabilities.sum(axis=-1, keepdims=True)
        return probabilities

    def state_dict(self):
        return {
            "architecture": self.architecture,
            "network": cpu_state_dict(self.network),
            "exploration_share": self.exploration_share,
        }

    @classmethod
    def from_state_dict(cls, state):
        """The agent of an agent file, its network on :func:`agents.device.agent_device`
        (the CPU unless ``HIDDENENVS_AGENT_DEVICE`` says otherwise, e.g. ``evaluate.py
        --device``), wherever it was trained."""
        network = network_with_weights(
            lambda: policy_network(state["architecture"]), state["network"], "average-policy agent"
        )
        network.to(agent_device(weight_count(network)))
        return cls(
            network, state["architecture"], exploration_share=state.get("exploration_share", 0.0)
        )
