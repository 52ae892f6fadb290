"""Classic GGP search (agents/search/minimax.py, montecarlo.py) on GDL sheets: known values,
play against random, pruning that changes nothing but the work, the lecture's examples."""

from __future__ import annotations

import time

import numpy as np
import pytest

import hiddenenvs
from agents.specs import load_agent
from agents.search.classic import apply_choices
from agents.search.minimax import (
    MinimaxSearch,
    soft_maxn_union,
    strongly_dominates,
    weakly_dominates,
)
from agents.search.montecarlo import MonteCarloSearch, TreeSearch


def play(game, agents: dict, seed: int) -> np.ndarray:
    """One game: seats in ``agents`` search from their views, the others play uniformly."""
    state = game.new_initial_state()
    rng = np.random.default_rng(seed)
    while not state.is_terminal():
        choices = {}
        for player in state.movers():
            if player in agents:
                choices[player] = int(
                    np.argmax(agents[player].search_policy(state.seat_view(player)))
                )
            else:
                legal = state.legal_actions(player)
                choices[player] = legal[int(rng.integers(len(legal)))]
        apply_choices(state, choices)
    return state.returns()


def sheet(ggp_base_file, name):
    return hiddenenvs.load_game("gdl", rules=str(ggp_base_file("rulesheets", name)))


# ---- minimax family --------------------------------------------------------------------------
def test_alpha_beta_finds_the_value_of_tic_tac_toe_a_draw():
    game = hiddenenvs.load_game("gdl_tictactoe")
    root = game.new_initial_state()
    assert MinimaxSearch(game, 0, "alphabeta").search(root)[1] == 50.0
    assert MinimaxSearch(game, 0, "negamax-alphabeta").search(root)[1] == 0.0  # 2 * 50 - 100


def test_minimax_negamax_and_alpha_beta_agree_and_pruning_saves_nodes():
    game = hiddenenvs.load_game("gdl_tictactoe")
    state = game.new_initial_state()
    for action in (4, 0):  # x in the centre, o in a corner: 7 empty cells, x to move
        apply_choices(state, {state.movers()[0]: action})
    values, nodes = {}, {}
    for method in ("minimax", "negamax", "alphabeta", "negamax-alphabeta"):
        searcher = MinimaxSearch(game, 0, method)
        values[method] = searcher.search(state)[1]
        nodes[method] = searcher.nodes
    assert values["minimax"] == values["alphabeta"] == 50.0
    assert values["negamax"] == values["negamax-alphabeta"] == 0.0
    assert nodes["alphabeta"] < nodes["minimax"] / 5


def test_iterative_deepening_stops_at_the_deadline_with_the_last_complete_answer():
    game = hiddenenvs.load_game("gdl_tictactoe")
    searcher = MinimaxSearch(game, 0, "alphabeta")
    start = time.monotonic()
    action, value, depth = searcher.search(game.new_initial_state(), deadline=start + 0.2)
    assert time.monotonic() - start < 1.0  # the whole search takes several times longer
    assert 1 <= depth < 8 and action in range(9) and value == 50.0  # unknown leaves count 50


def test_alpha_beta_never_loses_to_random_at_tic_tac_toe():
    game = hiddenenvs.load_game("gdl_tictactoe")
    for seed in range(6):
        seat = seed % 2
        agent = load_agent("alphabeta", "gdl_tictactoe", player=seat, seed=seed)
        assert play(game, {seat: agent}, seed)[seat] >= 50.0


def test_negamax_refuses_a_game_that_is_not_two_player_constant_sum(ggp_base_file):
    with pytest.raises(ValueError, match="negamax needs two players"):
        MinimaxSearch(sheet(ggp_base_file, "3pttc"), 0, "negamax")


