"""Goofspiel and II-Goofspiel: rules, exact tree sizes and information sets by brute force,
the fast tree builder against the generic one, OpenSpiel cross-checks, CFR+ convergence."""

import itertools
from collections import defaultdict

import numpy as np
import pytest

import hiddenenvs
from agents.cfr import CFRSolver
from hiddenenvs.analysis import GameTree, TabularPolicy, expected_returns, exploitability
from hiddenenvs.analysis.tree import _build_generic
from hiddenenvs.game import CHANCE, SIMULTANEOUS, TERMINAL


def goofspiel(**params):
    return hiddenenvs.load_game("goofspiel", **params)


# ---- rules ----------------------------------------------------------------------------
def test_a_hand_played_game_scores_by_the_rules():
    game = goofspiel(num_cards=3, points_order="descending", returns="point_difference")
    state = game.new_initial_state()
    assert state.current_player() == SIMULTANEOUS and state.point_cards == [3]
    assert state.legal_actions(0) == [0, 1, 2] and state.movers() == [0, 1]
    state.apply_actions([2, 0])  # 3 beats 1: player 0 takes the 3
    # Point card 3, both bids (public), the next point card 2; nothing private.
    assert state.information_state_key(1) == ((3, None), ((3, 1), None), (2, None))
    assert state.public_state_key() == (3, (3, 1), 2) and state.history() == ((2, 0),)
    state.apply_actions(
        [0, 1]
    )  # 1 loses to 2: player 1 takes the 2; the last round (1 v 3) is forced
    assert state.is_terminal() and state.bids == ([3, 1, 2], [1, 2, 3])
    assert state.scores == [3, 3] and state.returns().tolist() == [0.0, 0.0]
    state = goofspiel(num_cards=3, points_order="ascending").new_initial_state()
    state.apply_actions([1, 1])  # tie on the 1: nobody scores
    state.apply_actions([2, 0])  # player 0 takes the 2, then the 3 is won by player 1 (1 v 3)
    assert state.scores == [2, 3] and state.returns().tolist() == [-1.0, 1.0]


def test_random_deck_draws_point_cards_by_chance():
    state = goofspiel(num_cards=4, points_order="random").new_initial_state()
    assert state.current_player() == CHANCE
    assert state.chance_outcomes() == [(c, 0.25) for c in range(4)]
    state.apply_action(2)
    assert state.point_cards == [3] and state.current_player() == SIMULTANEOUS
    state.apply_actions([0, 3])
    assert state.current_player() == CHANCE and [a for a, _ in state.chance_outcomes()] == [0, 1, 3]


def test_imp_info_hides_the_bids_but_not_the_winner():
    state = goofspiel(num_cards=4, imp_info=True).new_initial_state()
    other = state.clone()
    state.apply_actions([3, 1])
    other.apply_actions([3, 2])  # a different losing bid of player 1
    # Point card 1, player 0 won (public) with its bid 4 (private), next point card 2.
    assert (
        state.information_state_key(0)
        == other.information_state_key(0)
        == ((1, None), (1, 4), (2, None))
    )
    assert state.public_state_key() == other.public_state_key() == (1, 1, 2)
    assert state.information_state_key(1) != other.information_state_key(1)
    assert np.array_equal(state.information_state_tensor(0), other.information_state_tensor(0))
    assert np.array_equal(state.observation_tensor(0), other.observation_tensor(0))


def test_bad_parameters_are_named():
    with pytest.raises(ValueError, match="points_order"):
        goofspiel(points_order="sideways")
    with pytest.raises(ValueError, match="num_cards"):
        goofspiel(num_cards=1)


# ---- brute force: every history by permutations, independent of the game module ----------
def brute_force_decision_points(num_cards, points_order):
    """Every decision point of the sequentialised tree, as plain tuples.

    Yields ``(player, points_so_far, bids_0, bids_1)`` where ``points_so_far`` includes the
    point card of the round being bid on, and the bid tuples hold finished rounds only.
    """
    cards = range(1, num_cards + 1)
    if points_order == "random":
        orders = itertools.permutations(cards)
    else:
        orders = [tuple(cards) if points_order == "ascending" else tuple(reversed(cards))]
    seen = set()
    for order in orders:
        for rounds in range(num_cards - 1):  # the last round is forced
            for own in itertools.permutations(cards, rounds):
                for other in itertools.permutations(cards, rounds):
                    for player in (0, 1):
                        point = (player, order[: rounds + 1], own, other)
                        if point not in seen:
                            seen.add(point)
                            yield point


def result(mine, theirs):
    return 1 if mine > theirs else -1 if mine < theirs else 0


