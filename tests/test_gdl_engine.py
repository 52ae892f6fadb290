"""GDL engine behaviour: compiled depth charge, transition cache, and the game model."""

from __future__ import annotations

import numpy as np
import pytest

import hiddenenvs
from hiddenenvs.analysis import GameTree, best_response
from hiddenenvs.envs.gdl.parser import parse_text
from hiddenenvs.envs.gdl.propnet import Propnet
from hiddenenvs.game import CHANCE, SIMULTANEOUS, Utility

# Two-player guessing game with a hidden coin (GDL-II): random flips, 'guesser' sees
# nothing of the coin, 'peeker' sees it; both then guess at once.
COIN = """
(role random) (role guesser) (role peeker)
(init (phase flip))
(side heads) (side tails)
(<= (legal random (flip ?s)) (true (phase flip)) (side ?s))
(<= (legal random noop) (true (phase guess)))
(<= (legal ?r noop) (true (phase flip)) (player ?r))
(<= (legal ?r (guess ?s)) (true (phase guess)) (player ?r) (side ?s))
(player guesser) (player peeker)
(<= (next (coin ?s)) (does random (flip ?s)))
(<= (next (coin ?s)) (true (coin ?s)))
(<= (next (phase guess)) (true (phase flip)))
(<= (next (phase done)) (true (phase guess)))
(<= (next (right ?r)) (does ?r (guess ?s)) (true (coin ?s)))
(<= (sees peeker ?s) (does random (flip ?s)))
(<= terminal (true (phase done)))
(<= (goal ?r 100) (player ?r) (true (right ?r)))
(<= (goal ?r 0) (player ?r) (not (true (right ?r))))
"""


@pytest.fixture(scope="module")
def tictactoe(ggp_base_file):
    return Propnet.from_file(ggp_base_file("rulesheets", "tictactoe"))


def test_depth_charge_ends_in_terminal_states_the_python_path_agrees_with(tictactoe):
    lengths = set()
    for seed in range(200):
        final, steps, status = tictactoe.depth_charge(tictactoe.initial_state, seed)
        info = tictactoe.evaluate(final)
        assert status == 0 and info.terminal
        assert 5 <= steps <= 9 and sorted(sum(info.goals, ())) in ([0, 100], [50, 50])
        lengths.add(steps)
    assert len(lengths) >= 3  # seeds do give different playouts
    assert tictactoe.depth_charge(tictactoe.initial_state, 7) == tictactoe.depth_charge(
        tictactoe.initial_state, 7
    )  # deterministic per seed
    final, steps, status = tictactoe.depth_charge(tictactoe.initial_state, 3, max_steps=2)
    assert (steps, status) == (2, 1)
    marks = [f for f in tictactoe.state_fluents(final) if f.startswith("(mark")]
    assert len(marks) == 2 and "(control xPlayer)" in tictactoe.state_fluents(final)


def test_transition_cache_counts_hits_and_changes_nothing(tictactoe):
    tictactoe.clear_cache()
    state = tictactoe.initial_state
    joint = (tictactoe.evaluate(state).legal[0][0], tictactoe.evaluate(state).legal[1][0])
    first = tictactoe.transition(state, joint)
    second = tictactoe.transition(state, joint)
    assert first == second
    info = tictactoe.cache_info()["transition"]
    assert (info["hits"], info["misses"]) == (1, 1) and info["hit_rate"] == 0.5
    assert tictactoe.compiled.transition(state, joint) == first  # uncached agrees


def test_gdl_i_game_facts_and_joint_move_percepts(ggp_base_file):
    game = hiddenenvs.load_game("gdl", rules=str(ggp_base_file("rulesheets", "tictactoe")))
    assert game.info.num_players == 2 and game.info.player_names == ("xPlayer", "oPlayer")
    assert game.info.utility is Utility.CONSTANT_SUM and game.info.utility_sum == 100
    assert game.info.max_game_length == 9  # exhaustive search of the 5,478 states
    state = game.new_initial_state()
    assert state.current_player() == SIMULTANEOUS and state.movers() == [0]
    assert game.action_to_string(0, state.legal_actions(0)[0]) == "(play 1 1 x)"
    state.apply_actions([state.legal_actions(0)[4], 0])
    # GDL-I: both roles perceive the whole joint move (x's move and o's noop).
    assert state.information_state_key(0)[0][1] == state.information_state_key(1)[0][1]
    scaled = hiddenenvs.load_game(
        "gdl",
        rules=str(ggp_base_file("rulesheets", "tictactoe")),
        scale_returns=True,
    )
    assert scaled.info.utility is Utility.ZERO_SUM


