"""OOS's model path keeps what it computed (agents/search/oos.py): its children's target
views per node (``ChildViews``) and the belief sampler's strategies between their changes;
the same searches, draw for draw, as when it played every child at every visit and asked
the tables at every draw."""

from __future__ import annotations

import numpy as np
import pytest

import hiddenenvs
from agents.search.oos import OOS, ChildViews, child_views_of
from hiddenenvs.game import CHANCE


def key_after(game, player: int, decisions: int, seed: int) -> tuple:
    """``player``'s key at its decision number ``decisions`` of a seeded uniform game (the
    first game from ``seed`` on that lasts that long)."""
    rng = np.random.default_rng(seed)
    state, seen = game.new_initial_state(), 0
    while not state.is_terminal():
        if state.current_player() == CHANCE:
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[rng.integers(len(outcomes))][0])
            continue
        if player in state.movers():
            if seen == decisions:
                return state.information_state_key(player)
            seen += 1
        state.apply_actions(
            [
                int(rng.choice(state.legal_actions(p))) if state.legal_actions(p) else -1
                for p in range(game.info.num_players)
            ]
        )
    return key_after(game, player, decisions, seed + 1)


# Recorded from the code that cloned and played every child at every visit (commit
# 6019a0e): (game, player, decision, targeting, reweighting, delta, iterations) -> (tables'
# information sets, missed targets, restored searches, the generator's next draw, the
# average strategy's positive entries at the key). delta 0: no biased sample, so the
# target is restored from the belief sampler.
RECORDED = [
    (
        ("blind_tictactoe", 0, 2, "ist", "none", 0.9, 40),
        (
            90,
            3,
            0,
            0.3970959187055011,
            [0.01075095244, 0.776054306142, 0.151723532698, 0.06147120872],
        ),
    ),
    (
        ("blind_tictactoe", 0, 4, "ist", "ema", 0.9, 60),
        (
            116,
            61,
            0,
            0.038122755700485955,
            [0.4987266901, 0.011373421143, 0.066464165135, 0.141521554082, 0.281914169541],
        ),
    ),
    (
        ("meier", 0, 2, "ist", "none", 0.9, 60),
        (
            83,
            12,
            0,
            0.9413715629082753,
            [0.003246777647, 0.03065885151, 0.911976943035, 0.054117427809],
        ),
    ),
    (
        ("blind_tictactoe", 1, 3, "ist", "none", 0.0, 30),
        (
            75,
            0,
            1,
            0.24054434336811614,
            [0.022222222222, 0.387578019041, 0.196838751675, 0.106995376729, 0.264143408111]
            + [0.022222222222],
        ),
    ),
    (
        ("meier", 0, 2, "ist", "none", 0.0, 40),
        (64, 0, 1, 0.30531531452703853, [0.425684592891, 0.10143553813, 0.472879868979]),
    ),
]


@pytest.mark.parametrize(("search_case", "recorded"), RECORDED)
def test_targeted_search_is_the_one_recorded_before_views_were_kept(search_case, recorded):
    name, player, decision, targeting, reweighting, delta, iterations = search_case
    game = hiddenenvs.load_game(name)
    key = key_after(game, player, decision, 7)
    search = OOS(
        game,
        player,
        delta=delta,
        seed=3,
        backend="model",
        targeting=targeting,
        reweighting=reweighting,
    )
    search.search(key, iterations=iterations)
    entries, missed, restored, next_draw, policy = recorded
    assert len(search.tables.entries) == entries
    assert (search.missed_targets, search.restored_searches) == (missed, restored)
    assert search.rng.random() == next_draw  # the same number of draws, in the same order
    found = search.policy(key, tuple(range(game.info.num_distinct_actions)))
    np.testing.assert_allclose(found[found > 0], policy, rtol=0, atol=1e-11)