def brute_force_sizes(num_cards, points_order, imp_info):
    """(number of nodes, terminals, player 0's and player 1's information sets)."""
    n = num_cards
    decision_nodes = 0
    infosets = [set(), set()]
    for player, points, bids_0, bids_1 in brute_force_decision_points(n, points_order):
        # Player 1's node follows each of player 0's pending bids.
        decision_nodes += 1 if player == 0 else n - len(bids_0)
        own, other = (bids_0, bids_1) if player == 0 else (bids_1, bids_0)
        seen = tuple(map(result, own, other)) if imp_info else other
        infosets[player].add((points, own, seen))
    terminals = 1
    for k in range(2, n + 1):
        terminals *= k * k * (k if points_order == "random" else 1)
    # Chance nodes: one per distinct point prefix paired with bid histories, before each draw.
    chance_nodes = 0
    if points_order == "random":
        for rounds in range(n - 1):
            prefixes = 1
            for k in range(n, n - rounds, -1):
                prefixes *= k * k * k
            chance_nodes += prefixes
    return decision_nodes + chance_nodes + terminals, terminals, len(infosets[0]), len(infosets[1])


CONFIGS = [
    (n, order, imp)
    for n in (2, 3, 4)
    for order in ("ascending", "descending", "random")
    for imp in (False, True)
    if not (n == 4 and order == "random")
]


@pytest.mark.parametrize("num_cards, points_order, imp_info", CONFIGS)
def test_tree_sizes_and_infoset_counts_match_brute_force(num_cards, points_order, imp_info):
    game = goofspiel(num_cards=num_cards, points_order=points_order, imp_info=imp_info)
    tree = GameTree.build(game)
    nodes, terminals, infosets_0, infosets_1 = brute_force_sizes(num_cards, points_order, imp_info)
    assert (tree.num_nodes, tree.num_terminals) == (nodes, terminals)
    assert int((tree.infoset_player == 0).sum()) == infosets_0
    assert int((tree.infoset_player == 1).sum()) == infosets_1


def test_known_sizes():
    """Closed forms: (N!)^2 terminals for a fixed order, times N! for a random deck."""
    assert GameTree.build(goofspiel(num_cards=4)).num_terminals == 24**2
    assert GameTree.build(goofspiel(num_cards=3, points_order="random")).num_terminals == 6**3
    # Full information: each of player 0's decisions is its own information set.
    tree = GameTree.build(goofspiel(num_cards=4))
    assert int((tree.infoset_player == 0).sum()) == 1 + 16 + 16 * 9


def opponent_bids_by_infoset(tree):
    """{infoset: set of opponent bid sequences (finished rounds) over its histories}."""
    groups = defaultdict(set)
    for node in np.flatnonzero(tree.infoset >= 0):
        player = tree.actor[node]
        edges = [int(tree.edge_action[n]) for n in tree.path(int(node))[1:]]
        # Sequentialised rounds: player 0's bid then player 1's (no chance: fixed order).
        bids = (edges[0::2], edges[1::2])
        finished = len(bids[1])
        groups[int(tree.infoset[node])].add(tuple(b + 1 for b in bids[1 - player][:finished]))
    return groups


@pytest.mark.parametrize(
    "num_cards, points_order", [(3, "ascending"), (4, "ascending"), (4, "descending")]
)
def test_ii_goofspiel_infosets_are_exactly_the_consistent_opponent_hands(num_cards, points_order):
    """Every information set holds exactly the opponent bid sequences consistent with the
    player's own bids and the observed winners (brute force over permutations)."""
    tree = GameTree.build(goofspiel(num_cards=num_cards, points_order=points_order, imp_info=True))
    groups = opponent_bids_by_infoset(tree)
    checked = 0
    for infoset, (player, key) in enumerate(tree.infoset_keys):
        # Steps alternate point card, round; a round's entry is (sign of bid_0 - bid_1, own bid).
        own = tuple(bid for _, bid in key[1::2])
        observed = tuple(sign if player == 0 else -sign for sign, _ in key[1::2])
        finished = len(own)
        consistent = {
            other
            for other in itertools.permutations(range(1, num_cards + 1), finished)
            if tuple(map(result, own, other)) == observed
        }
        assert groups[infoset] == consistent, (player, key)
        checked += len(consistent) > 1
    assert checked > 0  # some information sets really hold several opponent hands


@pytest.mark.parametrize("num_cards, points_order, imp_info", CONFIGS + [(4, "random", True)])
def test_fast_builder_equals_the_generic_builder(num_cards, points_order, imp_info):
    game = goofspiel(num_cards=num_cards, points_order=points_order, imp_info=imp_info)
    fast, generic = game.build_game_tree(), _build_generic(game)
    for field in (
        "parent",
        "depth",
        "actor",
        "edge_action",
        "chance_probability",
        "terminal_returns",
    ):
        assert np.array_equal(getattr(fast, field), getattr(generic, field)), field

    # Information sets: the same key at every node, the same legal actions per key.
    def keys(tree):
        return [tree.infoset_keys[i] if i >= 0 else None for i in tree.infoset]

    assert keys(fast) == keys(generic)
    legal = {
        key: generic.infoset_legal_actions(i).tolist() for i, key in enumerate(generic.infoset_keys)
    }
    assert {
        key: fast.infoset_legal_actions(i).tolist() for i, key in enumerate(fast.infoset_keys)
    } == legal
    assert np.array_equal(fast.slot_action[fast.edge_slot], generic.slot_action[generic.edge_slot])


