"""The feature-importance study (experiments/feature_importance.py): features, abstractions, resumable runs."""

from __future__ import annotations

import csv
import json
import re
from math import comb

import numpy as np
import pytest

from agents.search.external_sampling_mccfr import ExternalSamplingMCCFR
from experiments import feature_importance as study
from hiddenenvs.analysis import GameTree


@pytest.fixture(scope="module")
def tree4():
    return GameTree.build(study.load_goofspiel(4))


@pytest.fixture(scope="module")
def states4(tree4):
    """Per player, its information sets of Goofspiel(4) and a state replayed into each."""
    infosets = [np.flatnonzero(tree4.infoset_player == player) for player in range(2)]
    return [
        (sets, [tree4.replay(tree4.infoset_node[infoset]) for infoset in sets]) for sets in infosets
    ]


def _bits(cards) -> int:
    return sum(1 << card for card in cards)


def test_features_are_read_off_the_game_state(tree4, states4):
    """Every player-0 information set of Goofspiel(4), replayed to a state: its own hand,
    the current card, the opponent's hand, the deck and the score difference."""
    infosets, columns = study.feature_columns(tree4, 0)
    np.testing.assert_array_equal(infosets, states4[0][0])
    for infoset, row, state in zip(infosets, columns, states4[0][1]):
        expected = (
            _bits(state.hands[0]),
            state.point_cards[-1],
            _bits(state.hands[1]),
            _bits(state.deck),
            state.scores[0] - state.scores[1],
        )
        assert tuple(row) == expected, tree4.infoset_keys[infoset]


@pytest.mark.parametrize(
    "label, per_round",
    [
        ("none", lambda n, r: 1),
        ("C", lambda n, r: n),  # any card can be the current one
        ("D", lambda n, r: comb(n, n - r - 1)),  # the deck: n - r - 1 cards not yet revealed
        ("C+D", lambda n, r: n * comb(n - 1, r)),  # the current card, and the r revealed before it
    ],
)
def test_abstract_set_counts_are_the_combinatorial_ones(tree4, label, per_round):
    """Player 0's abstract sets: per decided round r (r cards bid), C(N, N - r) hands times
    the feature values; player 1 keeps all its sets."""
    n = 4
    abstraction = study.StudyAbstractions(tree4, "perfect_recall").abstraction(label)
    expected = sum(comb(n, n - r) * per_round(n, r) for r in range(n - 1))
    assert abstraction.counts_by_player() == [expected, int((tree4.infoset_player == 1).sum())]


def test_all_four_features_merge_sets_that_differ_only_in_round_order(tree4, states4):
    """On Goofspiel(4) C+O+D+P still merges (which card won which round is forgotten); the
    count is that of distinct feature tuples over the replayed states."""
    abstraction = study.StudyAbstractions(tree4, "perfect_recall").abstraction("C+O+D+P")
    tuples = set()
    for state in states4[0][1]:
        tuples.add(
            (
                tuple(state.hands[0]),
                state.point_cards[-1],
                tuple(state.hands[1]),
                tuple(state.deck),
                state.scores[0] - state.scores[1],
            )
        )
    count = abstraction.counts_by_player()[0]
    assert count == len(tuples) < int((tree4.infoset_player == 0).sum())


def test_all_features_on_goofspiel3_are_the_unabstracted_run_exactly():
    """With N = 3 there is one decided round before the last, so (hand, C, O, D, P) names
    the history: the C+O+D+P run is the plain ES-MCCFR run bit for bit."""
    tree = GameTree.build(study.load_goofspiel(3))
    abstraction = study.StudyAbstractions(tree, "perfect_recall").abstraction("C+O+D+P")
    assert abstraction.num_abstract_infosets == tree.num_infosets
    plain = ExternalSamplingMCCFR(tree.game, seed=3, backend="tree")
    abstracted = ExternalSamplingMCCFR(tree.game, seed=3, abstraction=abstraction)
    plain.iterate(300)
    abstracted.iterate(300)
    np.testing.assert_array_equal(
        abstracted.tables.regret[abstraction.slot_table_slot], plain.tables.regret
    )
    np.testing.assert_array_equal(
        abstracted.tables.average[abstraction.slot_table_slot], plain.tables.average
    )


def test_the_unabstracted_control_is_plain_es_mccfr(tree4):
    control = study.StudyAbstractions(tree4, "perfect_recall").abstraction(study.UNABSTRACTED)
    assert control.num_abstract_infosets == tree4.num_infosets
    plain = ExternalSamplingMCCFR(tree4.game, seed=2, backend="tree")
    controlled = ExternalSamplingMCCFR(tree4.game, seed=2, abstraction=control)
    plain.iterate(200)
    controlled.iterate(200)
    np.testing.assert_array_equal(
        controlled.tables.regret[control.slot_table_slot], plain.tables.regret
    )


