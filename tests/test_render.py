"""The envs' drawn pictures (``render_rgb``, ``render_mode="rgb_array"``): an image of the
right shape and type, the same for the same seeded state, a seat's view hiding what the
seat cannot see, and the picture offered through the AEC adapter."""

import numpy as np
import pytest

import hiddenenvs
from hiddenenvs.game import TERMINAL

pytest.importorskip("matplotlib")

# A drawn game, a history into it where player 1's card is still hidden from player 0,
# and the image's shape.
PICTURED = {
    "kuhn_poker": ([2, 0, 0, 1], (360, 440, 3)),  # K to p0, J to p1; p0 passes, p1 bets
    "leduc_holdem": ([0, 2, 2, 1, 1, 2], (360, 440, 3)),  # J, K; raise, call; Q public; raise
    "liars_dice": ([2, 4, 3], (360, 440, 3)),  # p0 rolls 3, p1 rolls 5; p0 bids 1-4
}
TITLE_PIXELS = 40  # the top rows of a picture, where its title says whose view it is


def _state(name, history):
    state = hiddenenvs.load_game(name).new_initial_state()
    for action in history:
        state.apply_action(action)
    return state


@pytest.mark.parametrize("name", sorted(PICTURED))
def test_picture_is_a_deterministic_uint8_image(name):
    history, shape = PICTURED[name]
    picture = _state(name, history).render_rgb()
    assert picture.shape == shape and picture.dtype == np.uint8
    assert len(np.unique(picture.reshape(-1, 3), axis=0)) > 10  # drawn, not blank
    np.testing.assert_array_equal(picture, _state(name, history).render_rgb())


@pytest.mark.parametrize("name", sorted(PICTURED))
def test_a_seat_sees_its_own_card_and_not_the_opponents(name):
    """Player 0's view differs from the true state (player 1's card face down) and from
    player 1's view (which hides player 0's card instead); the views of the same
    information state are the same picture whatever the hidden card is."""
    history, _ = PICTURED[name]
    state = _state(name, history)
    truth, seen_by_0, seen_by_1 = (state.render_rgb(player) for player in (None, 0, 1))
    assert not np.array_equal(truth, seen_by_0)
    assert not np.array_equal(seen_by_0, seen_by_1)
    other_deal = list(history)
    other_deal[1] = 1  # player 1 holds another card (or die) instead: player 0 cannot tell
    other = _state(name, other_deal)
    np.testing.assert_array_equal(other.render_rgb(0), seen_by_0)
    assert not np.array_equal(other.render_rgb(None), truth)


def test_a_showdown_shows_both_cards_and_a_fold_hides_them():
    """At a Kuhn showdown both cards are turned face up in every seat's view; after a
    fold the loser's card stays hidden from the winner."""
    showdown = _state("kuhn_poker", [2, 0, 0, 0])  # pass, pass: showdown
    assert showdown.current_player() == TERMINAL
    below_title = slice(TITLE_PIXELS, None)  # the titles name the viewer
    for player in (0, 1):
        np.testing.assert_array_equal(
            showdown.render_rgb(player)[below_title], showdown.render_rgb(None)[below_title]
        )
    folded = _state("kuhn_poker", [2, 0, 1, 0])  # p0 bets, p1 folds
    assert folded.current_player() == TERMINAL
    assert not np.array_equal(
        folded.render_rgb(0)[below_title], folded.render_rgb(None)[below_title]
    )


def test_a_bad_seat_is_refused():
    state = _state("kuhn_poker", [2, 0])
    with pytest.raises(ValueError, match="kuhn_poker: render_rgb.*seat 0..1.*got 2"):
        state.render_rgb(2)


@pytest.mark.parametrize("name", sorted(PICTURED))
def test_the_aec_env_renders_the_picture_at_every_step(name):
    """``render_mode="rgb_array"`` through the AEC adapter returns the true state's
    picture; PettingZoo's api_test still passes with it."""
    from pettingzoo.test import api_test

    env = hiddenenvs.make(name, render_mode="rgb_array")
    assert "rgb_array" in env.metadata["render_modes"]
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    for agent in env.agent_iter():
        picture = env.render()
        assert picture.dtype == np.uint8 and picture.shape == PICTURED[name][1]
        np.testing.assert_array_equal(picture, env.unwrapped.game_state.render_rgb())
        observation, _, terminated, truncated, _ = env.last()
        legal = np.flatnonzero(observation["action_mask"])
        env.step(None if terminated or truncated else int(rng.choice(legal)))
    api_test(hiddenenvs.make(name, render_mode="rgb_array"), num_cycles=50)


