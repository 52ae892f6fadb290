"""evaluate.py end to end: real matches, the SQLite store, resuming after SIGKILL, spec errors."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from agents.leaderboard import (
    AgentSpecError,
    ResultStore,
    build_leaderboard,
    evaluate,
    write_outputs,
)
from agents.leaderboard.matches import EnvVariant, MatchPlayer, derive_seed, schedule
from agents.leaderboard.specs import resolve_agent
from agents.leaderboard.store import MatchKey, MatchResult

REPO = Path(__file__).resolve().parent.parent


def _rows(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as connection:
        return connection.execute(
            "SELECT env, params, seats, series_seed, game_index, env_seed, returns FROM matches"
        ).fetchall()


def _evaluate_cli():
    sys.path.insert(0, str(REPO))
    try:
        import evaluate as evaluate_cli
    finally:
        sys.path.remove(str(REPO))
    return evaluate_cli


def test_cfr_plus_beats_random_on_kuhn_with_a_confidence_interval_excluding_zero(tmp_path, capsys):
    board = evaluate(
        "kuhn_poker",
        {},
        ["random", "cfr+:200"],
        games=1000,
        db_path=tmp_path / "kuhn.sqlite",
        workers=1,
        progress=False,
    )
    summary = board.pairings[("cfr+:200", "random")]
    assert summary.games == 2000
    assert summary.mean_return_low > 0, summary
    mirror = board.pairings[("random", "cfr+:200")]
    assert mirror.mean_return == pytest.approx(-summary.mean_return)
    exploitability = {s.agent: s.exploitability for s in board.standings}
    assert exploitability["random"] == pytest.approx(0.4583333, abs=1e-6)  # uniform Kuhn policy
    assert exploitability["cfr+:200"] < 1e-2
    paths = write_outputs(board, tmp_path / "out")
    assert all(path.stat().st_size > 0 for path in paths)
    markdown = paths[0].read_text()
    assert "| random | cfr+:200 | 2000 |" in markdown or "| cfr+:200 | random | 2000 |" in markdown

    with ResultStore(tmp_path / "kuhn.sqlite") as store:
        by_return = build_leaderboard(store, "kuhn_poker", "{}", rank_by="mean-return")
    assert by_return.agents == ["cfr+:200", "random"]

    # --show prints the stored leaderboard, playing nothing.
    assert _evaluate_cli().main(["--show", "--db", str(tmp_path / "kuhn.sqlite")]) == 0
    shown = capsys.readouterr().out
    assert "Leaderboard: kuhn_poker" in shown and "cfr+:200" in shown and "2000" in shown
    assert len(_rows(tmp_path / "kuhn.sqlite")) == 2000


def test_duplicate_matches_share_chance_across_seat_swaps(tmp_path):
    variant = EnvVariant.resolve("kuhn_poker", {})
    tasks = schedule(variant, ["random", "cfr+:50"], "round-robin", games=5, series_seed=3)
    by_index = {}
    for key, env_seed in tasks:
        by_index.setdefault(key.game_index, set()).add(env_seed)
    assert all(len(seeds) == 1 for seeds in by_index.values()) and len(by_index) == 5
    # ... and the same seed deals the same cards to each seat whichever agent sits there.
    player = MatchPlayer(variant, resolve_agent)
    for key, env_seed in tasks[:5]:
        player.play(key, env_seed)
        deal = list(player.env.unwrapped.game_state.cards)
        mirrored = MatchKey(key.env, key.params, key.seats[::-1], key.series_seed, key.game_index)
        player.play(mirrored, env_seed)
        assert player.env.unwrapped.game_state.cards == deal
    independent = schedule(
        variant, ["random", "cfr+:50"], "round-robin", games=5, series_seed=3, duplicate=False
    )
    assert len({seed for _, seed in independent}) == 10


def test_a_match_replays_exactly_from_its_stored_seed():
    variant = EnvVariant.resolve("leduc_holdem", {})
    key, env_seed = schedule(variant, ["random", "cfr+:20"], "round-robin", games=1, series_seed=9)[
        0
    ]
    first = MatchPlayer(variant, resolve_agent).play(key, env_seed)
    again = MatchPlayer(variant, resolve_agent).play(key, env_seed)
    assert first.returns == again.returns and sum(first.returns) == 0


def test_the_store_refuses_duplicate_keys(tmp_path):
    key = MatchKey("kuhn_poker", "{}", ("random", "x"), 0, 0)
    with ResultStore(tmp_path / "db.sqlite") as store:
        assert store.add(MatchResult(key, 1, (1.0, -1.0), 0.0))
        assert not store.add(MatchResult(key, 1, (2.0, -2.0), 0.0))
        assert [r.returns for r in store.results()] == [(1.0, -1.0)]
        with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):
            store.connection.execute(
                "INSERT INTO matches (env, params, seats, series_seed, game_index, env_seed, "
                "returns, seconds, finished_at) "
                "VALUES ('kuhn_poker', '{}', ?, 0, 0, 1, '[0, 0]', 0, 'now')",
                (json.dumps(["random", "x"]),),
            )


def test_unresolvable_specs_name_the_spec_and_the_accepted_forms(tmp_path, capsys, monkeypatch):
    with pytest.raises(AgentSpecError) as error:
        evaluate(
            "kuhn_poker",
            {},
            ["random", "no/such/checkpoint.pt"],
            games=1,
            db_path=tmp_path / "db.sqlite",
            progress=False,
        )
    message = str(error.value)
    assert "'no/such/checkpoint.pt' does not resolve for kuhn_poker" in message
    assert "'random'" in message and "cfr+:<iterations>" in message and "scripted:<name>" in message
    assert not (tmp_path / "db.sqlite").exists()  # specs are checked before anything is stored
    with pytest.raises(AgentSpecError, match=r"'cfr\+:many'.*positive integer"):
        resolve_agent("cfr+:many", "kuhn_poker", 0, {})
    with pytest.raises(AgentSpecError, match=r"'cfr:3' .* more than 1,000 histories"):
        monkeypatch.setattr("agents.leaderboard.specs.CFR_MAX_HISTORIES", 1000)
        resolve_agent("cfr:3", "leduc_holdem", 0, {})  # 1,939 histories
    with pytest.raises(AgentSpecError, match="no scripted bot named 'nobody'"):
        resolve_agent("scripted:nobody", "kuhn_poker", 0, {})

    code = _evaluate_cli().main(
        [
            "--env",
            "kuhn_poker",
            "--agents",
            "random",
            "nonsense",
            "--games",
            "1",
            "--out",
            str(tmp_path / "cli"),
            "--quiet",
        ]
    )
    assert code == 2
    assert "agent spec 'nonsense' does not resolve for kuhn_poker" in capsys.readouterr().err


@pytest.mark.slow  # 30 s of subprocess runs; .ci/run's second step runs it
def test_sigkilled_evaluation_resumes_without_duplicates_and_matches_a_clean_run(tmp_path):
    # Kuhn matches take well under a millisecond: enough of them, and a watcher that looks
    # often, so the kill lands mid-run even on an idle machine.
    games = 2500
    command = [
        sys.executable,
        str(REPO / "evaluate.py"),
        "--env",
        "kuhn_poker",
        "--agents",
        "random",
        "cfr+:20",
        "--games",
        str(games),
        "--workers",
        "2",
        "--quiet",
        "--out",
        str(tmp_path / "killed"),
        "--exploitability-max-nodes",
        "0",
    ]
    db = tmp_path / "killed" / "leaderboard.sqlite"
    process = subprocess.Popen(
        command, cwd=REPO, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 120
    stored = 0
    while time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.01)
        if db.exists():
            try:
                stored = len(_rows(db))
            except sqlite3.OperationalError:  # schema not created yet
                continue
            if stored >= 50:
                break
    assert process.poll() is None, (
        f"evaluation ended before it could be killed: {process.stderr.read()}"
    )
    os.killpg(process.pid, signal.SIGKILL)  # the main process and its pool workers
    process.wait()
    process.stderr.close()
    killed_rows = _rows(db)
    assert 50 <= len(killed_rows) < 2 * games, "the kill came after the last match"

    resumed = subprocess.run(
        command, check=False, cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert resumed.returncode == 0, resumed.stderr
    rows = _rows(db)
    keys = [row[:5] for row in rows]
    assert len(rows) == 2 * games and len(set(keys)) == 2 * games
    assert set(killed_rows) <= set(rows)  # what was stored before the kill is kept as it was
    with sqlite3.connect(db) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)

    # Every match equals the one a clean, single-process run plays.
    evaluate(
        "kuhn_poker",
        {},
        ["random", "cfr+:20"],
        games=games,
        db_path=tmp_path / "clean.sqlite",
        workers=1,
        exploitability_max_nodes=0,
        progress=False,
    )
    assert sorted(rows) == sorted(_rows(tmp_path / "clean.sqlite"))


@pytest.mark.parametrize(
    "env, lineups",
    [
        ("kuhn_poker", [("random", "random"), ("random", "cfr+:100"), ("cfr+:100", "random")]),
        ("leduc_holdem", [("random", "random")]),
    ],
)
def test_played_matches_agree_with_the_exact_expected_returns(env, lineups):
    # Each lineup's mean return must match the exact value of its policies
    # (expected_returns over the whole tree). This catches any correlation between the
    # env's chance draws and the agents' action draws (agents once drew from the env's own
    # stream: random vs random in Kuhn then paid seat 0 +0.28 instead of +0.125), and a
    # mis-read observation.
    from agents.base import tabular_policy_of_agents
    from hiddenenvs.analysis import GameTree, expected_returns

    variant = EnvVariant.resolve(env, {})
    tree = GameTree.build(variant.game())
    player = MatchPlayer(variant, resolve_agent)
    for seats in lineups:
        agents = [player.agent(spec, seat) for seat, spec in enumerate(seats)]
        exact = expected_returns(tree, tabular_policy_of_agents(tree, agents.__getitem__))
        returns = np.array(
            [
                player.play(
                    MatchKey(env, variant.params_json, seats, 0, index),
                    derive_seed(env, seats, index),
                ).returns
                for index in range(3000)
            ]
        )
        standard_error = returns.std(axis=0, ddof=1) / np.sqrt(len(returns))
        assert np.all(np.abs(returns.mean(axis=0) - exact) < 3.5 * standard_error), (
            seats,
            returns.mean(axis=0),
            exact,
            standard_error,
        )
