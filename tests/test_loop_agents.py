"""The agent interface, the baselines and the agent-spec resolver."""

import numpy as np
import pytest

import hiddenenvs
from agents import RandomAgent, TabularPolicyAgent, load_agent, load_agent_file
from agents.cfr import CFRSolver
from hiddenenvs.analysis import GameTree, TabularPolicy, exploitability


def test_random_agent_is_uniform_over_legal_actions_and_seeded():
    agent = RandomAgent(3, seed=7)
    mask = np.array([1, 0, 1], dtype=np.int8)
    assert agent.policy_probabilities(np.zeros(4), mask).tolist() == [0.5, 0.0, 0.5]
    actions = [agent.act(np.zeros(4), mask)[0] for _ in range(400)]
    assert set(actions) == {0, 2}
    assert 150 < actions.count(0) < 250
    again = RandomAgent(3, seed=7)
    assert [again.act(np.zeros(4), mask)[0] for _ in range(400)] == actions
    with pytest.raises(ValueError, match="no legal action"):
        agent.act(np.zeros(4), np.zeros(3, dtype=np.int8))


def test_tabular_agent_reproduces_its_policy_at_every_information_set():
    game = hiddenenvs.load_game("leduc_holdem")
    tree = GameTree.build(game)
    solver = CFRSolver(tree)
    solver.iterate(50)
    policy = solver.average_policy()
    seats = [TabularPolicyAgent(policy, player=p) for p in range(2)]
    states = tree.representative_states()

    def agent_policy(player, tensors, masks):
        return seats[player].policy_probabilities_batch(tensors, masks)

    rebuilt = TabularPolicy.from_tensor_function(tree, agent_policy)
    np.testing.assert_allclose(rebuilt.slot_probabilities, policy.slot_probabilities)
    assert exploitability(tree, rebuilt) == pytest.approx(solver.exploitability())
    with pytest.raises(KeyError, match="no information set of player 0"):
        seats[0].policy_probabilities(states[0].information_state_tensor(0) + 5, np.ones(3))


def test_load_agent_specs(tmp_path):
    agent = load_agent("cfr+:300", "kuhn_poker", player=1)
    assert isinstance(agent, TabularPolicyAgent) and agent.player == 1
    tree = agent.policy.tree
    assert exploitability(tree, agent.policy) < 2e-3
    agent.save(tmp_path / "cfr.pt")
    loaded = load_agent(str(tmp_path / "cfr.pt"), "kuhn_poker")
    np.testing.assert_array_equal(loaded.policy.slot_probabilities, agent.policy.slot_probabilities)
    assert isinstance(load_agent_file(tmp_path / "cfr.pt"), TabularPolicyAgent)
    assert isinstance(load_agent("random", "rps"), RandomAgent)
    for bad in ("randomm", "cfr+:x", str(tmp_path / "missing.pt")):
        with pytest.raises(ValueError, match="agent spec"):
            load_agent(bad, "kuhn_poker")
    with pytest.raises(ValueError, match="player must be in 0..1"):
        load_agent("random", "kuhn_poker", player=2)
