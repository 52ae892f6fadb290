"""Every flagship trainer x env cell: train its shipped config for N seeds, evaluate, report.

    python -m benchmarks train                                  # every cell, seeds 0 1 2
    python -m benchmarks train --cells mcnfsp_combat --seeds 0 1 2
    python -m benchmarks train --quick                          # CI's profile: a few minutes
    python -m benchmarks train --report-only                    # the page from what is on disk
    python -m benchmarks train --list                           # cells, configs, targets
    python -m benchmarks train --profile --cells nfsp_meier     # where a cell's CPU time goes

A *cell* is a trainer on an env with its shipped config, ``configs/<cell>.yaml`` (the
table :data:`CELLS`, from issue 46); a cell whose config is not shipped is listed on the
page, never run with an invented one. Each seed of a cell is one *run*:

1. **Train** through ``train.py`` (a child process in its own process group, its output in
   ``<runs>/<cell>/seed<N>/train.log``): ``--config configs/<cell>.yaml seed=N
   output_dir=<run dir>/run``, nothing else changed (``--quick`` adds the small budgets of
   :data:`QUICK_OVERRIDES`). A run that finished (``benchmark.json`` says trained, refused or
   failed) is not trained again; one that was interrupted or stopped at ``--time-limit``
   continues from its checkpoint with ``train.py --resume`` (``budget.seconds`` counts every
   session, so a resumed run does not get its budget twice). Delete a run's directory to
   train it again.
2. **Evaluate** the finished run (its directory as the agent spec: the learner's evaluation
   agents from ``checkpoint.pt``) with :func:`agents.leaderboard.evaluate` against the
   cell's fixed opponents (random and the env's scripted bot; the doctrine alone on combat;
   OOS with 10,000 iterations a move where the ExIt-OOS paper plays it), ``--games`` games
   per pairing shared equally over the seat orders (both seats; combat's attackers only
   where the trainer learns only them), duplicate deals; exact exploitability where the
   tree is enumerable. Matches go to
   ``evaluation.sqlite`` in the run directory as they end, so an interrupted evaluation
   resumes; the summary is ``evaluation.json``.
3. **Report**: ``docs/results/comparison.md`` (``--page``) with the strength table (each
   seed's value with its 95% Wilson interval, the target, met or not: met when the
   interval's lower bound reaches the target on every seed; exploitability, exact, at or
   below it), the runs (status, episodes, wall and CPU seconds, the load average while they
   trained, commit) and, per trainer, learning curves from each run's ``metrics.csv``
   against episodes and wall time, the mean over seeds with the band from the lowest to the
   highest seed (``docs/results/curves/<trainer page>.png``, ``--curves``). The page names the
   machine, commit, date and load average: timings from a loaded machine say so. Its "Why
   not met" section (:mod:`benchmarks.why_not_met`) takes each target not met on every seed:
   the figures by seed, each seed's curve at about 1/4, 1/2, 3/4 and the end with a verdict
   (flat within the evaluation's noise, still improving, worse), and the cell's profile.
4. **Profile** (``--profile``, instead of training and the page; :mod:`benchmarks.profiling`):
   each chosen cell's shipped config trains for ``--profile-seconds`` of CPU time under
   cProfile, and ``docs/results/profiles/<cell>.md`` (``--profiles``) says where the training
   process's CPU time goes, by phase and by package; the page quotes it when next written.

Every file is written atomically (temporary file and rename); Ctrl-C stops the training
child (SIGINT to its process group, SIGKILL after 30 s), keeps what is finished and exits
130: the same command continues where it stopped.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import platform
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from benchmarks.timing import checkout_commit
from benchmarks.why_not_met import Unmet

REPO = Path(__file__).resolve().parent.parent
CONFIGS = REPO / "configs"

RECORD_NAME = "benchmark.json"  # a run's training record
EVALUATION_NAME = "evaluation.json"  # a run's evaluation summary
EVALUATION_STORE_NAME = "evaluation.sqlite"
LOG_NAME = "train.log"
# train.py's own output directory inside a run's: train.py starts a new run only in an
# empty directory, and the harness keeps its log and records beside it.
TRAINED_NAME = "run"
# Training statuses that are final: the run is not trained again.
FINAL_STATUSES = ("trained", "refused", "failed")
STOP_GRACE_SECONDS = 30.0  # SIGINT first, SIGKILL after this
LOAD_SAMPLE_SECONDS = 10.0


# ---- the cells ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Target:
    """What a cell must reach against one opponent (or in exploitability), from issue 46.

    ``measure``: ``"win"`` (win rate), ``"score"`` (wins plus half the draws: the mean goal
    of the GDL-II ReBeL paper's tables, per seat) or ``"exploitability"`` (exact, at most
    ``bound``; with ``within_seconds`` the run's own exact evaluation at that wall time, from
    its ``metrics.csv``, else the finished run's)."""

    against: str
    bound: float
    measure: str = "win"
    seat: int | None = None
    within_seconds: float | None = None
    source: str = "issue 46"

    def describe(self) -> str:
        if self.measure == "exploitability":
            text = f"<= {self.bound:g}"
            if self.within_seconds is not None:
                text += f" within {self.within_seconds / 60:g} min"
        else:
            text = f"{self.measure} >= {self.bound:g}"
        return text if self.source == "issue 46" else f"{text} ({self.source})"


@dataclass(frozen=True)
class Cell:
    """A trainer on an env with its shipped config ``configs/<name>.yaml``."""

    name: str
    trainer: str
    env: str  # the env as the table names it
    opponents: tuple[str, ...]
    targets: tuple[Target, ...] = ()
    first_seats: tuple[int, ...] | None = None  # the seats the trained agent plays (None: all)
    exact: bool = False  # exact exploitability of the finished run
    # An exact fact about the game that bounds what the targets can show ("Why not met").
    yardstick: str = ""
    # Games per pairing where the profile's 400 give an interval too wide to show a target
    # that a sound agent reaches (None: the profile's); --games and --quick override it.
    games: int | None = None

    @property
    def config(self) -> Path:
        return CONFIGS / f"{self.name}.yaml"


def _strength(bot: str) -> tuple[Target, ...]:
    """Meier and blind tic-tac-toe, NFSP-family and ExIt-OOS: 0.70 vs random, 0.55 vs the bot."""
    return (Target("random", 0.70), Target(bot, 0.55))


def _rebel_paper(bot: str, by_seat: dict[int, tuple[float, float]]) -> tuple[Target, ...]:
    """The GDL-II ReBeL paper's CFR+NN column, per seat: (vs random, vs the hand-crafted bot)
    as mean goal / 100 (issue 46: ReBeL at or above it on every seat and opponent)."""
    return tuple(
        Target(against, bound, "score", seat, source="paper CFR+NN")
        for seat, bounds in by_seat.items()
        for against, bound in zip(("random", bot), bounds)
    )


def _exploitability(bound: float, minutes: float | None) -> tuple[Target, ...]:
    seconds = None if minutes is None else 60.0 * minutes
    return (Target("exploitability", bound, "exploitability", within_seconds=seconds),)


_MEIER = ("random", "scripted:meier")
# The best equilibrium wins 0.720 against random (below): a 400-game interval around it is
# +-0.045 wide and its lower bound 0.674, so the 0.70 target needs 2,000 games (lower bound
# 0.700) before any equilibrium learner can show it.
_MEIER_GAMES = 2000
# Exact, from `python -m benchmarks.meier_ceiling` (both seats; in brackets the lower bound of
# a Wilson interval around that mean).
_MEIER_YARDSTICK = (
    "exact on this sheet (`python -m benchmarks.meier_ceiling`): against random the "
    "equilibrium that scores most against it wins 0.720 (its lower bound over 400 games: "
    "0.674; over 2,000, this cell's evaluation: 0.700) and the best response 0.851 (0.813 "
    "over 400); against the bot 0.613 (0.564 over 400, 0.591 over 2,000) and 0.720. So a "
    "lower bound of 0.70 against random takes 2,000 games even for the best equilibrium; "
    "below that it takes exploiting random's mistakes, which an equilibrium learner does not "
    "aim at."
)
_MEIER_REBEL_YARDSTICK = (
    "exact on this sheet (`python -m benchmarks.meier_ceiling`): the best response to random "
    "wins 0.914 in seat 0 and 0.788 in seat 1, below the paper's 0.97 and 0.80; the best "
    "response to the bot 0.827 and 0.613. The paper's sheet must differ from ours."
)
_BLIND = ("random", "scripted:blind_tictactoe")
# Exact, from `python -m benchmarks.blind_tictactoe_ceiling` (an equilibrium of the sheet is
# out of its reach: the paper's CFR+NN approximates one).
_BLIND_YARDSTICK = (
    "exact on this sheet (`python -m benchmarks.blind_tictactoe_ceiling`): the bot itself "
    "wins 0.763 against random in either seat (0.802 counting half the draws, the paper's "
    "CFR+NN's 0.795), and a best response to the bot wins every game in both seats (the bot "
    "is deterministic: a player that knows it foresees its every move). An equilibrium "
    "learner aims at neither opponent's mistakes. The paper's CFR+NN, an equilibrium's "
    "approximation, scored 0.48 and 0.55 by seat against its bot counting half the draws "
    "(its win rate is at most that), where this cell asks a win rate whose lower bound is "
    "0.55 in both seats together."
)
_BLIND_REBEL_YARDSTICK = (
    "exact on this sheet (`python -m benchmarks.blind_tictactoe_ceiling`): the bot scores "
    "0.802 against random in either seat (the paper's CFR+NN 0.795), and a best response to "
    "the bot wins every game in both seats."
)
_BIASED_REBEL_YARDSTICK = (
    "exact on this sheet (`python -m benchmarks.blind_tictactoe_ceiling --sheet "
    "biased_blind_tictactoe`): the bot scores 0.898 against random as x and 0.676 as o (the "
    "paper's CFR+NN 0.895 and 0.46), and a best response to the bot wins every game in both "
    "seats."
)
# Combat against the doctrine only: the figure, and a default-map game takes seconds.
_COMBAT = ("scripted:doctrine",)
_OOS = ("random", "oos:10000")  # the ExIt-OOS paper's opponent: OOS, 10,000 iterations a move
_OOS_TARGETS = (Target("random", 0.66), Target("oos:10000", 0.30))

CELLS: tuple[Cell, ...] = (
    *(
        Cell(
            f"{trainer}_meier",
            trainer,
            "Meier",
            _MEIER,
            _strength("scripted:meier"),
            yardstick=_MEIER_YARDSTICK,
            games=_MEIER_GAMES,
        )
        for trainer in ("nfsp", "anfsp", "mcnfsp", "exit_oos")
    ),
    Cell(
        "rebel_meier",
        "rebel",
        "Meier",
        _MEIER,
        _rebel_paper("scripted:meier", {0: (0.97, 0.81), 1: (0.80, 0.41)}),
        yardstick=_MEIER_REBEL_YARDSTICK,
    ),
    *(
        Cell(
            f"{trainer}_blind_tictactoe",
            trainer,
            "blind tic-tac-toe",
            _BLIND,
            _strength("scripted:blind_tictactoe"),
            yardstick=_BLIND_YARDSTICK,
        )
        for trainer in ("nfsp", "anfsp", "mcnfsp", "exit_oos")
    ),
    Cell(
        "rebel_blind_tictactoe",
        "rebel",
        "blind tic-tac-toe",
        _BLIND,
        _rebel_paper("scripted:blind_tictactoe", {0: (0.795, 0.48), 1: (0.795, 0.55)}),
        yardstick=_BLIND_REBEL_YARDSTICK,
    ),
    Cell(
        "rebel_biased_blind_tictactoe",
        "rebel",
        "biased blind tic-tac-toe",
        _BLIND,
        _rebel_paper("scripted:blind_tictactoe", {0: (0.895, 0.795), 1: (0.46, 0.44)}),
        yardstick=_BIASED_REBEL_YARDSTICK,
    ),
    # MCNFSP learns the attackers only (the doctrine defends in training): seat 0.
    Cell(
        "mcnfsp_combat",
        "mcnfsp",
        "combat, commander",
        _COMBAT,
        (Target("scripted:doctrine", 0.80),),
        first_seats=(0,),
    ),
    Cell("nfsp_combat", "nfsp", "combat, commander", _COMBAT),
    Cell("anfsp_combat", "anfsp", "combat, commander", _COMBAT),
    Cell("nfsp_leduc", "nfsp", "Leduc", ("random",), _exploitability(0.1, 10), exact=True),
    Cell("anfsp_leduc", "anfsp", "Leduc", ("random",), _exploitability(0.1, 10), exact=True),
    Cell("mcnfsp_leduc", "mcnfsp", "Leduc", ("random",), _exploitability(0.3, 15), exact=True),
    Cell("exit_oos_leduc", "exit_oos", "Leduc", ("random",), _exploitability(0.3, 15), exact=True),
    Cell("rebel_leduc", "rebel", "Leduc", ("random",), _exploitability(0.3, 15), exact=True),
    Cell("exit_oos_goofspiel6", "exit_oos", "II-Goofspiel(6)", _OOS, _OOS_TARGETS),
    Cell("exit_oos_liars_dice", "exit_oos", "Liar's Dice(1)", _OOS, _OOS_TARGETS),
    # ReBeL proper on Liar's Dice 1x4f: PBS values, frontier re-solving (docs/results/rebel.md).
    Cell(
        "rebel_pbs_liars_dice",
        "rebel",
        "Liar's Dice 1x4f",
        ("random",),
        _exploitability(0.05, None),
        exact=True,
    ),
    # Shipped configs without a target of issue 46, run for their trainer pages' curves
    # (exact exploitability against iterations or episodes and wall time): the CFR family's.
    Cell("cfr_kuhn", "cfr", "Kuhn", ("random",), exact=True),
    Cell("cfr_leduc", "cfr+", "Leduc", ("random",), exact=True),
    Cell("es_mccfr_kuhn", "es-mccfr", "Kuhn", ("random",), exact=True),
    Cell("es_mccfr_leduc", "es-mccfr", "Leduc", ("random",), exact=True),
    Cell("es_mccfr_goofspiel6", "es-mccfr", "II-Goofspiel(6)", ("random",), exact=True),
    Cell("os_mccfr_leduc", "os-mccfr", "Leduc", ("random",), exact=True),
    # ANFSP's quick shipped config (minutes where anfsp_leduc's takes 30): its page's curve.
    Cell("anfsp_kuhn", "anfsp", "Kuhn", ("random",), exact=True),
)
CELLS_BY_NAME = {cell.name: cell for cell in CELLS}

# --quick: tiny budgets on cells that cover every kind of evaluation (exact exploitability,
# a scripted bot, combat's attackers-only seats); each run trains for seconds.
QUICK_BUDGET = ["budget.episodes=null", "budget.iterations=null", "evaluation.max_seconds=5"]
QUICK_OVERRIDES: dict[str, list[str]] = {
    # torch.compile of the learning step alone would outlast the quick budget
    "nfsp_leduc": [
        *QUICK_BUDGET,
        "budget.seconds=15",
        "num_envs=16",
        "trainer.params.compile_learning_step=false",
    ],
    "nfsp_meier": [*QUICK_BUDGET, "budget.seconds=20", "evaluation.episodes_vs_random=20"],
    "mcnfsp_combat": [
        "budget.episodes=5",
        "budget.seconds=120",
        "evaluation.episodes_vs_random=5",
        "checkpoint_every_episodes=5",
    ],
}


@dataclass
class Profile:
    """Where a run of the harness writes, and how much it plays."""

    cells: tuple[Cell, ...]
    runs: Path
    page: Path
    curves: Path
    games: int
    time_limit_minutes: float
    overrides: dict[str, list[str]] = field(default_factory=dict)
    profiles: Path = REPO / "docs" / "results" / "profiles"  # benchmarks.profiling's pages
    cell_games: bool = True  # a cell's own games count applies (False: --games, --quick)

    def games_for(self, cell: Cell) -> int:
        """Games per pairing for ``cell``'s evaluations."""
        return cell.games if self.cell_games and cell.games else self.games


def profile(quick: bool) -> Profile:
    if quick:
        runs = REPO / "runs" / "benchmarks-quick"
        return Profile(
            tuple(CELLS_BY_NAME[name] for name in QUICK_OVERRIDES),
            runs,
            runs / "comparison.md",
            runs / "curves",
            games=10,
            time_limit_minutes=4,
            overrides=QUICK_OVERRIDES,
            cell_games=False,
        )
    return Profile(
        CELLS,
        REPO / "runs" / "benchmarks",
        REPO / "docs" / "results" / "comparison.md",
        REPO / "docs" / "results" / "curves",
        games=400,
        time_limit_minutes=60,
    )


# ---- small helpers ------------------------------------------------------------------------------
def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def write_json(path: Path, value: Any) -> None:
    from hiddenenvs.files import atomic_write

    text = json.dumps(value, indent=1, sort_keys=True) + "\n"
    atomic_write(path, lambda handle: handle.write(text.encode()))


def read_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise SystemExit(
            f"benchmarks train: {path} is not readable JSON ({error}); delete it"
        ) from None


def machine_description() -> str:
    """CPU model, cores, memory, OS, Python and torch: what timings depend on."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.partition(":")[2].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        memory = f", {os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB"
    except (ValueError, OSError, AttributeError):
        pass
    import torch

    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU"
    return (
        f"{model}, {os.cpu_count()} cores{memory}, {gpu}; {platform.system()} "
        f"{platform.release()}, Python {platform.python_version()}, torch {torch.__version__}"
    )


def load_average() -> tuple[float, float, float]:
    try:
        return os.getloadavg()
    except OSError:  # not on this platform
        return (math.nan, math.nan, math.nan)


def run_dir(runs: Path, cell: Cell, seed: int) -> Path:
    return runs / cell.name / f"seed{seed}"


def say(bar: Any, text: str) -> None:
    """A line above the progress bar (tqdm) or between its lines (a log)."""
    if hasattr(bar, "write"):
        bar.write(text, file=sys.stderr)
    else:
        print(text, file=sys.stderr, flush=True)


def show(bar: Any, text: str) -> None:
    """What the bar is doing now, beside it (tqdm) or in its next line (a log: one line
    every 30 s, so a long training shows it is alive)."""
    if hasattr(bar, "set_postfix_str"):
        bar.set_postfix_str(text)
    else:
        bar.set_postfix(now=text)
        bar.update(0)


# ---- training -----------------------------------------------------------------------------------
class Interrupted(Exception):
    """Ctrl-C during a run: its training child has been stopped."""


def _wait(pid: int, timeout: float | None) -> tuple[int, Any] | None:
    """``(wait status, rusage)`` once ``pid`` exits, None if still running after ``timeout``."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        waited, status, usage = os.wait4(pid, os.WNOHANG)
        if waited:
            return status, usage
        if deadline is not None and time.monotonic() >= deadline:
            return None
        time.sleep(0.2)


def _stop_group(pid: int) -> tuple[int, Any]:
    """SIGINT to the child's process group (the loop saves nothing half-written and stops its
    workers), SIGKILL after :data:`STOP_GRACE_SECONDS`; returns its wait status and usage."""
    try:
        os.killpg(pid, signal.SIGINT)
        ended = _wait(pid, STOP_GRACE_SECONDS)
    except KeyboardInterrupt:  # a second Ctrl-C: do not wait
        ended = None
    if ended is None:
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        ended = _wait(pid, None)
    assert ended is not None
    # The group's other members (workers the child started) go too, if any outlived it.
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    return ended


def _last_line(log: Path, since: int) -> str:
    """The last non-empty line the session wrote to its log (train.py's one-line verdict)."""
    with log.open("rb") as handle:
        handle.seek(since)
        lines = [line.strip() for line in handle.read().decode(errors="replace").splitlines()]
    lines = [line for line in lines if line]
    return lines[-1][:500] if lines else ""


def trained_dir(directory: Path) -> Path:
    """Where ``train.py`` writes the run kept in the harness's ``directory``."""
    return directory / TRAINED_NAME


def train_command(cell: Cell, seed: int, directory: Path, overrides: Sequence[str], resume: bool):
    script = str(REPO / "train.py")
    if resume:
        return [
            sys.executable,
            script,
            "--resume",
            str(trained_dir(directory)),
            "progress_bar=false",
        ]
    return [
        sys.executable,
        script,
        "--config",
        str(cell.config),
        f"seed={seed}",
        f"output_dir={json.dumps(str(trained_dir(directory)))}",  # quoted: YAML reads a string
        "progress_bar=false",
        *overrides,
    ]


def train_run(
    cell: Cell,
    seed: int,
    directory: Path,
    overrides: Sequence[str],
    time_limit_seconds: float,
    on_tick=None,
) -> dict:
    """Train (or resume) one run as a child ``train.py``; returns its updated record.

    The child runs in its own process group, so Ctrl-C reaches this harness only, which
    stops the child's whole group (:func:`_stop_group`) and raises :class:`Interrupted`
    once the record says so. ``on_tick(seconds)`` is called about once a second."""
    from agents.runs import CHECKPOINT_NAME

    directory.mkdir(parents=True, exist_ok=True)
    record_path = directory / RECORD_NAME
    record = read_json(record_path) or {
        "cell": cell.name,
        "seed": seed,
        "config": str(cell.config.relative_to(REPO)),
        "overrides": list(overrides),
        "sessions": [],
    }
    resume = (trained_dir(directory) / CHECKPOINT_NAME).is_file()
    if not resume and trained_dir(directory).exists():
        # A session of this harness stopped before the first checkpoint: nothing to resume,
        # and train.py starts a run only in an empty directory.
        shutil.rmtree(trained_dir(directory))
    command = train_command(cell, seed, directory, overrides, resume)
    log = directory / LOG_NAME
    with log.open("ab") as handle:
        handle.write(f"\n# {utc_now()} {shlex.join(command)}\n".encode())
        log_start = handle.tell()
        started_at, started, commit = utc_now(), time.monotonic(), checkout_commit()
        child = subprocess.Popen(
            command, cwd=REPO, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True
        )
    loads: list[float] = [load_average()[0]]
    last_sample = started
    outcome = None
    try:
        while True:
            ended = _wait(child.pid, 1.0)
            now = time.monotonic()
            if ended is not None:
                status, usage = ended
                break
            if now - last_sample >= LOAD_SAMPLE_SECONDS:
                loads.append(load_average()[0])
                last_sample = now
            if on_tick is not None:
                on_tick(now - started)
            if now - started > time_limit_seconds:
                status, usage = _stop_group(child.pid)
                outcome = "timeout"
                break
    except KeyboardInterrupt:
        status, usage = _stop_group(child.pid)
        outcome = "interrupted"
    child.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait
    loads.append(load_average()[0])
    exit_code = child.returncode
    message = _last_line(log, log_start)
    if outcome is None:
        if exit_code == 0:
            outcome = "trained"
        elif exit_code == 2:
            outcome = "refused"
        elif exit_code == 1 and resume and "trained nothing" in message:
            outcome = "trained"  # killed after its last checkpoint: its budget was already spent
            message = f"resumed with its budget spent ({message})"
        else:
            outcome = "failed"
    if outcome == "timeout":
        message = f"stopped at the time limit ({time_limit_seconds:.0f} s); the next run resumes it"
    record["sessions"].append(
        {
            "started_at": started_at,
            "resumed": resume,
            "exit_code": exit_code,
            "outcome": outcome,
            "wall_seconds": round(time.monotonic() - started, 1),
            "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 1),
            "load_max": round(max(loads), 2),
            "load_mean": round(sum(loads) / len(loads), 2),
            "commit": commit,  # the code the session started with
        }
    )
    record["status"] = outcome
    record["message"] = message
    write_json(record_path, record)
    if outcome == "interrupted":
        raise Interrupted
    return record


# ---- evaluation ---------------------------------------------------------------------------------
def games_per_seat_order(cell: Cell, env: str, params: dict, games_per_pairing: int) -> int:
    """Games per seat order so that a pairing plays at least ``games_per_pairing`` in all."""
    import hiddenenvs
    from agents.leaderboard.matches import seat_orders

    num_players = hiddenenvs.load_game(env, **params).info.num_players
    orders = seat_orders("agent", "opponent", num_players)
    if cell.first_seats is not None:
        orders = [o for o in orders if any(o[s] == "agent" for s in cell.first_seats)]
    return math.ceil(games_per_pairing / len(orders))


def outcome_counts(results, agent: str, opponent: str) -> dict[str, dict[str, int]]:
    """Wins, draws and losses of ``agent`` against ``opponent`` over all stored matches of
    the pairing, and per seat where it sat alone (``"all"``, ``"seat 0"``, ...)."""
    from agents.leaderboard.stats import games_from_seats

    counts: dict[str, dict[str, int]] = {}
    for result in results:
        seats = result.key.seats
        if set(seats) != {agent, opponent}:
            continue
        game = games_from_seats(seats, result.returns, result.env_seed)
        points = game.first_points if game.first == agent else 1.0 - game.first_points
        outcome = "wins" if points == 1.0 else ("draws" if points == 0.5 else "losses")
        keys = ["all"]
        if seats.count(agent) == 1:
            keys.append(f"seat {seats.index(agent)}")
        for key in keys:
            tally = counts.setdefault(key, {"games": 0, "wins": 0, "draws": 0, "losses": 0})
            tally["games"] += 1
            tally[outcome] += 1
    return counts


def evaluate_run(cell: Cell, directory: Path, games: int, workers: int) -> dict:
    """Play the run's agents against the cell's opponents (or read what was played); returns
    and writes ``evaluation.json``."""
    from agents.config import load_config
    from agents.leaderboard import evaluate
    from agents.leaderboard.matches import EnvVariant
    from agents.leaderboard.specs import agent_identity
    from agents.leaderboard.store import ResultStore

    spec = str(trained_dir(directory))
    identity = agent_identity(spec)
    summary_path = directory / EVALUATION_NAME
    summary = read_json(summary_path)
    if summary and summary.get("agent") == identity and summary.get("games_per_pairing") == games:
        return summary
    config = load_config(cell.config)
    env, params = config.env.name, dict(config.env.params)
    started = time.monotonic()
    database = directory / EVALUATION_STORE_NAME
    evaluate(
        env,
        params,
        [spec, *cell.opponents],
        games_per_seat_order(cell, env, params, games),
        database,
        mode="gauntlet",
        workers=workers,
        exploitability_max_nodes=200_000 if cell.exact else 0,
        progress=False,
        first_seats=cell.first_seats,
    )
    variant = EnvVariant.resolve(env, params)
    with ResultStore(database) as store:
        results = store.results(variant.name, variant.params_json)
        exploitability = store.exploitability(variant.name, variant.params_json).get(identity)
    summary = {
        "agent": identity,
        "games_per_pairing": games,
        "opponents": {
            opponent: outcome_counts(results, identity, agent_identity(opponent))
            for opponent in cell.opponents
        },
        "exploitability": exploitability,
        "seconds": round(time.monotonic() - started, 1),
        "load_at_end": round(load_average()[0], 2),
        "finished_at": utc_now(),
        "commit": checkout_commit(),
    }
    write_json(summary_path, summary)
    return summary


# ---- the report ---------------------------------------------------------------------------------
def read_metrics(directory: Path) -> list[dict[str, float | None]]:
    """The run's ``metrics.csv`` rows as numbers (None where empty); [] without one."""
    path = trained_dir(directory) / "metrics.csv"
    if not path.is_file():
        return []
    with path.open(newline="") as handle:
        return [
            {key: (float(value) if value not in ("", None) else None) for key, value in row.items()}
            for row in csv.DictReader(handle)
        ]


@dataclass(frozen=True)
class Measured:
    """One seed's value for a table row: ``value`` with its Wilson interval (None for exact
    figures), and whether it meets the row's target."""

    value: float
    low: float | None = None
    high: float | None = None
    games: int | None = None

    def meets(self, target: Target) -> bool:
        if target.measure == "exploitability":
            return self.value <= target.bound
        return self.low is not None and self.low >= target.bound

    def text(self) -> str:
        if self.low is None:
            return f"{self.value:.3g}"
        return f"{self.value:.3f} [{self.low:.3f}, {self.high:.3f}]"


@dataclass(frozen=True)
class Row:
    """A line of the strength table: one opponent (one seat of it) or exploitability."""

    against: str
    measure: str = "win"
    seat: int | None = None
    within_seconds: float | None = None
    target: Target | None = None

    def label(self) -> str:
        if self.against == "exploitability":
            when = (
                "end of run"
                if self.within_seconds is None
                else f"at {self.within_seconds / 60:g} min of training"
            )
            return f"exploitability, {when}"
        where = "" if self.seat is None else f", seat {self.seat}"
        return f"{self.against}{where} ({self.measure})"


def table_rows(cell: Cell) -> list[Row]:
    rows = []
    for opponent in cell.opponents:
        overall = [t for t in cell.targets if t.against == opponent and t.seat is None]
        measure = overall[0].measure if overall else "win"
        rows.append(Row(opponent, measure, target=overall[0] if overall else None))
        rows += [
            Row(opponent, t.measure, t.seat, target=t)
            for t in cell.targets
            if t.against == opponent and t.seat is not None
        ]
    if cell.exact:
        exact = [t for t in cell.targets if t.measure == "exploitability"]
        if not any(t.within_seconds is None for t in exact):
            rows.append(Row("exploitability", "exploitability"))
        rows += [
            Row("exploitability", "exploitability", within_seconds=t.within_seconds, target=t)
            for t in exact
        ]
    return rows


def measure(row: Row, evaluation: dict | None, metrics: list[dict]) -> Measured | None:
    """The row's value for one run, None when the run has no such figure."""
    from agents.leaderboard.stats import wilson_interval

    if row.against == "exploitability":
        if row.within_seconds is not None:
            points = [
                m["exploitability"]
                for m in metrics
                if m.get("exploitability") is not None
                and (m.get("wall_seconds") or 0.0) <= row.within_seconds
            ]
            return Measured(points[-1]) if points else None
        if evaluation is None or evaluation.get("exploitability") is None:
            return None
        return Measured(evaluation["exploitability"])
    if evaluation is None:
        return None
    counts = (
        evaluation["opponents"]
        .get(row.against, {})
        .get("all" if row.seat is None else f"seat {row.seat}")
    )
    if not counts or not counts["games"]:
        return None
    successes = counts["wins"] + (0.5 * counts["draws"] if row.measure == "score" else 0.0)
    low, high = wilson_interval(successes, counts["games"])
    return Measured(successes / counts["games"], low, high, counts["games"])


def verdict(row: Row, values: list[Measured | None]) -> str:
    if row.target is None:
        return ""
    done = [v for v in values if v is not None]
    if not done:
        return "not run"
    met = sum(v.meets(row.target) for v in done)
    if len(done) < len(values):
        return f"{met}/{len(done)} seeds so far"
    return (
        f"**met** ({met}/{len(values)})" if met == len(values) else f"not met ({met}/{len(values)})"
    )


def page_name(trainer: str) -> str:
    """The trainer's docs page (and curve file) name: ``cfr+`` -> ``cfr_plus``, as the docs
    generator names it."""
    return trainer.replace("+", "_plus").replace("-", "_")


def curve_metric(runs: list[list[dict]]) -> str | None:
    """What a cell's curves show: exact exploitability, else the win rate against its
    evaluation opponent, else the mean return against random."""
    for metric in ("exploitability", "win_rate", "return_vs_random"):
        if any(m.get(metric) is not None for rows in runs for m in rows):
            return metric
    return None


def metric_label(cell: Cell, metric: str) -> str:
    """The curve's y axis: a win rate or return names the config's evaluation opponent."""
    if metric == "exploitability":
        return "exploitability"
    from agents.config import load_config

    opponent = load_config(cell.config).evaluation.opponent
    return f"{metric.replace('_vs_random', '').replace('_', ' ')} vs {opponent}"


def band(series: list[tuple[list[float], list[float]]], points: int = 60):
    """``(grid, mean, low, high)`` over seeds on a common grid from 0 to the shortest seed's
    end (linear interpolation between a seed's logged points)."""
    import numpy as np

    end = min(xs[-1] for xs, _ in series)
    grid = np.linspace(min(xs[0] for xs, _ in series), end, points)
    values = np.array([np.interp(grid, xs, ys) for xs, ys in series])
    return grid, values.mean(axis=0), values.min(axis=0), values.max(axis=0)


def plot_trainer(trainer: str, cells: list[tuple[Cell, str, list[list[dict]]]], path: Path) -> None:
    """One row per cell (its metric against episodes and against wall time): each seed thin,
    the mean over seeds bold with the band from the lowest to the highest seed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from hiddenenvs.files import atomic_write

    figure, axes = plt.subplots(
        len(cells), 2, figsize=(10, 3.2 * len(cells)), squeeze=False, sharey="row"
    )
    for (cell, metric, runs), (by_episodes, by_time) in zip(cells, axes):
        unit = (
            "episodes"
            if any((m.get("episodes") or 0) > 0 for r in runs for m in r)
            else "iterations"
        )
        for axis, x_name, x_label in (
            (by_episodes, unit, unit),
            (by_time, "wall_seconds", "wall time (s)"),
        ):
            series = []
            for seed_rows in runs:
                points = [m for m in seed_rows if m.get(metric) is not None]
                if points:
                    xs = [float(m[x_name] or 0.0) for m in points]
                    ys = [float(m[metric]) for m in points]
                    axis.plot(xs, ys, color="tab:blue", alpha=0.3, linewidth=0.8)
                    series.append((xs, ys))
            if series:
                grid, mean, low, high = band(series)
                name = f"mean of {len(series)} seeds" if len(series) > 1 else "one seed"
                axis.plot(grid, mean, color="tab:blue", linewidth=2, label=name)
                if len(series) > 1:
                    axis.fill_between(
                        grid, low, high, color="tab:blue", alpha=0.2, label="seed range"
                    )
                axis.legend(fontsize=8)
            axis.set_xlabel(x_label)
            axis.grid(alpha=0.3)
        values = [m[metric] for r in runs for m in r if m.get(metric) is not None]
        if metric == "exploitability" and min(values) > 0 and max(values) > 10 * min(values):
            by_episodes.set_yscale("log")  # a log scale only where the curve spans a decade
        # Counts of 10^4 and more as a multiple of a power of ten: written out, the six-digit
        # tick labels of a 700,000-episode axis ran into each other.
        by_episodes.ticklabel_format(axis="x", style="sci", scilimits=(0, 4))
        by_episodes.set_ylabel(metric_label(cell, metric))
        by_episodes.set_title(f"{trainer} on {cell.env} ({cell.name})", fontsize=10, loc="left")
    figure.tight_layout()
    atomic_write(path, lambda handle: figure.savefig(handle, format="png", dpi=90))
    plt.close(figure)


def not_met(target: Target, values: list[Measured | None]) -> bool:
    """A target the page must explain: some seed's figure misses it, or no seed has one."""
    done = [value for value in values if value is not None]
    return not done or not all(value.meets(target) for value in done)


def why_not_met_section(
    prof: Profile,
    seeds: list[int],
    unmet_cells: list[tuple[Cell, list[Unmet], list[list[dict]], str | None]],
    not_run: list[str],
) -> list[str]:
    """The page's "Why not met" lines (:mod:`benchmarks.why_not_met`)."""
    from benchmarks.profiling import read_summary
    from benchmarks.why_not_met import entry, section

    entries = []
    for cell, unmet, metrics, metric in unmet_cells:
        entries.append(
            entry(
                cell,
                unmet,
                seeds,
                metrics,
                metric,
                metric_label(cell, metric) if metric is not None else "",
                curve_opponent(cell, metric),
                read_summary(prof.profiles, cell.name),
                metric is not None,
                os.path.relpath(prof.profiles / f"{cell.name}.md", prof.page.parent),
            )
        )
    lines = section(entries, not_run)
    # The profile pages join the docs through this page (sphinx -W fails on a page outside
    # every toctree), where they sit below it as the docs' do.
    pages = sorted(prof.profiles.glob("*.md")) if prof.profiles.is_dir() else []
    relative = [os.path.relpath(path, prof.page.parent) for path in pages]
    if relative and not any(path.startswith("..") for path in relative):
        lines += ["```{toctree}", ":hidden:", ""]
        lines += [path.removesuffix(".md") for path in relative]
        lines += ["```", ""]
    return lines


def curve_opponent(cell: Cell, metric: str | None) -> str:
    """Whom a cell's curve measures: ``exploitability``, else its config's evaluation
    opponent (a win rate or return against it)."""
    if metric is None or metric == "exploitability":
        return metric or ""
    from agents.config import load_config

    return str(load_config(cell.config).evaluation.opponent)


def _markdown_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def write_report(prof: Profile, seeds: list[int], command: str) -> None:
    """The page and the curves from what is on disk (runs not made are 'not run')."""
    from hiddenenvs.files import atomic_write

    shipped = [cell for cell in prof.cells if cell.config.is_file()]
    missing = [cell for cell in prof.cells if not cell.config.is_file()]
    seed_columns = [f"seed {seed}" for seed in seeds]
    strength: list[list[str]] = []
    runs_table: list[list[str]] = []
    curve_inputs: dict[str, list[tuple[Cell, str, list[list[dict]]]]] = {}
    loads_seen: list[float] = []
    unmet_cells: list[tuple[Cell, list[Unmet], list[list[dict]], str | None]] = []
    not_run: list[str] = []
    for cell in shipped:
        evaluations: list[dict | None] = []
        metrics: list[list[dict]] = []
        for seed in seeds:
            directory = run_dir(prof.runs, cell, seed)
            record = read_json(directory / RECORD_NAME)
            evaluation = read_json(directory / EVALUATION_NAME)
            rows = read_metrics(directory)
            final = record is not None and record.get("status") == "trained"
            evaluations.append(evaluation if final else None)
            metrics.append(rows if final else [])
            if record is None:
                runs_table.append([cell.name, str(seed), "not run", "", "", "", "", "", ""])
                continue
            sessions = record["sessions"]
            loads_seen += [s["load_max"] for s in sessions]
            last = rows[-1] if rows else {}
            runs_table.append(
                [
                    cell.name,
                    str(seed),
                    record["status"]
                    + (f": {record['message']}" if record["status"] != "trained" else ""),
                    f"{last.get('episodes') or 0:,.0f}" if last else "",
                    f"{last.get('wall_seconds') or 0:,.0f}" if last else "",
                    f"{sum(s['cpu_seconds'] for s in sessions):,.0f}",
                    f"{max(s['load_max'] for s in sessions):.1f}",
                    str(len(sessions)),
                    sessions[-1]["commit"],
                ]
            )
        unmet: list[Unmet] = []
        for row in table_rows(cell):
            values = [measure(row, e, m) for e, m in zip(evaluations, metrics)]
            said = verdict(row, values)
            strength.append(
                [cell.env, cell.trainer, row.label()]
                + [("-" if v is None else v.text()) for v in values]
                + [row.target.describe() if row.target else "", said]
            )
            if row.target is not None and not_met(row.target, values):
                unmet.append(
                    Unmet(
                        row.label(),
                        row.target.describe(),
                        said,
                        row.target.bound,
                        row.target.measure == "exploitability",
                        values,
                        row.against if row.seat is None and row.measure != "score" else "",
                    )
                )
        metric = curve_metric(metrics)
        if unmet and all(v is None for u in unmet for v in u.values):
            not_run.append(f"`{cell.name}`")
        elif unmet:
            unmet_cells.append((cell, unmet, metrics, metric))
        if metric is not None:
            curve_inputs.setdefault(cell.trainer, []).append(
                (cell, metric, [m for m in metrics if m])
            )
    prof.curves.mkdir(parents=True, exist_ok=True)
    figures = []
    for trainer, cells in curve_inputs.items():
        path = prof.curves / f"{page_name(trainer)}.png"
        plot_trainer(trainer, cells, path)
        figures.append((trainer, os.path.relpath(path, prof.page.parent)))
    why = why_not_met_section(prof, seeds, unmet_cells, not_run)
    by_games: dict[int, list[str]] = {}  # cells with their own games count
    for cell in prof.cells:
        if prof.games_for(cell) != prof.games:
            by_games.setdefault(prof.games_for(cell), []).append(cell.name)
    games = f"{prof.games:,} games per pairing" + "".join(
        f" ({', '.join(names)}: {n:,}, see their yardstick)" for n, names in by_games.items()
    )
    load_now = load_average()
    during = f"; while training: at most {max(loads_seen):.1f}" if loads_seen else ""
    lines = [
        "# Every trainer on the flagship envs",
        "",
        "Generated by `python -m benchmarks train` (benchmarks/training.py); edit the code, not this "
        "page. Each cell is a trainer on an env with its shipped config, trained through "
        "`train.py` once per seed, then evaluated through `agents.leaderboard.evaluate` "
        f"(evaluate.py's machinery): {games} shared over the seat orders, "
        "duplicate deals, 95% Wilson intervals; exploitability is exact.",
        "",
        "| | |",
        "|---|---|",
        f"| date | {utc_now()} |",
        f"| commit | {checkout_commit()} (each run's own commit is in the runs table) |",
        f"| machine | {machine_description()} |",
        f"| load average | {load_now[0]:.1f} / {load_now[1]:.1f} / {load_now[2]:.1f} (1 / 5 / 15 min) "
        f"when this page was written{during}; timings on a loaded machine are longer than idle |",
        f"| command | `{command}` |",
        "| met | the interval's lower bound at or above the target on every seed (exploitability: "
        "at or below it) |",
        "",
        "## Strength",
        "",
        "`win`: win rate; `score`: wins plus half the draws (the ReBeL paper's mean goal, per "
        "seat); `-`: no figure (the run is missing, failed or has no such evaluation).",
        "",
        _markdown_table(["env", "trainer", "against", *seed_columns, "target", "met"], strength),
        "",
        "## Runs",
        "",
        "Episodes and wall seconds from the run's last `metrics.csv` row; CPU seconds of the "
        "training process (all sessions); load: the highest 1-minute load average sampled "
        "while it trained.",
        "",
        _markdown_table(
            ["cell", "seed", "status", "episodes", "wall s", "CPU s", "load", "sessions", "commit"],
            runs_table,
        ),
        "",
        "## Learning curves",
        "",
        "Each run's own evaluations during training (`metrics.csv`: exact exploitability, or the "
        "win rate against the config's evaluation opponent), against episodes and wall time: "
        "each seed thin, the mean over seeds bold, the band from the lowest to the highest seed.",
        "",
    ]
    for trainer, relative in figures:
        lines += [f"![{trainer}: learning curves]({relative})", ""]
    if not figures:
        lines += ["No run has finished yet.", ""]
    lines += why
    if missing:
        lines += [
            "## Cells without a shipped config",
            "",
            "Not run: the harness trains shipped configs only.",
            "",
        ]
        lines += [
            f"- {cell.trainer} on {cell.env}: no `configs/{cell.name}.yaml`" for cell in missing
        ]
        lines.append("")
    text = "\n".join(lines)
    atomic_write(prof.page, lambda handle: handle.write(text.encode()))


# ---- the command --------------------------------------------------------------------------------
def parse_arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks train",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--cells", nargs="+", metavar="CELL", help="cells to run (default: all)")
    parser.add_argument(
        "--seeds", nargs="+", type=int, default=None, help="default 0 1 2 (--quick: 0)"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="CI's profile: a few cells, seconds of training each, 10 games per pairing, "
        "into runs/benchmarks-quick/",
    )
    parser.add_argument("--games", type=int, help="games per pairing (default 400; --quick 10)")
    parser.add_argument(
        "--workers", type=int, default=1, help="processes playing evaluation matches"
    )
    parser.add_argument(
        "--time-limit",
        type=float,
        metavar="MINUTES",
        help="stop a training session after this long (default 60; --quick 4); the next "
        "command resumes it",
    )
    parser.add_argument("--runs", type=Path, help="run directories (default runs/benchmarks)")
    parser.add_argument("--page", type=Path, help="the page (default docs/results/comparison.md)")
    parser.add_argument("--curves", type=Path, help="curve PNGs (default docs/results/curves)")
    parser.add_argument("--report-only", action="store_true", help="write the page from disk only")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="instead of the harness: train each chosen cell (default: every cell with a "
        "target) for --profile-seconds under cProfile and write <profiles>/<cell>.md and "
        ".json (benchmarks/profiling.py); the page quotes them on its next writing",
    )
    parser.add_argument(
        "--profile-seconds",
        type=float,
        default=60.0,
        help="CPU seconds of training a profile holds, past set-up and the first evaluation (60)",
    )
    parser.add_argument(
        "--profiles", type=Path, help="profile pages (default docs/results/profiles)"
    )
    parser.add_argument(
        "--profile-set",
        nargs="+",
        default=[],
        metavar="KEY=VALUE",
        help="config overrides for the profiled runs, named on their pages (e.g. "
        "trainer.params.workers=0: ExIt-OOS's self-play in the profiled process)",
    )
    parser.add_argument("--list", action="store_true", help="print the cells and exit")
    return parser.parse_args(argv)


