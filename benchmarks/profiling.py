"""Where a flagship cell's training process spends its CPU time: ``benchmarks train --profile``.

    python -m benchmarks train --profile --cells nfsp_meier mcnfsp_meier --profile-seconds 60

Each chosen cell's shipped config trains through ``train.py``'s ``main`` (the entry point
the harness runs), seed 0, in a child process under :mod:`cProfile` with
``timer=time.process_time``: CPU seconds, so the load of other jobs on the machine does not
distort the shares. The harness stops the child as Ctrl-C does once it has trained for
``--profile-seconds`` of its own CPU time after its first evaluation (:func:`run_profile`;
the run's budget is only a wall-clock ceiling, each evaluation capped at a tenth of
``--profile-seconds``): a profile holds the same work on a loaded machine as on an idle one,
and takes longer. ``--profile-set`` adds overrides, named on the page (ExIt-OOS with
``trainer.params.workers=0`` plays its self-play in the profiled process). The run's
directory is temporary; what is kept is ``<profiles>/<cell>.md`` (the page) and
``<profiles>/<cell>.json`` (its figures, which the "Why not met" section of
``comparison.md`` quotes).

The page breaks the CPU time down two ways:

* **By phase.** A function is a phase's *root* when its module and name say so
  (:data:`PHASE_ROOTS`: the loop's evaluation and checkpoints, the trainers' self-play and
  acting, search, learner updates and their steps). Every function's own (self) time goes to
  the phase of the innermost root above it; evaluation and checkpoints keep everything they
  call (an evaluation's acting is evaluation, not self-play). cProfile records who called
  whom, not whole stacks, so a function called from several phases (a network's forward
  pass, an env's step) has its time split between them in proportion to each caller's
  cumulative time: exact for a function called from one phase, an estimate for shared ones.
  Time under no root is set-up and wrap-up (imports, the fit check, building the game, the
  learner and an evaluation tree).
* **By package of self time**: the env (``hiddenenvs``), ``agents.<module>``, torch, numpy,
  compiled extensions of this project, Python's built-ins and standard library, other
  libraries.

cProfile adds a fixed cost to every Python call it records, so code made of many small calls
(an env's Python step, a search's recursion) weighs more here than unprofiled, and code that
spends its time in few long native calls (torch's kernels) less. Only the training process
is profiled: a trainer whose self-play runs in other processes (ANFSP's Ray actor-learners,
worker pools) shows here only what the training process does, and its waiting on them is
not CPU time; the page says so when the profile has handed work to them.
"""

from __future__ import annotations

import json
import os
import pstats
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent

# Phases, in the order a page lists them.
SET_UP = "set-up and wrap-up"
SELF_PLAY = "self-play and acting"
SEARCH = "search"
UPDATES = "learner updates"
STEP_OTHER = "training step, other"
EVALUATION = "evaluation"
CHECKPOINTS = "checkpoints"
PHASES = (SELF_PLAY, SEARCH, UPDATES, STEP_OTHER, EVALUATION, CHECKPOINTS, SET_UP)
# Phases that keep everything they call (an evaluation's acting is evaluation).
ENCLOSING = (EVALUATION, CHECKPOINTS)
# The phases of a training step: their shares without set-up and evaluation are what a long
# run's steady state looks like (a short profile weighs set-up and evaluation more).
TRAINING = (SELF_PLAY, SEARCH, UPDATES, STEP_OTHER)

