"""NFSP's numpy learning step on the CPU (agents/host_mlp.py) against PyTorch's autograd and
optimizers on the same minibatches: the same losses, gradients and updates."""

import copy

import numpy as np
import pytest
import torch

import hiddenenvs
from agents.nfsp import NFSP, NFSPConfig


def filled_learner(**params) -> NFSP:
    from agents.vector_self_play import play_vector_episodes
    from hiddenenvs.vector import make

    config = NFSPConfig(min_buffer_size=10, batch_size=32, target_update_every=3, **params)
    torch.manual_seed(0)
    learner = NFSP(hiddenenvs.load_game("leduc_holdem"), config, seed=0)
    play_vector_episodes(make("leduc_holdem", num_envs=64, copy=False), learner.agents, seed=0)
    return learner


@pytest.mark.parametrize(
    "params",
    [
        {"hidden_sizes": [16]},
        {"hidden_sizes": [16, 8], "optimizer": "sgd", "rl_learning_rate": 0.1},
        {"hidden_sizes": [], "discount": 0.9},
    ],
)
def test_numpy_step_matches_torch_autograd_and_optimizer(params):
    host = filled_learner(**params).agents[0]
    reference = copy.deepcopy(host)
    reference.host_step = None  # PyTorch's path: autograd, fused Adam / SGD
    assert host.host_step is not None
    for _ in range(7):  # past two target-network copies
        host_losses = host.rl_and_sl_step()
        reference_losses = reference.rl_and_sl_step()
        np.testing.assert_allclose(host_losses, reference_losses, rtol=1e-4, atol=1e-6)
    for name in ("q_network", "target_network", "policy_network"):
        for left, right in zip(
            getattr(host, name).parameters(), getattr(reference, name).parameters()
        ):
            np.testing.assert_allclose(left.detach(), right.detach(), rtol=1e-4, atol=1e-6)
    assert host.rl_steps == reference.rl_steps == 7
    # The optimizers' state (what a checkpoint holds) is PyTorch's, moments and step count.
    for mine, theirs in (
        (host.q_optimizer.state_dict(), reference.q_optimizer.state_dict()),
        (host.policy_optimizer.state_dict(), reference.policy_optimizer.state_dict()),
    ):
        for index, state in theirs["state"].items():
            for key, value in state.items():
                np.testing.assert_allclose(mine["state"][index][key], value, rtol=1e-4, atol=1e-7)


def test_numpy_step_writes_the_networks_the_agent_acts_with():
    agent = filled_learner(hidden_sizes=[16]).agents[0]
    observations = np.eye(agent.architecture["input_size"], dtype=np.float32)[:4]
    masks = np.ones((4, 3), dtype=np.int8)
    before = agent.policy_probabilities_batch(observations, masks)
    agent.sl_step()
    assert not np.allclose(agent.policy_probabilities_batch(observations, masks), before)


def test_a_checkpoint_resumes_the_numpy_step_as_the_uninterrupted_run():
    learner = filled_learner(hidden_sizes=[16])
    learner.agents[0].rl_and_sl_step()
    resumed = filled_learner(hidden_sizes=[16])
    resumed.load_state_dict(copy.deepcopy(learner.state_dict()))
    for _ in range(4):
        assert learner.agents[0].rl_and_sl_step() == resumed.agents[0].rl_and_sl_step()
    for left, right in zip(
        learner.agents[0].policy_network.parameters(),
        resumed.agents[0].policy_network.parameters(),
    ):
        assert torch.equal(left, right)