def test_general_sum_is_declared_when_goals_do_not_add_up(ggp_base_file):
    game = hiddenenvs.load_game("gdl", rules=str(ggp_base_file("rulesheets", "gt_prisoner")))
    assert game.info.utility is Utility.GENERAL_SUM


def test_gdl_ii_chance_and_percepts_never_leak(tmp_path):
    path = tmp_path / "coin.gdl"
    path.write_text(COIN)
    game = hiddenenvs.load_game("gdl", rules=str(path))
    assert game.info.num_players == 2 and game.info.max_chance_outcomes == 3  # random's moves
    root = game.new_initial_state()
    assert root.current_player() == CHANCE
    assert [p for _, p in root.chance_outcomes()] == [0.5, 0.5]
    children = [root.child(action) for action, _ in root.chance_outcomes()]
    # The flip is played with everyone's noop; the guesser cannot tell the two apart,
    # the peeker can; observation tensors follow the keys and never show the true state.
    assert children[0].information_state_key(0) == children[1].information_state_key(0)
    assert children[0].information_state_key(1) != children[1].information_state_key(1)
    assert np.array_equal(children[0].observation_tensor(0), children[1].observation_tensor(0))
    assert np.array_equal(
        children[0].information_state_tensor(0), children[1].information_state_tensor(0)
    )
    assert not np.array_equal(children[0].state_tensor(), children[1].state_tensor())
    # Exact analysis: the best response of each player against uniform guessing.
    tree = GameTree.build(game)
    uniform = lambda state, player: {
        a: 1 / len(state.legal_actions(player)) for a in state.legal_actions(player)
    }
    assert best_response(tree, uniform, 0)[0] == pytest.approx(50.0)
    assert best_response(tree, uniform, 1)[0] == pytest.approx(100.0)


def test_sheet_names_resolve_and_bad_ones_are_named():
    game = hiddenenvs.load_game("gdl", sheet="monty_hall")
    assert game.info.num_players == 1
    with pytest.raises(ValueError, match="no shipped rule sheet named 'nope'"):
        hiddenenvs.load_game("gdl", sheet="nope")
    with pytest.raises(ValueError, match="not both"):
        hiddenenvs.load_game("gdl", sheet="monty_hall", rules="x.kif")


def test_parse_text_keeps_spelling_and_folds_case():
    sheet = parse_text("(role Xplayer) (init (Cell 1 B))")
    assert str(sheet.rules[1]) == "(init (Cell 1 B))"
    assert sheet.rules[1].head == parse_text("(init (cell 1 b))").rules[0].head


# Three counters walk 0..59 independently; a move is legal when the x counter is below
# both others. Joined naively, the legal rule has 60^3 = 216,000 relaxed instances.
COUNTERS = (
    "(role p)\n"
    + "\n".join(f"(succ {i} {i + 1}) (less {i} {j})" for i in range(59) for j in range(i + 1, 60))
    + """
(init (x 0)) (init (y 5)) (init (z 9))
(<= (next (x ?n)) (true (x ?m)) (succ ?m ?n) (does p (step ?m)))
(<= (next (x ?m)) (true (x ?m)) (does p stay))
(<= (next (y ?n)) (true (y ?m)) (succ ?m ?n))
(<= (next (z ?n)) (true (z ?m)) (succ ?m ?n))
(<= (legal p (step ?a)) (true (x ?a)) (true (y ?b)) (true (z ?c)) (less ?a ?b) (less ?a ?c))
(<= (legal p stay) (true (x ?a)))
(<= terminal (true (z 59)))
(<= (goal p 100) (true (x ?a)) (less 40 ?a))
(<= (goal p 0) (not (true (x 41))))
"""
)


def test_independent_fluents_are_not_cross_multiplied_and_play_the_same():
    from hiddenenvs.envs.gdl.reference import ReferenceReasoner

    net = Propnet(parse_text(COUNTERS, "counters.kif"), max_instances=20_000)
    reasoner = ReferenceReasoner.from_text(COUNTERS, "counters.kif")
    state, expected = net.initial_state, reasoner.initial_state()
    for step in range(60):
        assert sorted(net.state_fluents(state)) == sorted(map(reasoner.render, expected))
        info = net.evaluate(state)
        assert info.terminal == reasoner.is_terminal(expected)
        if info.terminal:
            break
        legal = sorted(net.move_names[0][m] for m in info.legal[0])
        assert legal == sorted(map(reasoner.render, reasoner.legal_moves(expected)[0]))
        move = info.legal[0][step % len(info.legal[0])]
        state, _ = net.transition(state, (move,))
        expected = reasoner.next_state(expected, reasoner.parse_terms(net.move_names[0][move]))
    assert info.terminal and step == 50


