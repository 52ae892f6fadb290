"""Checkpoint and agent files are data only: a hostile file is refused and nothing in it runs."""

import csv
import os
from pathlib import Path

import numpy as np
import pytest
import torch

import evaluate
import hiddenenvs
import train
from agents import RandomAgent, load_agent, load_agent_file
from agents.checkpoint import (
    UnsafeFileError,
    atomic_torch_save,
    global_rng_state,
    load_checkpoint,
    registered_agent_name,
)
from agents.nfsp import NFSP, NFSPConfig


class _CreatesAFile:
    """Unpickling this calls ``open(target, "w")``: code run from a file."""

    def __init__(self, target):
        self.target = str(target)

    def __reduce__(self):
        return (open, (self.target, "w"))


def _hostile_file(path: Path, marker: Path, **fields) -> Path:
    torch.save({"state": _CreatesAFile(marker), **fields}, path)
    return path


def _assert_nothing_ran(marker: Path):
    assert not marker.exists(), "code from the file ran"


def test_pickle_payload_is_refused_by_every_loader(tmp_path, capsys):
    marker = tmp_path / "pwned"
    path = _hostile_file(
        tmp_path / "agent.pt", marker, format="hiddenenvs-agent-v2", agent="RandomAgent"
    )
    # The unsafe loader would run it: the test's hostile file is real.
    assert torch.load(path, weights_only=False) and marker.exists()
    marker.unlink()
    with pytest.raises(UnsafeFileError, match=r"agent\.pt: not a data-only"):
        load_agent_file(path)
    with pytest.raises(ValueError, match="not a data-only"):
        load_agent(str(path), "kuhn_poker")
    _assert_nothing_ran(marker)
    # The leaderboard ranks nothing: the spec fails before any match.
    db = tmp_path / "board.sqlite"
    code = evaluate.main(
        [
            "--env",
            "kuhn_poker",
            "--agents",
            "random",
            str(path),
            "--games",
            "1",
            "--db",
            str(db),
            "--out",
            str(tmp_path),
            "--quiet",
            "--workers",
            "1",
            "--exploitability-max-nodes",
            "0",
        ]
    )
    assert code == 2 and "not a data-only" in capsys.readouterr().err
    _assert_nothing_ran(marker)


def test_hostile_run_checkpoint_is_refused_by_resume(tmp_path, capsys):
    marker = tmp_path / "pwned"
    run = tmp_path / "run"
    run.mkdir()
    _hostile_file(run / "checkpoint.pt", marker, format="hiddenenvs-run-v1")
    assert train.main(["--resume", str(run)]) == 2
    assert "checkpoint.pt: not a data-only" in capsys.readouterr().err
    _assert_nothing_ran(marker)


def test_class_names_come_from_the_registry_never_the_file(tmp_path):
    atomic_torch_save(
        {"format": "hiddenenvs-agent-v2", "agent": "os:system", "state": {}}, tmp_path / "a.pt"
    )
    with pytest.raises(UnsafeFileError, match="no registered agent class 'os:system'"):
        load_agent_file(tmp_path / "a.pt")
    # A v1 file's module part is ignored: only the registered class name is used.
    atomic_torch_save(
        {
            "format": "hiddenenvs-agent-v1",
            "agent_class": "os:RandomAgent",
            "state": {"num_actions": 3},
        },
        tmp_path / "v1.pt",
    )
    assert isinstance(load_agent_file(tmp_path / "v1.pt"), RandomAgent)
    (tmp_path / "junk.pt").write_bytes(b"not a torch file at all")
    with pytest.raises(UnsafeFileError, match="junk.pt"):
        load_agent_file(tmp_path / "junk.pt")
    atomic_torch_save({"format": "something else"}, tmp_path / "other.pt")
    with pytest.raises(UnsafeFileError, match="not an agent file"):
        load_agent_file(tmp_path / "other.pt")


def test_local_classes_cannot_be_saved(tmp_path):
    class Local(RandomAgent):
        pass

    with pytest.raises(ValueError, match="classes defined inside functions are not registered"):
        registered_agent_name(Local)
    with pytest.raises(ValueError):
        Local(2).save(tmp_path / "local.pt")
    assert not (tmp_path / "local.pt").exists()


def _flatten(value, prefix=""):
    """(path, leaf) pairs of nested dicts/lists/tuples, to compare two states leaf by leaf."""
    if isinstance(value, dict):
        for key in value:
            yield from _flatten(value[key], f"{prefix}/{key}")
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from _flatten(item, f"{prefix}/{index}")
    else:
        yield prefix, value


def _assert_bit_identical(a, b):
    flat_a, flat_b = dict(_flatten(a)), dict(_flatten(b))
    assert flat_a.keys() == flat_b.keys()
    for key, left in flat_a.items():
        right = flat_b[key]
        assert type(left) is type(right), key
        if isinstance(left, np.ndarray):
            assert left.dtype == right.dtype and left.shape == right.shape, key
            assert left.tobytes() == right.tobytes(), key
        elif isinstance(left, torch.Tensor):
            assert left.dtype == right.dtype and torch.equal(left, right), key
        else:
            assert left == right, key


