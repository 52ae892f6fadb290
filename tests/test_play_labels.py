"""Human play prints words, not bare numbers, and says "no such file" for a missing one."""

import numpy as np
import pytest

import hiddenenvs
from agents.specs import load_agent
from hiddenenvs.play import Quit, choose


@pytest.mark.parametrize("imp_info", [False, True])
def test_every_goofspiel_step_is_described_in_words(imp_info):
    game = hiddenenvs.load_game("goofspiel", num_cards=4, imp_info=imp_info)
    env = hiddenenvs.make("goofspiel", num_cards=4, imp_info=imp_info)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in env.agent_iter():
        observation, _, termination, truncation, _ = env.last()
        env.step(
            None
            if termination or truncation
            else int(rng.choice(np.flatnonzero(observation["action_mask"])))
        )
    for player in (0, 1):
        key = env.unwrapped.game_state.information_state_key(player)
        described = [game.describe_step(player, public, private) for public, private in key]
        assert len(described) == 8
        assert all(text.startswith(("point card", "round: you bid")) for text in described), (
            described
        )
        if imp_info:
            assert all(
                text.endswith(("you won", "your opponent won", "a tie")) for text in described[1::2]
            )


def test_the_default_description_shows_the_step_as_it_is():
    game = hiddenenvs.load_game("rps")
    assert game.describe_step(0, ("rock", "paper"), None) == "('rock', 'paper')"


def test_cards_and_dice_are_named_and_the_opponents_stay_hidden():
    kuhn = hiddenenvs.load_game("kuhn_poker")
    assert kuhn.describe_step(0, "deal", "K") == "your card: K"
    assert kuhn.describe_step(0, "deal", None) == "a card to your opponent, face down"
    assert kuhn.describe_step(0, "bet", None) == "bet"
    leduc = hiddenenvs.load_game("leduc_holdem")
    assert leduc.describe_step(1, "Q", None) == "public card: Q"
    dice = hiddenenvs.load_game("liars_dice", num_dice=2)
    assert dice.describe_step(0, "roll", (2, 5)) == "your dice: 2 5"
    assert dice.describe_step(0, "roll", None) == ""  # a die under a cup: nothing to show
    assert (
        dice.describe_step(1, "3-4", None) == "bid 3-4: at least 3 of all dice show 4 or the wild 6"
    )
    combat = hiddenenvs.load_game("combat", map="small")
    assert combat.describe_step(0, (30, 9, 7, 25), 123456789) == (
        "tick 30: attackers 9 alive, defenders 7 alive; health balance (attackers' view) +25"
    )
    othello = hiddenenvs.load_game("othello", board_size=4)
    assert othello.describe_step(0, 2, None) == "move c1"


def _play_gdl(name, moves):
    """A GDL game with the players' moves given by name (random's chosen by its rules)."""
    game = hiddenenvs.load_game(name)
    state = game.new_initial_state()
    for joint in moves:
        while state.is_chance_node():
            state.apply_action(state.legal_actions()[0])
        state.apply_actions(
            [
                next(a for a in state.legal_actions(p) if game.action_to_string(p, a) == move)
                for p, move in enumerate(joint)
            ]
        )
    return game, state


def test_gdl_steps_are_told_in_the_sheets_words_without_noops_or_the_others_percepts():
    game, state = _play_gdl("meier", [("(claim 66)", "noop")])
    text = [game.describe_step(0, *step) for step in state.information_state_key(0)]
    rolled = next(t for t in text if t.startswith("you see rolled "))
    assert text == ["", rolled, "", "you claim 66"]
    bob = [game.describe_step(1, *step) for step in state.information_state_key(1)]
    assert bob == ["", "", "", "you see claimed 66"]  # never alice's roll
    game, state = _play_gdl("gdl_tictactoe", [("(mark 2 2)", "noop"), ("noop", "(mark 1 3)")])
    assert [game.describe_step(0, *step) for step in state.information_state_key(0)] == [
        "you mark 2 2",
        "oplayer mark 1 3",
    ]
    assert game.describe_view(state, 0) == "\n".join(
        ["cell:", "     1 2 3", "   1 . . o", "   2 . x .", "   3 . . .", "control xplayer"]
    )
    assert hiddenenvs.load_game("meier").describe_view(state, 0) is None  # GDL-II hides


def test_bad_answers_get_one_line_each_whatever_their_size(capsys):
    legal = {3: "(claim 21)", 7: "call"}
    answers = iter(["9" * 5000, "x" * 50_000_000, "-3", "  (CLAIM   21) "])
    assert choose(["pick"], legal, read=lambda prompt: next(answers)) == 3
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "pick" and len(lines) == 4
    assert "(5,000 characters)" in lines[1] and "(50,000,000 characters)" in lines[2]
    assert all(len(line) < 200 for line in lines)
    assert choose([], legal, read=lambda prompt: "claim 21") == 3  # brackets optional
    assert choose([], legal, read=lambda prompt: "7") == 7
    with pytest.raises(Quit):
        choose([], legal, read=lambda prompt: "q")


def test_a_missing_agent_file_or_checkpoint_says_no_such_file(tmp_path):
    with pytest.raises(ValueError, match="no such file or directory: .*nope.pt"):
        load_agent(str(tmp_path / "nope.pt"), "kuhn_poker")
    with pytest.raises(ValueError, match="no such file: .*checkpoint.pt"):
        load_agent(str(tmp_path), "kuhn_poker")
