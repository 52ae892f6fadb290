"""benchmarks/nfsp_diagnosis.py: the reservoir's empirical policy and Q's greedy response."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import torch

import hiddenenvs
from agents.memories import ReservoirBuffer
from hiddenenvs.analysis import GameTree, TabularPolicy
from hiddenenvs.analysis.exploitability import (
    best_response,
    best_response_action_values,
    expected_returns,
)

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "nfsp_diagnosis.py"


@pytest.fixture(scope="module")
def diagnosis():
    spec = importlib.util.spec_from_file_location("nfsp_diagnosis", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def kuhn_tree():
    return GameTree.build(hiddenenvs.load_game("kuhn_poker"))


def reservoirs_of(tree, rows_per_player):
    """Per player a reservoir holding ``(infoset, action, times)`` rows."""
    states = tree.representative_states()
    info = tree.game.info
    reservoirs = []
    for player, rows in enumerate(rows_per_player):
        reservoir = ReservoirBuffer(1000, {"observation": ((int(np.prod(info.information_state_tensor_shape)),), np.float32),
                                           "action_mask": ((info.num_distinct_actions,), np.int8),
                                           "action": ((), np.int64)})
        rng = np.random.default_rng(0)
        for infoset, action, times in rows:
            tensor = np.ravel(states[infoset].information_state_tensor(player))
            for _ in range(times):
                reservoir.add(rng, observation=tensor, action_mask=np.ones(info.num_distinct_actions, np.int8),
                              action=action)
        reservoirs.append(reservoir)
    return reservoirs


def test_empirical_policy_counts_actions_and_falls_back_where_unseen(diagnosis, kuhn_tree):
    tree = kuhn_tree
    first, second = (int(i) for i in np.flatnonzero(tree.infoset_player == 0)[:2])
    reply = int(np.flatnonzero(tree.infoset_player == 1)[0])
    uniform = TabularPolicy.uniform(tree)
    policy = diagnosis.empirical_policy(tree, reservoirs_of(tree, [[(first, 0, 3), (first, 1, 1), (second, 1, 2)],
                                                                   [(reply, 0, 5)]]), uniform)
    assert policy.infoset_probabilities(first) == {0: 0.75, 1: 0.25}
    assert policy.infoset_probabilities(second) == {0: 0.0, 1: 1.0}
    assert policy.infoset_probabilities(reply) == {0: 1.0, 1: 0.0}
    unseen = int(np.flatnonzero(tree.infoset_player == 1)[1])
    assert policy.infoset_probabilities(unseen) == uniform.infoset_probabilities(unseen)


def test_empirical_policy_refuses_rows_of_another_game(diagnosis, kuhn_tree):
    reservoirs = reservoirs_of(kuhn_tree, [[], []])
    reservoirs[0].add(np.random.default_rng(0), observation=np.full(reservoirs[0].data["observation"].shape[1], 7.0),
                      action_mask=np.ones(2, np.int8), action=0)
    with pytest.raises(ValueError, match="match no information set of kuhn_poker"):
        diagnosis.empirical_policy(kuhn_tree, reservoirs, TabularPolicy.uniform(kuhn_tree))


class _ExactQ(torch.nn.Module):
    """A Q network answering each information-state tensor with given action values."""

    def __init__(self, table):
        super().__init__()
        self.table = table

    def forward(self, batch):
        return torch.stack([self.table[tuple(row.tolist())] for row in batch])


def test_greedy_against_plays_q_argmax_for_its_player_only(diagnosis, kuhn_tree):
    tree = kuhn_tree
    uniform = TabularPolicy.uniform(tree)
    value, exact = best_response(tree, uniform, 0)
    states = tree.representative_states()
    table = {}
    for infoset in np.flatnonzero(tree.infoset_player == 0):
        best = max(exact.infoset_probabilities(infoset).items(), key=lambda item: item[1])[0]
        q = torch.zeros(2)
        q[best] = 1.0
        table[tuple(np.ravel(states[infoset].information_state_tensor(0)).astype(np.float32).tolist())] = q
    response = diagnosis.greedy_against(tree, uniform, _ExactQ(table), 0)
    assert expected_returns(tree, response)[0] == pytest.approx(value)
    others = tree.infoset_player[tree.slot_infoset] == 1
    np.testing.assert_array_equal(response.slot_probabilities[others], uniform.slot_probabilities[others])


def test_greedy_losses_rank_the_information_sets_where_q_picks_a_worse_action(diagnosis, kuhn_tree):
    tree = kuhn_tree
    uniform = TabularPolicy.uniform(tree)
    slot_values, infoset_reach = best_response_action_values(tree, uniform, 1)
    states = tree.representative_states()
    infosets = np.flatnonzero(tree.infoset_player == 1)
    table, exact = {}, {}
    for infoset in infosets:
        values = slot_values[tree.infoset_slot_start[infoset]:tree.infoset_slot_start[infoset + 1]]
        exact[infoset] = values / infoset_reach[infoset]
        table[tuple(np.ravel(states[infoset].information_state_tensor(1)).astype(np.float32).tolist())] = \
            torch.tensor(exact[infoset], dtype=torch.float32)
    rows = diagnosis.greedy_losses(tree, uniform, _ExactQ(table), 1)
    assert len(rows) == len(infosets) and all(row["loss"] == pytest.approx(0.0) for row in rows)
    for row in rows:  # the exact values given reached, which Q here repeats
        np.testing.assert_allclose(row["values"], exact[tree.infoset_index[row["infoset"]]], rtol=1e-12)
        np.testing.assert_allclose(row["q"], row["values"], rtol=1e-6)
    # Q prefers the worse action at one information set: that set comes first, and its loss
    # is the counterfactual value the choice gives up.
    wrong = next(i for i in infosets if abs(exact[i][0] - exact[i][1]) > 0.1)
    key = tuple(np.ravel(states[wrong].information_state_tensor(1)).astype(np.float32).tolist())
    table[key] = -table[key]
    rows = diagnosis.greedy_losses(tree, uniform, _ExactQ(table), 1)
    assert rows[0]["infoset"] == tree.infoset_keys[wrong] and rows[0]["greedy"] == int(np.argmin(exact[wrong]))
    assert rows[0]["loss"] == pytest.approx(infoset_reach[wrong] * abs(exact[wrong][0] - exact[wrong][1]))
    assert all(row["loss"] == pytest.approx(0.0) for row in rows[1:])