# (phase, module pattern, function-name pattern): a function whose module (its file, as
# ``agents/mcnfsp/search.py`` or ``torch/optim/adam.py``) matches the first and whose name
# matches the second is a root of the phase. Listed by module and name, not by cell: a new
# trainer whose functions are named like these is recognised without an entry here.
_TRAINERS = r"agents/(nfsp|anfsp|memories|mcnfsp/.*|exit_oos/.*|rebel/.*)\.py"
PHASE_ROOTS: tuple[tuple[str, str, str], ...] = (
    (EVALUATION, r"agents/loop\.py", r"evaluate|_evaluate|exact_exploitability"),
    (CHECKPOINTS, r"agents/run\.py", r"save"),  # Checkpointer.save
    (CHECKPOINTS, r"agents/checkpoint\.py", r"atomic_torch_save"),
    (STEP_OTHER, r"agents/loop\.py", r"_step"),
    (STEP_OTHER, _TRAINERS, r"step"),  # a learner's step: what it does besides the phases below
    (
        SELF_PLAY,
        r"agents/(loop|episodes|vector_self_play|parallel)\.py",
        r"self_play|play_episodes|play_vector_episodes|play_out|map|map_all",
    ),
    (
        SELF_PLAY,
        _TRAINERS,
        r".*self_play.*|_?play(_.*)?|.*_play|play_and_solve|act_batch|observe.*|end_episode",
    ),
    (SEARCH, r"agents/search/.*\.py|agents/(mcnfsp|rebel)/search\.py", r".*"),
    (
        SEARCH,
        r"agents/(mcnfsp/deviations|mcnfsp/tree|exit_oos/expert|exit_oos/deviations)\.py",
        r".*",
    ),
    (SEARCH, r"agents/rebel/(gadget|beliefs|samplers)\.py", r".*"),
    (SEARCH, _TRAINERS, r".*search.*|.*solve.*|_cfr"),
    (
        UPDATES,
        _TRAINERS,
        r"update|learn|(rl|sl)_step|rl_and_sl_step|train_step|_?train_batch|_apply|_sl_step"
        r"|.*_loss|td_gradients|train_pbs_values",
    ),
    (UPDATES, r"torch/(autograd|optim)/.*\.py", r"backward|_engine_run_backward|step|zero_grad"),
    (UPDATES, r"torch/_tensor\.py", r"backward"),
)
_COMPILED_ROOTS = ("hiddenenvs", "agents")  # packages whose compiled modules are ours
# Where the training process hands work to other processes: a worker pool's map (processes or
# Ray actors) and an actor pool's task.
_POOL_CALLS = {
    ("agents/parallel.py", "map"),
    ("agents/parallel.py", "map_all"),
    ("agents/actor_pool.py", "submit"),
}


def module_of(filename: str) -> str:
    """A profiled file as its module path: relative to the checkout, or from the package
    directory of an installed library (``torch/nn/modules/module.py``); never a machine path."""
    path = Path(filename)
    try:
        return path.resolve().relative_to(REPO).as_posix()
    except (ValueError, OSError):
        pass
    parts = path.parts
    for marker in ("site-packages", "dist-packages"):
        if marker in parts:
            return "/".join(parts[parts.index(marker) + 1 :])
    if "lib" in parts:  # the standard library: lib/python3.11/<module>
        index = len(parts) - 1 - parts[::-1].index("lib")
        return "python/" + "/".join(parts[index + 2 :])
    return path.name


def label_of(function: tuple[str, int, str]) -> str:
    """``module:line(name)`` as pstats prints it, with the module path of :func:`module_of`."""
    filename, line, name = function
    if filename == "~":
        return name
    return f"{module_of(filename)}:{line}({name})"


def phase_root(function: tuple[str, int, str]) -> str | None:
    """The phase whose root ``function`` is (:data:`PHASE_ROOTS`), None for most functions."""
    filename, _, name = function
    if filename == "~" or name in ("<module>", "__init__"):  # imports and constructors: set-up
        return None
    module = module_of(filename)
    for phase, module_pattern, name_pattern in PHASE_ROOTS:
        if re.fullmatch(module_pattern, module) and re.fullmatch(name_pattern, name):
            return phase
    return None