@pytest.mark.parametrize(
    ("name", "player", "targeting", "all_consistent"),
    # blind tic-tac-toe has no public percepts: under PST every child is consistent
    [
        ("blind_tictactoe", 0, "ist", False),
        ("blind_tictactoe", 1, "pst", True),
        ("meier", 1, "pst", False),
    ],
)
def test_kept_views_answer_as_playing_every_child(
    monkeypatch, name, player, targeting, all_consistent
):
    """Every question the walk asks, answered from the kept suffixes and by playing each
    child and testing its view against the target, through a match of searches."""
    game = hiddenenvs.load_game(name)
    search = OOS(game, player, seed=5, backend="model", targeting=targeting)
    asked = []
    kept_answer = OOS._consistent_children

    def checked(self, state, choices, play):
        answer = kept_answer(self, state, choices, play)
        played = []
        for choice in choices:
            child = state.clone()
            play(child, choice)
            played.append(self._consistent(child))
        assert answer == played
        asked.extend(answer)
        return answer

    monkeypatch.setattr(OOS, "_consistent_children", checked)
    views = search.child_views
    assert views is not None
    hits = views.hits
    for decision in range(3):
        search.search(key_after(game, player, decision, 13), iterations=20)
    assert sum(asked) > 100 and all(asked) == all_consistent
    assert views.hits > hits


@pytest.mark.parametrize("name", ["blind_tictactoe", "meier"])
def test_kept_belief_strategies_are_the_tables_current_ones(monkeypatch, name):
    """Every strategy the belief sampler is given, kept or not, equals the one the tables
    give at that moment, through a match of searches restored from the sampler."""
    game = hiddenenvs.load_game(name)
    search = OOS(game, 1, delta=0.0, seed=2, backend="model")
    answers = {"kept": 0, "found": 0}
    kept_answer = OOS._strategy_of

    def checked(self, state, player):
        asked = (player, state.information_state_key(player))
        answers["kept" if asked in self._belief_strategies else "found"] += 1
        answer = kept_answer(self, state, player)
        assert answer == self._strategy_from_tables(state, player)
        return answer

    monkeypatch.setattr(OOS, "_strategy_of", checked)
    for decision in range(3):
        search.search(key_after(game, 1, decision, 17), iterations=12)
    assert search.restored_searches >= 1
    assert answers["kept"] > answers["found"] > 0


def test_a_bounded_cache_searches_as_an_unbounded_one():
    """The bound drops the least recently used nodes; the search is the same with one node kept."""
    game = hiddenenvs.load_game("blind_tictactoe")
    keys = [key_after(game, 0, decision, 3) for decision in range(3)]
    tables = []
    for max_nodes in (1, 100_000):
        search = OOS(game, 0, seed=9, backend="model")
        search.child_views = ChildViews(max_nodes)
        for key in keys:
            search.search(key, iterations=15)
        assert len(search.child_views) <= max_nodes
        tables.append(
            {k: (e.regret.copy(), e.average.copy()) for k, e in search.tables.entries.items()}
        )
        if max_nodes > 1:
            assert search.child_views.hits > 0
    assert tables[0].keys() == tables[1].keys()
    for k, (regret, average) in tables[0].items():
        np.testing.assert_array_equal(regret, tables[1][k][0])
        np.testing.assert_array_equal(average, tables[1][k][1])


class _Node:
    """A stub state: a history, and a view that a child either extends or rewrites."""

    def __init__(self, history: tuple, view: tuple):
        self._history, self.view = history, view

    def history(self) -> tuple:
        return self._history

    def clone(self) -> _Node:
        return _Node(self._history, self.view)


def test_child_views_keep_suffixes_per_node_and_refuse_a_view_that_is_rewritten():
    views = ChildViews(max_nodes=2)

    def extend(child: _Node, choice: str) -> None:
        child.view = child.view + ((choice, len(choice)),)

    root = _Node((), (("a", 1),))
    assert views.suffixes(("ist", 0), root, lambda s: s.view, ["x", "yy", "x"], extend) == (
        ((("x", 1),), (("yy", 2),)),
        (0, 1, 0),
    )
    assert views.suffixes(("ist", 0), root, lambda s: s.view, [], extend)[1] == (0, 1, 0)
    assert (views.hits, views.misses) == (1, 1)

    def rewrite(child: _Node, choice: str) -> None:
        child.view = ((choice, 0),)

    assert (
        views.suffixes(("ist", 0), _Node((1,), (("a", 1),)), lambda s: s.view, ["z"], rewrite)
        is None
    )
    views.suffixes(("pst", None), root, lambda s: s.view, ["x"], extend)  # a third node: one goes
    assert len(views) == 2
    assert views.suffixes(("ist", 0), root, lambda s: s.view, ["q"], extend)[0] == ((("q", 1),),)


def test_a_game_whose_history_leaves_draws_out_keeps_no_views():
    combat = hiddenenvs.load_game("combat")
    assert child_views_of(combat) is None
    game = hiddenenvs.load_game("meier")
    assert child_views_of(game) is child_views_of(game) is not None
