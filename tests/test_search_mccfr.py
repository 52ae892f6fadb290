"""MCCFR, OOS and IS-MCTS (agents/search): convergence on Kuhn, unbiased targeted sampling, specs."""

from __future__ import annotations

import numpy as np
import pytest

import hiddenenvs
from agents.specs import load_agent
from agents.cfr import CFRSolver
from agents.config import ConfigError
from agents.search._tree_mccfr import CompiledTree
from agents.search.mccfr_trainer import MCCFRConfig
from agents.search.external_sampling_mccfr import ExternalSamplingMCCFR
from agents.search.oos import OOS, answer_rollouts, uniform_rollout
from agents.search.outcome_sampling_mccfr import OutcomeSamplingMCCFR
from hiddenenvs.analysis import GameTree, TabularPolicy, exploitability
from hiddenenvs.analysis.exploitability import (
    counterfactual_reach,
    edge_probabilities,
    node_values,
    reach_probabilities,
)


@pytest.mark.parametrize("backend", ["tree", "model"])
@pytest.mark.parametrize("solver_class", [ExternalSamplingMCCFR, OutcomeSamplingMCCFR])
def test_mccfr_converges_on_kuhn(solver_class, backend):
    solver = solver_class(hiddenenvs.load_game("kuhn_poker"), seed=0, backend=backend)
    assert solver.backend == backend
    solver.iterate(20000)
    assert solver.exploitability() < 0.01


@pytest.mark.parametrize("backend", ["tree", "model"])
def test_external_sampling_on_simultaneous_moves_finds_biased_rps_equilibrium(backend):
    solver = ExternalSamplingMCCFR(hiddenenvs.load_game("biased_rps"), seed=0, backend=backend)
    solver.iterate(5000)
    for row in solver.average_table().values():
        np.testing.assert_allclose(row, [0.4, 0.4, 0.2], atol=0.03)


@pytest.mark.parametrize("game_name", ["kuhn_poker", "leduc_holdem"])
@pytest.mark.parametrize("solver_class", [ExternalSamplingMCCFR, OutcomeSamplingMCCFR])
def test_compiled_tree_path_draws_the_samples_of_the_model_path(solver_class, game_name):
    """On a turn-based game both backends consume the generator in the same order, so
    one seed gives the same regrets and averages: the compiled traversal computes the
    module docstring's updates, not an approximation of them."""
    game = hiddenenvs.load_game(game_name)
    tree_solver = solver_class(game, seed=7, backend="tree")
    model_solver = solver_class(game, seed=7, backend="model")
    tree_solver.iterate(300)
    model_solver.iterate(300)
    tree = GameTree.build(game)
    for strategy in ("average", "current"):
        np.testing.assert_allclose(
            tree_solver.tables.tabular_policy(tree, strategy).slot_probabilities,
            model_solver.tables.tabular_policy(tree, strategy).slot_probabilities,
            rtol=1e-9,
            atol=1e-12,
        )
    assert not np.allclose(
        tree_solver.tables.tabular_policy(tree).slot_probabilities,
        TabularPolicy.uniform(tree).slot_probabilities,
    )  # the runs did learn


@pytest.mark.parametrize("backend", ["tree", "model"])
@pytest.mark.parametrize(
    "solver_class, iterations, bound",
    [(ExternalSamplingMCCFR, 2000, 0.05), (OutcomeSamplingMCCFR, 10000, 0.2)],
)
def test_mccfr_converges_on_a_one_player_game_with_a_random_role(
    solver_class, iterations, bound, backend
):
    """Monty Hall has one player (the candidate) and chance (the host). With no other player
    to average the candidate's strategy at its nodes, the average stayed uniform and the
    exploitability at 16.667 (the value of switching never learned); CFR+ solves the same tree."""
    game = hiddenenvs.load_game("monty_hall")
    solver = solver_class(game, seed=0, backend=backend)
    assert solver.exploitability() == pytest.approx(50 / 3)
    solver.iterate(iterations)
    assert solver.exploitability() < bound
    reference = CFRSolver(game, variant="cfr+")
    reference.iterate(200)
    assert reference.exploitability() < 1e-3