def test_nfsp_state_survives_the_file_bit_for_bit(tmp_path):
    from agents.loop import play_episodes

    game = hiddenenvs.load_game("kuhn_poker")
    learner = NFSP(
        game, NFSPConfig(hidden_sizes=[8], min_buffer_size=10, learn_every=4, batch_size=8), 1
    )
    envs = [hiddenenvs.make("kuhn_poker").unwrapped for _ in range(16)]
    play_episodes(
        envs, dict(zip(envs[0].possible_agents, learner.agents)), np.arange(16), learn=True
    )
    learner.update()
    state = {
        "learner": learner.state_dict(),
        "global_rng": global_rng_state(),
        "scalars": [np.float64(0.25), np.int64(7), np.bool_(True)],
    }
    atomic_torch_save(state, tmp_path / "checkpoint.pt")
    loaded = load_checkpoint(tmp_path / "checkpoint.pt")
    state["scalars"] = [0.25, 7, True]  # numpy scalars come back as Python numbers
    _assert_bit_identical(state, loaded)
    assert not [p for p in tmp_path.iterdir() if p.name != "checkpoint.pt"], (
        "temporary file left behind"
    )


def test_unsupported_objects_are_refused_at_save_time(tmp_path):
    with pytest.raises(TypeError, match=r"payload\['bad'\]: a object is not data"):
        atomic_torch_save({"bad": object()}, tmp_path / "x.pt")
    with pytest.raises(TypeError, match="dtype object"):
        atomic_torch_save({"bad": np.array([None])}, tmp_path / "x.pt")
    assert not tmp_path.joinpath("x.pt").exists()


def test_metrics_csv_is_replaced_atomically_on_resume(tmp_path):
    from agents.loop import _MetricsLog

    columns = ["iterations", "episodes", "wall_seconds"]
    log = _MetricsLog(tmp_path, columns, "episodes", None)
    for step, episodes in enumerate((10, 20, 30), start=1):
        log.log({"iterations": step, "episodes": episodes, "wall_seconds": episodes / 10})
    log.close()
    inode_before = os.stat(tmp_path / "metrics.csv").st_ino
    resumed = _MetricsLog(tmp_path, columns, "episodes", 2)
    resumed.close()
    with (tmp_path / "metrics.csv").open() as handle:
        assert [row["episodes"] for row in csv.DictReader(handle)] == ["10", "20"]
    assert os.stat(tmp_path / "metrics.csv").st_ino != inode_before  # a new file, renamed in
    assert [row["episodes"] for row in resumed.rows] == [10.0, 20.0]


# ---- damaged files and agents of another game ------------------------------------------------------
def _kuhn_agent_file(path: Path) -> Path:
    learner = NFSP(hiddenenvs.load_game("kuhn_poker"), NFSPConfig(hidden_sizes=[8]), seed=0)
    learner.evaluation_agent(0).save(path)
    return path


def test_truncated_files_are_refused_as_corrupted(tmp_path):
    from agents.checkpoint import CorruptedFileError

    data = _kuhn_agent_file(tmp_path / "agent.pt").read_bytes()
    damaged = tmp_path / "damaged.pt"
    for length in range(0, len(data), 97):
        damaged.write_bytes(data[:length])
        with pytest.raises(
            CorruptedFileError,
            match=r"damaged\.pt: corrupted or truncated .*nothing in it "
            r"was run",
        ):
            load_agent_file(damaged)


def test_bit_flips_are_refused_as_corrupted_or_change_nothing(tmp_path):
    """Every 5th byte flipped in turn: each file is refused as corrupted (one line), never
    with the data-only wording, or loads (a flip in a field nobody checks: a timestamp,
    the alignment padding). Measured on every byte of such a file: 2 in 3 flips refused;
    of the ones that load, a few (3 in 2,900, flips of a local header's length field)
    move where torch reads a tensor while every CRC-32 still matches, so they load other
    weights: zip cannot tell, and this test does not claim it."""
    from agents.checkpoint import CorruptedFileError

    path = _kuhn_agent_file(tmp_path / "agent.pt")
    data, original = path.read_bytes(), load_agent_file(path).state_dict()
    damaged = tmp_path / "damaged.pt"
    refused = 0
    for position in range(0, len(data), 5):
        flipped = bytearray(data)
        flipped[position] ^= 0x10
        damaged.write_bytes(bytes(flipped))
        try:
            load_agent_file(damaged)
        except CorruptedFileError as error:
            assert "corrupted" in str(error) and "\n" not in str(error)
            refused += 1
    assert refused > len(data) // 5 // 2, "most flips must be caught"
    assert original  # the undamaged file still loads


def test_an_agent_of_another_game_names_the_file_and_the_mismatch(tmp_path):
    from agents.checkpoint import AgentGameMismatchError

    path = _kuhn_agent_file(tmp_path / "kuhn.pt")
    assert load_agent(str(path), "kuhn_poker") is not None
    with pytest.raises(
        AgentGameMismatchError,
        match=r"kuhn\.pt: the agent reads inputs of size 11, "
        r"leduc_holdem's information state has size 32 "
        r"\(observation 10\): it was made for another game",
    ):
        load_agent(str(path), "leduc_holdem")
    # inputs of rps's width (8) but two actions, as matching pennies has: refused by its actions
    from agents.networks import AveragePolicyAgent, mlp

    two_actions = tmp_path / "two_actions.pt"
    AveragePolicyAgent(
        mlp(8, [4], 2), {"input_size": 8, "hidden_sizes": [4], "num_actions": 2}
    ).save(two_actions)
    with pytest.raises(
        AgentGameMismatchError, match=r"two_actions\.pt: the agent has 2 actions, rps has 3"
    ):
        load_agent(str(two_actions), "rps")
