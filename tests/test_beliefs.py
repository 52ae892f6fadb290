"""Belief sampling: histories consistent with a player's information state.

The exact posterior (pruned enumeration) is checked against a brute-force walk of the
whole tree; every game's own sampler is checked against the exact posterior with a
chi-square test, under the uniform policy and under a skewed one.
"""

from __future__ import annotations

import zlib
from collections import Counter

import numpy as np
import pytest
from scipy.stats import chisquare

import hiddenenvs
from hiddenenvs.beliefs import (
    consistent_histories,
    history_weight,
    sample_histories,
    sample_history,
    sample_state,
)
from hiddenenvs.game import CHANCE, SIMULTANEOUS, random_playout

CASES = [
    ("kuhn_poker", {}),
    ("leduc_holdem", {}),
    ("goofspiel", {"num_cards": 4, "imp_info": True}),
    (
        "goofspiel",
        {"num_cards": 4, "imp_info": True, "points_order": "random", "returns": "point_difference"},
    ),
    ("liars_dice", {"num_dice": 1, "faces": 4}),
    ("liars_dice", {"num_dice": 2, "faces": 2}),  # own and opponent roll orders hidden
    ("monty_hall", {}),
]
SAMPLES = 3_000


def _ids(cases):
    return [name + "".join(f"-{k}={v}" for k, v in params.items()) for name, params in cases]


def skewed_policy(state, player):
    """A fixed, far-from-uniform policy that depends only on the player's information."""
    key = state.information_state_key(player)
    legal = state.legal_actions(player) if state.is_simultaneous_node() else state.legal_actions()
    weights = np.zeros(state.game.info.num_distinct_actions)
    for action in legal:
        weights[action] = 1 + zlib.crc32(repr((player, key, action)).encode()) % 9
    return weights / weights.sum()


def _decision_keys(game, episodes=6, seed=0):
    """(player, key) of movers along random playouts, the later steps first."""
    rng = np.random.default_rng(seed)
    found = []
    for _ in range(episodes):
        state = game.new_initial_state()
        while not state.is_terminal():
            player = state.current_player()
            if player == CHANCE:
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.integers(len(outcomes))][0])
            elif player == SIMULTANEOUS:
                for mover in state.movers():
                    found.append((mover, state.information_state_key(mover)))
                state.apply_actions(
                    [
                        (int(rng.choice(l)) if l else -1)
                        for l in (state.legal_actions(p) for p in range(game.info.num_players))
                    ]
                )
            else:
                found.append((player, state.information_state_key(player)))
                legal = state.legal_actions()
                state.apply_action(legal[rng.integers(len(legal))])
    unique = list(dict.fromkeys(found))
    unique.sort(key=lambda item: -len(item[1]))
    return unique


def _brute_force_posterior(game, player, key, policy):
    """Walk the whole tree; weigh every history whose key equals ``key``."""
    found = {}
    stack = [(game.new_initial_state(), ())]
    while stack:
        state, history = stack.pop()
        if state.information_state_key(player) == key:
            found[history] = history_weight(game, player, history, policy)
        if state.is_terminal() or len(state.public_state_key()) >= len(key):
            continue
        current = state.current_player()
        if current == CHANCE:
            entries = [a for a, _ in state.chance_outcomes()]
        elif current == SIMULTANEOUS:
            entries = [()]
            for p in range(game.info.num_players):
                entries = [j + (a,) for j in entries for a in (state.legal_actions(p) or [-1])]
        else:
            entries = state.legal_actions()
        for entry in entries:
            child = state.clone()
            child.apply_actions(entry) if isinstance(entry, tuple) else child.apply_action(entry)
            stack.append((child, history + (entry,)))
    total = sum(found.values())
    return {h: w / total for h, w in found.items() if w > 0}


@pytest.mark.parametrize(("name", "params"), CASES, ids=_ids(CASES))
@pytest.mark.parametrize("policy", [None, skewed_policy], ids=["uniform", "skewed"])
def test_exact_posterior_equals_brute_force(name, params, policy):
    game = hiddenenvs.load_game(name, **params)
    for player, key in _decision_keys(game)[:6]:
        exact = dict(consistent_histories(game, player, key, policy))
        brute = _brute_force_posterior(game, player, key, policy)
        assert exact.keys() == brute.keys()
        for history, probability in exact.items():
            assert probability == pytest.approx(brute[history], rel=1e-9)


