"""benchmarks/anfsp_frozen_pi.py: the policy a player meets in training, and Q trained
in-process against a Pi that stands still."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import torch

import hiddenenvs
from agents.networks import mlp
from hiddenenvs.analysis import GameTree, TabularPolicy
from hiddenenvs.analysis.exploitability import expected_returns

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "anfsp_frozen_pi.py"


@pytest.fixture(scope="module")
def probe():
    spec = importlib.util.spec_from_file_location("anfsp_frozen_pi", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def kuhn_tree():
    return GameTree.build(hiddenenvs.load_game("kuhn_poker"))


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
    np.testing.assert_allclose(probe.met_policy(tree, pi, q_play, 0.0, 0).slot_probabilities, pi.slot_probabilities)


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
        assert np.argmax(row) == np.argmax(softmax.slot_probabilities[start:stop])  # the same logits


def test_the_server_trains_q_on_in_process_windows_while_pi_stands_still():
    pytest.importorskip("ray", reason='ANFSP needs Ray: pip install -e ".[distributed]"')
    import sys

    from agents.anfsp import ActorLearner
    from agents.config import config_from_dict
    from agents.runs import build_learner

    learner = build_learner(config_from_dict({
        "env": {"name": "kuhn_poker"}, "seed": 0,
        "trainer": {"name": "anfsp", "params": {"hidden_sizes": [8], "optimizer": "adam",
                                                "envs_per_actor": 4, "anticipatory": 0.5}}}))
    learner.config.min_reservoir_size = sys.maxsize  # what the probe does
    actor = ActorLearner(learner.game.spec.to_dict(), learner.architecture, 0.5, 1.0, 4, (0, 0, 0))
    pi_before = [p.detach().clone() for p in learner.policy_networks[0].parameters()]
    q_before = [p.detach().clone() for p in learner.q_networks[0].parameters()]
    window = actor.play_window(learner._weights(), 0.1, learner.config.gradient_every)
    assert window["node"] == "local"  # no Ray started
    learner._apply(0, window)
    assert all(torch.equal(a, b) for a, b in zip(pi_before, learner.policy_networks[0].parameters()))
    assert not all(torch.equal(a, b) for a, b in zip(q_before, learner.q_networks[0].parameters()))
    assert learner.slot_transitions[0] == sum(window["transitions"]) > 0
    learner.close()
