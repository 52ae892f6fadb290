"""The agent interface, the baselines and the agent-spec resolver."""

import numpy as np
import pytest

import hiddenenvs
from agents import RandomAgent, TabularPolicyAgent, load_agent, load_agent_file
from agents.cfr import CFRSolver
from agents.base import tabular_policy_of_agents
from hiddenenvs.analysis import GameTree, exploitability


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
    seats = [TabularPolicyAgent.from_policy(policy, player=p) for p in range(2)]
    states = tree.representative_states()
    rebuilt = tabular_policy_of_agents(tree, seats.__getitem__)
    np.testing.assert_allclose(rebuilt.slot_probabilities, policy.slot_probabilities)
    assert exploitability(tree, rebuilt) == pytest.approx(solver.exploitability())
    player_1_view = next(s.seat_view(1) for s in states if s.current_player() == 1)
    with pytest.raises(KeyError, match="no information set of player 1"):
        seats[0].policy_probabilities(None, np.ones(3), player_1_view)
    with pytest.raises(ValueError, match="call it with the seats' views"):
        seats[0].policy_probabilities(states[0].information_state_tensor(0), np.ones(3))


def test_load_agent_specs(tmp_path):
    agent = load_agent("cfr+:300", "kuhn_poker", player=1)
    assert isinstance(agent, TabularPolicyAgent) and agent.player == 1
    tree = GameTree.build(agent.game)
    seat_0 = load_agent("cfr+:300", "kuhn_poker", player=0)
    both = TabularPolicyAgent(agent.game, {**seat_0.table, **agent.table})
    assert exploitability(tree, both.tabular_policy(tree)) < 2e-3
    agent.save(tmp_path / "cfr.pt")
    loaded = load_agent(str(tmp_path / "cfr.pt"), "kuhn_poker")
    assert loaded.table.keys() == agent.table.keys()
    for key, row in agent.table.items():
        np.testing.assert_array_equal(loaded.table[key], row)
    assert isinstance(load_agent_file(tmp_path / "cfr.pt"), TabularPolicyAgent)
    assert isinstance(load_agent("random", "rps"), RandomAgent)
    for bad in ("randomm", "cfr+:x", str(tmp_path / "missing.pt")):
        with pytest.raises(ValueError, match="agent spec"):
            load_agent(bad, "kuhn_poker")
    with pytest.raises(ValueError, match="player must be in 0..1"):
        load_agent("random", "kuhn_poker", player=2)


@pytest.mark.parametrize("name", sorted(hiddenenvs.registry.REGISTRY))
def test_tabular_agent_save_load_round_trip_for_every_env(name, tmp_path):
    """A table over information sets met in random play survives a file, game identity included."""
    game = hiddenenvs.load_game(name)
    rng = np.random.default_rng(0)
    env = hiddenenvs.make(name)
    views = []
    for episode in range(2):
        env.reset(seed=episode)
        for agent_name in env.agent_iter(max_iter=40):
            observation, _, termination, truncation, _ = env.last()
            if termination or truncation:
                env.step(None)
                continue
            views.append(env.unwrapped.seat_view(agent_name))
            env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    table = {}
    for view in views:
        row = np.zeros(game.info.num_distinct_actions)
        row[list(view.legal_actions)] = rng.dirichlet(np.ones(len(view.legal_actions)))
        table[(view.player, view.information_state_key)] = row
    agent = TabularPolicyAgent(game, table)
    agent.save(tmp_path / "table.pt")
    loaded = load_agent(str(tmp_path / "table.pt"), name)
    assert isinstance(loaded, TabularPolicyAgent) and loaded.game.spec == game.spec
    assert type(loaded.game) is type(game) and loaded.game.info == game.info
    for view in views[:50]:
        mask = np.zeros(game.info.num_distinct_actions, dtype=np.int8)
        mask[list(view.legal_actions)] = 1
        np.testing.assert_array_equal(
            loaded.policy_probabilities(None, mask, view),
            agent.policy_probabilities(None, mask, view),
        )
