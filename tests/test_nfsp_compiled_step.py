"""NFSP's learning step compiled by torch.compile (``compile_learning_step``) against the
eager fused step on the same minibatches: the same losses and weights after several steps."""

import copy

import numpy as np
import pytest
import torch

import hiddenenvs
from agents.config import ConfigError
from agents.nfsp import NFSP, NFSPConfig


def eager_and_compiled_agents():
    """Seat 0's agent after some Leduc self-play, and a copy of it with the compiled step."""
    from agents.vector_self_play import play_vector_episodes
    from hiddenenvs.vector import make

    config = NFSPConfig(hidden_sizes=[16], min_buffer_size=10, batch_size=32, target_update_every=3)
    torch.manual_seed(0)
    learner = NFSP(hiddenenvs.load_game("leduc_holdem"), config, seed=0)
    play_vector_episodes(make("leduc_holdem", num_envs=64, copy=False), learner.agents, seed=0)
    eager = learner.agents[0]
    compiled = copy.deepcopy(eager)
    compiled.config = NFSPConfig(**{**vars(config), "compile_learning_step": True})
    return eager, compiled


def assert_same_steps(eager, compiled, steps: int) -> None:
    for _ in range(steps):
        np.testing.assert_allclose(
            compiled.rl_and_sl_step(), eager.rl_and_sl_step(), rtol=1e-4, atol=1e-6
        )
    for name in ("q_network", "target_network", "policy_network"):
        for left, right in zip(
            getattr(compiled, name).parameters(), getattr(eager, name).parameters()
        ):
            np.testing.assert_allclose(left.detach(), right.detach(), rtol=1e-4, atol=1e-6)
    # The optimizers' state is torch.optim.Adam's (a checkpoint resumes on either path).
    for mine, theirs in (
        (compiled.q_optimizer.state_dict(), eager.q_optimizer.state_dict()),
        (compiled.policy_optimizer.state_dict(), eager.policy_optimizer.state_dict()),
    ):
        for index, state in theirs["state"].items():
            for key, value in state.items():
                np.testing.assert_allclose(mine["state"][index][key], value, rtol=1e-4, atol=1e-7)


@pytest.mark.slow  # torch.compile takes about 30 s
def test_compiled_step_matches_the_eager_step():
    eager, compiled = eager_and_compiled_agents()
    assert_same_steps(eager, compiled, 7)  # past two target-network copies


def test_a_failed_compile_warns_and_runs_the_same_step_uncompiled(monkeypatch):
    """Where torch.compile cannot work (no C++ compiler for inductor, say), the run goes on
    with the same functional step, uncompiled, and says so once."""

    def failing_compile(function, **options):
        def compiled(*arguments):
            raise RuntimeError("InvalidCxxCompiler: No working C++ compiler found")

        return compiled

    monkeypatch.setattr(torch, "compile", failing_compile)
    eager, compiled = eager_and_compiled_agents()
    with pytest.warns(UserWarning, match="torch.compile failed .*InvalidCxxCompiler"):
        assert_same_steps(eager, compiled, 4)


def test_compiled_step_needs_adam():
    with pytest.raises(ConfigError, match="compile_learning_step needs optimizer 'adam'"):
        NFSPConfig(compile_learning_step=True, optimizer="sgd")
