"""Exact analysis and CFR/CFR+ against known game values and hand computations."""

import itertools

import numpy as np
import pytest

import hiddenenvs
from agents.cfr import CFRSolver
from hiddenenvs.analysis import (
    GameTree,
    TabularPolicy,
    best_response,
    best_response_action_values,
    expected_returns,
    exploitability,
    nash_conv,
)


@pytest.fixture(scope="module")
def kuhn_tree():
    return GameTree.build(hiddenenvs.load_game("kuhn_poker"))


def test_tree_sizes(kuhn_tree):
    # Kuhn: 6 deals x 5 betting sequences = 30 leaves; 12 infosets (3 cards x 2 per player).
    assert (kuhn_tree.num_terminals, kuhn_tree.num_infosets, kuhn_tree.num_nodes) == (30, 12, 58)
    leduc = GameTree.build(hiddenenvs.load_game("leduc_holdem"))
    # Rank deals: 9 private pairs; each infoset is (own rank, public rank or none, betting).
    assert leduc.num_infosets == 288
    # Chance probabilities below every chance node sum to one.
    chance_children = np.flatnonzero(leduc.parent_actor_column == leduc.num_players)
    totals = np.bincount(
        leduc.parent[chance_children], weights=leduc.chance_probability[chance_children]
    )
    assert totals[np.unique(leduc.parent[chance_children])] == pytest.approx(1.0)
    assert GameTree.build(hiddenenvs.load_game("rps")).num_terminals == 9


def test_pure_policy_exploitability_equals_hand_computation(kuhn_tree):
    """Both players always bet/call. A best-responding player 1 folds the Jack (-1), calls
    the Queen (0 on average) and the King (+2): 1/3 per deal on average; player 0 likewise
    passes-then-folds the Jack: also 1/3. The profile itself is worth 0, so NashConv is 2/3."""
    always_bet = TabularPolicy(kuhn_tree, (kuhn_tree.slot_action == 1).astype(float))
    assert expected_returns(kuhn_tree, always_bet) == pytest.approx([0.0, 0.0])
    assert best_response(kuhn_tree, always_bet, 0)[0] == pytest.approx(1 / 3)
    assert best_response(kuhn_tree, always_bet, 1)[0] == pytest.approx(1 / 3)
    assert nash_conv(kuhn_tree, always_bet) == pytest.approx(2 / 3)
    assert exploitability(kuhn_tree, always_bet) == pytest.approx(1 / 3)


def test_best_response_beats_every_pure_strategy(kuhn_tree):
    """Brute force over all 2^6 pure strategies of each player equals the best response."""
    rng = np.random.default_rng(0)
    policy = TabularPolicy(kuhn_tree, rng.random(kuhn_tree.num_slots))
    policy.slot_probabilities /= np.add.reduceat(
        policy.slot_probabilities, kuhn_tree.infoset_slot_start[:-1]
    )[kuhn_tree.slot_infoset]
    for player in range(2):
        infosets = np.flatnonzero(kuhn_tree.infoset_player == player)
        best = -np.inf
        for choice in itertools.product((0, 1), repeat=len(infosets)):
            slots = policy.slot_probabilities.copy()
            for infoset, action in zip(infosets, choice):
                start = kuhn_tree.infoset_slot_start[infoset]
                slots[start : start + 2] = np.eye(2)[action]
            best = max(best, expected_returns(kuhn_tree, TabularPolicy(kuhn_tree, slots))[player])
        value, response = best_response(kuhn_tree, policy, player)
        assert value == pytest.approx(best)
        assert expected_returns(kuhn_tree, response)[player] == pytest.approx(best)