def test_tensors_are_equal_exactly_within_information_sets():
    game = goofspiel(num_cards=3, points_order="random", imp_info=True)
    tensors = defaultdict(set)
    stack = [game.new_initial_state()]
    while stack:
        state = stack.pop()
        player = state.current_player()
        if player == TERMINAL:
            continue
        if player == CHANCE:
            stack.extend(state.child(a) for a, _ in state.chance_outcomes())
            continue
        for p in (0, 1):
            tensors[(p, state.information_state_key(p))].add(
                state.information_state_tensor(p).tobytes()
            )
        for joint in itertools.product(state.legal_actions(0), state.legal_actions(1)):
            child = state.clone()
            child.apply_actions(list(joint))
            stack.append(child)
    assert all(len(group) == 1 for group in tensors.values())
    assert len({next(iter(group)) for group in tensors.values()}) == len(tensors)


# ---- OpenSpiel as an independent reference -----------------------------------------------
def spiel_goofspiel(pyspiel, num_cards, points_order, imp_info, returns="win_loss"):
    return pyspiel.load_game(
        "goofspiel",
        {
            "num_cards": num_cards,
            "points_order": points_order,
            "imp_info": imp_info,
            "returns_type": returns,
        },
    )


@pytest.mark.parametrize(
    "num_cards, points_order, imp_info",
    [(3, "random", False), (3, "random", True)]
    + [(4, order, imp) for order in ("ascending", "descending") for imp in (False, True)],
)
def test_uniform_exploitability_equals_openspiel(num_cards, points_order, imp_info):
    pyspiel = pytest.importorskip("pyspiel")
    spiel_game = pyspiel.convert_to_turn_based(
        spiel_goofspiel(pyspiel, num_cards, points_order, imp_info)
    )
    expected = pyspiel.exploitability(spiel_game, pyspiel.UniformRandomPolicy(spiel_game))
    tree = GameTree.build(
        goofspiel(num_cards=num_cards, points_order=points_order, imp_info=imp_info)
    )
    assert exploitability(tree, TabularPolicy.uniform(tree)) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("returns", ["win_loss", "point_difference"])
def test_random_trajectories_equal_openspiel(returns):
    pyspiel = pytest.importorskip("pyspiel")
    spiel_game = spiel_goofspiel(pyspiel, 5, "random", True, returns)
    game = goofspiel(num_cards=5, points_order="random", imp_info=True, returns=returns)
    rng = np.random.default_rng(0)
    for _ in range(100):
        state, spiel_state = play_alongside_openspiel(game, spiel_game, rng)
        # OpenSpiel's point_difference is points minus the mean of both: half the difference.
        scale = 2.0 if returns == "point_difference" else 1.0
        assert state.is_terminal() and state.returns().tolist() == [
            scale * r for r in spiel_state.returns()
        ]


def play_alongside_openspiel(game, spiel_game, rng):
    """One random game played on ours and on pyspiel's at once, checking the chance outcomes
    and both players' legal actions at every node; returns both final states."""
    state, spiel_state = game.new_initial_state(), spiel_game.new_initial_state()
    while not spiel_state.is_terminal():
        assert not state.is_terminal()
        if spiel_state.is_chance_node():
            assert state.chance_outcomes() == spiel_state.chance_outcomes()
            action = int(rng.choice(state.legal_actions()))
            state.apply_action(action)
            spiel_state.apply_action(action)
            continue
        joint = []
        for p in (0, 1):
            assert state.legal_actions(p) == spiel_state.legal_actions(p)
            joint.append(int(rng.choice(state.legal_actions(p))))
        state.apply_actions(joint)
        spiel_state.apply_actions(joint)
    return state, spiel_state