def list_cells(prof: Profile) -> None:
    for cell in prof.cells:
        shipped = "shipped" if cell.config.is_file() else "NO CONFIG"
        targets = "; ".join(
            f"{t.against}{'' if t.seat is None else f' seat {t.seat}'} {t.describe()}"
            for t in cell.targets
        )
        print(
            f"{cell.name:30} {shipped:9} vs {', '.join(cell.opponents)}; {targets or 'no target'}"
        )


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    arguments = parse_arguments(argv)
    prof = profile(arguments.quick)
    if arguments.runs is not None:
        prof.runs = arguments.runs.resolve()
    if arguments.page is not None:
        prof.page = arguments.page.resolve()
    if arguments.curves is not None:
        prof.curves = arguments.curves.resolve()
    if arguments.profiles is not None:
        prof.profiles = arguments.profiles.resolve()
    if arguments.games is not None:
        prof.games, prof.cell_games = arguments.games, False
    if arguments.time_limit is not None:
        prof.time_limit_minutes = arguments.time_limit
    seeds = (
        arguments.seeds if arguments.seeds is not None else ([0] if arguments.quick else [0, 1, 2])
    )
    known = {cell.name for cell in prof.cells}
    unknown = [name for name in arguments.cells or [] if name not in known]
    if unknown:
        print(
            f"benchmarks train: unknown cell(s) {', '.join(unknown)}"
            f"{' in the --quick profile' if arguments.quick else ''}; cells: {', '.join(sorted(known))}",
            file=sys.stderr,
        )
        return 2
    if arguments.list:
        list_cells(prof)
        return 0
    command = shlex.join(["python", "-m", "benchmarks", "train", *argv])
    if arguments.profile:
        from benchmarks.profiling import profile_cells

        if arguments.profile_seconds <= 0:
            print(
                f"benchmarks train: --profile-seconds must be positive, got "
                f"{arguments.profile_seconds:g}",
                file=sys.stderr,
            )
            return 2
        chosen = [
            c
            for c in prof.cells
            if (c.name in arguments.cells if arguments.cells else bool(c.targets))
        ]
        try:
            status = profile_cells(
                chosen,
                arguments.profile_seconds,
                prof.profiles,
                command,
                checkout_commit(),
                machine_description(),
                arguments.profile_set,
            )
        except KeyboardInterrupt:
            print("\nbenchmarks train: interrupted; the profiles written are kept", file=sys.stderr)
            return 130
        print(
            f"benchmarks train: profiles in {prof.profiles}; `--report-only` quotes them on the page"
        )
        return status
    if not arguments.report_only:
        chosen = [c for c in prof.cells if arguments.cells is None or c.name in arguments.cells]
        try:
            run_all(prof, chosen, seeds, arguments.workers)
        except (Interrupted, KeyboardInterrupt):
            print(
                "\nbenchmarks train: interrupted; what finished is kept, the same command resumes",
                file=sys.stderr,
            )
            return 130
    write_report(prof, seeds, command)
    print(f"benchmarks train: {prof.page} and curves in {prof.curves}")
    return 0


