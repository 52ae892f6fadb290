"""Information-set abstraction on the compiled MCCFR path (agents.search.tree_mccfr.InfosetAbstraction)."""

from __future__ import annotations

import numpy as np
import pytest

import hiddenenvs
from agents.search.external_sampling_mccfr import ExternalSamplingMCCFR
from agents.search.outcome_sampling_mccfr import OutcomeSamplingMCCFR
from agents.search.tree_mccfr import InfosetAbstraction
from hiddenenvs.analysis import GameTree, best_response


@pytest.mark.parametrize("solver_class", [ExternalSamplingMCCFR, OutcomeSamplingMCCFR])
def test_an_abstraction_that_merges_nothing_gives_the_unabstracted_run_exactly(solver_class):
    """Keys mapped to themselves: same seed, bit-identical regrets and averages."""
    game = hiddenenvs.load_game("leduc_holdem")
    tree = GameTree.build(game)
    plain = solver_class(game, seed=5, backend="tree")
    identity = solver_class(
        game, seed=5, abstraction=InfosetAbstraction.from_keys(tree, lambda player, key: key)
    )
    plain.iterate(500)
    identity.iterate(500)
    np.testing.assert_array_equal(identity.tables.regret, plain.tables.regret)
    np.testing.assert_array_equal(identity.tables.average, plain.tables.average)


def _card_only(tree):
    """Kuhn player 0 sees only its card: its opening and its answer to a bet are merged."""
    return InfosetAbstraction.from_keys(tree, lambda player, key: key[0] if player == 0 else key)


def test_merged_sets_share_one_row_and_the_policy_expands_onto_the_tree():
    game = hiddenenvs.load_game("kuhn_poker")
    tree = GameTree.build(game)
    abstraction = _card_only(tree)
    assert abstraction.counts_by_player() == [
        3,
        6,
    ]  # player 0: 6 sets -> 3 cards; player 1 untouched
    assert abstraction.num_slots == 2 * 9
    solver = ExternalSamplingMCCFR(game, seed=0, abstraction=abstraction)
    solver.iterate(2000)
    assert len(solver.tables.regret) == abstraction.num_slots
    policy = solver.average_policy(tree)
    for card in range(3):
        opening = game.state_from_history([card, (card + 1) % 3])
        facing_bet = opening.child(0).child(1)
        assert policy.action_probabilities(opening, 0) == policy.action_probabilities(facing_bet, 0)
    # Player 1 can exploit a player 0 who cannot tell "first to act" from "facing a bet":
    # the abstract average is not Kuhn's equilibrium (game value -1/18 for player 0).
    assert best_response(tree, policy, 1)[0] > 1 / 18 + 0.05


def test_abstraction_checkpoints_round_trip_and_refuse_other_tables():
    game = hiddenenvs.load_game("kuhn_poker")
    tree = GameTree.build(game)
    first = ExternalSamplingMCCFR(game, seed=1, abstraction=_card_only(tree))
    first.iterate(100)
    resumed = ExternalSamplingMCCFR(game, seed=9, abstraction=_card_only(tree))
    resumed.load_state_dict(first.state_dict())
    first.iterate(100)
    resumed.iterate(100)
    np.testing.assert_array_equal(resumed.tables.regret, first.tables.regret)
    with pytest.raises(ValueError, match="another abstraction"):
        ExternalSamplingMCCFR(game, seed=1, backend="tree").load_state_dict(first.state_dict())


def test_bad_abstractions_are_refused_with_the_sets_named():
    game = hiddenenvs.load_game("kuhn_poker")
    tree = GameTree.build(game)
    with pytest.raises(ValueError, match="one player and the same legal actions"):
        InfosetAbstraction(
            tree, np.zeros(tree.num_infosets, dtype=np.int64)
        )  # both players in one set
    with pytest.raises(ValueError, match="one integer abstract id per information set"):
        InfosetAbstraction(tree, np.arange(3))
    with pytest.raises(ValueError, match="needs the tree backend"):
        ExternalSamplingMCCFR(game, backend="model", abstraction=_card_only(tree))
    other_tree = GameTree.build(
        hiddenenvs.load_game("kuhn_poker")
    )  # another game object: another tree
    with pytest.raises(ValueError, match="built on another tree"):
        ExternalSamplingMCCFR(other_tree.game, abstraction=_card_only(tree))
    goofspiel = GameTree.build(hiddenenvs.load_game("goofspiel", num_cards=3))
    with pytest.raises(
        ValueError, match=r"legal actions \[0, 1, 2\]\) and .* \(legal actions \[1, 2\]"
    ):
        InfosetAbstraction.from_keys(
            goofspiel, lambda player, key: player
        )  # hands of different sizes merged
