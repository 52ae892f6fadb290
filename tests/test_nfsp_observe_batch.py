"""NFSP's observe_batch (and CircularBuffer.add_batch, ReservoirBuffer.add_batch) store exactly
what one observe (add) per transition stores."""

import numpy as np
import pytest
import torch

import hiddenenvs.vector as vector
from agents.memories import CircularBuffer, ReservoirBuffer
from agents.nfsp import NFSP, NFSPAgent, NFSPConfig
from agents.vector_self_play import play_vector_episodes
from hiddenenvs.registry import load_game

COLUMNS = {"x": ((3,), np.float32), "a": ((), np.int64)}


def _assert_same_memory(left, right):
    left, right = left.state_dict(), right.state_dict()
    assert {k: v for k, v in left.items() if k != "data"} == {
        k: v for k, v in right.items() if k != "data"
    }
    for name in left["data"]:
        np.testing.assert_array_equal(left["data"][name], right["data"][name], err_msg=name)


@pytest.mark.parametrize("capacity", [1, 5, 1500])
def test_add_batch_equals_one_add_per_row(capacity):
    rng = np.random.default_rng(capacity)
    one_by_one, batched = CircularBuffer(capacity, COLUMNS), CircularBuffer(capacity, COLUMNS)
    for count in [
        0,
        1,
        3,
        4,
        7,
        1,
        1200,
        2,
        900,
        11,
    ]:  # partial fills, wrap-arounds, batches > capacity
        x = rng.normal(size=(count, 3)).astype(np.float32)
        a = rng.integers(9, size=count)
        for row in range(count):
            one_by_one.add(x=x[row], a=a[row])
        batched.add_batch(x=x, a=a)
        _assert_same_memory(one_by_one, batched)


@pytest.mark.parametrize("capacity", [1, 5, 1500])
def test_reservoir_add_batch_equals_one_add_per_row(capacity):
    # The same slots and the same draws from the generator: runs keep their trajectory.
    data = np.random.default_rng(capacity)
    rngs = np.random.default_rng(7), np.random.default_rng(7)
    one_by_one, batched = ReservoirBuffer(capacity, COLUMNS), ReservoirBuffer(capacity, COLUMNS)
    for count in [0, 1, 3, 4, 7, 1, 1200, 2, 900, 11, 3000]:  # partial fills, then replacements
        x = data.normal(size=(count, 3)).astype(np.float32)
        a = data.integers(9, size=count)
        for row in range(count):
            one_by_one.add(rngs[0], x=x[row], a=a[row])
        batched.add_batch(rngs[1], x=x, a=a)
        _assert_same_memory(one_by_one, batched)
        assert rngs[0].bit_generator.state == rngs[1].bit_generator.state


def test_nfsp_self_play_fills_the_same_replay_with_observe_batch(monkeypatch):
    game = load_game("leduc_holdem")
    config = NFSPConfig(hidden_sizes=[8], replay_capacity=50, min_buffer_size=10**9)

    def replays():
        torch.manual_seed(0)  # the networks' initial weights
        learner = NFSP(game, config, seed=4)
        env = vector.make("leduc_holdem", num_envs=16, copy=False)
        for seed in range(4):
            play_vector_episodes(env, learner.agents, seed=seed, num_games=16 if seed % 2 else 9)
        return learner.agents

    batched = replays()
    monkeypatch.delattr(NFSPAgent, "observe_batch")
    one_by_one = replays()
    for left, right in zip(batched, one_by_one):
        assert left.transitions == right.transitions > 50  # the replay wrapped around
        _assert_same_memory(left.replay, right.replay)
        _assert_same_memory(left.reservoir, right.reservoir)
