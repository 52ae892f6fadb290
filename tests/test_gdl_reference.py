"""The reference GDL reasoner (hiddenenvs/envs/gdl/reference.py) on its own and against
independent reasoners' traces: ggp-base's Java prover (GDL-I rule sheets) and an ASP-based
GDL-II reasoner (Monty Hall, with every role's percepts). The data is read from
../shared/ where that is beside the repository (deselected without it)."""

import json

import pytest
from ggp_data import ggp_base_traced_sheets

from hiddenenvs.envs.gdl.parser import GdlSafetyError, GdlStratificationError
from hiddenenvs.envs.gdl.reference import ReferenceReasoner

# Every ggp-base rule sheet but two: alternating and simultaneous moves, 1 to 4 roles,
# recursion (successor arithmetic, transitive closure, ruleDepth*), `or`, `distinct` and
# `(not (distinct ...))`, function terms, puzzles with step counters and odd test cases.
# Left out: AlexChess, where the trace disagrees with the rules' model (see
# test_alexchess_trace_disagrees_with_the_rules), and ad_game_2x2, whose arithmetic tables
# over 0..24 (distances between all pairs of cells) take a bottom-up evaluator tens of
# seconds. The large boards replay their first playout only, to keep the time down.
GGP_BASE_SHEETS = [
    "3pConnectFour",
    "3pttc",
    "bidding-tictactoe",
    "blocker",
    "blocks",
    "blocksWorld",
    "breakthroughSmall",
    "catcha_mouse",
    "chomp",
    "coins",
    "connectFour",
    "crisscross",
    "doubletictactoe",
    "duplicateStateSmall",
    "eightPuzzle",
    "firefighter",
    "gt_centipede",
    "gt_chicken",
    "gt_prisoner",
    "gt_ultimatum",
    "guess",
    "hanoi",
    "kitten_escapes_from_fire",
    "knightmove",
    "knightsTour",
    "lightsout",
    "maze",
    "nim1",
    "nim2",
    "nim3",
    "nim4",
    "numbertictactoe",
    "onestep",
    "pancakes6",
    "peg",
    "racer",
    "roshambo2",
    "ruleDepthLinear",
    "ruleDepthQuadratic",
    "simpleMutex",
    "snake_2009",
    "stateSpaceSmall",
    "sum15",
    "test_case_1a",
    "test_case_1b",
    "test_case_2a",
    "test_case_2b",
    "test_case_2c",
    "ticTacToeParallel",
    "ticTacToeSerial",
    "tictactoe",
    "tictactoe_3d_small_2player",
    "tictactoex9",
    "toetictac",
    # first playout only
    "4pttc",
    "checkersTiny",
    "connect5",
    "hallway",
    "queens",
]
FIRST_PLAYOUT_ONLY = {"4pttc", "checkersTiny", "connect5", "hallway", "queens"}


def replay(reasoner: ReferenceReasoner, playout: dict, where: str) -> int:
    """Replay one recorded playout; every state, legal set, percept set, terminal flag and
    goal must match. Terms are compared after reading them back, so spacing and case do
    not matter. Returns the number of steps."""

    def terms(texts):
        return frozenset(reasoner.parse_terms(" ".join(texts)))

    assert [role.lower() for role in reasoner.roles] == [r.lower() for r in playout["roles"]]
    state = reasoner.initial_state()
    for number, step in enumerate(playout["steps"]):
        at = f"{where} step {number}"
        assert state == terms(step["state"]), at
        assert not reasoner.is_terminal(state), at
        for role, moves, expected in zip(
            reasoner.roles, reasoner.legal_moves(state), step["legal"]
        ):
            assert frozenset(moves) == terms(expected), f"{at}: legal moves of {role}"
        joint = [reasoner.parse_terms(move)[0] for move in step["joint"]]
        if "sees" in step:
            for role, seen, expected in zip(
                reasoner.roles, reasoner.percepts(state, joint), step["sees"]
            ):
                assert seen == terms(expected), f"{at}: percepts of {role}"
        state = reasoner.next_state(state, joint)
    assert state == terms(playout["final"]), f"{where} final state"
    assert reasoner.is_terminal(state) == playout["terminal"], f"{where} terminal flag"
    if playout["terminal"]:
        assert reasoner.goals(state) == playout["goals"], f"{where} goals"
    return len(playout["steps"])


def playouts(path):
    with open(path) as lines:
        return [json.loads(line) for line in lines]


@pytest.mark.parametrize(
    "name", sorted(set(GGP_BASE_SHEETS).intersection(ggp_base_traced_sheets()))
)
def test_ggp_base_traces(ggp_base_file, name):
    reasoner = ReferenceReasoner.from_file(ggp_base_file("rulesheets", name))
    recorded = playouts(ggp_base_file("traces", name))
    if name in FIRST_PLAYOUT_ONLY:
        recorded = recorded[:1]
    steps = sum(
        replay(reasoner, playout, f"{name} playout {i}") for i, playout in enumerate(recorded)
    )
    assert steps > 0


def test_montyhall_traces_with_percepts(shared_dir):
    reasoner = ReferenceReasoner.from_file(shared_dir / "gdl/gdl-ii/montyhall.gdl")
    recorded = playouts(shared_dir / "gdl/gdl-ii/montyhall.jsonl")
    assert len(recorded) == 8
    for i, playout in enumerate(recorded):
        assert replay(reasoner, playout, f"montyhall playout {i}") == 3
        assert all("sees" in step for step in playout["steps"])


