"""The flagship harness (benchmarks/training.py, ``python -m benchmarks train``).

The fast cases check its arithmetic against known figures (Wilson intervals quoted in
issue 46, draws counted as half in the paper's score, per-seat tallies, the band over
seeds) and that every cell's shipped config is what the cell says. The slow ones run
``--quick`` on Leduc NFSP into a temporary directory: a run is trained once, evaluated,
reported; a second command does not train it again; an interrupted run resumes through
``train.py --resume``; Ctrl-C and the time limit stop the training child, leave a record that
says so, and the same command finishes the run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # benchmarks/ is not an installed package
    sys.path.insert(0, str(REPO))

from agents.leaderboard.store import MatchKey, MatchResult  # noqa: E402
from benchmarks import training  # noqa: E402
from benchmarks.training import (  # noqa: E402
    CELLS,
    QUICK_OVERRIDES,
    Measured,
    Row,
    Target,
    band,
    measure,
    outcome_counts,
    table_rows,
    verdict,
)


def evaluation_with(opponent: str, **counts: dict) -> dict:
    return {"opponents": {opponent: counts}, "exploitability": None}


def test_win_rate_interval_is_the_issue_figure():
    # Issue 46: combat MCNFSP seed 0, 139 wins of 200 against the doctrine, 0.695 [0.628, 0.755].
    row = Row("scripted:doctrine", target=Target("scripted:doctrine", 0.80))
    tally = {"games": 200, "wins": 139, "draws": 0, "losses": 61}
    value = measure(row, evaluation_with("scripted:doctrine", all=tally), [])
    assert (round(value.value, 3), round(value.low, 3), round(value.high, 3)) == (
        0.695,
        0.628,
        0.755,
    )
    assert not value.meets(row.target)
    # Met only when the lower bound reaches the target, not the point estimate: 0.865 of 200
    # (seed 1's 173 wins) has its lower bound at 0.811.
    high = measure(
        row,
        evaluation_with(
            "scripted:doctrine", all={"games": 200, "wins": 173, "draws": 0, "losses": 27}
        ),
        [],
    )
    assert round(high.low, 3) == 0.811 and high.meets(row.target)
    assert not Measured(0.81, 0.79, 0.83).meets(row.target)


def test_score_counts_a_draw_as_half_and_win_does_not():
    tally = {"games": 10, "wins": 4, "draws": 4, "losses": 2}
    evaluation = evaluation_with("random", **{"seat 1": tally})
    assert measure(Row("random", "score", seat=1), evaluation, []).value == pytest.approx(0.6)
    assert measure(Row("random", "win", seat=1), evaluation, []).value == pytest.approx(0.4)
    assert measure(Row("random", "win", seat=0), evaluation, []) is None  # no such games


def test_exploitability_at_a_time_is_the_last_evaluation_before_it():
    metrics = [
        {"wall_seconds": 0.0, "exploitability": 2.3},
        {"wall_seconds": 590.0, "exploitability": 0.2},
        {"wall_seconds": 610.0, "exploitability": 0.05},
    ]
    target = Target("exploitability", 0.1, "exploitability", within_seconds=600.0)
    row = Row("exploitability", "exploitability", within_seconds=600.0, target=target)
    value = measure(row, None, metrics)
    assert value.value == 0.2 and not value.meets(target)
    end = Row("exploitability", "exploitability")
    assert measure(end, {"exploitability": 0.05, "opponents": {}}, metrics).value == 0.05


def test_verdict_needs_every_seed():
    target = Target("random", 0.7)
    row = Row("random", target=target)
    good, bad = Measured(0.8, 0.75, 0.85), Measured(0.8, 0.65, 0.9)
    assert verdict(row, [good, good, good]) == "**met** (3/3)"
    assert verdict(row, [good, bad, good]) == "not met (2/3)"
    assert verdict(row, [good, None, None]) == "1/1 seeds so far"
    assert verdict(row, [None, None]) == "not run"
    assert verdict(Row("random"), [good]) == ""


def test_outcome_counts_per_seat_from_stored_matches():
    def match(seats, returns, index):
        return MatchResult(MatchKey("meier", "{}", seats, 0, index), index, returns, 0.1)

    results = [
        match(("me", "random"), (100.0, 0.0), 0),  # seat 0 win
        match(("random", "me"), (100.0, 0.0), 0),  # seat 1 loss
        match(("random", "me"), (50.0, 50.0), 1),  # seat 1 draw
        match(("me", "bot"), (0.0, 100.0), 2),  # another pairing: not counted
    ]
    counts = outcome_counts(results, "me", "random")
    assert counts["all"] == {"games": 3, "wins": 1, "draws": 1, "losses": 1}
    assert counts["seat 0"] == {"games": 1, "wins": 1, "draws": 0, "losses": 0}
    assert counts["seat 1"] == {"games": 2, "wins": 0, "draws": 1, "losses": 1}


def test_band_is_mean_and_range_over_seeds_on_the_shortest_span():
    grid, mean, low, high = band([([0.0, 10.0], [1.0, 0.0]), ([0.0, 20.0], [3.0, 1.0])], points=3)
    assert list(grid) == [0.0, 5.0, 10.0]  # up to the shorter seed's end
    # at x=5: seed 0 is 0.5, seed 1 is 2.5; at x=10: 0.0 and 2.0 (halfway from 3 to 1)
    assert list(mean) == [2.0, 1.5, 1.0] and list(low) == [1.0, 0.5, 0.0]
    assert list(high) == [3.0, 2.5, 2.0]


def test_rebel_rows_are_per_seat_with_the_papers_column():
    rebel = training.CELLS_BY_NAME["rebel_meier"]
    labels = [row.label() for row in table_rows(rebel)]
    assert "random, seat 0 (score)" in labels and "scripted:meier, seat 1 (score)" in labels
    seat_0 = next(r for r in table_rows(rebel) if r.seat == 0 and r.against == "random")
    assert seat_0.target.bound == 0.97


def test_curve_files_are_named_like_the_trainer_pages_that_show_them():
    """docs/_ext/hiddenenvs_pages.py shows ``results/curves/<page>.png`` on a trainer's page."""
    sys.path.insert(0, str(Path(training.REPO, "docs", "_ext")))
    try:
        import hiddenenvs_pages
    finally:
        sys.path.pop(0)
    for trainer in {cell.trainer for cell in CELLS}:
        assert training.page_name(trainer) == hiddenenvs_pages.safe_name(trainer)
    assert training.page_name("cfr+") == "cfr_plus"