def test_best_response_action_values_are_the_returns_of_deviating_from_the_best_response():
    tree = GameTree.build(hiddenenvs.load_game("leduc_holdem"))
    rng = np.random.default_rng(0)
    slots = rng.random(tree.num_slots)
    policy = TabularPolicy(
        tree, slots / np.bincount(tree.slot_infoset, weights=slots)[tree.slot_infoset]
    )
    for player in (0, 1):
        value, response = best_response(tree, policy, player)
        slot_values, infoset_reach = best_response_action_values(tree, policy, player)
        first = [
            i
            for i in np.flatnonzero(tree.infoset_player == player)
            if tree.own_decisions_above[player, tree.infoset_node[i]] == 0
        ]
        assert len(first) == (
            3 if player == 0 else 6
        )  # a card each; player 1 also sees a check or a bet
        if player == 0:
            assert infoset_reach[first] == pytest.approx([1 / 3] * 3)  # only chance acts before
        for infoset in first:
            infoset_slots = np.arange(
                tree.infoset_slot_start[infoset], tree.infoset_slot_start[infoset + 1]
            )
            best = slot_values[infoset_slots].max()
            for slot in (
                infoset_slots
            ):  # the best response everywhere but here, where it plays the slot's action
                deviation = response.slot_probabilities.copy()
                deviation[infoset_slots] = 0.0
                deviation[slot] = 1.0
                returns = expected_returns(tree, TabularPolicy(tree, deviation))[player]
                assert returns - value == pytest.approx(slot_values[slot] - best, abs=1e-9)
        # Summed over the first information sets, the best values are the best-response value
        # (no terminal comes before a player's first decision in Leduc).
        assert sum(
            slot_values[tree.infoset_slot_start[i] : tree.infoset_slot_start[i + 1]].max()
            for i in first
        ) == pytest.approx(value)
        assert not slot_values[tree.infoset_player[tree.slot_infoset] != player].any()


def test_policies_in_every_form_agree(kuhn_tree):
    uniform = TabularPolicy.uniform(kuhn_tree)
    as_mapping = {key: {0: 0.5, 1: 0.5} for key in kuhn_tree.infoset_keys}
    as_callable = lambda state, player: np.array([0.5, 0.5])  # noqa: E731
    values = [nash_conv(kuhn_tree, p) for p in (uniform, as_mapping, as_callable)]
    assert values == pytest.approx([11 / 12] * 3)
    with pytest.raises(ValueError, match="no entry for 11 of 12"):
        nash_conv(kuhn_tree, {kuhn_tree.infoset_keys[0]: [0.5, 0.5]})
    with pytest.raises(ValueError, match="expected 2 probabilities"):
        nash_conv(kuhn_tree, lambda state, player: [1.0])


def test_kuhn_cfr_plus_reaches_the_known_equilibrium(kuhn_tree):
    solver = CFRSolver(kuhn_tree, variant="cfr+")
    solver.iterate(500)
    assert solver.exploitability() < 1e-3
    assert expected_returns(kuhn_tree, solver.average_policy())[0] == pytest.approx(
        -1 / 18, abs=1e-3
    )


def test_vanilla_cfr_converges_on_kuhn(kuhn_tree):
    solver = CFRSolver(kuhn_tree, variant="cfr")
    solver.iterate(50)
    early = solver.exploitability()
    solver.iterate(950)
    assert solver.exploitability() < early / 3
    assert solver.exploitability() < 0.01


def test_biased_rps_equilibrium():
    solver = CFRSolver(hiddenenvs.load_game("biased_rps"), variant="cfr+")
    solver.iterate(2000)
    for player in range(2):
        probabilities = solver.average_policy().probabilities(player, ())
        assert [probabilities[a] for a in range(3)] == pytest.approx([0.4, 0.4, 0.2], abs=0.01)


def test_leduc_cfr_plus_converges_to_the_known_value():
    solver = CFRSolver(hiddenenvs.load_game("leduc_holdem"), variant="cfr+")
    solver.iterate(300)
    assert solver.exploitability() < 0.01
    # Game value of Leduc for player 0, as published with OpenSpiel's CFR: -0.0856.
    assert expected_returns(solver.tree, solver.average_policy())[0] == pytest.approx(
        -0.0856, abs=2e-3
    )


def test_cfr_checkpoint_round_trip(kuhn_tree):
    solver = CFRSolver(kuhn_tree)
    solver.iterate(10)
    restored = CFRSolver(kuhn_tree)
    restored.load_state_dict(solver.state_dict())
    solver.iterate(5)
    restored.iterate(5)
    assert np.array_equal(solver.cumulative_policy, restored.cumulative_policy)
    with pytest.raises(ValueError, match="variant must be one of"):
        CFRSolver(kuhn_tree, variant="dcfr")


def test_games_that_break_perfect_recall_are_reported():
    from hiddenenvs.envs.leduc_holdem import LeducHoldemGame, LeducHoldemState

    class ForgetfulState(LeducHoldemState):
        __slots__ = ()

        def clone(self):
            other = super().clone()
            other.__class__ = ForgetfulState
            return other

        def information_state_key(self, player):  # forgets the first round's betting
            return (self.private_cards[player], self.public_card, tuple(self.round_actions[-1]))

    class ForgetfulGame(LeducHoldemGame):
        def new_initial_state(self, seed=None):
            return ForgetfulState(self)

    with pytest.raises(ValueError, match="must give perfect recall"):
        GameTree.build(ForgetfulGame())
