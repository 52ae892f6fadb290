"""Every validation error of the GDL engine, each with file:line:column in the message."""

from __future__ import annotations

import pytest

from hiddenenvs.envs.gdl.parser import (
    GdlGroundingLimitError,
    GdlPlayError,
    GdlRecursionError,
    GdlRuleError,
    GdlSafetyError,
    GdlStratificationError,
    GdlSyntaxError,
    parse_text,
)
from hiddenenvs.envs.gdl.propnet import Propnet

# A small valid game the cases below break one rule at a time.
GOOD = """
(role a)
(init (count 0))
(succ 0 1) (succ 1 2)
(<= (legal a inc) (true (count ?n)) (succ ?n ?m))
(<= (next (count ?m)) (does a inc) (true (count ?n)) (succ ?n ?m))
(<= terminal (true (count 2)))
(<= (goal a 100) (true (count 2)))
(<= (goal a 0) (not (true (count 2))))
"""


def build(text: str) -> Propnet:
    return Propnet(parse_text(text, "game.kif"))


def test_the_good_game_plays():
    net = build(GOOD)
    state = net.initial_state
    for _ in range(2):
        info = net.evaluate(state)
        assert not info.terminal and len(info.legal[0]) == 1
        state, _ = net.transition(state, (info.legal[0][0],))
    assert net.evaluate(state).terminal and net.evaluate(state).goals == ((100,),)


@pytest.mark.parametrize(
    "text, error, where, words",
    [
        ("(role a)\n(init (count 0)", GdlSyntaxError, "game.kif:2:1:", "unbalanced '('"),
        ("(role a))", GdlSyntaxError, "game.kif:1:9:", "unbalanced ')'"),
        ('(role a)\n(init "x")', GdlSyntaxError, "game.kif:2:7:", "unexpected character"),
        ("(role a)\n(?x b)", GdlSyntaxError, "game.kif:2:1:", "must start with a symbol"),
        ("(role a)\n()", GdlSyntaxError, "game.kif:2:1:", "empty list"),
        ("(role a)\n(<= (p ?x) (distinct ?x))", GdlSyntaxError, "game.kif:2:12:", "two terms"),
    ],
)
def test_syntax_errors(text, error, where, words):
    with pytest.raises(error) as caught:
        build(text)
    assert str(caught.value).startswith(where) and words in str(caught.value)


def test_deep_nesting_and_large_input_do_not_hit_the_recursion_limit():
    deep = "(g " * 50_000 + "a" + ")" * 50_000
    sheet = parse_text(f"(role a) (init (p {deep}))")
    assert len(sheet.rules) == 2
    big = "\n".join(f"(succ {i} {i + 1})" for i in range(50_000))
    assert len(parse_text(big, max_bytes=10**6, max_sentences=50_000).rules) == 50_000
    with pytest.raises(
        GdlSyntaxError, match=r"<string>:1:100000: unbalanced '\(': 100000 parentheses"
    ):
        parse_text("(" * 100_000)


@pytest.mark.parametrize(
    "rule, error, line_column, words",
    [
        # unsafe: head variable, negated literal, distinct
        ("(<= (p ?x) (true (count 0)))", GdlSafetyError, "11:8", "?x in the rule for (p ?x)"),
        ("(<= q (true (count ?n)) (not (succ ?m ?n)))", GdlSafetyError, "11:36", "negated literal"),
        ("(<= q (true (count ?n)) (distinct ?n ?z))", GdlSafetyError, "11:38", "(distinct ?n ?z)"),
        # negation through recursion
        ("(<= (r ?x) (succ ?x ?y) (not (r ?y)))", GdlStratificationError, "11:30", "stratified"),
        # recursion building unbounded terms
        ("(<= (r (f ?x)) (r ?x))\n(r 0)", GdlRecursionError, "11:19", "GDL's restriction"),
        # true/does misuse
        ("(<= (true (count 9)) (succ 0 1))", GdlRuleError, "11:5", "'true' cannot be the head"),
        ("(<= (does a inc) (succ 0 1))", GdlRuleError, "11:5", "'does' cannot be the head"),
        (
            "(<= (legal a stop) (does a inc))",
            GdlRuleError,
            "11:20",
            "'legal' must not depend on 'does'",
        ),
        (
            "(<= (goal a 50) (moved))\n(<= (moved) (does a inc))",
            GdlRuleError,
            "12:13",
            "'goal' must not depend on 'does'",
        ),
        (
            "(<= terminal (does a inc))",
            GdlRuleError,
            "11:14",
            "'terminal' must not depend on 'does'",
        ),
        (
            "(<= (init (count 1)) (true (count 0)))",
            GdlRuleError,
            "11:22",
            "'init' must not depend on 'true'",
        ),
        ("(<= q (next (count 1)))", GdlRuleError, "11:7", "only appear in rule heads"),
        # goal values
        ("(goal a 101)", GdlRuleError, "11:9", "not an integer between 0 and 100"),
        (
            "(<= (goal a ?v) (true (count ?v)))\n(init (count high))",
            GdlRuleError,
            "11:1",
            "goal value high",
        ),
    ],
)
def test_rule_errors_name_file_line_and_rule(rule, error, line_column, words):
    text = GOOD + "\n" + rule  # GOOD has 10 lines; the rule starts on line 11
    with pytest.raises(error) as caught:
        build(text)
    message = str(caught.value)
    assert message.startswith(f"game.kif:{line_column}:"), message
    assert words in message, message


def test_missing_roles():
    with pytest.raises(GdlRuleError, match=r"^game\.kif:1:1: no roles"):
        build(GOOD.replace("(role a)", ""))


def test_unneeded_unsafe_base_hints_are_ignored_but_needed_ones_are_reported():
    hints = GOOD + "(base (count ?n))\n(input ?r ?m)\n"  # lines 10 and 11
    assert build(hints).evaluate(build(hints).initial_state).legal == ((0,),)
    needed = hints + "(<= (goal a 50) (base (count 7)))\n"
    with pytest.raises(
        GdlSafetyError, match=r"^game\.kif:10:14: unsafe variable \?n in the fact \(base"
    ):
        build(needed)


def test_role_without_legal_move_is_reported_when_reached():
    text = GOOD.replace("(succ 1 2)", "") + "(<= terminal (true (count 3)))"
    net = build(text)
    state, _ = net.transition(net.initial_state, (0,))  # count 1: no successor, no move
    info = net.evaluate(state)
    with pytest.raises(
        GdlPlayError, match=r"^game\.kif:5:1: role a has no legal move .*\(count 1\)"
    ):
        net.check_playable(state, info)


def test_grounding_limit_names_the_exploding_rule():
    text = (
        GOOD
        + "\n".join(f"(num {i})" for i in range(60))
        + "\n(<= (triple ?x ?y ?z) (num ?x) (num ?y) (num ?z))\n(<= (goal a 10) (triple 1 2 3))"
    )
    with pytest.raises(GdlGroundingLimitError) as caught:
        Propnet(parse_text(text, "game.kif"), max_instances=20_000)
    assert "game.kif:70:1:" in str(caught.value) and "(triple ?x ?y ?z)" in str(caught.value)
