"""``python -m agents.play`` driven in a pseudo-terminal, as a person would."""

import sys
from pathlib import Path

import pytest

import hiddenenvs
from hiddenenvs.envs.kuhn_poker import CARD_NAMES

pexpect = pytest.importorskip("pexpect")
ROOT = Path(__file__).resolve().parent.parent


def spawn(*args):
    return pexpect.spawn(
        sys.executable, ["-m", "agents.play", *args], cwd=str(ROOT), encoding="utf-8", timeout=60
    )


def dealt_cards(seed):
    env = hiddenenvs.make("kuhn_poker")
    env.reset(seed=seed)
    return [CARD_NAMES[card] for card in env.unwrapped.game_state.history()[:2]]


def test_kuhn_from_seat_one_shows_my_card_never_the_opponents(tmp_path):
    log = tmp_path / "session.txt"
    with log.open("w") as logfile:
        child = spawn(
            "kuhn_poker", "--against", "random", "--seat", "1", "--seed", "3", "--games", "2"
        )
        child.logfile_read = logfile
        for _ in range(2):
            child.expect("your move> ")
            child.sendline("nonsense")
            child.expect("not a legal move: 'nonsense'")
            child.expect("your move> ")
            child.sendline("bet")  # player 1 decides once in Kuhn, and may always bet or call
            child.expect("game over")
        child.expect(pexpect.EOF)
        child.close()
    assert child.exitstatus == 0
    transcript = log.read_text()
    for seed in (3, 4):
        opponent_card, my_card = dealt_cards(seed)
        assert f"your card: {my_card}" in transcript
    opponents = {dealt_cards(seed)[0] for seed in (3, 4)} - {
        dealt_cards(seed)[1] for seed in (3, 4)
    }
    for card in opponents:
        assert f": {card}" not in transcript, f"the opponent's card {card} was shown"
    assert "cards:" not in transcript  # the state's own text (both hands) never appears
    assert transcript.count("game over; returns:") == 2


def test_simultaneous_move_is_chosen_before_the_other_is_seen_and_eof_quits():
    child = spawn("rps", "--against", "random", "--seed", "0", "--games", "2")
    child.expect("your move> ")
    assert "step 1" not in child.before  # nothing of the joint move yet
    child.sendline("paper")
    child.expect(r"step 1: \('paper', '(rock|paper|scissors)'\)")
    child.expect("your move> ")
    child.sendeof()
    child.expect("stopped")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_meier_asks_only_for_real_choices_and_shows_the_roll_in_words():
    child = spawn("meier", "--against", "scripted:meier", "--seed", "1")
    child.expect("meier: GDL-II Meier: private dice rolls")  # the game in one line
    child.expect(r"step 1: you see rolled (\d\d)\r\n")
    child.expect("legal moves:")
    child.expect("20: claim 66")  # names without GDL's brackets
    child.expect("your move> ")
    assert "noop" not in child.before
    child.sendline("(claim 66)")
    child.expect("step 2: you claim 66")
    child.expect("game over")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_bad_spec_and_seat_are_refused_by_name():
    child = spawn("kuhn_poker", "--against", "no_such_agent")
    child.expect("agent spec 'no_such_agent' does not resolve for kuhn_poker")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2
    child = spawn("kuhn_poker", "--seat", "2")
    child.expect(r"--seat must be in 0..1 for kuhn_poker, got 2")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 2
