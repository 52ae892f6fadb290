"""The leaderboard's outputs say which ranking they use, and keep it: the table, the plot
and ``evaluate.py --show``."""

import sys
from pathlib import Path

from agents.leaderboard import evaluate, write_outputs
from agents.leaderboard.report import short_labels, standings_rows

REPO = Path(__file__).resolve().parent.parent


def _evaluate_cli():
    sys.path.insert(0, str(REPO))
    try:
        import evaluate as evaluate_cli
    finally:
        sys.path.remove(str(REPO))
    return evaluate_cli


def test_show_keeps_the_ranking_the_evaluation_used(tmp_path, capsys):
    db = tmp_path / "kuhn.sqlite"
    board = evaluate(
        "kuhn_poker",
        {},
        ["random", "cfr+:50"],
        games=40,
        db_path=db,
        workers=1,
        progress=False,
        rank_by="mean-return",
        exploitability_max_nodes=0,
    )
    header, rows = standings_rows(board)
    assert header[:3] == ["rank (by mean return)", "agent", "mean return"]
    assert [float(row[2]) for row in rows] == sorted((float(row[2]) for row in rows), reverse=True)
    cli = _evaluate_cli()
    assert cli.main(["--show", "--db", str(db)]) == 0
    assert "ranked by mean-return" in capsys.readouterr().out
    assert cli.main(["--show", "--db", str(db), "--rank-by", "elo"]) == 0  # unless told otherwise
    assert "ranked by elo" in capsys.readouterr().out


def test_the_plot_labels_agents_by_rank_and_is_written(tmp_path):
    """The axes carry #rank (the legend under them the full names, however long)."""
    board = evaluate(
        "kuhn_poker",
        {},
        ["random", "cfr+:50"],
        games=20,
        db_path=tmp_path / "k.sqlite",
        workers=1,
        progress=False,
        exploitability_max_nodes=0,
    )
    assert short_labels(board.agents) == ["#1", "#2"]
    png = [path for path in write_outputs(board, tmp_path / "out") if path.suffix == ".png"]
    assert png and png[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_boards_title_names_only_the_parameters_set_away_from_their_defaults():
    from agents.leaderboard.matches import EnvVariant
    from agents.leaderboard.report import Leaderboard

    def title(params: dict) -> str:
        resolved = EnvVariant.resolve("goofspiel", params).params  # as a board keeps them
        return Leaderboard("goofspiel", resolved, [], {}, None).title  # type: ignore[arg-type]

    assert title({}) == "goofspiel"
    assert title({"num_cards": 6, "imp_info": True}) == "goofspiel(num_cards=6, imp_info=True)"