@pytest.mark.parametrize("cell", CELLS, ids=[cell.name for cell in CELLS])
def test_shipped_config_matches_its_cell(cell):
    """A shipped config trains the cell's trainer and its scripted opponents exist for its
    env (the YAML as read, unvalidated: validating builds the game, seconds per config)."""
    from agents.config import config_data
    from agents.scripted import SCRIPTED_BOTS

    if not cell.config.is_file():
        pytest.skip(f"configs/{cell.name}.yaml is not shipped (the page lists it)")
    data = config_data(cell.config)
    assert data["trainer"]["name"] == cell.trainer
    for opponent in cell.opponents:
        if opponent.startswith("scripted:"):
            assert opponent.partition(":")[2] in SCRIPTED_BOTS[data["env"]["name"]]


@pytest.mark.slow
def test_quick_overrides_make_valid_configs():
    from agents.config import load_config

    for name, overrides in QUICK_OVERRIDES.items():
        config = load_config(training.CELLS_BY_NAME[name].config, overrides)
        assert config.budget.seconds is not None  # every quick run is bounded in time


# ---- the command, end to end --------------------------------------------------------------------
def harness(tmp_path: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "benchmarks",
        "train",
        "--quick",
        "--cells",
        "nfsp_leduc",
        "--runs",
        str(tmp_path / "runs"),
        "--page",
        str(tmp_path / "comparison.md"),
        "--curves",
        str(tmp_path / "curves"),
        *extra,
    ]


def run_harness(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        harness(tmp_path, *extra), cwd=REPO, capture_output=True, text=True, timeout=600
    )


def record(tmp_path: Path) -> dict:
    return json.loads((tmp_path / "runs/nfsp_leduc/seed0/benchmark.json").read_text())