def run_all(prof: Profile, cells: list[Cell], seeds: list[int], workers: int) -> None:
    """Train and evaluate every (cell, seed) that is not done, with one progress bar."""
    from agents.progress import progress_bar

    missing = [cell.name for cell in cells if not cell.config.is_file()]
    if missing:
        print(
            f"benchmarks train: no shipped config, not run: {', '.join(missing)}", file=sys.stderr
        )
    jobs = [(cell, seed) for cell in cells if cell.config.is_file() for seed in seeds]
    bar = progress_bar(total=len(jobs), unit="run", desc="benchmarks", dynamic_ncols=True)
    try:
        for cell, seed in jobs:
            directory = run_dir(prof.runs, cell, seed)
            record = read_json(directory / RECORD_NAME)
            if record is None or record.get("status") not in FINAL_STATUSES:

                def tick(seconds: float, name: str = f"{cell.name} seed {seed}") -> None:
                    show(bar, f"{name}: training {seconds:.0f} s")

                record = train_run(
                    cell,
                    seed,
                    directory,
                    prof.overrides.get(cell.name, []),
                    60.0 * prof.time_limit_minutes,
                    on_tick=tick,
                )
                session = record["sessions"][-1]
                say(
                    bar,
                    f"{cell.name} seed {seed}: {record['status']} in {session['wall_seconds']:.0f} s "
                    f"({session['cpu_seconds']:.0f} CPU s, load up to {session['load_max']:.1f})"
                    + ("" if record["status"] == "trained" else f": {record['message']}"),
                )
            if record["status"] == "trained":
                show(bar, f"{cell.name} seed {seed}: evaluating")
                summary = evaluate_run(cell, directory, prof.games_for(cell), workers)
                say(bar, f"{cell.name} seed {seed}: {_brief(summary)}")
            bar.update(1)
    finally:
        bar.close()


def _brief(summary: dict) -> str:
    parts = []
    for opponent, counts in summary["opponents"].items():
        tally = counts.get("all")
        if tally and tally["games"]:
            parts.append(
                f"win {tally['wins'] / tally['games']:.2f} vs {opponent} ({tally['games']} games)"
            )
    if summary.get("exploitability") is not None:
        parts.append(f"exploitability {summary['exploitability']:.4g}")
    return ", ".join(parts) or "no games"


if __name__ == "__main__":
    sys.exit(main())
