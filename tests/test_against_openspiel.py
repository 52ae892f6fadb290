"""Our Kuhn and Leduc against OpenSpiel's independent implementations (skipped without pyspiel)."""

import numpy as np
import pytest

import hiddenenvs
from hiddenenvs.analysis import GameTree, TabularPolicy, nash_conv

pyspiel = pytest.importorskip("pyspiel")


def _card_to_ours(game_name, card):
    return card // 2 if game_name == "leduc_poker" else card  # OpenSpiel Leduc: two suits per rank


@pytest.mark.parametrize(
    "spiel_name, our_name", [("kuhn_poker", "kuhn_poker"), ("leduc_poker", "leduc_holdem")]
)
def test_random_trajectories_agree(spiel_name, our_name):
    spiel_game = pyspiel.load_game(spiel_name)
    game = hiddenenvs.load_game(our_name)
    rng = np.random.default_rng(1)
    for _ in range(300):
        theirs, ours = spiel_game.new_initial_state(), game.new_initial_state()
        while not theirs.is_terminal():
            assert not ours.is_terminal()
            if theirs.is_chance_node():
                outcomes = theirs.chance_outcomes()
                card = outcomes[rng.integers(len(outcomes))][0]
                theirs.apply_action(card)
                ours.apply_action(_card_to_ours(spiel_name, card))
            else:
                assert theirs.current_player() == ours.current_player()
                assert theirs.legal_actions() == ours.legal_actions()
                action = rng.choice(theirs.legal_actions())
                theirs.apply_action(int(action))
                ours.apply_action(int(action))
        assert ours.is_terminal()
        assert ours.returns().tolist() == theirs.returns()


def test_uniform_nash_conv_matches_openspiel():
    from open_spiel.python import policy as spiel_policy
    from open_spiel.python.algorithms import exploitability as spiel_exploitability

    for spiel_name, our_name in [("kuhn_poker", "kuhn_poker"), ("leduc_poker", "leduc_holdem")]:
        spiel_game = pyspiel.load_game(spiel_name)
        expected = spiel_exploitability.nash_conv(
            spiel_game, spiel_policy.UniformRandomPolicy(spiel_game)
        )
        tree = GameTree.build(hiddenenvs.load_game(our_name))
        assert nash_conv(tree, TabularPolicy.uniform(tree)) == pytest.approx(expected, abs=1e-9)


def test_random_policy_nash_conv_matches_openspiel_on_kuhn():
    """A random (non-uniform) policy, evaluated by both implementations."""
    from open_spiel.python import policy as spiel_policy
    from open_spiel.python.algorithms import exploitability as spiel_exploitability

    spiel_game = pyspiel.load_game("kuhn_poker")
    game = hiddenenvs.load_game("kuhn_poker")
    tree = GameTree.build(game)
    rng = np.random.default_rng(3)
    ours = TabularPolicy(tree, rng.random(tree.num_slots))
    ours.slot_probabilities /= np.add.reduceat(
        ours.slot_probabilities, tree.infoset_slot_start[:-1]
    )[tree.slot_infoset]

    def to_our_state(spiel_state):
        state = game.new_initial_state()
        for action in spiel_state.history():
            state.apply_action(action)
        return state

    class Bridge(spiel_policy.Policy):
        def action_probabilities(self, state, player_id=None):
            return ours.action_probabilities(to_our_state(state), state.current_player())

    expected = spiel_exploitability.nash_conv(spiel_game, Bridge(spiel_game, [0, 1]))
    assert nash_conv(tree, ours) == pytest.approx(expected, abs=1e-9)
