"""A run's bookkeeping: its budget, checkpoints, metrics log, callbacks and how it ends.

:class:`agents.loop.Run` composes these, in the manner of Stable-Baselines3 (``learn``
calls the algorithm's step; evaluation, checkpoints and the progress bar are callbacks):

- :class:`Budget`: episodes, iterations and wall seconds, whichever comes first;
  ``budget.seconds`` counts every session of a resumed run;
- :class:`Schedule`: every N episodes and/or every N iterations;
- :class:`Checkpointer`: ``checkpoint.pt``, written whole (atomically, Ctrl-C held until
  it is on disk), read back for ``--resume`` only into the same run;
- :class:`MetricsLog`: ``metrics.csv`` and TensorBoard scalars;
- :class:`Callback`: the hooks a run calls (start, each step, each evaluation, end,
  close); :class:`CheckpointCallback` and :class:`ProgressCallback` are two of them;
- :class:`TrainingError` (a run that trained nothing) and :class:`RunInterrupted`
  (Ctrl-C), each one line that says why and what to do.

Nothing here plays a game or imports a trainer: :mod:`agents.loop` does.
"""

from __future__ import annotations

import csv
import io
import time
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

import numpy as np

from agents.base import Learner, StepReport
from agents.checkpoint import (
    atomic_torch_save,
    atomic_write,
    global_rng_state,
    interrupts_deferred,
    load_checkpoint,
    set_global_rng_state,
)
from agents.config import BudgetConfig, RunConfig
from agents.runs import CHECKPOINT_NAME, RUN_CHECKPOINT_FORMAT, check_same_run, load_learner_state

COUNTED = ("episodes", "iterations")


class TrainingError(RuntimeError):
    """A run that cannot train (it trained nothing within its budget); the message says why."""


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C ended a run: the message says where its last checkpoint is and how to resume.

    A ``KeyboardInterrupt``, so code that stops on Ctrl-C still stops; nothing was written
    after the last checkpoint but metrics rows (which a resume drops and logs again)."""


class Budget:
    """The run's limits (the config's ``budget``) and its clock. ``budget.seconds`` bounds
    the whole run, resumed sessions included: this session's deadline is what the earlier
    ones (``seconds_before``) left of it, counted from this session's start."""

    def __init__(self, config: BudgetConfig, started: float | None = None):
        self.limits: dict[str, int | None] = {
            "episodes": config.episodes,
            "iterations": config.iterations,
        }
        self.seconds = config.seconds
        self.started = time.perf_counter() if started is None else started
        self.seconds_before = 0.0

    @property
    def deadline(self) -> float | None:
        """This session's end, a ``time.perf_counter()`` time (None: no time budget)."""
        if self.seconds is None:
            return None
        return self.started + self.seconds - self.seconds_before

    def wall_seconds(self) -> float:
        """Seconds the run has taken, every session counted."""
        return self.seconds_before + time.perf_counter() - self.started

    def reached(self, counters: dict[str, int]) -> list[str]:
        """The counted limits ``counters`` have reached, as ``budget.<unit>=<limit>``."""
        return [
            f"budget.{unit}={limit}"
            for unit, limit in self.limits.items()
            if limit is not None and counters[unit] >= limit
        ]

    def spent(self, counters: dict[str, int], reserve_seconds: float) -> bool:
        """A counted limit is reached, or the deadline is within ``reserve_seconds``."""
        deadline = self.deadline
        return bool(self.reached(counters)) or (
            deadline is not None and time.perf_counter() + reserve_seconds >= deadline
        )

    def episodes_left(self, counters: dict[str, int]) -> int | None:
        limit = self.limits["episodes"]
        return None if limit is None else limit - counters["episodes"]