def test_soft_maxn_dominance_on_the_lecture_example():
    s1 = frozenset({(3, 4, 3)})
    s2 = frozenset({(2, 1, 7), (4, 2, 4)})
    s3 = frozenset({(4, 1, 5), (3, 2, 5)})
    s4 = frozenset({(10, 0, 0), (0, 10, 0), (0, 0, 10)})
    sets = [s1, s2, s3, s4]
    # player 1 (index 0): set 3 weakly dominates set 1, not strongly
    assert weakly_dominates(s3, s1, 0) and not strongly_dominates(s3, s1, 0)
    # player 2: set 1 strongly dominates sets 2 and 3
    assert strongly_dominates(s1, s2, 1) and strongly_dominates(s1, s3, 1)
    # player 3: sets 2 and 3 strongly dominate set 1
    assert strongly_dominates(s2, s1, 2) and strongly_dominates(s3, s1, 2)
    # set 4 neither dominates nor is dominated, for any player
    for player in range(3):
        for other in (s1, s2, s3):
            assert not strongly_dominates(s4, other, player)
            assert not strongly_dominates(other, s4, player)
    # a node of player 2 keeps sets 1 and 4 (2 and 3 are strongly dominated by 1)
    assert soft_maxn_union(sets, 1) == s1 | s4
    assert soft_maxn_union(sets, 0) == s1 | s2 | s3 | s4


def tree_sheet(payoffs: dict) -> str:
    """Three roles; p1 picks l/r, then p2 picks l/r; ``payoffs[(x, y)]`` are the goals."""
    rules = [
        "(role p1) (role p2) (role p3) (side l) (side r) (init (turn p1))",
        "(<= (legal p1 (pick ?x)) (true (turn p1)) (side ?x))",
        "(<= (legal p1 noop) (not (true (turn p1))))",
        "(<= (legal p2 (pick ?x)) (true (turn p2)) (side ?x))",
        "(<= (legal p2 noop) (not (true (turn p2))))",
        "(<= (legal p3 noop))",
        "(<= (next (first ?x)) (does p1 (pick ?x)))",
        "(<= (next (first ?x)) (true (first ?x)))",
        "(<= (next (second ?y)) (does p2 (pick ?y)))",
        "(<= (next (turn p2)) (true (turn p1)))",
        "(<= (next done) (true (turn p2)))",
        "(<= terminal (true done))",
        "(<= (goal ?r ?v) (true (first ?x)) (true (second ?y)) (payoff ?x ?y ?r ?v))",
    ]
    for (x, y), goals in payoffs.items():
        rules += [f"(payoff {x} {y} p{i + 1} {v})" for i, v in enumerate(goals)]
    return "\n".join(rules)


def test_maxn_shallow_pruning_cuts_and_keeps_the_value(tmp_path):
    # Korf's shallow cut: after the left subtree p1 has 40; at the right node p2 gets 70
    # >= 100 - 40 from rl, so rr (however good for p1) cannot change p1's choice.
    path = tmp_path / "korf.kif"
    path.write_text(
        tree_sheet(
            {
                ("l", "l"): (50, 30, 20),
                ("l", "r"): (40, 40, 20),
                ("r", "l"): (20, 70, 10),
                ("r", "r"): (90, 5, 5),
            }
        )
    )
    game = hiddenenvs.load_game("gdl", rules=str(path))
    assert game.info.utility_sum == 100.0
    pruned = MinimaxSearch(game, 0, "maxn")
    plain = MinimaxSearch(game, 0, "maxn", pruning=False)
    root = game.new_initial_state()
    assert pruned.search(root)[:2] == plain.search(root)[:2] == (0, (40.0, 40.0, 20.0))
    assert pruned.pruned == 1 and plain.pruned == 0 and pruned.nodes < plain.nodes


