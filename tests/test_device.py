"""The ``device`` setting (agents/device.py): its checks, ``auto``'s rule, device-free files,
and ``device: cpu`` reproducing the trajectories recorded before devices existed.

The pinned digests below are sha256 sums of the whole learner state (networks, optimiser
state, memories, generators, counters) at the end of a short seeded run of each trainer,
recorded from the code just before the trainers learnt the device setting. Float sums on
another CPU's BLAS may round differently, so a canary (one small seeded network step
through the same kinds of kernels) is checked first and the pinned comparison skips,
saying so, where the canary differs. A CUDA-only test skips where torch has no CUDA.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

import hiddenenvs
from agents.checkpoint import atomic_torch_save, load_checkpoint
from agents.config import ConfigError, load_config
from agents.device import (
    AGENT_DEVICE_VARIABLE,
    AUTO_CUDA_MIN_MULTIPLY_ADDS,
    check_device_setting,
    choose_device,
    cpu_state_dict,
    to_device,
)
from agents.memories import CircularBuffer, GameReservoir
from agents.networks import AveragePolicyAgent, mlp
from agents.nfsp import NFSP, NFSPConfig
from device_trajectories import TRAJECTORIES, canary_digest, trajectory_digest

CUDA = torch.cuda.is_available()
needs_cuda = pytest.mark.skipif(not CUDA, reason="needs a CUDA device (torch finds none here)")


# ---- the setting ---------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["gpu", "cuda:", "cuda:-1", "cuda:01", "CPU", "", 0, None])
def test_a_bad_setting_is_one_line_naming_it(value):
    with pytest.raises(ConfigError) as error:
        check_device_setting(value)
    message = str(error.value)
    assert "\n" not in message and "trainer.params.device" in message and repr(value) in message


@pytest.mark.skipif(CUDA, reason="this machine has CUDA")
@pytest.mark.parametrize("value", ["cuda", "cuda:0", "cuda:3"])
def test_cuda_is_refused_where_torch_has_none(value):
    with pytest.raises(ConfigError, match="install a CUDA build of torch"):
        check_device_setting(value)


def test_a_trainer_config_refuses_a_bad_device_by_its_key(tmp_path):
    with pytest.raises(ConfigError, match=r"trainer\.params\.device must be one of .*'gpu'"):
        load_config("nfsp_kuhn", ["trainer.params.device=gpu", f"output_dir={tmp_path}"])


def test_auto_chooses_the_cpu_without_cuda_or_for_small_calls(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    choice = choose_device("auto", weights=10**9, rows=128)
    assert choice.device == torch.device("cpu") and "CUDA" in choice.reason
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda index: "a test card")
    small = choose_device("auto", weights=4_500, rows=128)  # Leduc's NFSP network
    assert small.device == torch.device("cpu") and "below" in small.reason
    large = choose_device("auto", weights=127_000, rows=128)  # Meier's
    assert large.device == torch.device("cuda", 0) and "a test card" in large.reason
    edge = AUTO_CUDA_MIN_MULTIPLY_ADDS
    assert choose_device("auto", weights=edge, rows=1).is_cuda
    assert not choose_device("auto", weights=edge - 1, rows=1).is_cuda
    assert choose_device("cpu", weights=10**9, rows=10**3).device == torch.device("cpu")


# ---- memories and transfers ---------------------------------------------------------------
def test_sample_tensors_draws_the_rows_that_sample_draws():
    memory = CircularBuffer(50, {"x": ((3,), np.float32), "a": ((), np.int64)})
    for k in range(40):
        memory.add(x=np.full(3, k, np.float32), a=k)
    plain = memory.sample(16, np.random.default_rng(7))
    tensors = memory.sample_tensors(16, np.random.default_rng(7), torch.device("cpu"))
    for name in plain:
        assert tensors[name].dtype == torch.from_numpy(plain[name]).dtype
        np.testing.assert_array_equal(tensors[name].numpy(), plain[name])
    games = GameReservoir(4, 1.0)
    games.add(np.random.default_rng(0), {"x": np.arange(6, dtype=np.float32).reshape(3, 2)})
    plain = games.sample(5, np.random.default_rng(1))
    tensors = games.sample_tensors(5, np.random.default_rng(1), torch.device("cpu"))
    np.testing.assert_array_equal(tensors["x"].numpy(), plain["x"])


def test_to_device_shares_host_memory_on_the_cpu():
    array = np.arange(6, dtype=np.float32)
    tensor = to_device(array, torch.device("cpu"))
    array[0] = 42.0
    assert tensor[0].item() == 42.0


# ---- files on and off the device ------------------------------------------------------------
def _saved_as_if_on_cuda(payload, path: Path) -> None:
    """``payload`` written as a GPU machine writes it: every tensor's storage tagged
    ``cuda:0`` (what ``torch.save`` records for a CUDA tensor)."""
    original = torch.serialization.location_tag
    torch.serialization.location_tag = lambda storage: "cuda:0"
    try:
        torch.save(payload, path)
    finally:
        torch.serialization.location_tag = original


@pytest.mark.skipif(CUDA, reason="checks loading where torch has no CUDA")
def test_a_file_written_on_a_gpu_loads_on_a_machine_without_one(tmp_path):
    network = mlp(4, [8], 3)
    state = {"architecture": {"input_size": 4, "hidden_sizes": [8], "num_actions": 3}}
    state["network"] = network.state_dict()
    path = tmp_path / "agent.pt"
    _saved_as_if_on_cuda({"format": "hiddenenvs-agent-v2", "agent": "x", "state": state}, path)
    with zipfile.ZipFile(path) as archive:  # the file does name the GPU
        assert any(name.endswith("data.pkl") for name in archive.namelist())
    with pytest.raises(RuntimeError, match="CUDA"):  # torch alone would refuse it here
        torch.load(path, weights_only=True)
    loaded = load_checkpoint(path)["state"]["network"]
    for name, tensor in network.state_dict().items():
        assert loaded[name].device.type == "cpu" and torch.equal(loaded[name], tensor)


def test_files_hold_host_tensors_and_agents_load_on_the_chosen_device(tmp_path, monkeypatch):
    learner = NFSP(hiddenenvs.load_game("kuhn_poker"), NFSPConfig(hidden_sizes=[8]), seed=0)
    agent = learner.evaluation_agent(0)
    path = tmp_path / "policy.pt"
    agent.save(path)
    monkeypatch.setenv(AGENT_DEVICE_VARIABLE, "cpu")
    loaded = AveragePolicyAgent.load(path)
    assert next(loaded.network.parameters()).device == torch.device("cpu")
    observations = np.random.default_rng(0).random((5, 11)).astype(np.float32)
    masks = np.ones((5, 2), dtype=np.int8)
    np.testing.assert_array_equal(
        loaded.policy_probabilities_batch(observations, masks),
        agent.policy_probabilities_batch(observations, masks),
    )
    monkeypatch.setenv(AGENT_DEVICE_VARIABLE, "gpu")
    with pytest.raises(ConfigError, match=AGENT_DEVICE_VARIABLE):
        AveragePolicyAgent.load(path)


def test_evaluate_refuses_a_bad_device_in_one_line(capsys):
    import evaluate

    status = evaluate.main(["--env", "kuhn_poker", "--agents", "random", "--device", "gpu"])
    error = capsys.readouterr().err.strip()
    assert status == 2 and error.count("\n") == 0 and "'gpu'" in error and "--device" in error


# ---- CUDA, where there is one ----------------------------------------------------------------
@needs_cuda
def test_nfsp_trains_on_cuda_and_its_files_load_on_either_device(tmp_path, monkeypatch):
    from agents.config import EnvConfig, RunConfig
    from agents.loop import LoopContext

    game = hiddenenvs.load_game("leduc_holdem")
    config = NFSPConfig(hidden_sizes=[32], min_buffer_size=64, learn_every=8, device="cuda")
    learner = NFSP(game, config, seed=0)
    assert learner.device_choice is not None and learner.device_choice.is_cuda
    run = RunConfig(env=EnvConfig(name="leduc_holdem"), num_envs=16)
    context = LoopContext(learner, run, np.random.default_rng(0))
    for _ in range(20):
        context.max_episodes, context.deadline = 16, None
        learner.step(context)
    agent = learner.agents[0]
    assert agent.rl_steps > 0 and next(agent.q_network.parameters()).is_cuda
    assert all(v.is_cuda for s in agent.q_optimizer.state.values() for v in s.values())
    # A checkpoint holds host tensors and resumes on the GPU and on the CPU alike.
    atomic_torch_save(learner.state_dict(), tmp_path / "checkpoint.pt")
    state = load_checkpoint(tmp_path / "checkpoint.pt")
    expected = cpu_state_dict(agent.q_network)
    for setting in ("cuda", "cpu"):
        copy = NFSP(game, NFSPConfig(**{**vars(config), "device": setting}), seed=1)
        copy.load_state_dict(state)
        for name, tensor in cpu_state_dict(copy.agents[0].q_network).items():
            assert torch.equal(tensor, expected[name])
        assert copy.agents[0].q_optimizer.state_dict()["state"][0]["exp_avg"].device.type == (
            "cuda" if setting == "cuda" else "cpu"
        )
    # The exported agent loads where HIDDENENVS_AGENT_DEVICE says, with the same policy.
    path = tmp_path / "policy.pt"
    learner.evaluation_agent(0).save(path)
    observations = np.random.default_rng(0).random((4, 32)).astype(np.float32)
    masks = np.ones((4, 3), dtype=np.int8)
    policies = []
    for setting in ("cpu", "cuda"):
        monkeypatch.setenv(AGENT_DEVICE_VARIABLE, setting)
        loaded = AveragePolicyAgent.load(path)
        assert next(loaded.network.parameters()).device.type == setting
        policies.append(loaded.policy_probabilities_batch(observations, masks))
    np.testing.assert_allclose(policies[0], policies[1], atol=1e-5)


@needs_cuda
def test_to_device_copies_through_pinned_memory_to_cuda():
    array = np.random.default_rng(0).random((64, 7)).astype(np.float32)
    tensor = to_device(array, torch.device("cuda"))
    assert tensor.is_cuda and np.array_equal(tensor.cpu().numpy(), array)


# ---- device: cpu is today's trajectory ---------------------------------------------------------
# Recorded before the trainers learnt ``device`` (same machine as CANARY).
CANARY = "bfa63f2963a3b7c5ad79318c6a764527a88c5828dd48708f0acf20d492fd7c22"
PINNED = {
    "nfsp": "769c894517e2257534f16c31dc866fe2c964009b6d9e7c3686b9b434a459a554",
    "mcnfsp": "16f2a4ab832097400cfe3eafd790e033b07e2ba090261c090665c8b6e50c4a2f",
    "exit_oos": "0c7c2d5dc26060b4d671a5878768ae661627647bec031d298a1243c0edd11a6f",
    "rebel": "d148978bc65212511c72c59fb8a03bbdaa92f48600231e13a8e0e01ac49c693c",
}


@pytest.mark.parametrize(
    "trainer, setting", [*((name, "cpu") for name in sorted(TRAJECTORIES)), ("nfsp", "auto")]
)
def test_a_run_names_its_device_first_and_cpu_keeps_the_recorded_trajectory(
    trainer, setting, tmp_path, capsys
):
    config_name, overrides = TRAJECTORIES[trainer]
    digest = trajectory_digest(
        config_name, [*overrides, f"trainer.params.device={setting}"], tmp_path / "run"
    )
    first_line = capsys.readouterr().out.splitlines()[0]
    reason = "as set" if setting == "cpu" else "torch" if not CUDA else ""
    assert first_line.startswith(f"{trainer} on kuhn_poker: device: cpu ({setting}: {reason}")
    if canary_digest() != CANARY:
        pytest.skip("this CPU's float arithmetic differs from the recording machine's")
    assert digest == PINNED[trainer]


# ---- the GPU measurement ------------------------------------------------------------------------
@pytest.mark.skipif(CUDA, reason="checks the refusal where torch has no CUDA")
@pytest.mark.parametrize(
    "arguments", [["--publish", "--device", "cpu"], ["--device", "cuda"], ["--flagship"]]
)
def test_the_gpu_measurement_refuses_gpu_figures_without_a_gpu(arguments, tmp_path, capsys):
    from benchmarks import device

    page = tmp_path / "device.md"
    page.write_text(f"{device.MEASURED_START}\nnone\n{device.MEASURED_END}\n")
    status = device.main([*arguments, "--runs", str(tmp_path), "--page", str(page)])
    assert status == 2 and "no CUDA device" in capsys.readouterr().err
    assert "none" in page.read_text() and not (tmp_path / "speed.json").exists()


@pytest.mark.slow
def test_the_gpu_measurement_measures_the_cpu_here(tmp_path, capsys):
    from benchmarks import device

    arguments = ["--device", "cpu", "--seconds", "1", "--cells", "nfsp_leduc"]
    assert device.main([*arguments, "--runs", str(tmp_path)]) == 0
    row = device.read_results(tmp_path / "speed.json")["nfsp_leduc@cpu"]
    assert "error" not in row, row
    assert row["device"] == "cpu" and row["auto"] == "cpu" and row["timed_steps"] >= 1
    assert row["episodes"] > 0 and row["updates"] > 0 and row["timed_seconds"] > 0
    assert "| nfsp_leduc |" in capsys.readouterr().out
