r"""The apprentice ``f_theta`` (Kitchen & Benedetti 2018, section 3.1): the network, its
loss, and its use as OOS's rollout policy.

An MLP with ReLUs and a softmax over the legal actions (illegal logits masked), its input
the mover's information-state tensor, one network for every seat. It is trained to
imitate the expert's answer at the stored decisions,

.. math::

   \mathrm{KL}(\sigma_{oos} \,\|\, f_\theta) = \sum_{a \text{ legal}} \sigma_{oos}(a)
   \bigl(\log \sigma_{oos}(a) - \log f_\theta(a)\bigr),

and it is the expert's rollout policy ``rho`` (:class:`ApprenticeRollout`), the loop's
evaluated and exported player (:class:`agents.networks.AveragePolicyAgent`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from agents.networks import AveragePolicyAgent, masked_logits, mlp
from hiddenenvs.game import Game, State

# {"input_size", "hidden_sizes", "num_actions"}: what an AveragePolicyAgent file records.
Architecture = dict[str, Any]


def architecture_for(game: Game, hidden_sizes: list[int]) -> Architecture:
    """The apprentice's shape on ``game``: the information-state tensor in, an action out."""
    info = game.info
    return {
        "input_size": int(np.prod(info.information_state_tensor_shape)),
        "hidden_sizes": list(hidden_sizes),
        "num_actions": info.num_distinct_actions,
    }


def apprentice_network(architecture: Architecture) -> nn.Sequential:
    """``f_theta``'s logits: an MLP of ``architecture`` (on the CPU, torch's generator)."""
    return mlp(
        architecture["input_size"], architecture["hidden_sizes"], architecture["num_actions"]
    )


def kl_loss(network: nn.Module, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """KL(sigma_oos || f_theta) over the legal actions, the minibatch's mean."""
    log_p = torch.log_softmax(
        masked_logits(network(batch["observation"]), batch["action_mask"]), dim=-1
    )
    sigma = batch["target"]
    return (torch.xlogy(sigma, sigma) - sigma * log_p).sum(dim=-1).mean()


class ApprenticeRollout:
    """``rho = f_theta`` as an OOS rollout policy: ``(states, players, masks) -> probabilities``."""

    def __init__(self, agent: AveragePolicyAgent):
        self.agent = agent

    def __call__(self, states: list[State], players: np.ndarray, masks: np.ndarray) -> np.ndarray:
        tensors = np.stack(
            [np.ravel(s.information_state_tensor(int(p))) for s, p in zip(states, players)]
        )
        return self.agent.policy_probabilities_batch(tensors.astype(np.float32), masks)