def test_maxn_breaks_ties_to_the_first_child_and_soft_maxn_keeps_both(tmp_path):
    path = tmp_path / "ties.kif"
    path.write_text(
        tree_sheet(
            {
                ("l", "l"): (60, 30, 10),
                ("l", "r"): (10, 30, 60),
                ("r", "l"): (40, 50, 10),
                ("r", "r"): (40, 10, 50),
            }
        )
    )
    game = hiddenenvs.load_game("gdl", rules=str(path))
    root = game.new_initial_state()
    # p2 is indifferent at the left node: max^n assumes its first child, worth 60 to p1
    assert MinimaxSearch(game, 0, "maxn").search(root)[:2] == (0, (60.0, 30.0, 10.0))
    # soft-max^n keeps both outcomes on the left; p1 takes the better worst case, right
    action, value, _ = MinimaxSearch(game, 0, "softmaxn").search(root)
    assert action == 1 and value == frozenset({(40.0, 50.0, 10.0)})


def test_random_opponents_back_up_the_expectation_where_paranoia_assumes_the_worst():
    # biased RPS, goals 50 + 25 * payoff: rock scores 0 / -1 / +2 against rock / paper /
    # scissors, a mean of +1/3 against a uniform opponent, and -1 against one who knows it
    game = hiddenenvs.load_game("gdl_biased_rps")
    root = game.new_initial_state()
    names = {game.action_to_string(0, a): a for a in root.legal_actions(0)}
    rock = next(a for name, a in names.items() if "rock" in name)
    for method in ("minimax", "alphabeta", "maxn"):
        action, value, _ = MinimaxSearch(game, 0, method, simultaneous="random").search(root)
        value = value[0] if method == "maxn" else value
        assert action == rock and value == pytest.approx(50 + 25 / 3), method
    assert MinimaxSearch(game, 0, "alphabeta").search(root)[1] == 25.0
    with pytest.raises(ValueError, match="simultaneous='random' works with"):
        MinimaxSearch(game, 0, "negamax", simultaneous="random")


def test_every_minimax_method_searches_for_the_second_mover_of_a_simultaneous_move(ggp_base_file):
    game = sheet(ggp_base_file, "roshambo2")
    root = game.new_initial_state()
    for method in ("minimax", "alphabeta", "maxn", "softmaxn"):
        action, value, _ = MinimaxSearch(game, 1, method, max_depth=2).search(root)
        assert action in root.legal_actions(1), method


def test_paranoid_alpha_beta_on_three_players(ggp_base_file):
    game = sheet(ggp_base_file, "3pttc")
    searcher = MinimaxSearch(game, 0, "alphabeta", max_depth=3)
    action, value, depth = searcher.search(game.new_initial_state())
    assert (
        depth == 3 and 0.0 <= value <= 100.0 and action in game.new_initial_state().legal_actions(0)
    )


# ---- simulation family ----------------------------------------------------------------------
@pytest.mark.parametrize("name, games", [("connectFour", 8), ("breakthroughSmall", 4)])
def test_uct_beats_random(ggp_base_file, name, games):
    # the 200-game version with Wilson intervals: benchmarks/bench_ggp_uct.py (README)
    game = sheet(ggp_base_file, name)
    results = []
    for seed in range(games):
        seat = seed % 2
        agent = load_agent("uct:150", "gdl", player=seat, seed=seed, rules=game.params["rules"])
        results.append(play(game, {seat: agent}, seed)[seat])
    assert sum(r == 100.0 for r in results) >= games - 1, results


def test_monte_carlo_and_memory_beat_random_at_tic_tac_toe():
    game = hiddenenvs.load_game("gdl_tictactoe")
    for spec in ("mc:200", "mc-memory:200"):
        scores = [
            play(game, {s % 2: load_agent(spec, "gdl_tictactoe", player=s % 2, seed=s)}, s)[s % 2]
            for s in range(6)
        ]
        assert np.mean(scores) >= 75.0, (spec, scores)


def test_monte_carlo_means_are_per_first_move_round_robin():
    game = hiddenenvs.load_game("gdl_tictactoe")
    action, means, counts = MonteCarloSearch(game, 0, seed=0).search(game.new_initial_state(), 90)
    assert counts.tolist() == [10] * 9 and action == int(np.argmax(means))