# Quarto's shape (ggp-base's quarto.kif, which issue 48 found refused at the default limit):
# a line holds when its pieces share an attribute, through a static relation of one rule
# over the pieces of four cells. Here 8 pieces of 3 attributes on a 4x4 board.
PIECES = [f"p{n:03b}" for n in range(8)]
SHARED_ATTRIBUTE_LINES = (
    "(role white) (role black) (index 1) (index 2) (index 3) (index 4) (bit 0) (bit 1)\n"
    + " ".join(f"(piece {p})" for p in PIECES)
    + " ".join(f"(attr {n + 1})" for n in range(3))
    + " ".join(f"(bitOf {n + 1} {p} {p[1 + n]})" for p in PIECES for n in range(3))
    + " ".join(f"(init (cell {x} {y} empty))" for x in range(1, 5) for y in range(1, 5))
    + """
(<= (init (pool ?p)) (piece ?p))
(init (control white))
(<= (legal ?r (place ?p ?x ?y)) (true (control ?r)) (true (pool ?p)) (true (cell ?x ?y empty)))
(<= (legal ?r noop) (role ?r) (not (true (control ?r))))
(<= (placed ?x ?y) (does ?r (place ?p ?x ?y)))
(<= (taken ?p) (does ?r (place ?p ?x ?y)))
(<= (next (cell ?x ?y ?p)) (does ?r (place ?p ?x ?y)))
(<= (next (cell ?x ?y ?c)) (true (cell ?x ?y ?c)) (not (placed ?x ?y)))
(<= (next (pool ?p)) (true (pool ?p)) (not (taken ?p)))
(<= (next (control black)) (true (control white)))
(<= (next (control white)) (true (control black)))
(<= (same ?a ?b ?c ?d) (attr ?n) (bit ?v) (bitOf ?n ?a ?v) (bitOf ?n ?b ?v) (bitOf ?n ?c ?v)
    (bitOf ?n ?d ?v))
(<= line (index ?y) (true (cell 1 ?y ?a)) (true (cell 2 ?y ?b)) (true (cell 3 ?y ?c))
    (true (cell 4 ?y ?d)) (same ?a ?b ?c ?d))
(<= line (index ?x) (true (cell ?x 1 ?a)) (true (cell ?x 2 ?b)) (true (cell ?x 3 ?c))
    (true (cell ?x 4 ?d)) (same ?a ?b ?c ?d))
(<= piecesLeft (true (pool ?p)))
(<= terminal line)
(<= terminal (not piecesLeft))
(<= (goal white 100) line (true (control black)))
(<= (goal white 0) line (true (control white)))
(<= (goal black 100) line (true (control white)))
(<= (goal black 0) line (true (control black)))
(<= (goal ?r 50) (role ?r) (not line))
"""
)


def test_a_static_relation_tying_fluents_together_is_unfolded_before_the_split():
    """Whole, each line rule joins every 4-tuple of pieces that share an attribute (about
    5,000 instances); split without unfolding ``same``, each auxiliary atom still carries
    three pieces. Unfolded, each piece meets only its cell and its own ``bitOf``: the sheet
    grounds within 6,000 instances, and plays as the reference reasoner does."""
    from hiddenenvs.envs.gdl.reference import ReferenceReasoner

    net = Propnet(parse_text(SHARED_ATTRIBUTE_LINES, "lines.kif"), max_instances=6_000)
    reasoner = ReferenceReasoner.from_text(SHARED_ATTRIBUTE_LINES, "lines.kif")
    rng = np.random.default_rng(0)
    endings = set()
    for _ in range(20):
        state, expected = net.initial_state, reasoner.initial_state()
        while True:
            assert sorted(net.state_fluents(state)) == sorted(map(reasoner.render, expected))
            info = net.evaluate(state)
            assert info.terminal == reasoner.is_terminal(expected)
            if info.terminal:
                goals = [values[0] for values in info.goals]
                assert goals == reasoner.goals(expected)
                endings.add(tuple(goals))
                break
            joint = []
            for role, legal in enumerate(info.legal):
                names = sorted(net.move_names[role][m] for m in legal)
                assert names == sorted(map(reasoner.render, reasoner.legal_moves(expected)[role]))
                joint.append(legal[int(rng.integers(len(legal)))])
            state, _ = net.transition(state, tuple(joint))
            moves = [reasoner.parse_terms(net.move_names[r][m])[0] for r, m in enumerate(joint)]
            expected = reasoner.next_state(expected, moves)
    assert len(endings) >= 2  # lines made by either side, or every piece played