# ---- exact analysis: uniform exploitability and CFR+ convergence -------------------------
@pytest.mark.parametrize(
    "num_cards, points_order, imp_info",
    [
        (3, "ascending", False),
        (3, "descending", True),
        (4, "ascending", False),
        (4, "ascending", True),
        (4, "descending", False),
        (4, "descending", True),
        (3, "random", True),
    ],
)
def test_cfr_plus_converges(num_cards, points_order, imp_info):
    game = goofspiel(num_cards=num_cards, points_order=points_order, imp_info=imp_info)
    tree = GameTree.build(game)
    uniform = exploitability(tree, TabularPolicy.uniform(tree))
    assert uniform > 0.5
    solver = CFRSolver(tree, variant="cfr+")
    history = []
    for iterations in (10, 40, 150):
        solver.iterate(iterations - solver.iteration)
        history.append(solver.exploitability())
    assert history[0] < uniform and history[2] < history[1] / 2 < history[0] / 4
    assert history[-1] < 0.005
    # The game is symmetric, so its value is 0.
    assert expected_returns(tree, solver.average_policy()) == pytest.approx([0.0, 0.0], abs=0.01)


def test_exact_tools_handle_goofspiel_5_with_a_fixed_order():
    """N = 5 through the fast builder (a random deck is the benchmark's job)."""
    tree = GameTree.build(goofspiel(num_cards=5, imp_info=True))
    assert tree.num_terminals == 120**2
    assert exploitability(tree, TabularPolicy.uniform(tree)) > 0.5


def test_exact_tools_handle_goofspiel_5_with_a_random_deck():
    """The feature-importance setting: 3.3 million histories through the fast builder.

    0.8015277... is OpenSpiel's exploitability of the uniform policy on
    ``convert_to_turn_based(goofspiel(num_cards=5, points_order=random))`` (about two
    minutes of C++; benchmarks/bench_goofspiel_exploitability.py measures it again).
    """
    tree = GameTree.build(goofspiel(num_cards=5, points_order="random"))
    assert (tree.num_nodes, tree.num_terminals, tree.num_infosets) == (3_346_656, 120**3, 913_010)
    assert exploitability(tree, TabularPolicy.uniform(tree)) == pytest.approx(
        0.8015277777777778, abs=1e-12
    )


# ---- beliefs: the game's own sampler ------------------------------------------------------
def test_ii_goofspiel_sampler_is_uniform_over_the_consistent_opponent_bids():
    """N = 6, uniform policy: every opponent bid sequence consistent with the observed
    winners and one's own bids is equally likely; the consistent set comes from brute force
    over permutations (independent of the sampler), and a chi-square test checks the draws."""
    from scipy.stats import chisquare

    from hiddenenvs.beliefs import sample_history

    game = goofspiel(num_cards=6, imp_info=True, points_order="random")
    rng = np.random.default_rng(3)
    tested = 0
    for seed in range(4):
        state = game.new_initial_state()
        play = np.random.default_rng(seed)
        for _ in range(4):  # four rounds: at most 6 * 5 * 4 * 3 opponent sequences
            state.apply_action(int(play.choice(state.legal_actions())))
            state.apply_actions([int(play.choice(state.legal_actions(p))) for p in (0, 1)])
        state.apply_action(int(play.choice(state.legal_actions())))
        for player in (0, 1):
            key = state.information_state_key(player)
            own = state.bids[player]
            observed = [result(mine, theirs) for mine, theirs in zip(own, state.bids[1 - player])]
            consistent = sorted(
                other
                for other in itertools.permutations(range(1, 7), 4)
                if [result(mine, theirs) for mine, theirs in zip(own, other)] == observed
            )
            draws = [sample_history(game, player, key, rng) for _ in range(40 * len(consistent))]
            counts = defaultdict(int)
            for history in draws:
                sampled = game.state_from_history(history)
                assert sampled.information_state_key(player) == key  # winners respected exactly
                counts[tuple(sampled.bids[1 - player])] += 1
            assert set(counts) <= set(consistent)
            if len(consistent) > 1:
                observed_counts = [counts[other] for other in consistent]
                assert chisquare(observed_counts).pvalue > 1e-4
                tested += 1
    assert tested > 0


@pytest.mark.parametrize("points_order", ["ascending", "random"])
def test_perfect_information_goofspiel_sampler_returns_the_history(points_order):
    from hiddenenvs.beliefs import sample_history

    game = goofspiel(num_cards=5, points_order=points_order, returns="point_difference")
    rng = np.random.default_rng(0)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(int(rng.choice(state.legal_actions())))
        else:
            for player in (0, 1):
                assert (
                    sample_history(game, player, state.information_state_key(player), rng)
                    == state.history()
                )
            state.apply_actions([int(rng.choice(state.legal_actions(p))) for p in (0, 1)])
    assert sample_history(game, 1, state.information_state_key(1), rng) == state.history()


def test_ii_goofspiel_sampler_rejects_an_impossible_key():
    from hiddenenvs.beliefs import sample_history

    game = goofspiel(num_cards=4, imp_info=True)
    # Player 0 bid the 4 and lost: no opponent bid beats it.
    with pytest.raises(ValueError, match="no history is consistent with player 0"):
        sample_history(game, 0, ((1, None), (-1, 4), (2, None)), np.random.default_rng(0))