def test_decoupled_statistics_and_one_tree_per_player_agree_on_a_gdl_i_sheet(ggp_base_file):
    game = sheet(ggp_base_file, "roshambo2")  # simultaneous moves
    root = game.new_initial_state()
    assert root.movers() == [0, 1]
    answers = []
    for mode in ("decoupled", "trees"):
        searcher = TreeSearch(game, 0, simultaneous=mode, seed=3)
        action = searcher.search(root, iterations=400)
        answers.append(
            (
                action,
                [s.tolist() for s in searcher.root_statistics(0, root)[1:]],
                searcher.root_statistics(1, root)[1].tolist(),
            )
        )
    assert answers[0] == answers[1]
    assert sum(answers[0][1][0]) == 400  # every run visits the root once per player


def test_memory_reuses_the_subtree_of_the_reached_state():
    game = hiddenenvs.load_game("gdl_tictactoe")
    searcher = TreeSearch(game, 0, selection="random", seed=0)
    state = game.new_initial_state()
    searcher.search(state, iterations=300)
    apply_choices(state, {0: 4})
    visits_before = searcher.root.children[(4, -1)].stats[1].visits.sum()
    searcher.search(state, iterations=1)
    assert visits_before > 10 and searcher.root.stats[1].visits.sum() == visits_before + 1


def test_single_player_uct_stops_at_100_and_follows_its_path(ggp_base_file):
    game = sheet(ggp_base_file, "maze")
    searcher = TreeSearch(game, 0, seed=0)
    root = game.new_initial_state()
    searcher.search(root, iterations=5000)
    assert searcher.best_score == 100.0
    path = searcher.best_path
    runs = searcher.root_statistics(0, root)[1].sum()
    assert runs < 5000  # stopped at 100
    final = game.state_from_history(path)
    assert final.is_terminal() and final.returns()[0] == 100.0
    # the agent follows the stored path without searching again
    agent = load_agent("uct:5000", "gdl", player=0, seed=0, rules=game.params["rules"])
    state = game.new_initial_state()
    followed = 0
    while not state.is_terminal():
        nodes = agent.searcher.nodes
        if len(state.legal_actions(0)) > 1:
            action = int(np.argmax(agent.search_policy(state.seat_view(0))))
            followed += agent.searcher.nodes == nodes
        else:
            action = state.legal_actions(0)[0]
        apply_choices(state, {0: action})
    assert state.returns()[0] == 100.0 and followed >= 1


def test_uct_answers_by_the_deadline():
    game = hiddenenvs.load_game("gdl_tictactoe")
    agent = load_agent("uct", "gdl_tictactoe", player=0, seed=0)
    agent.deadline = time.monotonic() + 0.3
    start = time.monotonic()
    agent.search_policy(game.new_initial_state().seat_view(0))
    # Without the deadline it would never stop; the bound is loose because a loaded CI
    # machine may stretch the last iteration and the answer's assembly.
    assert time.monotonic() - start < 30.0


def test_specs_parse_options_and_refuse_bad_ones():
    agent = load_agent("uct:1s,c=10,simultaneous=trees", "gdl_tictactoe")
    assert agent.seconds == 1.0 and agent.searcher.exploration == 10.0
    assert load_agent("alphabeta:6", "gdl_tictactoe").searcher.max_depth == 6
    with_playouts = load_agent("alphabeta:2,playouts=4", "gdl_tictactoe", seed=0)
    root = hiddenenvs.load_game("gdl_tictactoe").new_initial_state()
    assert with_playouts.search_policy(root.seat_view(0)).sum() == 1.0
    assert with_playouts.searcher.playouts == 4
    with pytest.raises(ValueError, match="unknown option 'k=3'"):
        load_agent("uct:1s,k=3", "gdl_tictactoe")
    with pytest.raises(ValueError, match="needs a budget"):
        load_agent("uct", "gdl_tictactoe").search_policy(
            hiddenenvs.load_game("gdl_tictactoe").new_initial_state().seat_view(0)
        )