def test_the_openspiel_baseline_is_openspiels_goofspiel_information_state(tree4, states4):
    """Player 1's sets under ``--baseline openspiel`` are exactly the classes of OpenSpiel's
    ``information_state_string`` over the same histories (checked through pyspiel)."""
    pyspiel = pytest.importorskip("pyspiel")
    game = pyspiel.load_game("goofspiel(num_cards=4,points_order=random,returns_type=win_loss)")
    abstraction = study.StudyAbstractions(tree4, "openspiel").abstraction("C+O+D+P")
    ours_to_theirs, theirs_to_ours = {}, {}
    for infoset, ours_state in zip(*states4[1]):
        state = game.new_initial_state()
        for entry in ours_state.history():
            state.apply_actions(list(entry)) if isinstance(entry, tuple) else state.apply_action(
                entry
            )
        theirs, ours = state.information_state_string(1), int(abstraction.abstract_infoset[infoset])
        assert ours_to_theirs.setdefault(ours, theirs) == theirs
        assert theirs_to_ours.setdefault(theirs, ours) == ours
    assert len(theirs_to_ours) < int((tree4.infoset_player == 1).sum())  # it does forget bid order


def _read(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def _without_seconds(rows):
    return [{key: value for key, value in row.items() if key != "seconds"} for row in rows]


def test_a_tiny_study_runs_end_to_end_and_resumes_only_unfinished_cells(
    tmp_path, monkeypatch, capsys
):
    study.main(
        [
            "--num-cards",
            "3",
            "--iterations",
            "300",
            "--checkpoints",
            "3",
            "--seeds",
            "2",
            "--workers",
            "1",
            "--output",
            str(tmp_path),
        ]
    )
    assert "| C+O+D+P |" in capsys.readouterr().out  # the README's table
    config = study.StudyConfig(num_cards=3, iterations=300, checkpoints=3)
    subsets = study.study_labels()
    assert len(study.all_subsets()) == 16 and len(_read(tmp_path / "results.csv")) == 17 * 2 * 3
    for name in (
        "results.csv",
        "summary.csv",
        "config.json",
        "final.png",
        *(f"{m}.png" for m in study.MEASURES),
    ):
        assert (tmp_path / name).stat().st_size > 0, name
    first = _read(tmp_path / "results.csv")
    summary = {row["features"]: row for row in _read(tmp_path / "summary.csv")}
    # Knowing nothing but its hand, player 0 loses to the player who sees everything.
    assert float(summary["none"]["abstracted_return"]) < float(
        summary["C+O+D+P"]["abstracted_return"]
    )
    assert float(summary["none"]["abstracted_exploitability"]) > float(
        summary["C+O+D+P"]["abstracted_exploitability"]
    )

    ran = []
    original = study._run_worker_cell
    monkeypatch.setattr(study, "_run_worker_cell", lambda cell: ran.append(cell) or original(cell))
    study.run_study(config, tmp_path, subsets, range(2), progress=False)
    assert ran == []  # everything finished: nothing reruns

    # A crash mid-study: one cell's rows lost, another cell's cut short. Only those two rerun,
    # and a seed gives the same numbers again.
    kept = [
        row
        for row in first
        if row["features"] != "C+O"
        and not (row["features"] == "D" and row["seed"] == "1" and row["iterations"] == "300")
    ]
    study.write_atomically(tmp_path / "results.csv", study.csv_text(kept, study.RESULT_COLUMNS))
    study.run_study(config, tmp_path, subsets, range(2), progress=False)
    assert sorted(ran) == [("C+O", 0), ("C+O", 1), ("D", 1)]
    assert _without_seconds(_read(tmp_path / "results.csv")) == _without_seconds(first)


def test_workers_in_processes_give_the_same_rows_as_one_process(tmp_path):
    config = study.StudyConfig(num_cards=3, iterations=200, checkpoints=2)
    one = study.run_study(
        config, tmp_path / "one", ["none", "C+D"], range(2), workers=1, progress=False
    )
    two = study.run_study(
        config, tmp_path / "two", ["none", "C+D"], range(2), workers=2, progress=False
    )
    assert _without_seconds(two) == _without_seconds(one)


def test_other_settings_in_the_same_output_and_bad_subsets_are_refused(tmp_path):
    config = study.StudyConfig(num_cards=3, iterations=100, checkpoints=1)
    study.run_study(config, tmp_path, ["C"], range(1), progress=False)
    assert json.loads((tmp_path / "config.json").read_text())["iterations"] == 100
    with pytest.raises(ValueError, match="another --output or the same settings"):
        study.run_study(
            study.StudyConfig(num_cards=3, iterations=200, checkpoints=1),
            tmp_path,
            ["C"],
            range(1),
            progress=False,
        )
    with pytest.raises(ValueError, match=re.escape("feature subset 'C+X'")):
        study.run_study(config, tmp_path, ["C+X"], range(1), progress=False)
    with pytest.raises(SystemExit):
        study.main(["--subsets", "C+C", "--output", str(tmp_path)])
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "results.csv").write_text("features,seed\nC,zero\n")
    with pytest.raises(ValueError, match="expected the columns"):
        study.run_study(config, tmp_path / "broken", ["C"], range(1), progress=False)