def test_alexchess_trace_disagrees_with_the_rules(shared_dir):
    """ggp-base's prover leaves out six moves that AlexChess's rules make legal.

    Playout 0 reaches, after a buggy castling move, a position where black's king and rook
    share c1 and d1 with white's bishop and queen. By the rules, (legal0 ... bishop c 1 ...)
    holds (c1 holds a white bishop), nothing is pinned and there is no check, so legal1,
    legal2 and legal follow for bishop c1-d2..h6 and queen d1-d2; clingo on the same rules
    agrees. The trace lists every other move, so the reasoners differ by exactly these six.
    """
    reasoner = ReferenceReasoner.from_file(shared_dir / "gdl/ggp-base/rulesheets/AlexChess.kif")
    playout = playouts(shared_dir / "gdl/ggp-base/traces/AlexChess.jsonl")[0]
    state = reasoner.initial_state()
    for step in playout["steps"][:2]:
        assert state == frozenset(reasoner.parse_terms(" ".join(step["state"])))
        state = reasoner.next_state(state, [reasoner.parse_terms(m)[0] for m in step["joint"]])
    step = playout["steps"][2]
    assert state == frozenset(reasoner.parse_terms(" ".join(step["state"])))
    white_moves = frozenset(reasoner.legal_moves(state)[0])
    recorded = frozenset(reasoner.parse_terms(" ".join(step["legal"][0])))
    assert recorded < white_moves
    assert sorted(reasoner.render(move) for move in white_moves - recorded) == [
        "(move bishop c 1 d 2)",
        "(move bishop c 1 e 3)",
        "(move bishop c 1 f 4)",
        "(move bishop c 1 g 5)",
        "(move bishop c 1 h 6)",
        "(move queen d 1 d 2)",
    ]


# ---------------------------------------------------------------- the reasoner on its own

COUNTER = """
    (role p)
    (init (count 0))
    (succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5)
    (<= (less ?x ?y) (succ ?x ?y))
    (<= (less ?x ?z) (succ ?x ?y) (less ?y ?z))
    (<= (legal p (jump ?n)) (true (count ?c)) (less ?c ?n))
    (<= (next (count ?n)) (does p (jump ?n)))
    (<= terminal (true (count 5)))
    (<= (goal p 100) (true (count ?c)) (not (less ?c 5)))
    (<= (goal p 0) (true (count ?c)) (less ?c 5))
"""


def test_recursion_and_stratified_negation():
    reasoner = ReferenceReasoner.from_text(COUNTER)
    state = reasoner.initial_state()
    assert [reasoner.render(t) for t in state] == ["(count 0)"]
    # `less` is the transitive closure of succ: from 0 every larger number is reachable.
    assert [reasoner.render(m) for m in reasoner.legal_moves(state)[0]] == [
        "(jump 1)",
        "(jump 2)",
        "(jump 3)",
        "(jump 4)",
        "(jump 5)",
    ]
    assert not reasoner.is_terminal(state) and reasoner.goals(state) == [0]
    state = reasoner.next_state(state, reasoner.parse_terms("(jump 3)"))
    assert len(reasoner.legal_moves(state)[0]) == 2
    state = reasoner.next_state(state, reasoner.parse_terms("(JUMP 5)"))  # case-insensitive
    assert reasoner.is_terminal(state) and reasoner.goals(state) == [100]


def test_or_distinct_and_percepts():
    reasoner = ReferenceReasoner.from_text("""
        (role a) (role b) (colour red) (colour blue)
        (init (round 1))
        (<= (legal ?r (pick ?c)) (role ?r) (colour ?c))
        (<= (sees ?r (other ?c)) (role ?r) (role ?o) (distinct ?r ?o) (does ?o (pick ?c)))
        (<= (sees ?r same) (does a (pick ?c)) (does b (pick ?d)) (not (distinct ?c ?d))
            (or (role ?r)))
        (<= (next (picked ?r ?c)) (does ?r (pick ?c)))
        (<= terminal (or (true (picked a ?c)) (true (round 5))))
        (goal a 50) (goal b 50)""")
    state = reasoner.initial_state()
    red, blue = reasoner.parse_terms("(pick red) (pick blue)")
    assert [set(map(reasoner.render, seen)) for seen in reasoner.percepts(state, [red, blue])] == [
        {"(other blue)"},
        {"(other red)"},
    ]
    assert [set(map(reasoner.render, seen)) for seen in reasoner.percepts(state, [red, red])] == [
        {"(other red)", "same"},
        {"(other red)", "same"},
    ]
    assert reasoner.is_terminal(reasoner.next_state(state, [red, blue]))


def test_unsafe_rule_is_reported_with_its_location():
    with pytest.raises(GdlSafetyError, match=r"sheet\.kif:3:\d+: .*\?y"):
        ReferenceReasoner.from_text(
            "(role p)\n(init (x 1))\n(<= (next (x ?y)) (not (true (x ?y))))", filename="sheet.kif"
        )


def test_negation_through_recursion_is_reported():
    with pytest.raises(GdlStratificationError, match=r"sheet\.kif:2:\d+"):
        ReferenceReasoner.from_text(
            "(role p) (n 1)\n(<= (q ?x) (n ?x) (not (r ?x)))\n"
            "(<= (r ?x) (n ?x) (q ?x))\n(<= terminal (q 1))",
            filename="sheet.kif",
        )