def package_of(function: tuple[str, int, str]) -> str:
    """The bucket of a function's self time: ``hiddenenvs (env)``, ``agents.<module>``,
    ``torch``, ``numpy``, ``compiled: <module>``, ``Python built-ins``, ``Python standard
    library`` or ``other: <library>``."""
    filename, _, name = function
    if filename == "~":  # a C function: its module from the name cProfile gives it
        method = re.fullmatch(r"<method '\w+' of '([\w.]+)' objects>", name)
        builtin = re.fullmatch(r"<built-in method ([\w.]+)>", name)
        found = method or builtin
        module = found.group(1).rsplit(".", 1)[0] if found else ""
        top = module.split(".")[0]
        if top in _COMPILED_ROOTS:
            return f"compiled: {module}"
        if top in ("torch", "numpy"):
            return top
        return "Python built-ins"
    module = module_of(filename)
    top = module.split("/")[0]
    if top == "hiddenenvs":
        return "hiddenenvs (env)"
    if top == "agents":
        parts = module.removesuffix(".py").split("/")
        return "agents." + (parts[1] if len(parts) > 1 else parts[0])
    if top in ("torch", "numpy"):
        return top
    if top == "python" or filename.startswith("<frozen"):
        return "Python standard library"
    if module.endswith(".py") and "/" not in module:  # a top-level script: train.py
        return "the entry point"
    return f"other: {top}"


@dataclass(frozen=True)
class Breakdown:
    """A profile's CPU seconds: ``total``, by phase and by package; ``top``: the functions
    with the most cumulative time as ``(label, calls, self seconds, cumulative seconds)``."""

    total: float
    phases: dict[str, float]
    packages: dict[str, float]
    top: list[tuple[str, int, float, float]]
    calls: int
    steps: int  # the loop's training steps (``learner.step`` calls) in the profile
    pool_calls: int  # work handed to other processes: worker pools' maps, Ray actors' tasks


def phase_distributions(stats: dict) -> dict[tuple, dict[str, float]]:
    """Each function's share of each phase (summing to 1): its own root's phase (kept
    inside an enclosing phase), else its callers' shares weighted by the cumulative time
    each call edge took; a function nobody called (the top of the profile) is set-up.

    A fixed point over the call graph (recursion makes it cyclic), updated in place from the
    function with the most cumulative time down, so callers mostly come before their callees
    and a few rounds settle it (at most 100)."""
    order = sorted(stats, key=lambda function: stats[function][3], reverse=True)
    roots = {function: phase_root(function) for function in order}
    weighted_callers: dict[tuple, list[tuple[tuple, float]]] = {}
    for function in order:
        edges = {c: e[3] for c, e in stats[function][4].items() if c in stats and e[3] > 0}
        total = sum(edges.values())
        weighted_callers[function] = [(c, w / total) for c, w in edges.items()]
    shares: dict[tuple, dict[str, float]] = {function: {SET_UP: 1.0} for function in order}
    for _ in range(100):
        changed = 0.0
        for function in order:
            callers = weighted_callers[function]
            mixed: dict[str, float] = {}
            if callers:
                for caller, weight in callers:
                    for phase, share in shares[caller].items():
                        mixed[phase] = mixed.get(phase, 0.0) + share * weight
            else:
                mixed[SET_UP] = 1.0
            root = roots[function]
            if root is not None:
                kept = {p: s for p, s in mixed.items() if p in ENCLOSING and p != root}
                kept[root] = 1.0 - sum(kept.values())
                mixed = kept
            old = shares[function]
            for phase in {*mixed, *old}:
                changed = max(changed, abs(mixed.get(phase, 0.0) - old.get(phase, 0.0)))
            shares[function] = mixed
        if changed < 1e-6:
            break
    return shares


