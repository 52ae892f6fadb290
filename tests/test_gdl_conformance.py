"""Conformance of the GDL propnet with independent reasoners, trace by trace.

Every ggp-base trace (ggp-base's Java prover, GDL-I, in ``../shared/gdl/ggp-base/`` where
that is beside the repository) and, where ../shared/ is there, ``../shared/gdl/gdl-ii/montyhall.jsonl`` (an
ASP-based GDL-II reasoner, with each role's percepts) is replayed from the initial state: every state, legal move set, percept set,
terminal flag and goal value must match. Each rule sheet is compiled once.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ggp_data import ggp_base_traced_sheets

from hiddenenvs.envs.gdl.parser import GdlGroundingLimitError
from hiddenenvs.envs.gdl.propnet import Propnet

SHEETS = ggp_base_traced_sheets()
# Sheets whose grounding is beyond a propnet: the engine must refuse them with an error
# naming the exploding rule (checked at a lower limit than the default 750,000, which
# they also exceed, to save CI the seconds each takes to get there). AlexChess runs past
# 30 million, and its trace disagrees with its own rules anyway (see
# test_gdl_reference.test_alexchess_trace_disagrees_with_the_rules). ruleDepthQuadratic,
# built to explode when every relation is ground in full (prereq<n> has 2^n instances),
# grounds only what its goals ask for (the grounder's demand) and is replayed like the rest.
TOO_LARGE = {"AlexChess": 200_000}
# The two slowest sheets (grounding and replay take 0.5-3 minutes each on 2 cores, over
# half the suite's time): marked ``slow``, so the default run (``-m "not slow"``, the
# README's test command) leaves them to the second step of ``.ci/run``. Listed even when
# their data is absent, so that step always collects them (and skips them cleanly).
SLOW = {"hallway", "racer"}


def _normal(text: str, fold_case: bool) -> str:
    text = " ".join(text.split())
    return text.lower() if fold_case else text


def replay(propnet: Propnet, trace_path: Path, fold_case: bool) -> int:
    """Replay every playout of ``trace_path``; returns the number of steps checked."""
    norm = lambda items: sorted(_normal(item, fold_case) for item in items)
    text = lambda key: propnet.printer(key, spaced=True)
    steps_checked = 0
    for number, line in enumerate(trace_path.read_text().splitlines()):
        playout = json.loads(line)
        assert [r.lower() for r in propnet.roles] == [r.lower() for r in playout["roles"]]
        state = propnet.initial_state
        for step_number, step in enumerate(playout["steps"]):
            where = f"{trace_path.name} playout {number} step {step_number}"
            assert norm(propnet.state_fluents(state, spaced=True)) == norm(step["state"]), where
            info = propnet.evaluate(state)
            assert not info.terminal, where
            for role, expected in enumerate(step["legal"]):
                got = [text(propnet.moves[role][k]) for k in info.legal[role]]
                assert norm(got) == norm(expected), f"{where}: legal moves of role {role}"
            joint = tuple(propnet.move_index(role, move) for role, move in enumerate(step["joint"]))
            state, percepts = propnet.transition(state, joint)
            for role, expected in enumerate(step.get("sees", [])):
                got = [text(propnet.percepts[role][k]) for k in percepts[role]]
                assert norm(got) == norm(expected), f"{where}: percepts of role {role}"
            steps_checked += 1
        where = f"{trace_path.name} playout {number} final state"
        assert norm(propnet.state_fluents(state, spaced=True)) == norm(playout["final"]), where
        info = propnet.evaluate(state)
        assert info.terminal == playout["terminal"], where
        if playout["terminal"]:
            assert [list(goals) for goals in info.goals] == [[g] for g in playout["goals"]], where
    return steps_checked


@pytest.mark.parametrize(
    "sheet",
    [
        pytest.param(sheet, marks=pytest.mark.slow) if sheet in SLOW else sheet
        for sheet in sorted(set(SHEETS) | SLOW)
    ],
)
def test_ggp_base_traces(ggp_base_file, sheet):
    rules = ggp_base_file("rulesheets", sheet)
    trace = ggp_base_file("traces", sheet)
    if sheet in TOO_LARGE:
        with pytest.raises(GdlGroundingLimitError, match=rf"{sheet}\.kif:\d+:\d+: .*rule for"):
            Propnet.from_file(rules, max_instances=TOO_LARGE[sheet])
        pytest.xfail(f"{sheet}: grounding exceeds the propnet size limit (refused cleanly)")
    propnet = Propnet.from_file(rules)  # every other sheet loads with the default limits
    assert replay(propnet, trace, fold_case=False) > 0


def test_gdl_ii_montyhall_traces_with_percepts(shared_dir):
    directory = shared_dir / "gdl" / "gdl-ii"
    propnet = Propnet.from_file(directory / "montyhall.gdl")
    assert propnet.has_sees
    assert replay(propnet, directory / "montyhall.jsonl", fold_case=True) > 0


def test_a_wrong_transition_is_detected(ggp_base_file):
    """The replay can fail: a propnet whose state is corrupted disagrees with the trace."""
    propnet = Propnet.from_file(ggp_base_file("rulesheets", "tictactoe"))
    original = propnet.initial_state
    propnet.initial_state = bytes(len(original))  # the empty board has no control fluent
    with pytest.raises(AssertionError):
        replay(propnet, ggp_base_file("traces", "tictactoe"), fold_case=False)
