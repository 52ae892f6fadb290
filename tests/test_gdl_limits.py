"""GDL loading budgets: sheet size, sentence count and load time, each refused in one line
that names the file (sheets are generated here, never committed)."""

from __future__ import annotations

import pytest

import hiddenenvs
from hiddenenvs.envs.gdl import GdlGroundingLimitError, GdlSyntaxError, parse_text
from hiddenenvs.envs.gdl.game import GAMES_DIR
from hiddenenvs.envs.gdl.parser import MAX_SENTENCES, MAX_SHEET_BYTES
from hiddenenvs.envs.gdl.validate import MAX_NORMAL_RULES

TICTACTOE = (GAMES_DIR / "tictactoe.gdl").read_text()


def _write(path, facts: str) -> str:
    path.write_text(TICTACTOE + facts)
    return str(path)


@pytest.mark.parametrize("distinct", [True, False])
def test_a_multi_megabyte_sheet_of_facts_is_refused_by_its_size(tmp_path, distinct):
    """The issue's 3.9 MB sheets (177k facts, distinct or all the same): refused before
    reading, with the size as the reason (not a grounding or (or ...) message)."""
    facts = "".join(f"(fact f{i if distinct else 0} g{i % 97})\n" for i in range(177_000))
    path = _write(tmp_path / "huge.kif", facts)
    with pytest.raises(GdlSyntaxError) as error:
        hiddenenvs.load_game("gdl", rules=path)
    message = str(error.value)
    assert message.startswith(f"{path}:1:1: the rule sheet is ")
    assert f"more than the limit of {MAX_SHEET_BYTES:,}" in message
    assert "\n" not in message and "(or" not in message


def test_too_many_sentences_are_refused_at_the_first_beyond_the_limit(tmp_path):
    facts = "".join(f"(f {i})\n" for i in range(MAX_SENTENCES))  # small, but too many
    path = _write(tmp_path / "many.kif", facts)
    first_line = TICTACTOE.count("\n") + 1
    sentences_before = len(parse_text(TICTACTOE).rules)
    beyond_line = first_line + MAX_SENTENCES - sentences_before
    with pytest.raises(
        GdlSyntaxError,
        match=f"many.kif:{beyond_line}:1: the sheet has more "
        f"than {MAX_SENTENCES:,} rules and facts",
    ):
        hiddenenvs.load_game("gdl", rules=path)


def test_the_size_limit_is_a_parameter(tmp_path):
    path = _write(tmp_path / "small.kif", "")
    with pytest.raises(GdlSyntaxError, match="more than the limit of 1,000"):
        hiddenenvs.load_game("gdl", rules=path, max_sheet_bytes=1_000)
    assert hiddenenvs.load_game("gdl", rules=path).info.num_players == 2


def test_parse_text_has_the_same_limits():
    with pytest.raises(GdlSyntaxError, match="<string>:1:1: the rule sheet is 2,001 bytes"):
        parse_text(" " * 2_001, max_bytes=2_000)


def test_the_time_budget_refuses_a_grounding_blow_up(tmp_path):
    """A join of four 60-number tables (13 million instances) with a 0.2 s budget."""
    numbers = "".join(f"(num {i})" for i in range(60))
    rule = "(<= (next (big ?a ?b ?c ?d)) (num ?a) (num ?b) (num ?c) (num ?d) (true (cell 1 1 b)))"
    path = _write(tmp_path / "blowup.kif", numbers + rule)
    with pytest.raises(GdlGroundingLimitError) as error:
        hiddenenvs.load_game("gdl", rules=path, max_load_seconds=0.2, max_instances=10**9)
    assert str(error.value).startswith(f"{path}:")
    assert "exceeds its time budget" in str(error.value)


def test_the_or_expansion_limit_says_how_many_rules_the_sheet_had(tmp_path):
    either = "(or " + " ".join(f"(num {i})" for i in range(16)) + ")"
    rules = "".join(
        f"(<= (wide{k} ?x) {either} {either} {either} (num ?x))\n"  # 4,096 each
        for k in range(MAX_NORMAL_RULES // 4_096 + 1)
    )
    path = _write(tmp_path / "wide.kif", rules)
    with pytest.raises(GdlSyntaxError, match=r"rules expand into [\d,]+ rules once \(or ...\)"):
        hiddenenvs.load_game("gdl", rules=path)
