"""Exact analysis and CFR/CFR+ against known game values and hand computations."""

import importlib
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
from hiddenenvs.analysis import _tree_passes as compiled

# The module (the package exports its function of the same name).
passes = importlib.import_module("hiddenenvs.analysis.exploitability")


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


def _numpy_reach_probabilities(tree: GameTree, edge_probs: np.ndarray) -> np.ndarray:
    """The forward pass as numpy operations per level (before the compiled pass)."""
    reach = np.ones((tree.num_nodes, tree.num_players + 1))
    for level in tree.levels[1:]:
        nodes = np.arange(level.start, level.stop)
        reach[nodes] = reach[tree.parent[nodes]]
        reach[nodes, tree.parent_actor_column[nodes]] *= edge_probs[nodes]
    return reach


def _numpy_node_values(tree: GameTree, edge_probs: np.ndarray) -> np.ndarray:
    """The backward pass as numpy operations per level (before the compiled pass)."""
    values = tree.terminal_returns.copy()
    for level in reversed(tree.levels[1:]):
        block = slice(level.start, level.stop)
        weighted = values[block] * edge_probs[block, None]
        values[level.group_parents] = np.add.reduceat(weighted, level.group_offsets, axis=0)
    return values


def _numpy_cfr_reference(tree: GameTree, variant: str, iterations: int):
    """CFR / CFR+ written with the numpy passes of hiddenenvs.analysis.exploitability (the
    solver's implementation before its compiled kernel): the compiled iterates must be these."""
    regret, average = np.zeros(tree.num_slots), np.zeros(tree.num_slots)
    starts, slot_infoset = tree.infoset_slot_start, tree.slot_infoset
    counts = np.diff(starts)[slot_infoset]
    slot_player = tree.infoset_player[slot_infoset]
    slot_node = tree.infoset_node[slot_infoset]

    def regret_matching():
        positive = np.maximum(regret, 0.0)
        totals = np.add.reduceat(positive, starts[:-1])[slot_infoset]
        return np.where(totals > 0, positive / np.where(totals > 0, totals, 1.0), 1.0 / counts)

    def update(player, policy, weight):
        edges = passes.edge_probabilities(tree, policy)
        reach = _numpy_reach_probabilities(tree, edges)
        values = _numpy_node_values(tree, edges)
        children = tree.player_child_nodes[player]
        parents = tree.parent[children]
        instantaneous = np.bincount(
            tree.edge_slot[children],
            weights=passes.counterfactual_reach(reach, player)[parents]
            * (values[children, player] - values[parents, player]),
            minlength=tree.num_slots,
        )
        slots = np.flatnonzero(slot_player == player)
        if variant == "cfr+":
            regret[slots] = np.maximum(regret[slots] + instantaneous[slots], 0.0)
        else:
            regret[slots] += instantaneous[slots]
        average[slots] += weight * reach[slot_node[slots], player] * policy[slots]

    for iteration in range(1, iterations + 1):
        if variant == "cfr+":
            for player in range(tree.num_players):
                update(player, regret_matching(), float(iteration))
        else:
            policy = regret_matching()
            for player in range(tree.num_players):
                update(player, policy, 1.0)
    return regret, average


@pytest.mark.parametrize("variant", ["cfr+", "cfr"])
@pytest.mark.parametrize(
    "name, params, iterations",
    [
        ("kuhn_poker", {}, 300),
        ("leduc_holdem", {}, 100),
        ("goofspiel", {"num_cards": 3, "imp_info": True, "points_order": "random"}, 50),
        ("liars_dice", {"faces": 4}, 20),  # nine bids: numpy sums 8+ terms in blocks
    ],
)
def test_compiled_cfr_iterates_equal_the_numpy_passes(name, params, iterations, variant):
    # Bit for bit: CFR+ clips regrets at zero, so a rounding difference would flip a
    # regret between 0 and a tiny positive value and the iterates would drift apart.
    tree = GameTree.build(hiddenenvs.load_game(name, **params))
    solver = CFRSolver(tree, variant=variant)
    solver.iterate(iterations // 2)
    solver.iterate(iterations - iterations // 2)
    regret, average = _numpy_cfr_reference(tree, variant, iterations)
    assert np.array_equal(solver.cumulative_regret, regret)
    assert np.array_equal(solver.cumulative_policy, average)


@pytest.mark.parametrize(
    "name, params", [("liars_dice", {"faces": 4}), ("goofspiel", {"num_cards": 4})]
)
def test_compiled_passes_equal_the_numpy_passes(name, params):
    tree = GameTree.build(hiddenenvs.load_game(name, **params))
    rng = np.random.default_rng(0)
    policy = TabularPolicy.uniform(tree).slot_probabilities * rng.uniform(0.5, 1.5, tree.num_slots)
    edges = passes.edge_probabilities(tree, policy)
    assert np.array_equal(compiled.node_values(tree, edges), _numpy_node_values(tree, edges))
    assert np.array_equal(
        compiled.reach_probabilities(tree, edges), _numpy_reach_probabilities(tree, edges)
    )


@pytest.mark.parametrize("num_children", [3, 9, 20, 130, 300])
def test_compiled_node_values_sum_wide_nodes_in_numpy_order(num_children):
    # A chance root over num_children leaves: past 8 terms numpy sums in eight partial
    # sums, past 128 it splits the terms in halves; the compiled sum follows both.
    rng = np.random.default_rng(num_children)
    tree = GameTree.from_arrays(
        hiddenenvs.load_game("kuhn_poker"),
        parent=np.array([-1] + [0] * num_children),
        actor=np.array([hiddenenvs.CHANCE] + [hiddenenvs.TERMINAL] * num_children),
        infoset=np.full(num_children + 1, -1),
        edge_action=np.arange(-1, num_children),
        chance_probability=np.concatenate([[1.0], rng.dirichlet(np.ones(num_children))]),
        terminal_returns=np.vstack([[0.0, 0.0], rng.normal(size=(num_children, 2))]),
        infoset_player=np.zeros(0, dtype=np.int64),
        infoset_keys=[],
        infoset_legal_actions=[],
    )
    edges = tree.chance_probability
    assert np.array_equal(compiled.node_values(tree, edges), _numpy_node_values(tree, edges))


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