@pytest.mark.parametrize("backend", ["tree", "model"])
def test_oos_converges_on_a_one_player_game(backend):
    game = hiddenenvs.load_game("monty_hall")
    tree = GameTree.build(game)
    search = OOS(game, 0, epsilon=0.6, seed=0, backend=backend)
    search.search((), iterations=5000)
    assert exploitability(tree, search.tables.tabular_policy(tree)) < 0.5


def test_outcome_sampling_on_leduc_below_a_tenth_within_a_million_iterations():
    solver = OutcomeSamplingMCCFR(hiddenenvs.load_game("leduc_holdem"), seed=0)
    assert solver.backend == "tree"
    solver.iterate(1_000_000)
    assert solver.exploitability() < 0.1


def test_tree_backend_checkpoint_resumes_to_the_same_tables():
    game = hiddenenvs.load_game("leduc_holdem")
    straight = OutcomeSamplingMCCFR(game, seed=3, backend="tree")
    straight.iterate(2000)
    first = OutcomeSamplingMCCFR(game, seed=3, backend="tree")
    first.iterate(1000)
    resumed = OutcomeSamplingMCCFR(game, seed=99, backend="tree")
    resumed.load_state_dict(first.state_dict())
    resumed.iterate(1000)
    np.testing.assert_array_equal(resumed.tables.regret, straight.tables.regret)
    np.testing.assert_array_equal(resumed.tables.average, straight.tables.average)
    with pytest.raises(ValueError, match="'tree' MCCFR backend"):
        OutcomeSamplingMCCFR(game, seed=3, backend="model").load_state_dict(first.state_dict())


def test_bad_backend_and_exploration_are_refused():
    game = hiddenenvs.load_game("kuhn_poker")
    with pytest.raises(ValueError, match="backend must be one of"):
        ExternalSamplingMCCFR(game, backend="cython")
    with pytest.raises(ValueError, match="exploration"):
        OutcomeSamplingMCCFR(game, exploration=0.0)
    with pytest.raises(ConfigError, match="trainer.params.backend"):
        MCCFRConfig(backend="cython")
    with pytest.raises(
        ValueError, match="24 infoset-action slots"
    ):  # arrays that do not fit the tree
        CompiledTree(GameTree.build(game), np.zeros(3), np.zeros(3), np.random.default_rng(0))


def test_oos_with_the_root_as_target_converges_like_os_mccfr():
    game = hiddenenvs.load_game("kuhn_poker")
    tree = GameTree.build(game)
    search = OOS(game, 0, epsilon=0.6, seed=0)
    search.search((), iterations=40000)
    assert exploitability(tree, search.tables.tabular_policy(tree)) < 0.02


@pytest.mark.parametrize(
    "game_name, searches, targeting",
    [
        ("kuhn_poker", [((), 0, 300), ([2, 0], 0, 200), ([2, 0, 0, 1], 0, 200)], "ist"),
        ("kuhn_poker", [((), 0, 300), ([2, 0], 0, 200), ([2, 0, 0, 1], 0, 200)], "pst"),
        ("leduc_holdem", [((), 0, 200), ([1, 2], 0, 200), ([1, 2, 1, 1, 2], 0, 300)], "ist"),
        ("leduc_holdem", [((), 0, 200), ([1, 2], 0, 200), ([1, 2, 1, 2], 0, 300)], "pst"),
    ],
)
def test_oos_tree_backend_draws_the_samples_of_the_model_path(game_name, searches, targeting):
    """On turn-based games where no target-consistent prefix is a dead end (the
    searcher dealt first; no public board card under PST), the compiled OOS consumes
    the generator as the model path does: one seed, a match's sequence of searches, the
    same regrets, averages and target misses."""
    game = hiddenenvs.load_game(game_name)
    tree = GameTree.build(game)
    runs = [
        OOS(game, 0, seed=5, targeting=targeting, backend=backend) for backend in ("tree", "model")
    ]
    for history, player, iterations in searches:
        key = game.state_from_history(history).information_state_key(player) if history else ()
        for search in runs:
            search.search(key, iterations=iterations)
    compiled, model = runs
    for strategy in ("average", "current"):
        np.testing.assert_allclose(
            compiled.tables.tabular_policy(tree, strategy).slot_probabilities,
            model.tables.tabular_policy(tree, strategy).slot_probabilities,
            atol=1e-12,
        )
    assert compiled.missed_targets == model.missed_targets
    assert int(compiled.in_table.sum()) == len(model.tables)
    key = game.state_from_history(searches[-1][0]).information_state_key(0)
    np.testing.assert_allclose(
        compiled.policy(key, (0, 1, 2)), model.policy(key, (0, 1, 2)), atol=1e-12
    )


