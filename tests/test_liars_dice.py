"""Liar's Dice: rules, tree sizes by brute force, OpenSpiel cross-checks, CFR+ convergence."""

import itertools
from math import comb

import numpy as np
import pytest

import hiddenenvs
from agents.cfr import CFRSolver
from hiddenenvs.analysis import GameTree, TabularPolicy, expected_returns, exploitability
from hiddenenvs.game import CHANCE, TERMINAL


def liars_dice(**params):
    return hiddenenvs.load_game("liars_dice", **params)


def play(game, rolls, actions):
    state = game.new_initial_state()
    for face in rolls:
        state.apply_action(face - 1)
    for action in actions:
        state.apply_action(action)
    return state


def bid_action(quantity, face, faces=6):
    return (quantity - 1) * faces + face - 1


# ---- rules ----------------------------------------------------------------------------
def test_bids_rise_and_liar_follows_a_bid():
    game = liars_dice()
    state = play(game, [2, 6], [])
    assert state.current_player() == 0 and state.legal_actions() == list(range(12))  # no "liar" yet
    state.apply_action(bid_action(1, 5))
    assert state.legal_actions() == list(range(bid_action(1, 6), 13))  # (1, 6) and up, then liar
    assert [game.action_to_string(1, a) for a in state.legal_actions()[:3]] == ["1-6", "2-1", "2-2"]
    state.apply_action(bid_action(2, 6))  # the highest bid: only "liar" is left
    assert state.legal_actions() == [12]


@pytest.mark.parametrize(
    "rolls, bid, caller_wins",
    [
        ([2, 6], (2, 2), False),  # one 2 and a wild 6: the bid holds
        ([2, 6], (2, 3), True),  # only the wild 6 counts as a 3
        ([2, 5], (2, 2), True),  # one 2 only
        ([6, 6], (2, 6), False),  # sixes count for sixes
        ([1, 3], (1, 2), True),
    ],
)
def test_the_wild_top_face_counts_for_every_face(rolls, bid, caller_wins):
    game = liars_dice()
    matching = sum(die == bid[1] or die == 6 for die in rolls)
    assert (matching < bid[0]) == caller_wins  # the table itself, by the rule
    state = play(game, rolls, [bid_action(*bid), 12])  # player 0 bids, player 1 calls
    assert state.is_terminal()
    assert state.returns().tolist() == ([-1.0, 1.0] if caller_wins else [1.0, -1.0])


def test_the_caller_can_be_player_0():
    state = play(liars_dice(faces=3), [1, 2], [bid_action(1, 1, 3), bid_action(2, 1, 3), 6])
    # Two dice showing 1 or the wild 3: only one (the 1); player 1's bid fails, caller 0 wins.
    assert state.returns().tolist() == [1.0, -1.0]


def test_own_dice_are_private_and_sorted():
    game = liars_dice(num_dice=2, faces=3)
    state = play(game, [3, 1, 2, 2], [4])
    other = play(game, [1, 3, 1, 3], [4])
    assert (
        state.information_state_key(0)
        == other.information_state_key(0)
        == (("roll", None), ("roll", (1, 3)), ("roll", None), ("roll", None), ("2-2", None))
    )
    assert state.information_state_key(1) != other.information_state_key(1)
    assert np.array_equal(state.information_state_tensor(0), other.information_state_tensor(0))


# ---- brute-force sizes -----------------------------------------------------------------
def brute_force_sizes(num_dice, faces):
    """Nodes, terminals and information sets by enumerating rolls and bid sequences."""
    num_bids = 2 * num_dice * faces
    chance_nodes = sum(faces**k for k in range(2 * num_dice))
    sequences = [s for k in range(num_bids + 1) for s in itertools.combinations(range(num_bids), k)]
    # Every rising bid sequence is a decision node; every non-empty one also ends in "liar".
    decisions_per_roll = len(sequences)
    terminals_per_roll = len(sequences) - 1
    rolls = faces ** (2 * num_dice)
    hands = {tuple(sorted(h)) for h in itertools.product(range(faces), repeat=num_dice)}
    infosets = [len(hands) * sum(len(s) % 2 == p for s in sequences) for p in (0, 1)]
    nodes = chance_nodes + rolls * (decisions_per_roll + terminals_per_roll)
    return nodes, rolls * terminals_per_roll, infosets


