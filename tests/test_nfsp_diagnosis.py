"""The run diagnoses in agents/diagnostics/: nfsp.py (the reservoir's empirical policy and
Q's greedy response) and anfsp_frozen_pi.py (the policy a player meets in training, and Q
trained in-process against a Pi that stands still)."""

import sys

import numpy as np
import pytest
import torch

import hiddenenvs
from agents.diagnostics import anfsp_frozen_pi, nfsp
from agents.memories import ReservoirBuffer
from agents.networks import mlp
from hiddenenvs.analysis import GameTree, TabularPolicy
from hiddenenvs.analysis.exploitability import (
    best_response,
    best_response_action_values,
    expected_returns,
)


@pytest.fixture(scope="module")
def diagnosis():
    return nfsp


@pytest.fixture(scope="module")
def probe():
    return anfsp_frozen_pi


@pytest.fixture(scope="module")
def kuhn_tree():
    return GameTree.build(hiddenenvs.load_game("kuhn_poker"))


def reservoirs_of(tree, rows_per_player):
    """Per player a reservoir holding ``(infoset, action, times)`` rows."""
    states = tree.representative_states()
    info = tree.game.info
    reservoirs = []
    for player, rows in enumerate(rows_per_player):
        reservoir = ReservoirBuffer(
            1000,
            {
                "observation": ((int(np.prod(info.information_state_tensor_shape)),), np.float32),
                "action_mask": ((info.num_distinct_actions,), np.int8),
                "action": ((), np.int64),
            },
        )
        rng = np.random.default_rng(0)
        for infoset, action, times in rows:
            tensor = np.ravel(states[infoset].information_state_tensor(player))
            for _ in range(times):
                reservoir.add(
                    rng,
                    observation=tensor,
                    action_mask=np.ones(info.num_distinct_actions, np.int8),
                    action=action,
                )
        reservoirs.append(reservoir)
    return reservoirs


def test_empirical_policy_counts_actions_and_falls_back_where_unseen(diagnosis, kuhn_tree):
    tree = kuhn_tree
    first, second = (int(i) for i in np.flatnonzero(tree.infoset_player == 0)[:2])
    reply = int(np.flatnonzero(tree.infoset_player == 1)[0])
    uniform = TabularPolicy.uniform(tree)
    policy = diagnosis.empirical_policy(
        tree,
        reservoirs_of(tree, [[(first, 0, 3), (first, 1, 1), (second, 1, 2)], [(reply, 0, 5)]]),
        uniform,
    )
    assert policy.infoset_probabilities(first) == {0: 0.75, 1: 0.25}
    assert policy.infoset_probabilities(second) == {0: 0.0, 1: 1.0}
    assert policy.infoset_probabilities(reply) == {0: 1.0, 1: 0.0}
    unseen = int(np.flatnonzero(tree.infoset_player == 1)[1])
    assert policy.infoset_probabilities(unseen) == uniform.infoset_probabilities(unseen)


def test_empirical_policy_refuses_rows_of_another_game(diagnosis, kuhn_tree):
    reservoirs = reservoirs_of(kuhn_tree, [[], []])
    reservoirs[0].add(
        np.random.default_rng(0),
        observation=np.full(reservoirs[0].data["observation"].shape[1], 7.0),
        action_mask=np.ones(2, np.int8),
        action=0,
    )
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
        table[
            tuple(np.ravel(states[infoset].information_state_tensor(0)).astype(np.float32).tolist())
        ] = q
    response = diagnosis.greedy_against(tree, uniform, _ExactQ(table), 0)
    assert expected_returns(tree, response)[0] == pytest.approx(value)
    others = tree.infoset_player[tree.slot_infoset] == 1
    np.testing.assert_array_equal(
        response.slot_probabilities[others], uniform.slot_probabilities[others]
    )


def test_greedy_losses_rank_the_information_sets_where_q_picks_a_worse_action(diagnosis, kuhn_tree):
    tree = kuhn_tree
    uniform = TabularPolicy.uniform(tree)
    slot_values, infoset_reach = best_response_action_values(tree, uniform, 1)
    states = tree.representative_states()
    infosets = np.flatnonzero(tree.infoset_player == 1)
    table, exact = {}, {}
    for infoset in infosets:
        values = slot_values[
            tree.infoset_slot_start[infoset] : tree.infoset_slot_start[infoset + 1]
        ]
        exact[infoset] = values / infoset_reach[infoset]
        table[
            tuple(np.ravel(states[infoset].information_state_tensor(1)).astype(np.float32).tolist())
        ] = torch.tensor(exact[infoset], dtype=torch.float32)
    rows = diagnosis.greedy_losses(tree, uniform, _ExactQ(table), 1)
    assert len(rows) == len(infosets) and all(row["loss"] == pytest.approx(0.0) for row in rows)
    for row in rows:  # the exact values given reached, which Q here repeats
        np.testing.assert_allclose(
            row["values"], exact[tree.infoset_index[row["infoset"]]], rtol=1e-12
        )
        np.testing.assert_allclose(row["q"], row["values"], rtol=1e-6)
    # Q prefers the worse action at one information set: that set comes first, and its loss
    # is the counterfactual value the choice gives up.
    wrong = next(i for i in infosets if abs(exact[i][0] - exact[i][1]) > 0.1)
    key = tuple(np.ravel(states[wrong].information_state_tensor(1)).astype(np.float32).tolist())
    table[key] = -table[key]
    rows = diagnosis.greedy_losses(tree, uniform, _ExactQ(table), 1)
    assert rows[0]["infoset"] == tree.infoset_keys[wrong] and rows[0]["greedy"] == int(
        np.argmin(exact[wrong])
    )
    assert rows[0]["loss"] == pytest.approx(
        infoset_reach[wrong] * abs(exact[wrong][0] - exact[wrong][1])
    )
    assert all(row["loss"] == pytest.approx(0.0) for row in rows[1:])