def test_oos_tree_restoration_matches_the_model_path():
    game = hiddenenvs.load_game("leduc_holdem")
    tree = GameTree.build(game)
    key = game.state_from_history([1, 2, 1, 1, 2, 2]).information_state_key(
        1
    )  # K, board K, facing a raise
    runs = [OOS(game, 1, delta=0.0, seed=0, backend=backend) for backend in ("tree", "model")]
    for search in runs:
        search.search(key, iterations=2)
        search.search(key, iterations=60)
    assert [search.restored_searches for search in runs] == [1, 1]
    np.testing.assert_allclose(
        runs[0].tables.tabular_policy(tree).slot_probabilities,
        runs[1].tables.tabular_policy(tree).slot_probabilities,
        atol=1e-12,
    )


def test_oos_tree_target_marks_are_exact():
    """Kuhn, player 1 holding the King and facing a bet: the target's histories are J-K
    and Q-K after a bet; every marked node lies on a path to one of them, so a deal of
    the King to player 0 (consistent with player 1's key so far, a dead end for the
    model path's key-prefix test) is not marked."""
    game = hiddenenvs.load_game("kuhn_poker")
    search = OOS(game, 1, seed=0, backend="tree")
    tree = search.tree
    search._mark_target(game.state_from_history([0, 2, 1]).information_state_key(1))
    mark = search._target_mark
    targets = np.flatnonzero(mark == 2)
    assert sorted(tuple(tree.edge_action[tree.path(n)[1:]]) for n in targets) == [
        (0, 2, 1),
        (1, 2, 1),
    ]
    above = {node for target in targets for node in tree.path(target)[:-1]}
    assert set(np.flatnonzero(mark == 1)) == above
    king_to_player_0 = (
        tree.path(int(targets[0]))[1] + 2 - int(tree.edge_action[tree.path(int(targets[0]))[1]])
    )
    assert tree.edge_action[king_to_player_0] == 2 and mark[king_to_player_0] == 0


def test_oos_refuses_what_its_backend_cannot_do():
    game = hiddenenvs.load_game("kuhn_poker")
    with pytest.raises(ValueError, match="rollout policy needs backend 'model'"):
        OOS(
            game,
            0,
            backend="tree",
            rollout_policy=lambda states, players, masks: masks / masks.sum(1, keepdims=True),
        )
    search = OOS(game, 0, backend="tree")
    with pytest.raises(ValueError, match="not an information set of player 0"):
        search.search(game.state_from_history([0, 2, 1]).information_state_key(1), iterations=10)


def _exact_regrets(tree, policy, player):
    edges = edge_probabilities(tree, policy.slot_probabilities)
    reach = reach_probabilities(tree, edges)
    values = node_values(tree, edges)
    children = tree.player_child_nodes[player]
    parents = tree.parent[children]
    return np.bincount(
        tree.edge_slot[children],
        weights=counterfactual_reach(reach, player)[parents]
        * (values[children, player] - values[parents, player]),
        minlength=tree.num_slots,
    )


def test_targeted_oos_regret_samples_are_unbiased_on_kuhn():
    """With the strategies frozen, the mean sampled regret of every infoset-action equals
    the exact counterfactual regret within sampling error, though 90% of the samples are
    biased towards one information set."""
    game = hiddenenvs.load_game("kuhn_poker")
    tree = GameTree.build(game)
    search = OOS(game, 0, seed=1, backend="model")
    search.search((), iterations=300)  # every information set in the table, strategies not uniform
    assert len(search.tables) == tree.num_infosets
    target = game.state_from_history([2, 0, 0, 1]).information_state_key(
        0
    )  # K, passed, facing a bet
    search.search(target, iterations=0)
    frozen = search.tables.state_dict()
    policy = search.tables.tabular_policy(tree, "current")
    slot_of = {
        (key, a): tree.infoset_slot_start[i] + k
        for i, key in enumerate(tree.infoset_keys)
        for k, a in enumerate(tree.infoset_legal_actions(i))
    }
    samples = 6000
    for player in range(2):
        increments = np.zeros((samples, tree.num_slots))
        for n in range(samples):
            search.tables.load_state_dict(frozen)
            biased = search.rng.random() < search.delta
            answer_rollouts(
                search._walk(
                    game.new_initial_state(), player, [1.0, 1.0, 1.0], 1.0, 1.0, False, biased, True
                ),
                uniform_rollout,
            )
            for key, entry in search.tables.entries.items():
                if key[0] == player:
                    for k, action in enumerate(entry.legal):
                        increments[n, slot_of[(key, action)]] = entry.regret[k] - frozen[key][1][k]
        exact = _exact_regrets(tree, policy, player)
        slots = np.flatnonzero(tree.infoset_player[tree.slot_infoset] == player)
        mean = increments[:, slots].mean(axis=0)
        error = increments[:, slots].std(axis=0) / np.sqrt(samples)
        assert np.all(np.abs(mean - exact[slots]) <= 4.5 * error + 1e-9), (
            mean,
            exact[slots],
            error,
        )