def _gdl_state(name, steps):
    """A GDL game after ``steps`` model steps of seeded random play (chance and joint moves)."""
    from hiddenenvs.game import CHANCE

    state = hiddenenvs.load_game(name).new_initial_state(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(steps):
        if state.current_player() == CHANCE:
            state.apply_action(int(rng.choice([a for a, _ in state.chance_outcomes()])))
        else:
            joint = [
                int(rng.choice(state.legal_actions(p))) if state.legal_actions(p) else 0
                for p in range(state.game.info.num_players)
            ]
            state.apply_actions(joint)
    return state


@pytest.mark.parametrize("name", ["blind_tictactoe", "meier", "gdl_tictactoe", "monty_hall"])
def test_gdl_pictures_are_deterministic_uint8_images(name):
    picture = _gdl_state(name, 3).render_rgb()
    assert picture.shape == (360, 440, 3) and picture.dtype == np.uint8
    np.testing.assert_array_equal(picture, _gdl_state(name, 3).render_rgb())


def test_blind_tictactoe_seats_see_their_own_board():
    """Each seat's board shows its marks and the cells it found taken, not the opponent's
    other marks: the two views differ from each other and from the true board; the true
    state's picture is the one the AEC adapter renders."""
    state = _gdl_state("blind_tictactoe", 4)
    truth, seen_by_x, seen_by_o = (state.render_rgb(p) for p in (None, 0, 1))
    below_title = slice(TITLE_PIXELS, None)
    assert not np.array_equal(truth[below_title], seen_by_x[below_title])
    assert not np.array_equal(seen_by_x[below_title], seen_by_o[below_title])
    env = hiddenenvs.make("blind_tictactoe", render_mode="rgb_array")
    env.reset(seed=0)
    np.testing.assert_array_equal(env.render(), env.unwrapped.game_state.render_rgb())


def test_meier_dice_are_covered_for_the_seat_that_did_not_roll():
    """After alice's roll only alice sees the dice: bob's picture shows them covered, and
    it is the same whatever alice rolled (it is drawn from bob's key alone)."""
    state = _gdl_state("meier", 1)  # random has rolled for alice
    assert "dice" in str(state)
    below_title = slice(TITLE_PIXELS, None)
    alice, bob = state.render_rgb(0), state.render_rgb(1)
    assert not np.array_equal(alice[below_title], bob[below_title])
    for roll in state.game.new_initial_state(seed=0).legal_actions()[:3]:
        other = state.game.new_initial_state(seed=0)
        other.apply_action(roll)
        np.testing.assert_array_equal(other.render_rgb(1), bob)


def _goofspiel(imp_info):
    """Goofspiel(5) with a random deck after three rounds of fixed bids."""
    state = hiddenenvs.load_game(
        "goofspiel", num_cards=5, points_order="random", imp_info=imp_info
    ).new_initial_state()
    for points, bids in ((2, (4, 1)), (0, (0, 3)), (4, (2, 2))):
        state.apply_action(points)
        state.apply_actions(bids)
    return state


def test_ii_goofspiel_hides_the_opponents_bids_and_hand():
    """In II-Goofspiel a seat's picture turns the opponent's bids and hand face down (it
    is the same whatever the opponent bid, given the same winners); in Goofspiel, where
    bids are public, a seat's view is the true state."""
    below_title = slice(TITLE_PIXELS, None)
    state = _goofspiel(imp_info=True)
    assert state.render_rgb().shape == (360, 440, 3)
    assert not np.array_equal(state.render_rgb(0)[below_title], state.render_rgb()[below_title])
    other = hiddenenvs.load_game(
        "goofspiel", num_cards=5, points_order="random", imp_info=True
    ).new_initial_state()
    for points, bids in ((2, (4, 0)), (0, (0, 3)), (4, (2, 2))):  # p1 bid 1, not 2: still lost
        other.apply_action(points)
        other.apply_actions(bids)
    np.testing.assert_array_equal(other.render_rgb(0), state.render_rgb(0))
    public = _goofspiel(imp_info=False)
    np.testing.assert_array_equal(
        public.render_rgb(0)[below_title], public.render_rgb()[below_title]
    )


@pytest.mark.parametrize("name", ["rps", "biased_rps", "matching_pennies"])
def test_matrix_games_mark_the_chosen_cell(name):
    """The payoff matrix before the choice, the chosen cell marked after it."""
    env = hiddenenvs.make_parallel(name, render_mode="rgb_array")
    env.reset(seed=0)
    before = env.render()
    assert before.shape == (360, 440, 3) and before.dtype == np.uint8
    env.step({"player_0": 0, "player_1": 1})
    after = env.unwrapped.game_state.render_rgb()
    assert not np.array_equal(before, after)


def test_meier_dice_are_covered_again_once_a_claim_is_accepted():
    """alice rolls and claims, bob accepts: the next roll is bob's, so alice's picture
    covers the dice again while the true state still holds her old roll until bob's."""
    game = hiddenenvs.load_game("meier")
    state = game.new_initial_state(seed=0)
    below_title = slice(TITLE_PIXELS, None)

    def play(**moves):
        joint = [0] * game.info.num_players  # a seat that does not move: its only move
        for player in state.movers():
            legal = {game.action_to_string(player, a): a for a in state.legal_actions(player)}
            joint[player] = legal[moves[game.info.player_names[player]]]
        state.apply_actions(joint)

    state.apply_action(1)  # roll 1 2: Meier, 21
    seen_roll = state.render_rgb(0)
    play(alice="(claim 31)")  # under the roll (after 21 bob could only call)
    play(bob="accept")
    assert "accepted" in game.describe_step(0, *state.information_state_key(0)[-1])
    covered = state.render_rgb(0)
    assert not np.array_equal(covered[below_title], seen_roll[below_title])
    np.testing.assert_array_equal(covered[60:130], state.render_rgb(1)[60:130])  # both dice rows


def test_envs_play_without_matplotlib_and_the_picture_says_what_to_install(monkeypatch):
    """The base install has no matplotlib: the envs import and play without it, and
    render_rgb names the extra to install."""
    import subprocess
    import sys

    code = (
        "import sys, hiddenenvs\n"
        "for name in ('kuhn_poker', 'leduc_holdem', 'liars_dice', 'meier'):\n"
        "    env = hiddenenvs.make(name, render_mode='rgb_array')\n"
        "    env.reset(seed=0)\n"
        "assert 'matplotlib' not in sys.modules, 'an env imported matplotlib'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # as if not installed
    with pytest.raises(ImportError, match=r"pip install 'hiddenenvs\[render\]'"):
        _state("kuhn_poker", [2, 0]).render_rgb()