# ---- anfsp_frozen_pi ----------------------------------------------------------------------
def random_policy(tree, seed):
    rng = np.random.default_rng(seed)
    slots = rng.random(len(tree.slot_action)) + 0.05
    for infoset in range(tree.num_infosets):
        start, stop = tree.infoset_slot_start[infoset], tree.infoset_slot_start[infoset + 1]
        slots[start:stop] /= slots[start:stop].sum()
    return TabularPolicy(tree, slots)


def with_player(tree, base, player, policy):
    """``base`` with ``player``'s information sets played by ``policy``."""
    own = tree.infoset_player[tree.slot_infoset] == player
    return TabularPolicy(tree, np.where(own, policy.slot_probabilities, base.slot_probabilities))


def test_the_met_policy_is_the_per_episode_mixture_of_pi_and_q(probe, kuhn_tree):
    tree = kuhn_tree
    pi, q_play, own_play = random_policy(tree, 1), random_policy(tree, 2), random_policy(tree, 3)
    for eta in (0.0, 0.2, 1.0):
        met = probe.met_policy(tree, pi, q_play, eta, player=0)
        # Player 0's value against it is the mixture of its values against Pi and against Q,
        # which holds for a behaviour policy only when it mixes by reach.
        value = expected_returns(tree, with_player(tree, met, 0, own_play))[0]
        against_pi = expected_returns(tree, with_player(tree, pi, 0, own_play))[0]
        against_q = expected_returns(tree, with_player(tree, q_play, 0, own_play))[0]
        assert value == pytest.approx((1 - eta) * against_pi + eta * against_q)
        own = tree.infoset_player[tree.slot_infoset] == 0  # player 0's own slots are left as Pi's
        np.testing.assert_allclose(met.slot_probabilities[own], pi.slot_probabilities[own])
    np.testing.assert_allclose(
        probe.met_policy(tree, pi, q_play, 0.0, 0).slot_probabilities, pi.slot_probabilities
    )


def test_network_policy_is_softmax_or_epsilon_greedy(probe, kuhn_tree):
    tree = kuhn_tree
    torch.manual_seed(0)
    size = int(np.prod(tree.game.info.information_state_tensor_shape))
    networks = [mlp(size, [8], tree.game.info.num_distinct_actions) for _ in range(2)]
    softmax = probe.network_policy(tree, networks, None)
    greedy = probe.network_policy(tree, networks, 0.1)
    for infoset in range(tree.num_infosets):
        start, stop = tree.infoset_slot_start[infoset], tree.infoset_slot_start[infoset + 1]
        assert softmax.slot_probabilities[start:stop].sum() == pytest.approx(1.0)
        row = greedy.slot_probabilities[start:stop]
        assert sorted(np.round(row, 9)) == pytest.approx([0.05, 0.95])  # Kuhn: two legal actions
        assert np.argmax(row) == np.argmax(
            softmax.slot_probabilities[start:stop]
        )  # the same logits


def test_the_server_trains_q_on_in_process_windows_while_pi_stands_still():
    pytest.importorskip("ray", reason='ANFSP needs Ray: pip install -e ".[distributed]"')
    from agents.anfsp import ActorLearner
    from agents.config import config_from_dict
    from agents.runs import build_learner

    learner = build_learner(
        config_from_dict(
            {
                "env": {"name": "kuhn_poker"},
                "seed": 0,
                "trainer": {
                    "name": "anfsp",
                    "params": {
                        "hidden_sizes": [8],
                        "optimizer": "adam",
                        "envs_per_actor": 4,
                        "anticipatory": 0.5,
                    },
                },
            }
        )
    )
    learner.config.min_reservoir_size = sys.maxsize  # what the probe does
    actor = ActorLearner(learner.game.spec.to_dict(), learner.architecture, 0.5, 1.0, 4, (0, 0, 0))
    pi_before = [p.detach().clone() for p in learner.policy_networks[0].parameters()]
    q_before = [p.detach().clone() for p in learner.q_networks[0].parameters()]
    window = actor.play_window(learner._weights(), 0.1, learner.config.gradient_every)
    assert window["node"] == "local"  # no Ray started
    learner._apply(0, window)
    assert all(
        torch.equal(a, b) for a, b in zip(pi_before, learner.policy_networks[0].parameters())
    )
    assert not all(torch.equal(a, b) for a, b in zip(q_before, learner.q_networks[0].parameters()))
    assert learner.slot_transitions[0] == sum(window["transitions"]) > 0
    learner.close()