@pytest.mark.slow
def test_quick_profile_trains_evaluates_reports_and_resumes(tmp_path):
    done = run_harness(tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    first = record(tmp_path)
    assert first["status"] == "trained" and len(first["sessions"]) == 1
    evaluation = json.loads((tmp_path / "runs/nfsp_leduc/seed0/evaluation.json").read_text())
    assert evaluation["opponents"]["random"]["all"]["games"] == 10  # 5 per seat order
    assert 0.0 < evaluation["exploitability"] < 5.0  # Leduc: uniform play is 2.374
    page = (tmp_path / "comparison.md").read_text()
    assert "| Leduc | nfsp | exploitability, at 10 min of training |" in page
    assert "![nfsp: learning curves](curves/nfsp.png)" in page
    assert (tmp_path / "curves/nfsp.png").stat().st_size > 0

    again = run_harness(tmp_path)  # finished: neither trained nor played again
    assert again.returncode == 0, again.stderr[-2000:]
    assert len(record(tmp_path)["sessions"]) == 1

    # An interrupted run resumes from its checkpoint; this one had spent its budget.
    path = tmp_path / "runs/nfsp_leduc/seed0/benchmark.json"
    path.write_text(json.dumps({**first, "status": "interrupted"}))
    resumed = run_harness(tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    sessions = record(tmp_path)["sessions"]
    assert record(tmp_path)["status"] == "trained" and sessions[-1]["resumed"] is True


@pytest.mark.slow
def test_ctrl_c_and_the_time_limit_stop_the_run_and_the_same_command_finishes_it(tmp_path):
    process = subprocess.Popen(
        harness(tmp_path), cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    log = tmp_path / "runs/nfsp_leduc/seed0/train.log"
    deadline = time.monotonic() + 120
    while not log.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(3)  # the child is training
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr[-2000:]
    interrupted = record(tmp_path)
    assert interrupted["status"] == "interrupted"
    assert interrupted["sessions"][0]["exit_code"] != 0
    assert not (tmp_path / "comparison.md").exists()
    # A session past --time-limit is stopped the same way and resumed by the next command.
    stopped = run_harness(tmp_path, "--time-limit", "0.02")
    assert stopped.returncode == 0, stopped.stderr[-2000:]
    assert record(tmp_path)["status"] == "timeout"
    assert "stopped at the time limit" in (tmp_path / "comparison.md").read_text()
    finished = run_harness(tmp_path)
    assert finished.returncode == 0, finished.stderr[-2000:]
    assert record(tmp_path)["status"] == "trained" and len(record(tmp_path)["sessions"]) == 3
    assert os.path.getsize(tmp_path / "comparison.md") > 0


# ---- why a target is not met: curves, profiles, the page's section ------------------------------
def minutes(*pairs: tuple[float, float]) -> list[tuple[float, float]]:
    """``(minute, value)`` pairs as the ``(wall seconds, value)`` points a curve has."""
    return [(60.0 * minute, value) for minute, value in pairs]


def test_curve_verdict_tells_a_plateau_from_a_curve_still_improving():
    from benchmarks.why_not_met import curve_verdict

    plateau = minutes(
        (0, 2.0), (2.5, 1.2), (5, 1.05), (7.5, 1.0), (10, 1.02), (12.5, 0.99), (15, 1.01)
    )
    assert curve_verdict(plateau, lower_is_better=True, bound=0.3) == (
        "flat over the last half (0.99-1.02; a change under 5% of the level counts as flat)"
    )
    # 0.3 falling by 0.015 a minute to 0.15 at 10 min: the target 0.1 is 3.3 minutes on.
    falling = minutes(*((m, 0.3 - 0.015 * m) for m in range(11)))
    assert curve_verdict(falling, lower_is_better=True, bound=0.1) == (
        "still improving at the end (-0.015 per minute over the last quarter); at that rate "
        "the target 0.1 is about 3 more minutes away"
    )
    assert curve_verdict(falling, lower_is_better=False).startswith("worse over the last half")
    assert curve_verdict(falling[:2], lower_is_better=True) == (
        "too few evaluations (2) to tell a trend"
    )


def test_curve_verdict_calls_a_win_rate_change_within_one_evaluations_noise_flat():
    from benchmarks.why_not_met import curve_verdict

    # +0.04 over the last half: beyond 5% of the level, within 400 games' +-0.049 at 0.56.
    rising = minutes((0, 0.40), (4, 0.50), (8, 0.54), (10, 0.55), (12, 0.57), (16, 0.58))
    assert curve_verdict(rising, lower_is_better=False, games=400) == (
        "flat over the last half (0.540-0.580; one evaluation's 95% interval is +-0.049 (400 games))"
    )
    # From 4,000 games an evaluation (+-0.015) the half's rise is real, the last quarter's
    # +0.01 is not.
    assert curve_verdict(rising, lower_is_better=False, games=4000) == (
        "improved over the last half (+0.00514 per minute), flat over the last quarter (one "
        "evaluation's 95% interval is +-0.015 (4000 games))"
    )


def test_curve_line_reads_the_quarters_and_stops_at_a_timed_targets_minutes():
    from benchmarks.why_not_met import curve_line

    rows = [{"wall_seconds": 60.0 * m, "exploitability": 1.0 / (1 + m)} for m in range(31)]
    line = curve_line(0, rows, "exploitability", True, 0.1, within_seconds=600.0)
    # Up to 10 min: 1/(1+2) at 2.5 min (the last evaluation before it), 1/6 at 5, ...
    assert line.startswith(
        "seed 0: 0.333 / 0.167 / 0.125 / 0.0909 at 1/4, 1/2, 3/4 and the end (10.0 min): "
    )
    assert line.endswith("after the target's 10 min it reaches 0.0323 at 30 min")
    assert curve_line(1, [{"wall_seconds": 1.0}], "exploitability", True, 0.1) == (
        "seed 1: no evaluation in metrics.csv"
    )


def write_stats(path: Path, stats: dict) -> Path:
    """A cProfile dump (pstats reads the marshalled dict back)."""
    import marshal

    path.write_bytes(marshal.dumps(stats))
    return path


def test_profile_phases_follow_the_call_graph_to_the_innermost_phase(tmp_path):
    """train.py's main -> the loop's step -> NFSP's update and act_batch; the evaluation also
    calls act_batch; one torch function is called from both act_batch and update."""
    from benchmarks import profiling

    def at(relative: str, name: str, line: int = 1) -> tuple:
        return (str(training.REPO / relative), line, name)

    main, step = at("train.py", "main"), at("agents/loop.py", "_step")
    update, act = at("agents/nfsp.py", "update"), at("agents/nfsp.py", "act_batch")
    evaluate = at("agents/loop.py", "evaluate")
    linear = ("~", 0, "<built-in method torch._C._nn.linear>")
    env_step = at("hiddenenvs/envs/leduc.py", "step")
    # (calls, calls, self seconds, cumulative seconds, {caller: edge}) as cProfile keeps them
    stats = {
        main: (1, 1, 1.0, 10.0, {}),
        step: (5, 5, 0.5, 6.0, {main: (5, 5, 0.5, 6.0)}),
        evaluate: (1, 1, 0.5, 3.0, {main: (1, 1, 0.5, 3.0)}),
        update: (5, 5, 1.0, 3.0, {step: (5, 5, 1.0, 3.0)}),
        act: (10, 10, 1.5, 5.0, {step: (5, 5, 0.75, 2.5), evaluate: (5, 5, 0.75, 2.5)}),
        linear: (20, 20, 3.0, 3.0, {update: (10, 10, 2.0, 2.0), act: (10, 10, 1.0, 1.0)}),
        env_step: (9, 9, 2.5, 2.5, {act: (9, 9, 2.5, 2.5)}),
    }
    found = profiling.breakdown(write_stats(tmp_path / "synthetic.pstats", stats))
    assert found.total == pytest.approx(10.0)
    # act_batch is half self-play (from the step), half evaluation (which keeps it); its
    # callees split the same way; linear is 2/3 update by its callers' cumulative time.
    expected = {
        profiling.SET_UP: 1.0,
        profiling.STEP_OTHER: 0.5,
        profiling.UPDATES: 1.0 + 2.0,
        profiling.SELF_PLAY: 0.5 * (1.5 + 1.0 + 2.5),
        profiling.EVALUATION: 0.5 + 0.5 * (1.5 + 1.0 + 2.5),
    }
    for phase in profiling.PHASES:
        assert found.phases[phase] == pytest.approx(expected.get(phase, 0.0)), phase
    assert found.packages["torch"] == pytest.approx(3.0)
    assert found.packages["hiddenenvs (env)"] == pytest.approx(2.5)
    assert found.packages["agents.nfsp"] == pytest.approx(2.5)
    assert found.top[0][0] == "agents/loop.py:1(_step)"  # below the entry point
    assert found.steps == 5 and found.pool_calls == 0  # all of it in this process


def test_phase_roots_are_found_in_every_trainer_by_module_and_name():
    """Each NFSP-family, ExIt-OOS and ReBeL trainer has functions the profile recognises as
    its self-play and its updates, and the searching ones as search: a rename that breaks the
    recognition fails here, not silently on a results page."""
    import importlib
    import inspect

    from benchmarks import profiling

    modules = {
        "nfsp": ["agents.nfsp"],
        "anfsp": ["agents.anfsp"],
        "mcnfsp": ["agents.mcnfsp.learner", "agents.mcnfsp.agent", "agents.mcnfsp.search"],
        "exit_oos": [
            "agents.exit_oos.learner",
            "agents.exit_oos.self_play",
            "agents.exit_oos.expert",
        ],
        "rebel": ["agents.rebel.trainer", "agents.rebel.self_play", "agents.rebel.search"],
    }
    for trainer, names in modules.items():
        phases = set()
        for name in names:
            module = importlib.import_module(name)
            functions = [
                f
                for _, member in inspect.getmembers(module)
                for f in (
                    [member]
                    if inspect.isfunction(member)
                    else vars(member).values()
                    if inspect.isclass(member) and member.__module__ == name
                    else []
                )
                if inspect.isfunction(f)
            ]
            for function in functions:
                code = function.__code__
                phases.add(
                    profiling.phase_root((code.co_filename, code.co_firstlineno, code.co_name))
                )
        wanted = {profiling.SELF_PLAY, profiling.UPDATES}
        if trainer in ("mcnfsp", "exit_oos", "rebel"):
            wanted.add(profiling.SEARCH)
        assert wanted <= phases, (trainer, wanted - phases)
    assert profiling.phase_root((str(training.REPO / "agents/nfsp.py"), 1, "__init__")) is None
    assert profiling.package_of(
        ("~", 0, "<method 'step' of 'hiddenenvs.envs._leduc.State' objects>")
    ) == ("compiled: hiddenenvs.envs._leduc")


def test_the_page_says_why_a_target_is_not_met(tmp_path):
    """A Leduc NFSP run still improving at its 10 minutes: the page's "Why not met" entry has
    its figure, its curve's verdict and, once profiled, the profile's phase shares."""
    cell = training.CELLS_BY_NAME["nfsp_leduc"]
    directory = tmp_path / "runs" / "nfsp_leduc" / "seed0"
    (directory / "run").mkdir(parents=True)
    session = {"load_max": 1.0, "cpu_seconds": 600.0, "commit": "abc1234"}
    (directory / "benchmark.json").write_text(
        json.dumps({"status": "trained", "sessions": [session]})
    )
    (directory / "evaluation.json").write_text(
        json.dumps({"opponents": {}, "exploitability": 0.15})
    )
    rows = ["episodes,wall_seconds,exploitability"]
    rows += [f"{1000 * m},{60 * m},{0.3 - 0.015 * m:.4f}" for m in range(11)]
    (directory / "run" / "metrics.csv").write_text("\n".join(rows) + "\n")
    prof = training.Profile(
        (cell,),
        tmp_path / "runs",
        tmp_path / "comparison.md",
        tmp_path / "curves",
        10,
        1.0,
        profiles=tmp_path / "profiles",
    )
    training.write_report(prof, [0], "python -m benchmarks train --report-only")
    page = (tmp_path / "comparison.md").read_text()
    why = page[page.index("## Why not met") :]
    assert "### nfsp on Leduc (`nfsp_leduc`)" in why
    assert (
        "- **exploitability, at 10 min of training**, <= 0.1 within 10 min: not met (0/1): seed 0 0.15."
        in why
    )
    assert "still improving at the end (-0.015 per minute over the last quarter)" in why
    assert "no profile yet: run `python -m benchmarks train --profile --cells nfsp_leduc`" in why
    assert "- Curves: nfsp's figure under [Learning curves](#learning-curves)." in why

    (tmp_path / "profiles").mkdir()
    figures = {
        "cell": "nfsp_leduc",
        "profile_seconds": 60.0,
        "cpu_seconds": 58.0,
        "exit_code": 0,
        "steps": 40,
        "phases": {
            "learner updates": 55.0,
            "self-play and acting": 30.0,
            "set-up and wrap-up": 15.0,
        },
        "training_phases": {"learner updates": 64.7, "self-play and acting": 35.3},
        "out_of_process": None,
    }
    (tmp_path / "profiles" / "nfsp_leduc.json").write_text(json.dumps(figures))
    (tmp_path / "profiles" / "nfsp_leduc.md").write_text("# the profile page\n")
    training.write_report(prof, [0], "python -m benchmarks train --report-only")
    why = (tmp_path / "comparison.md").read_text().split("## Why not met")[1]
    assert (
        "- **Profile** (60 CPU s of training, seed 0): of the training step (49.3 CPU s, 40 steps): learner updates 65%, self-play and "
        "acting 35% (of all 58 CPU s: set-up and wrap-up 15%). [profile](profiles/nfsp_leduc.md)"
    ) in why
    # the profile pages join the docs' table of contents through the page
    assert why.endswith("```{toctree}\n:hidden:\n\nprofiles/nfsp_leduc\n```\n")


@pytest.mark.slow
def test_profile_command_writes_a_cells_page_and_figures(tmp_path):
    """``--profile`` on a cheap cell: train.py under cProfile for a few seconds, its page and
    figures written, nothing else (no run directory, no comparison page)."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks",
            "train",
            "--profile",
            "--cells",
            "cfr_kuhn",
            "--profile-seconds",
            "3",
            "--profiles",
            str(tmp_path / "profiles"),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads((tmp_path / "profiles" / "cfr_kuhn.json").read_text())
    # stopped by the harness (as Ctrl-C) after 3 CPU seconds of training, or done before
    assert figures["exit_code"] in (0, 130) and figures["steps"] > 0 and figures["cpu_seconds"] > 3
    assert sum(figures["phases"].values()) == pytest.approx(100.0, abs=0.5)
    page = (tmp_path / "profiles" / "cfr_kuhn.md").read_text()
    assert "## By phase" in page and "## By package (self time)" in page
    assert str(tmp_path) not in page.replace(str(tmp_path / "profiles"), "")  # no run path
    assert sorted(path.name for path in tmp_path.iterdir()) == ["profiles"]


def test_a_cells_yardstick_joins_its_why_not_met_entry():
    """Meier's exact yardstick (what an equilibrium and a best response win) is printed with
    each unmet Meier cell, since it says how far a target is reachable at all."""
    from benchmarks.why_not_met import entry

    cell = training.CELLS_BY_NAME["nfsp_meier"]
    lines = entry(cell, [], [0], [[]], None, "", "", None, False, "profiles/nfsp_meier.md")
    assert f"- **Yardstick**: {cell.yardstick}" in lines
    assert "0.720 (its lower bound over 400 games: 0.674; over 2,000" in cell.yardstick
    assert cell.games == 2000
    plain = entry(
        training.CELLS_BY_NAME["nfsp_leduc"], [], [0], [[]], None, "", "", None, False, ""
    )
    assert not any(line.startswith("- **Yardstick**") for line in plain)


def test_a_cells_own_games_count_holds_in_the_full_profile_only():
    """Meier's cells evaluate over 2,000 games (their yardstick: 400 cannot show 0.70 for the
    best equilibrium); other cells over the profile's 400; --quick and --games override."""
    full, quick = training.profile(False), training.profile(True)
    meier, leduc = training.CELLS_BY_NAME["nfsp_meier"], training.CELLS_BY_NAME["nfsp_leduc"]
    assert (full.games_for(meier), full.games_for(leduc)) == (2000, 400)
    assert quick.games_for(meier) == 10
    full.games, full.cell_games = 600, False  # what --games 600 sets
    assert full.games_for(meier) == 600