def breakdown(stats_path: Path, top: int = 12) -> Breakdown:
    """Phases, packages and the top functions of a cProfile dump (:func:`run_profile`'s)."""
    stats = pstats.Stats(str(stats_path)).stats  # type: ignore[attr-defined]
    shares = phase_distributions(stats)
    phases = dict.fromkeys(PHASES, 0.0)
    packages: dict[str, float] = {}
    total = 0.0
    calls = 0
    steps = 0
    pool_calls = 0
    for function, (_, call_count, self_seconds, _, _) in stats.items():
        total += self_seconds
        calls += call_count
        module = module_of(function[0]) if function[0] != "~" else ""
        if function[2] == "_step" and module == "agents/loop.py":
            steps += call_count
        if (module, function[2]) in _POOL_CALLS:
            pool_calls += call_count
        for phase, share in shares[function].items():
            phases[phase] += self_seconds * share
        package = package_of(function)
        packages[package] = packages.get(package, 0.0) + self_seconds
    ranked = sorted(stats.items(), key=lambda item: item[1][3], reverse=True)
    # The entry point's own frames (train.py's main, runpy, the profiler's wrapper) hold
    # everything: the top list starts below them.
    shown = [
        (label_of(function), entry[1], entry[2], entry[3])
        for function, entry in ranked
        if package_of(function) not in ("the entry point", "Python standard library")
        and not label_of(function).startswith(("benchmarks/", "<built-in method builtins.exec"))
    ][:top]
    return Breakdown(
        total,
        phases,
        dict(sorted(packages.items(), key=lambda p: -p[1])),
        shown,
        calls,
        steps,
        pool_calls,
    )


# ---- the child process ---------------------------------------------------------------------------
def profile_child(stats_path: str, train_arguments: list[str]) -> int:
    """Run ``train.py``'s ``main(train_arguments)`` under cProfile (CPU time), its module
    imports included; dump the profile to ``stats_path`` however the run ends."""
    import cProfile
    import runpy

    # Ctrl-C's signal is how the harness ends a profile: a child of a shell's background job
    # starts with SIGINT ignored (Python then installs no handler), so install Python's.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    profiler = cProfile.Profile(time.process_time)
    status = 1
    profiler.enable()
    try:
        train = runpy.run_path(str(REPO / "train.py"), run_name="profiled_train")
        status = int(train["main"](train_arguments) or 0)
    finally:
        profiler.disable()
        profiler.dump_stats(stats_path)
    return status


STOPPED = 130  # train.py's exit status after Ctrl-C: how a profile ends
# A profiled run's wall-clock ceiling: the harness stops it by CPU time long before, on any
# machine but one so loaded that the run gets under a tenth of a core.
CEILING_FACTOR = 10.0
CEILING_MINIMUM_SECONDS = 600.0


def wall_ceiling(seconds: float) -> float:
    """A profiled run's ``budget.seconds``: its wall-clock ceiling."""
    return max(CEILING_MINIMUM_SECONDS, CEILING_FACTOR * seconds)


def profile_overrides(seconds: float) -> list[str]:
    """The budget of a profiled run: a wall-clock ceiling only (the harness stops it after
    ``seconds`` of CPU time), each evaluation capped at a tenth of ``seconds``."""
    return [
        "budget.episodes=null",
        "budget.iterations=null",
        f"budget.seconds={wall_ceiling(seconds):g}",
        f"evaluation.max_seconds={max(1.0, seconds / 10):g}",
    ]