@pytest.mark.parametrize(
    "spec", ["es-mccfr:200", "os-mccfr:500", "oos:300", "oos:0.05s", "ismcts:300"]
)
def test_search_specs_resolve_and_play_legal_moves(spec):
    game = hiddenenvs.load_game("kuhn_poker")
    agent = load_agent(spec, "kuhn_poker", player=1, seed=0)
    state = game.state_from_history([0, 2, 1])  # player 1 holds the King, facing a bet
    probabilities = agent.policy_probabilities(
        state.information_state_tensor(1), state.legal_actions_mask(1), state.seat_view(1)
    )
    assert (
        probabilities.sum() == pytest.approx(1.0) and probabilities[1] > 0.5
    )  # calls with the King


def test_bad_search_budget_is_refused_with_the_spec_named():
    with pytest.raises(ValueError, match="oos:fast"):
        load_agent("oos:fast", "kuhn_poker")


@pytest.mark.parametrize("backend", ["tree", "model"])
def test_oos_restores_a_lost_target_from_the_belief_sampler(backend):
    """Untargeted (delta 0) with a two-iteration budget, the incremental tree cannot have
    grown down to a second-round information set by half the budget: the search counts
    a restoration, and the restored iteration, started from a belief-sampled history,
    puts the searcher's information set in the table."""
    game = hiddenenvs.load_game("leduc_holdem")
    key = game.state_from_history([1, 2, 1, 1, 2, 2]).information_state_key(
        1
    )  # K, board K, facing a raise
    search = OOS(game, 1, delta=0.0, seed=0, backend=backend)
    search.search(key, iterations=2)
    assert search.restored_searches == 1
    assert search.in_tables(1, key)
    search.search(key, iterations=2)  # the target is in the table now: nothing to restore
    assert search.restored_searches == 1


@pytest.mark.parametrize("backend", ["tree", "model"])
@pytest.mark.parametrize("history, best_action", [([0, 2, 1], 1), ([2, 0, 1], 0)])
def test_restored_iterations_solve_the_subgame_below_the_target(history, best_action, backend):
    """Iterations started from belief samples at Kuhn's player 1 facing a bet: call with
    the King (it always wins), fold with the Jack (it always loses)."""
    game = hiddenenvs.load_game("kuhn_poker")
    key = game.state_from_history(history).information_state_key(1)
    search = OOS(game, 1, seed=0, backend=backend)
    for _ in range(300):
        answer_rollouts(search._restored_iteration_steps(key), uniform_rollout)
    assert search.policy(key, (0, 1))[best_action] > 0.9


def test_restoration_survives_an_observed_move_the_current_strategy_never_plays():
    """Player 0's current strategy never bets (all regret on passing), yet player 1 has
    seen a bet: the belief sampler's model mixes in gamma of uniform, so the true
    histories keep positive reach and the restored iteration runs."""
    game = hiddenenvs.load_game("kuhn_poker")
    search = OOS(game, 1, seed=0, backend="model")
    for card in (0, 1):  # player 0 holding J or Q, first decision
        state = game.state_from_history([card, 2])
        search.tables.entry(state, 0).regret[:] = [1.0, -1.0]
    key = game.state_from_history([0, 2, 1]).information_state_key(1)  # K, facing a bet
    answer_rollouts(search._restored_iteration_steps(key), uniform_rollout)
    assert (1, key) in search.tables.entries