class Schedule:
    """Fires every ``every_episodes`` episodes and/or every ``every_iterations`` iterations."""

    def __init__(self, every_episodes: int | None, every_iterations: int | None, counters: dict):
        self.every = {"episodes": every_episodes, "iterations": every_iterations}
        self.advance(counters)

    def advance(self, counters: dict) -> None:
        self.next = {
            unit: (counters[unit] // every + 1) * every
            for unit, every in self.every.items()
            if every
        }

    def due(self, counters: dict) -> bool:
        return any(counters[unit] >= threshold for unit, threshold in self.next.items())

    def episodes_left(self, counters: dict) -> int | None:
        return self.next["episodes"] - counters["episodes"] if "episodes" in self.next else None


class Checkpointer:
    """``checkpoint.pt`` of a run directory: the config, the learner's state, the loop's
    counters and generators. Written atomically (temporary file + ``os.replace``) with
    Ctrl-C held until it is on disk, so ``saved`` (the counters on disk) is always
    true; read back only into the same run (env, env parameters, trainer)."""

    def __init__(self, output_dir: Path, config: RunConfig, budget: Budget):
        self.path = output_dir / CHECKPOINT_NAME
        self.config = config
        self.budget = budget
        self.saved: dict[str, int] | None = None
        self.last_seconds = 0.0  # the last save's wall time: the final one's reserve
        self.saved_at = time.perf_counter()

    def restore(self, learner: Learner, rng: np.random.Generator) -> dict[str, int]:
        """Load the checkpoint into ``learner``, ``rng`` and the process-wide generators;
        the counters it was written at (and the budget's clock, its earlier seconds)."""
        if not self.path.exists():
            raise FileNotFoundError(f"cannot resume: no {CHECKPOINT_NAME} in {self.path.parent}")
        payload = load_checkpoint(self.path)
        check_same_run(payload["config"], self.config.to_dict(), self.path.parent)
        load_learner_state(learner, payload["learner"], self.path)
        loop_state = payload["loop"]
        counters = {unit: loop_state[unit] for unit in COUNTED}
        self.budget.seconds_before = loop_state["wall_seconds"]
        self.saved = dict(counters)
        rng.bit_generator.state = loop_state["rng"]
        set_global_rng_state(loop_state["global_rng"])
        return counters

    def save(self, learner: Learner, counters: dict[str, int], rng: np.random.Generator) -> None:
        started = time.perf_counter()
        with interrupts_deferred():  # on disk whole, and known to be: Ctrl-C waits for it
            atomic_torch_save(
                {
                    "format": RUN_CHECKPOINT_FORMAT,
                    "config": self.config.to_dict(),
                    "learner": learner.state_dict(),
                    "loop": {
                        **counters,
                        "wall_seconds": self.budget.wall_seconds(),
                        "rng": rng.bit_generator.state,
                        "global_rng": global_rng_state(),
                    },
                },
                self.path,
            )
            self.saved = dict(counters)
        self.last_seconds = time.perf_counter() - started
        self.saved_at = time.perf_counter()

    def timed_save_due(self) -> bool:
        """Under a time budget a checkpoint also falls every tenth of it: the final one's cost
        is then known (the reserve) and a crash loses at most that much."""
        return (
            self.budget.seconds is not None
            and time.perf_counter() - self.saved_at >= self.budget.seconds / 10
        )

    def interrupted_message(self) -> str:
        """What :class:`RunInterrupted` says: where the last checkpoint is, how to resume."""
        where = self.config.output_dir
        if self.saved is not None:
            at = (
                f", at {self.saved['episodes']} episodes and {self.saved['iterations']} iterations,"
            )
        elif self.path.is_file():  # a resumed run stopped before it had read its checkpoint
            at = ""
        else:
            left = Path(where).is_dir() and any(Path(where).iterdir())
            return "interrupted (Ctrl-C) before the run's first checkpoint: nothing to resume" + (
                f"; remove {where} to start it again" if left else ""
            )
        return (
            f"interrupted (Ctrl-C); the last checkpoint{at} is {self.path}: continue with "
            f"train.py --resume {where}"
        )


class MetricsLog:
    """``metrics.csv`` plus TensorBoard scalars; on resume, rows after the checkpoint go.

    Rows are ordered by ``iterations`` (every step counts at least one); TensorBoard's
    step is the schedule's unit (``episodes`` or ``iterations``). The file is never
    rewritten in place: the rows kept on resume go to a new file that atomically replaces
    the old one (a kill mid-resume leaves the old file whole); then rows are only appended,
    each whole (Ctrl-C waits for it).
    """

    def __init__(
        self, output_dir: Path, columns: list[str], unit: str, resume_iterations: int | None
    ):
        from torch.utils.tensorboard import SummaryWriter

        self.path = output_dir / "metrics.csv"
        self.columns = columns
        self.unit = unit
        kept: list[dict[str, str]] = []
        if resume_iterations is not None and self.path.exists():
            with self.path.open(newline="") as handle:
                kept = [
                    row
                    for row in csv.DictReader(handle)
                    if int(float(row["iterations"])) <= resume_iterations
                ]
        text = io.StringIO(newline="")
        writer = csv.DictWriter(text, fieldnames=columns)
        writer.writeheader()
        writer.writerows(kept)
        atomic_write(self.path, lambda handle: handle.write(text.getvalue().encode()))
        self.rows = [{k: float(v) if v != "" else None for k, v in row.items()} for row in kept]
        last_step = self.rows[-1][unit] if self.rows else None
        resume_step = int(last_step) if last_step is not None else None
        self.writer = SummaryWriter(
            log_dir=str(output_dir / "tensorboard"),
            purge_step=resume_step + 1 if resume_step is not None else None,
        )

    def log(self, row: dict[str, float | None]) -> None:
        with interrupts_deferred():
            with self.path.open("a", newline="") as handle:
                csv.DictWriter(handle, fieldnames=self.columns).writerow(
                    {k: ("" if row.get(k) is None else row[k]) for k in self.columns}
                )
            step = row[self.unit]
            if step is None:
                raise ValueError(f"a metrics row without its {self.unit} count: {row}")
            for key, value in row.items():
                if key not in COUNTED and value is not None:
                    self.writer.add_scalar(key, value, global_step=int(step))
            self.writer.flush()
        self.rows.append(row)

    def close(self) -> None:
        self.writer.close()


# ---- callbacks --------------------------------------------------------------------------------
class RunState(Protocol):
    """What a callback sees of a run (:class:`agents.loop.Run` is one): declared here so
    that this module, which the loop composes, never imports the loop."""

    @property
    def counters(self) -> dict[str, int]: ...
    @property
    def budget(self) -> Budget: ...
    @property
    def checkpointer(self) -> Checkpointer: ...
    @property
    def learner(self) -> Learner: ...
    @property
    def rng(self) -> np.random.Generator: ...
    @property
    def unit(self) -> str: ...  # what evaluations count: "episodes" or "iterations"
    @property
    def metric(self) -> str: ...  # the run's metric (agents.loop.Evaluator chose it)


# The run a callback reads: any RunState, or (the loop's own callbacks) the concrete Run.
RunT = TypeVar("RunT", bound="RunState", contravariant=True)


class Callback(Generic[RunT]):
    """A hook into a :class:`agents.loop.Run`, as Stable-Baselines3's ``BaseCallback``.

    A run calls, in the order of its callbacks: :meth:`on_run_start` once set up (before
    the first step), :meth:`on_step` after each step (the counters advanced),
    :meth:`on_evaluation` after each evaluation row is logged, :meth:`on_run_end` when the
    budget is spent (the learner still open) and :meth:`on_close` however the run ended.
    :meth:`episodes_until_due` lets a callback end a self-play step exactly on its episode.
    """

    def on_run_start(self, run: RunT) -> None:
        """Called once, after set-up and before the first step."""

    def on_step(self, run: RunT, report: StepReport) -> None:
        """Called after each counted step."""

    def on_evaluation(self, run: RunT, row: dict[str, Any]) -> None:
        """Called after each evaluation row is logged."""

    def on_run_end(self, run: RunT) -> None:
        """Called when the budget is spent and the run trained something."""

    def on_close(self, run: RunT) -> None:
        """Called however the run ended (spent, failed, interrupted)."""

    def episodes_until_due(self, counters: dict[str, int]) -> int | None:
        """Episodes until this callback next acts on an episode count (None: it does not)."""
        return None


class CheckpointCallback(Callback[RunState]):
    """A checkpoint on the config's schedule, every tenth of a time budget, and at the end."""

    def __init__(self, config: RunConfig, counters: dict[str, int]):
        self.schedule = Schedule(
            config.checkpoint_every_episodes, config.checkpoint_every_iterations, counters
        )

    def on_step(self, run: RunState, report: StepReport) -> None:
        if self.schedule.due(run.counters) or run.checkpointer.timed_save_due():
            run.checkpointer.save(run.learner, run.counters, run.rng)
            self.schedule.advance(run.counters)

    def on_run_end(self, run: RunState) -> None:
        run.checkpointer.save(run.learner, run.counters, run.rng)

    def episodes_until_due(self, counters: dict[str, int]) -> int | None:
        return self.schedule.episodes_left(counters)


class ProgressCallback(Callback[RunState]):
    """The progress bar (:func:`agents.progress.progress_bar`: a bar on a terminal, lines in
    a log), counting toward what the run will reach: seconds when time bounds it, else the
    evaluation's unit (or the first counted limit); the run's metric as its postfix. It
    ends at what the run reached."""

    def __init__(self) -> None:
        self.bar: Any = None
        self.unit = "seconds"

    def on_run_start(self, run: RunState) -> None:
        from agents.progress import progress_bar

        budget, counters = run.budget, run.counters
        if budget.seconds is not None:
            self.unit = "seconds"
            self.bar = progress_bar(
                total=round(budget.seconds),
                initial=round(budget.seconds_before),
                unit="s",
                dynamic_ncols=True,
                bar_format="{l_bar}{bar}| {n:.0f}/{total_fmt} s{postfix}",
            )
            return
        limits, unit = budget.limits, run.unit
        if limits[unit] is None:
            unit = next((u for u, limit in limits.items() if limit is not None), unit)
        self.unit = unit
        self.bar = progress_bar(
            total=limits[unit],
            initial=counters[unit],
            unit=unit[:2] if unit == "episodes" else "it",
            dynamic_ncols=True,
        )

    def on_step(self, run: RunState, report: StepReport) -> None:
        if self.unit == "seconds":
            reached = min(run.budget.seconds or 0.0, run.budget.wall_seconds())
            self.bar.update(max(0.0, reached - self.bar.n))
        else:
            self.bar.update(report.episodes if self.unit == "episodes" else report.iterations)

    def on_evaluation(self, run: RunState, row: dict[str, Any]) -> None:
        if self.bar is not None and row.get(run.metric) is not None:
            self.bar.set_postfix({run.metric: f"{row[run.metric]:.4f}"})

    def on_run_end(self, run: RunState) -> None:
        from agents.progress import end_at_reached

        self.on_step(run, StepReport(episodes=0, iterations=0))
        end_at_reached(self.bar)

    def on_close(self, run: RunState) -> None:
        if self.bar is not None:
            self.bar.close()  # a second close does nothing


def plot_metrics(rows: list[dict], path: Path, title: str, unit: str, metric: str) -> str | None:
    """PNG of the run's ``metric`` (:class:`agents.loop.Evaluator` chose it) against ``unit``
    and wall time; the metric plotted, or None when no row has it."""
    points = [r for r in rows if r.get(metric) is not None]
    if not points:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (by_progress, by_time) = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    values = [r[metric] for r in points]
    by_progress.plot([r[unit] for r in points], values, marker=".")
    by_progress.set_xlabel(unit)
    by_progress.set_ylabel(metric.replace("_", " "))
    by_time.plot([r["wall_seconds"] for r in points], values, marker=".")
    by_time.set_xlabel("wall time (s)")
    if metric == "exploitability" and min(values) > 0:
        by_progress.set_yscale("log")
    figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return metric