@pytest.mark.parametrize(("name", "params"), CASES, ids=_ids(CASES))
@pytest.mark.parametrize("policy", [None, skewed_policy], ids=["uniform", "skewed"])
def test_game_sampler_matches_the_exact_posterior(name, params, policy):
    """Chi-square goodness of fit of the game's own sampler against the exact posterior."""
    game = hiddenenvs.load_game(name, **params)
    rng = np.random.default_rng(7)
    tested = 0
    for player, key in _decision_keys(game):
        exact = dict(consistent_histories(game, player, key, policy))
        if len(exact) < 2:
            continue
        _assert_sampler_matches(game, player, key, exact, SAMPLES, rng, policy)
        tested += 1
        if tested == 3:
            break
    assert tested >= 1


def _assert_sampler_matches(game, player, key, exact, samples, rng, policy):
    """The game's sampler draws inside the information set, at the exact posterior (chi-square)."""
    counts = Counter(sample_history(game, player, key, rng, policy) for _ in range(samples))
    assert set(counts) <= set(exact), "sampled a history outside the information set"
    histories = sorted(exact, key=repr)
    observed = np.array([counts[h] for h in histories], dtype=float)
    expected = np.array([exact[h] for h in histories]) * samples
    assert chisquare(observed, expected).pvalue > 1e-4, (key, dict(counts), exact)


def test_sampled_states_share_the_key():
    game = hiddenenvs.load_game("leduc_holdem")
    rng = np.random.default_rng(0)
    for player, key in _decision_keys(game)[:10]:
        state = sample_state(game, player, key, rng)
        assert state.information_state_key(player) == key


def test_inconsistent_keys_and_zero_reach_are_clear_errors():
    game = hiddenenvs.load_game("kuhn_poker")
    with pytest.raises(ValueError, match="no history is consistent with player 0"):
        consistent_histories(game, 0, (("deal", "J"), ("deal", "Q")))
    state = game.state_from_history([0, 1, 1])  # player 0 bet

    def policy(state, player):  # player 0 never opens with a bet
        return [1.0, 0.0] if len(state.information_state_key(player)) == 2 else [0.5, 0.5]

    with pytest.raises(ValueError, match="zero reach"):
        consistent_histories(game, 1, state.information_state_key(1), policy)
    leduc = hiddenenvs.load_game("leduc_holdem")
    leduc_player, leduc_key = _decision_keys(leduc)[0]
    with pytest.raises(ValueError, match="more than 10 states"):
        consistent_histories(leduc, leduc_player, leduc_key, max_nodes=10)


# ---- the GDL-II sampler on games too large to enumerate ---------------------------------------
GDL_GAMES = ["meier", "blind_tictactoe"]


@pytest.mark.parametrize("name", GDL_GAMES)
@pytest.mark.parametrize("policy", [None, skewed_policy], ids=["uniform", "skewed"])
def test_gdl_sampler_matches_the_exact_posterior_where_it_can_be_enumerated(name, policy):
    """Chi-square against the pruned enumeration on the keys small enough for it."""
    game = hiddenenvs.load_game(name)
    wanted = 2 if policy is None else 1  # with a policy every draw runs a forward pass
    rng = np.random.default_rng(11)
    tested = 0
    for player, key in sorted(_decision_keys(game, seed=1), key=lambda item: len(item[1])):
        try:
            enumerated = consistent_histories(game, player, key, policy, max_nodes=5_000)
        except ValueError:  # too large to enumerate
            continue
        exact = dict(enumerated)
        if len(exact) < 3:
            continue
        _assert_sampler_matches(
            game, player, key, exact, 1_500 if policy is None else 1_000, rng, policy
        )
        tested += 1
        if tested == wanted:
            break
    assert tested == wanted


@pytest.mark.parametrize("name", GDL_GAMES + ["kuhn_poker"])
@pytest.mark.parametrize("policy", [None, skewed_policy], ids=["uniform", "skewed"])
def test_batched_draws_equal_single_draws(name, policy):
    """``sample_histories`` (one forward pass for GDL-II) draws what as many
    ``sample_history`` calls draw from the same generator."""
    game = hiddenenvs.load_game(name)
    for player, key in _decision_keys(game, episodes=2, seed=3)[-3:]:
        rng = np.random.default_rng(4)
        single = [sample_history(game, player, key, rng, policy) for _ in range(6)]
        assert sample_histories(game, player, key, np.random.default_rng(4), 6, policy) == single


@pytest.mark.parametrize("name", GDL_GAMES)
@pytest.mark.parametrize("policy", [None, skewed_policy], ids=["uniform", "skewed"])
def test_gdl_sampler_follows_the_longest_keys(name, policy):
    """Late in a game the tree is too large to enumerate; the sampler still returns
    histories with exactly the key."""
    game = hiddenenvs.load_game(name)
    rng = np.random.default_rng(5)
    keys = _decision_keys(game, episodes=4, seed=2)[:4]
    for player, key in keys:
        for _ in range(2):
            state = sample_state(game, player, key, rng, policy)
            assert state.information_state_key(player) == key
    with pytest.raises(ValueError, match="needs more than 3 distinct states"):
        game.sample_consistent_history(*keys[0], rng, policy, max_nodes=3)