def cpu_seconds_of(pid: int) -> float | None:
    """The CPU seconds (user and system, all threads) of a running process, from Linux's
    ``/proc/<pid>/stat``; None where there is none."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def first_evaluation_logged(run: Path) -> bool:
    """Whether the run's ``metrics.csv`` has a row under its header: the first evaluation
    is done and training begins."""
    try:
        return len((run / "metrics.csv").read_bytes().splitlines()) >= 2
    except OSError:
        return False


def run_profile(
    cell: Any, seconds: float, stats_path: Path, log_path: Path, extra: Sequence[str] = ()
) -> tuple[int, float]:
    """Train ``cell`` (a :class:`benchmarks.training.Cell`) in a profiled child (its run
    directory temporary, ``extra`` overrides last) and stop it with Ctrl-C's signal once it
    has trained for ``seconds`` of its own CPU time after its first evaluation (its set-up
    and that evaluation not counted; wall time where ``/proc`` is missing), so the load of
    other jobs changes how long a profile takes, not what it holds. Returns the child's exit
    status and wall seconds."""
    from benchmarks.training import STOP_GRACE_SECONDS, _stop_group, _wait

    with tempfile.TemporaryDirectory(prefix=f"profile-{cell.name}-") as scratch:
        run = Path(scratch) / "run"
        train_arguments = [
            "--config",
            str(cell.config),
            "seed=0",
            f"output_dir={json.dumps(str(run))}",
            "progress_bar=false",
            *profile_overrides(seconds),
            *extra,
        ]
        command = [sys.executable, "-m", "benchmarks.profiling", str(stats_path), *train_arguments]
        started = time.monotonic()
        with log_path.open("wb") as log:
            log.write(f"# {shlex.join(command)}\n".encode())
            log.flush()
            child = subprocess.Popen(
                command, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        ceiling = wall_ceiling(seconds) + 120.0  # the run's own budget ends it first
        training_from: float | None = None  # the child's clock when its training began
        try:
            while (ended := _wait(child.pid, 0.5)) is None:
                wall = time.monotonic() - started
                clock = cpu_seconds_of(child.pid)
                clock = wall if clock is None else clock
                if training_from is None and first_evaluation_logged(run):
                    training_from = clock
                trained = training_from is not None and clock - training_from >= seconds
                if trained or wall > ceiling:
                    os.killpg(child.pid, signal.SIGINT)  # the run stops as on Ctrl-C
                    ended = _wait(child.pid, STOP_GRACE_SECONDS + 60)
                    if ended is None:
                        ended = _stop_group(child.pid)
                    break
        except KeyboardInterrupt:
            _stop_group(child.pid)
            raise
        status, _ = ended
        child.returncode = code = os.waitstatus_to_exitcode(status)
        return code, time.monotonic() - started


# ---- the page ------------------------------------------------------------------------------------
def _percent(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f}%" if whole > 0 else "-"


def summary(
    cell: Any,
    seconds: float,
    exit_code: int,
    wall: float,
    found: Breakdown,
    now: str,
    extra: Sequence[str] = (),
) -> dict:
    """The figures ``comparison.md`` quotes (``<cell>.json``): shares in percent."""
    training = sum(found.phases[p] for p in TRAINING)
    return {
        "cell": cell.name,
        "profile_seconds": seconds,
        "cpu_seconds": round(found.total, 2),
        "wall_seconds": round(wall, 1),
        "exit_code": exit_code,
        "steps": found.steps,
        "overrides": list(extra),
        "date": now,
        "phases": {p: round(100 * s / found.total, 1) for p, s in found.phases.items()}
        if found.total
        else {},
        "training_phases": {p: round(100 * found.phases[p] / training, 1) for p in TRAINING}
        if training
        else {},
        "out_of_process": out_of_process(cell, found),
    }


def out_of_process(cell: Any, found: Breakdown) -> str | None:
    """What of the cell's training ran outside the profiled process, None if nothing: seen
    in the profile (calls handing work to worker pools or Ray actors), named from the config."""
    from agents.config import config_data

    if not found.pool_calls:
        return None
    params = config_data(cell.config)["trainer"].get("params") or {}
    if cell.trainer == "anfsp":
        return (
            f"ANFSP's {params.get('num_actors', 'several')} actor-learners (Ray processes) play "
            "and compute gradients"
        )
    workers = params.get("workers")
    return (
        f"the self-play worker processes (`workers: {workers}`) play the games"
        if workers is not None
        else "worker processes play the games"
    )


def page(
    cell: Any, figures: dict, found: Breakdown, command: str, machine: str, commit: str
) -> str:
    """``<cell>.md``."""
    lines = [
        f"# Where {cell.trainer} on {cell.env} spends its CPU time ({cell.name})",
        "",
        "Generated by `python -m benchmarks train --profile` (benchmarks/profiling.py); edit the "
        "code, not this page. The shipped config `configs/"
        f"{cell.name}.yaml`, seed 0, trained through `train.py` under cProfile with "
        "`timer=time.process_time` (CPU seconds of the training process, whatever the load), "
        f"stopped as by Ctrl-C after {figures['profile_seconds']:g} CPU seconds of training "
        "past its set-up and first evaluation, or ended by its budget of "
        f"{wall_ceiling(figures['profile_seconds']):g} s of wall time if that came first (each "
        "evaluation capped at a tenth of the CPU seconds).",
        "",
        "| | |",
        "|---|---|",
        f"| date | {figures['date']} |",
        f"| commit | {commit} |",
        f"| machine | {machine} |",
        f"| command | `{command}` |",
        *(
            [f"| overrides | `{' '.join(figures['overrides'])}` (besides the budget's) |"]
            if figures.get("overrides")
            else []
        ),
        f"| profiled | {found.total:.1f} CPU s in {figures['wall_seconds']:.0f} s of wall time, "
        f"{found.calls:,} calls, {found.steps:,} training steps; train.py exited "
        f"{figures['exit_code']}{' (the stop)' if figures['exit_code'] == STOPPED else ''} |",
        "",
    ]
    if figures["out_of_process"]:
        lines += [
            f"**Only the training process is profiled**: {figures['out_of_process']} in other "
            "processes, not shown here; the training process's waiting on them is not CPU time.",
            "",
        ]
    lines += [
        "cProfile adds a cost to every Python call it records: code of many small Python calls "
        "(an env's step, a search's recursion) weighs more here than it does unprofiled; long "
        "native calls (torch's kernels) less.",
        "",
        "## By phase",
        "",
        "Each function's self time goes to the innermost recognised phase function above it "
        "(evaluation and checkpoints keep what they call); a function called from several "
        "phases is split in proportion to each caller's cumulative time (an estimate: cProfile "
        "keeps callers, not stacks). `of training`: the share among the training step's phases, "
        "what a long run's steady state looks like (a short profile weighs set-up and evaluation "
        "more). Set-up and wrap-up: imports, the config's check that the trainer fits the env, "
        "building the game, the learner and any evaluation tree, the exported policies and plot.",
        "",
    ]
    training = sum(found.phases[p] for p in TRAINING)
    rows = [
        [
            phase,
            f"{found.phases[phase]:.1f}",
            _percent(found.phases[phase], found.total),
            _percent(found.phases[phase], training) if phase in TRAINING else "",
        ]
        for phase in PHASES
    ]
    lines += [_table(["phase", "CPU s", "of all", "of training"], rows), ""]
    lines += [
        "## By package (self time)",
        "",
        "A compiled (Cython) function of this project shows only where cProfile sees it as a "
        "C call; most do not appear on their own, and their time is the self time of the "
        "Python function that calls them (an env's Python step, say).",
        "",
    ]
    package_rows = [
        [package, f"{seconds:.1f}", _percent(seconds, found.total)]
        for package, seconds in found.packages.items()
        if seconds >= 0.005 * found.total
    ]
    rest = sum(s for s in found.packages.values() if s < 0.005 * found.total)
    if rest > 0:
        package_rows.append(
            ["the rest (each under 0.5%)", f"{rest:.1f}", _percent(rest, found.total)]
        )
    lines += [_table(["package", "CPU s", "share"], package_rows), ""]
    lines += [
        f"## The top {len(found.top)} functions by cumulative time",
        "",
        "Below the entry point (train.py's `main` holds everything). Cumulative includes what "
        "a function calls, so the rows nest. A cumulative share above 100% is cProfile's "
        "miscount of a call whose end it did not see as it began (seen in profiles stopped "
        "by the signal); self times, which the tables above sum, add up to the total.",
        "",
        _table(
            ["function", "calls", "self CPU s", "cumulative CPU s", "cumulative share"],
            [
                [
                    f"`{label}`",
                    f"{calls:,}",
                    f"{own:.2f}",
                    f"{cumulative:.2f}",
                    _percent(cumulative, found.total),
                ]
                for label, calls, own, cumulative in found.top
            ],
        ),
        "",
    ]
    return "\n".join(lines)


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(value.replace("|", "\\|") for value in row) + " |" for row in rows]
    return "\n".join(lines)


def phase_line(figures: dict) -> str:
    """The phase shares in one line, largest first: ``updates 61% / self-play 30% / ...`` of
    the training step, then set-up and evaluation of the whole."""
    training = figures.get("training_phases") or {}
    whole = figures.get("phases") or {}
    shown = [(p, s) for p, s in sorted(training.items(), key=lambda i: -i[1]) if round(s) >= 1]
    parts = [f"{p} {s:.0f}%" for p, s in shown]
    outside = [
        f"{p} {whole[p]:.0f}%"
        for p in (EVALUATION, CHECKPOINTS, SET_UP)
        if round(whole.get(p, 0)) >= 1
    ]
    steps = figures.get("steps")
    seconds = figures["cpu_seconds"] * sum(whole.get(p, 0.0) for p in TRAINING) / 100
    profiled = f"{seconds:.1f} CPU s" + (
        "" if steps is None else f", {steps} step{'' if steps == 1 else 's'}"
    )
    text = (
        f"of the training step ({profiled}): " + ", ".join(parts)
        if parts
        else "no training step profiled"
    )
    if outside:
        text += f" (of all {figures['cpu_seconds']:.0f} CPU s: " + ", ".join(outside) + ")"
    return text


def profile_cells(
    cells: list[Any],
    seconds: float,
    directory: Path,
    command: str,
    commit: str,
    machine: str,
    extra: Sequence[str] = (),
) -> int:
    """Profile each cell; write ``<directory>/<cell>.md`` and ``.json``; the exit status."""
    from benchmarks.training import utc_now, write_json
    from hiddenenvs.files import atomic_write

    directory.mkdir(parents=True, exist_ok=True)
    failures = 0
    for cell in cells:
        if not cell.config.is_file():
            print(
                f"benchmarks train --profile: {cell.name}: no shipped config, skipped",
                file=sys.stderr,
            )
            failures += 1
            continue
        with tempfile.TemporaryDirectory(prefix="profile-stats-") as scratch:
            stats_path = Path(scratch) / "train.pstats"
            log_path = Path(scratch) / "train.log"
            print(
                f"benchmarks train --profile: {cell.name}: {seconds:g} s ...",
                file=sys.stderr,
                flush=True,
            )
            exit_code, wall = run_profile(cell, seconds, stats_path, log_path, extra)
            if not stats_path.is_file():
                print(
                    f"benchmarks train --profile: {cell.name}: no profile written (exit {exit_code}); "
                    f"its log:\n{log_path.read_text(errors='replace')[-2000:]}",
                    file=sys.stderr,
                )
                failures += 1
                continue
            found = breakdown(stats_path)
            if exit_code not in (0, STOPPED):
                last = [
                    line
                    for line in log_path.read_text(errors="replace").splitlines()
                    if line.strip()
                ]
                print(
                    f"benchmarks train --profile: {cell.name}: train.py exited {exit_code}: {last[-1][:300] if last else ''}",
                    file=sys.stderr,
                )
        figures = summary(cell, seconds, exit_code, wall, found, utc_now(), extra)
        text = page(cell, figures, found, command, machine, commit)
        atomic_write(directory / f"{cell.name}.md", lambda handle: handle.write(text.encode()))
        write_json(directory / f"{cell.name}.json", figures)
        print(f"benchmarks train --profile: {cell.name}: {phase_line(figures)}", file=sys.stderr)
    return 1 if failures else 0


def read_summary(directory: Path, cell_name: str) -> dict | None:
    """A cell's profile figures (``<cell>.json``), None if it has not been profiled."""
    path = directory / f"{cell_name}.json"
    if not path.is_file():
        return None
    figures = json.loads(path.read_text())
    return figures if isinstance(figures, dict) else None


if __name__ == "__main__":  # the profiled child: python -m benchmarks.profiling STATS TRAIN_ARGS...
    sys.exit(profile_child(sys.argv[1], sys.argv[2:]))