@pytest.mark.parametrize("num_dice, faces", [(1, 2), (1, 3), (1, 5), (2, 2)])
def test_tree_sizes_and_infoset_counts_match_brute_force(num_dice, faces):
    tree = GameTree.build(liars_dice(num_dice=num_dice, faces=faces))
    nodes, terminals, infosets = brute_force_sizes(num_dice, faces)
    assert (tree.num_nodes, tree.num_terminals) == (nodes, terminals)
    assert [int((tree.infoset_player == p).sum()) for p in (0, 1)] == infosets
    # Closed form as a second check: 2^B rising sequences per roll, B = 2DF bids.
    num_bids = 2 * num_dice * faces
    assert tree.num_infosets == comb(faces + num_dice - 1, num_dice) * 2**num_bids


# ---- OpenSpiel as an independent reference -----------------------------------------------
def spiel_liars_dice(pyspiel, num_dice, faces):
    return pyspiel.load_game("liars_dice", {"numdice": num_dice, "dice_sides": faces})


def spiel_tree_sizes(spiel_game):
    nodes, infosets, stack = 0, set(), [spiel_game.new_initial_state()]
    while stack:
        state = stack.pop()
        nodes += 1
        if state.is_terminal():
            continue
        if not state.is_chance_node():
            infosets.add((state.current_player(), state.information_state_string()))
        stack.extend(state.child(a) for a in state.legal_actions())
    return nodes, len(infosets)


@pytest.mark.parametrize("num_dice, faces", [(1, 3), (1, 4), (2, 2)])
def test_sizes_and_uniform_exploitability_equal_openspiel(num_dice, faces):
    pyspiel = pytest.importorskip("pyspiel")
    spiel_game = spiel_liars_dice(pyspiel, num_dice, faces)
    tree = GameTree.build(liars_dice(num_dice=num_dice, faces=faces))
    assert spiel_tree_sizes(spiel_game) == (tree.num_nodes, tree.num_infosets)
    expected = pyspiel.exploitability(spiel_game, pyspiel.UniformRandomPolicy(spiel_game))
    assert exploitability(tree, TabularPolicy.uniform(tree)) == pytest.approx(expected, abs=1e-12)


def test_random_trajectories_equal_openspiel():
    pyspiel = pytest.importorskip("pyspiel")
    spiel_game = spiel_liars_dice(pyspiel, 2, 6)
    game = liars_dice(num_dice=2)
    assert game.info.num_distinct_actions == spiel_game.num_distinct_actions()
    rng = np.random.default_rng(1)
    partition = {}  # our information-state key <-> OpenSpiel's string, must be a bijection
    for _ in range(200):
        state, spiel_state = game.new_initial_state(), spiel_game.new_initial_state()
        while not spiel_state.is_terminal():
            assert state.legal_actions() == spiel_state.legal_actions()
            if not state.is_chance_node():
                player = state.current_player()
                ours, theirs = (
                    state.information_state_key(player),
                    spiel_state.information_state_string(),
                )
                assert partition.setdefault((player, ours), theirs) == theirs
                assert partition.setdefault(theirs, (player, ours)) == (player, ours)
            action = int(rng.choice(state.legal_actions()))
            state.apply_action(action)
            spiel_state.apply_action(action)
        assert (
            state.current_player() == TERMINAL and state.returns().tolist() == spiel_state.returns()
        )


# ---- exact analysis --------------------------------------------------------------------
@pytest.mark.parametrize("faces", [3, 4])
def test_cfr_plus_converges_on_one_die(faces):
    tree = GameTree.build(liars_dice(num_dice=1, faces=faces))
    uniform = exploitability(tree, TabularPolicy.uniform(tree))
    assert uniform > 0.5
    solver = CFRSolver(tree, variant="cfr+")
    history = []
    for iterations in (10, 50, 250):
        solver.iterate(iterations - solver.iteration)
        history.append(solver.exploitability())
    assert history[0] < uniform and history[2] < history[1] / 2 < history[0] / 4
    assert history[-1] < 0.005
    # The game value lies strictly inside (-1, 1) and the average profile attains it.
    value = expected_returns(tree, solver.average_policy())[0]
    assert -1 < value < 1


def test_chance_rolls_player_0_first():
    state = liars_dice(num_dice=2, faces=3).new_initial_state()
    for face in (0, 1, 2, 0):
        assert state.current_player() == CHANCE
        assert state.chance_outcomes() == [(f, pytest.approx(1 / 3)) for f in range(3)]
        state.apply_action(face)
    assert state.dice == ([1, 2], [3, 1]) and state.current_player() == 0