# ---- the GDL-II sampler's one pass per key, re-weighted per policy ----------------------------
def _sparse_policy(state, player):
    """``skewed_policy`` with every third action of an information state at zero (one kept)."""
    key = state.information_state_key(player)
    legal = state.legal_actions(player)
    weights = {a: float(zlib.crc32(repr((key, a)).encode()) % 3) for a in legal}
    if not any(weights.values()):
        weights[legal[0]] = 1.0
    total = sum(weights.values())
    return {a: w / total for a, w in weights.items()}


def _other_skewed_policy(state, player):
    """Another full-support policy: ``skewed_policy``'s weights reversed."""
    probabilities = skewed_policy(state, player)
    reversed_weights = np.where(probabilities > 0, 1.0 / np.maximum(probabilities, 1e-12), 0.0)
    return reversed_weights / reversed_weights.sum()


def _posterior_of(posterior):
    """``{history: probability}`` of a weighted forward pass, by walking its steps back."""
    total = sum(posterior.alpha[n] for n in posterior.final)
    found = {}
    stack = [(node, 1.0, ()) for node in posterior.final]
    while stack:
        node, weight, suffix = stack.pop()
        steps = posterior.steps_into(node)
        if not steps:
            found[suffix] = found.get(suffix, 0.0) + weight / total
        for parent, entry, step_weight in steps:
            stack.append((parent, weight * step_weight, (entry,) + suffix))
    return {history: p for history, p in found.items() if p > 0}


def _pass_for(game, player, key, policy, max_nodes=200_000):
    """A forward pass built for ``policy`` alone (its zero moves left out, as every draw
    did before passes were kept per key), weighted under it step by step: the reference."""
    from hiddenenvs.beliefs import action_probability_function
    from hiddenenvs.envs.gdl.game import _ForwardFilter

    probabilities_of = action_probability_function(policy)
    by_others = policy is not None
    return _ForwardFilter(
        game, player, key, max_nodes, by_others, support=probabilities_of if by_others else None
    )._weigh_each(probabilities_of)


@pytest.mark.parametrize("name", GDL_GAMES)
def test_gdl_sampler_reweights_its_kept_pass_exactly(name, monkeypatch):
    """One pass per key serves every policy: re-weighted under policies that change from call
    to call (with and without zeros, and the uniform one), its posterior and its draws from
    a seeded generator equal those of a pass built for each policy alone, and its
    posterior is the exact enumeration's."""
    import hiddenenvs.envs.gdl.game as gdl_game

    built = []  # the passes kept for every policy, by key

    class CountingFilter(gdl_game._ForwardFilter):
        def __init__(self, game, player, target, max_nodes, by_others, support=None, **kwargs):
            if by_others and support is None:
                built.append((player, target))
            super().__init__(game, player, target, max_nodes, by_others, support, **kwargs)

    monkeypatch.setattr(gdl_game, "_ForwardFilter", CountingFilter)
    game = hiddenenvs.load_game(name)
    policies = [skewed_policy, _sparse_policy, _other_skewed_policy, None, skewed_policy]
    keys = [(p, k) for p, k in _decision_keys(game, episodes=3, seed=1) if 3 <= len(k) <= 5]
    assert keys
    for player, key in keys[:3]:
        for policy in policies:
            kept = game._posterior(player, key, policy, 200_000)
            alone = _pass_for(game, player, key, policy)
            if sum(alone.alpha[n] for n in alone.final) == 0.0:  # the sparse policy's zeros
                with pytest.raises(ValueError, match="zero reach"):
                    game.sample_consistent_history(player, key, np.random.default_rng(), policy)
                continue
            posterior = _posterior_of(kept)
            assert posterior == _posterior_of(alone)
            exact = dict(consistent_histories(game, player, key, policy, max_nodes=20_000))
            assert posterior.keys() == exact.keys()
            for history, probability in exact.items():
                assert posterior[history] == pytest.approx(probability, rel=1e-9)
            rng, reference = np.random.default_rng(8), np.random.default_rng(8)
            draws = [game.sample_consistent_history(player, key, rng, policy) for _ in range(10)]
            assert draws == [alone.draw(reference) for _ in range(10)]
    assert sorted(built, key=repr) == sorted(keys[:3], key=repr)  # one pass per key


