"""ReBeL search (agents/rebel.py): belief-weighted subgames, checked against exact facts.

Monty Hall must switch (p >= 0.99: strategy fusion would give 2/3), biased RPS must play
its equilibrium (0.4, 0.4, 0.2), and the policy the search plays at every information set
must have exact exploitability below 0.05 (per unit of utility range) on biased RPS,
Monty Hall and Liar's Dice with one four-faced die.
"""

from __future__ import annotations

import numpy as np
import pytest

import hiddenenvs
from agents.baselines import load_agent
from agents.rebel import ReBeLAgent, ReBeLSearch, rebel_exploitability, rebel_policy
from hiddenenvs.analysis import GameTree
from hiddenenvs.analysis.tree import build_subgame_tree

SWITCH, STAY = 5, 4


def _monty_switch_view(game):
    """The car is behind door 3, the candidate chose door 1 and the host opened door 2."""
    state = game.new_initial_state()
    state.apply_action(2)
    state.apply_actions([0])
    while state.is_chance_node():
        state.apply_action(state.legal_actions()[0])
    return state.seat_view(0)


def normalised_exploitability(search: ReBeLSearch) -> float:
    info = search.game.info
    return rebel_exploitability(search) / (info.max_utility - info.min_utility)


@pytest.mark.parametrize("options", [{}, {"max_depth": 1}, {"resolve": "decision"}, {"max_root_nodes": 1}])
def test_monty_hall_switches(options):
    """Every mode: one information set over the posterior (car 1/3 here, 2/3 there).

    ``max_root_nodes=1`` forces the sampled root (64 draws from the posterior).
    """
    game = hiddenenvs.load_game("monty_hall")
    view = _monty_switch_view(game)
    assert SWITCH in view.legal_actions
    policy = ReBeLSearch(game, iterations=100, **options).policy(view)
    assert policy[SWITCH] >= 0.99


def test_biased_rps_plays_its_equilibrium():
    game = hiddenenvs.load_game("gdl_biased_rps")
    search = ReBeLSearch(game, iterations=300)
    state = game.new_initial_state()
    for player in (0, 1):
        view = state.seat_view(player)
        policy = search.policy(view)[list(view.legal_actions)]
        assert np.abs(policy - [0.4, 0.4, 0.2]).max() < 0.02, policy


@pytest.mark.parametrize("name, params", [("gdl_biased_rps", {}), ("monty_hall", {}), ("liars_dice", {"faces": 4})])
def test_exact_exploitability_of_the_search_policy(name, params):
    """Full depth: the first subgame holds the whole game and answers every later decision
    (no re-solving), so the policy is CFR+'s and far below the goal."""
    search = ReBeLSearch(hiddenenvs.load_game(name, **params), iterations=200)
    assert normalised_exploitability(search) < 0.01
    assert len(search._solved) == 1


def test_depth_limited_subgames_use_the_leaf_values():
    """A frontier leaf takes leaf_value's row, a terminal its returns: a value of +-7 that
    no Liar's Dice terminal has shows up at exactly the cut nodes."""
    game = hiddenenvs.load_game("liars_dice", faces=4)
    calls = []  # one batch per deepening step

    def leaf_value(states):
        calls.append(states)
        return np.tile([7.0, -7.0], (len(states), 1))

    search = ReBeLSearch(game, iterations=20, max_depth=3, leaf_value=leaf_value)
    state = game.state_from_history([0, 1])
    policy = search.policy(state.seat_view(0))
    assert policy.sum() == pytest.approx(1.0)
    tree, _, depth, frontier_keys = search._solved[()]
    seen = calls[-1]
    assert depth == 3 and tree.num_frontier == len(seen) > 0
    cut = tree.terminal_returns[tree.terminal_nodes]
    assert (np.abs(cut[:, 0]) == 7.0).sum() == tree.num_frontier
    assert all(s.public_state_key() in frontier_keys and not s.is_terminal() for s in seen)


def test_subgame_tree_hangs_roots_below_a_weighted_chance_node():
    game = hiddenenvs.load_game("kuhn_poker")
    roots = [(game.state_from_history([0, 1]), 0.25), (game.state_from_history([0, 2]), 0.75)]
    tree = build_subgame_tree(game, roots)
    assert tree.actor[0] == -1 and tree.num_frontier == 0
    children = np.flatnonzero(tree.parent == 0)
    assert tree.chance_probability[children].tolist() == [0.25, 0.75]
    whole = GameTree.build(game)
    # Player 0 holding the Jack: one information set over both roots, as in the whole game.
    assert (0, game.state_from_history([0, 1]).information_state_key(0)) in tree.infoset_index
    assert tree.num_terminals == 2 * whole.num_terminals // 6
    with pytest.raises(ValueError, match="more than 5 nodes"):
        build_subgame_tree(game, roots, max_nodes=5)


def test_same_seed_same_policy_and_the_sampled_root_is_seeded():
    game = hiddenenvs.load_game("monty_hall")
    view = _monty_switch_view(game)
    first = ReBeLSearch(game, iterations=30, max_root_nodes=1, samples=8, seed=3).policy(view)
    again = ReBeLSearch(game, iterations=30, max_root_nodes=1, samples=8, seed=3).policy(view)
    np.testing.assert_array_equal(first, again)


def test_spec_plays_liars_dice_through_load_agent():
    game = hiddenenvs.load_game("liars_dice", faces=4)
    agent = load_agent("rebel:100", "liars_dice", player=1, seed=0, faces=4)
    assert isinstance(agent, ReBeLAgent)
    state = game.state_from_history([3, 0, 0])  # player 1 holds a 1 and faces the bid "1 one"
    probabilities = agent.policy_probabilities(
        state.information_state_tensor(1), state.legal_actions_mask(1), state.seat_view(1))
    assert probabilities.sum() == pytest.approx(1.0)
    assert set(np.flatnonzero(probabilities)) <= set(state.legal_actions(1))


@pytest.mark.parametrize("options, message", [
    ({"iterations": 0}, "iterations"), ({"resolve": "sometimes"}, "resolve"),
    ({"max_depth": 0}, "max_depth"), ({"tremble": 0.0}, "tremble"), ({"seconds": -1.0}, "seconds"),
])
def test_bad_settings_are_refused(options, message):
    with pytest.raises(ValueError, match=message):
        ReBeLSearch(hiddenenvs.load_game("kuhn_poker"), **options)


def test_bad_spec_budget_names_the_spec():
    with pytest.raises(ValueError, match="rebel:fast"):
        load_agent("rebel:fast", "kuhn_poker")


def test_rebel_policy_covers_every_information_set():
    game = hiddenenvs.load_game("kuhn_poker")
    search = ReBeLSearch(game, iterations=200)
    policy = rebel_policy(search)
    assert policy.tree.num_infosets == GameTree.build(game).num_infosets
    assert rebel_exploitability(search) < 0.01