def test_gdl_sampler_falls_back_to_a_pass_for_the_policy_beyond_the_node_cap():
    """A policy with zeros can need fewer nodes than the pass kept for every policy: with a
    cap between the two, it draws from a pass of its own, as every draw did before."""
    game = hiddenenvs.load_game("blind_tictactoe")
    for player, key in _decision_keys(game, episodes=3, seed=1):
        if len(key) == 7:
            alone = _pass_for(game, player, key, _sparse_policy)
            if alone.final:
                break
    else:
        raise AssertionError("no key of 7 entries that the sparse policy reaches")
    cap = len(alone.forward.states)
    assert cap < len(_pass_for(game, player, key, skewed_policy).forward.states)
    rng, reference = np.random.default_rng(2), np.random.default_rng(2)
    draws = [
        game.sample_consistent_history(player, key, rng, _sparse_policy, cap) for _ in range(5)
    ]
    assert draws == [alone.draw(reference) for _ in range(5)]
    with pytest.raises(ValueError, match=f"needs more than {cap} distinct states"):
        game.sample_consistent_history(player, key, rng, skewed_policy, cap)


def _key_chains(game, seed):
    """(player, keys) of every player along one random playout: its keys at every state
    (a step the game plays by itself adds several entries at once), and every other one of
    them (a seat's key from one decision to its next)."""
    state = game.new_initial_state()
    random_playout(state, np.random.default_rng(seed))
    history = state.history()
    states = [game.state_from_history(history[:length]) for length in range(len(history) + 1)]
    for player in range(game.info.num_players):
        keys = list(dict.fromkeys(s.information_state_key(player) for s in states))
        yield player, keys
        yield player, keys[::2]


# A long playout of each (Meier's 18 entries with forced rolls; blind tic-tac-toe's longest
# take a few seconds more than this one's 12).
@pytest.mark.parametrize(("name", "seed"), [("meier", 2), ("blind_tictactoe", 0)])
def test_gdl_sampler_extends_the_pass_of_a_shorter_key_exactly(name, seed, monkeypatch):
    """A seat's key grows one decision at a time; the pass over a key is the pass over its
    prefix taken on from that one's last two key lengths. Along whole playouts (Meier's
    forced rolls add two entries in one step), every pass so extended has the nodes, steps,
    questions and order of one built from the start, so draws under a policy are the same;
    and the sampler extends the kept pass of the key before rather than starting over."""
    from hiddenenvs.beliefs import action_probability_function
    import hiddenenvs.envs.gdl.game as gdl_game

    game = hiddenenvs.load_game(name)
    extended = 0
    for player, chain in _key_chains(game, seed):
        parent = None
        for key in chain:
            fresh = gdl_game._ForwardFilter(game, player, key, 200_000, by_others=True)
            if parent is not None and parent.can_extend_to(key):
                forward = gdl_game._ForwardFilter(
                    game, player, key, 200_000, by_others=True, extending=parent
                )
                extended += 1
            else:
                forward = fresh
            assert forward.final == fresh.final
            assert forward.lengths == fresh.lengths
            assert forward.out == fresh.out
            assert forward.queries == fresh.queries
            assert forward.expanded == fresh.expanded
            assert [s.history() for s in forward.states] == [s.history() for s in fresh.states]
            if fresh.final:
                probabilities_of = action_probability_function(skewed_policy)
                ours, theirs = forward.weigh(probabilities_of), fresh.weigh(probabilities_of)
                rng, reference = np.random.default_rng(4), np.random.default_rng(4)
                assert [ours.draw(rng) for _ in range(5)] == [
                    theirs.draw(reference) for _ in range(5)
                ]
            parent = forward
    assert extended >= 4

    resumed = []

    class ExtendingFilter(gdl_game._ForwardFilter):
        def __init__(self, *args, extending=None, **kwargs):
            resumed.append(extending is not None)
            super().__init__(*args, extending=extending, **kwargs)

    monkeypatch.setattr(gdl_game, "_ForwardFilter", ExtendingFilter)
    game = hiddenenvs.load_game(name)
    player, chain = next(iter(_key_chains(game, seed)))
    chain = [key for key in chain if key]  # the empty key has no shorter pass to extend
    for key in chain:
        game._policy_filter(player, key, 200_000)
    assert resumed == [False] + [True] * (len(chain) - 1)


def test_the_benchmark_times_extended_passes_equal_to_passes_from_the_start():
    """benchmarks/bench_gdl_beliefs.py --chains: it times the two ways on the same keys and
    stops (AssertionError) where the structures differ."""
    from benchmarks.bench_gdl_beliefs import chain_seconds

    passes, fresh_seconds, extended_seconds = chain_seconds("meier", 3)
    assert passes > 3 and fresh_seconds > 0 and extended_seconds > 0
