"""The one training loop every trainer runs through.

``train(config)`` builds the env and the trainer (a :class:`agents.base.Learner`), then
calls ``learner.step(context)`` until the budget (episodes, iterations and/or wall
seconds) is spent. A step is whatever the learner makes of it: self-play learners play a
batch of episodes through :meth:`LoopContext.self_play` and update (the default, 1-2
below); CFR runs one iteration over the tree; search-based learners run searches. The
loop keeps the rest for all of them (3-4): evaluation, checkpoints and resuming, CSV,
TensorBoard, plots and the progress bar. Schedules count episodes
(``evaluation.every_episodes``, ``checkpoint_every_episodes``) or learner iterations
(``evaluation.every_iterations``, ``checkpoint_every_iterations``); a self-play step
never plays past the next scheduled episode.

1. **Self-play.** ``num_envs`` copies of the PettingZoo AEC env play one episode each in
   lockstep (:func:`agents.episodes.play_episodes`, the project's one episode runner,
   which the evaluation episodes use too); at every tick the decisions waiting in all copies are grouped by seat and
   answered with one batched ``act_batch`` call per training agent (one network forward
   for all of them). Chance and simultaneous moves are resolved by the env (a
   simultaneous node asks its movers one after another, none seeing the others'
   choices), so any number of players works. Agents that search (``USES_SEAT_VIEW``)
   get their seat's view with each decision. Each agent's experience is routed to it as
   :class:`agents.base.Transition` objects: from one of its decisions to its next one (or
   the end), with everything it earned in between. With ``vector_self_play: true`` the
   episodes are games of one compiled vector env instead (:mod:`hiddenenvs.vector`,
   :func:`agents.vector_self_play.play_vector_episodes`: same hooks, same transitions);
   the run refuses at its start, with a one-line ``ConfigError``, an env without a
   vector kernel, agents that need seat views or the true state, and trainers with their
   own step.
2. **Update.** ``learner.update()`` after every batch; the learner decides how many
   gradient steps that is (NFSP: one per ``learn_every`` new transitions).
3. **Evaluation** every ``evaluation.every_episodes``: the exact exploitability of the
   learner's evaluation policy (NFSP: the average policy) when the game tree is small
   enough to enumerate (:mod:`hiddenenvs.analysis`; the networks are evaluated once per
   information set, one batched call per player, at a representative state), otherwise
   the mean return of each evaluation agent against uniform random in every seat.
4. **Checkpoint** on its schedule and at the end, atomically
   (temporary file + ``os.replace``): the learner's networks, optimisers, buffers and
   generators, the loop's counters and generators, and the config.

Determinism and resuming. Every episode's env is reset with a seed drawn from the loop's
generator, so the env's own generator is part of the checkpointed state; checkpoints are
written between steps, so a run killed at any moment (even by SIGKILL) and resumed
with :func:`train` ``(resume=True)`` replays nothing and skips nothing: it produces the
same networks as a run never interrupted. Metrics logged after the last checkpoint are
dropped on resume (CSV rows truncated, TensorBoard purged) and logged again.

The run. :func:`train` is :class:`Run`: the config, validated once
(:meth:`agents.config.RunConfig.validate`: its values, the env, the trainer's fit, its
parameters, memory and ``output_dir``), then a :class:`agents.run.Budget`, an
:class:`Evaluator` (the exact tree, the opponent and the run's one metric), a
:class:`agents.run.Checkpointer`, a :class:`agents.run.MetricsLog` and callbacks
(evaluation, checkpoints, the progress bar) in the manner of Stable-Baselines3's. A new run
never writes into a directory that holds anything; Ctrl-C ends a run at once, the learner
closed and its last checkpoint intact (:class:`agents.run.RunInterrupted` says where).

Outputs in ``output_dir``: ``checkpoint.pt``, ``metrics.csv``, ``tensorboard/``,
``metrics.png`` (the evaluation metric against episodes and wall time),
``policy_player<p>.pt`` (evaluation agents, loadable with :func:`agents.load_agent`).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

import hiddenenvs
from agents.base import Agent, Learner, StepReport
from agents.catalogue import trainer_entry, trainer_names
from agents.checkpoint import seed_everything
from agents.config import ConfigError, RunConfig, trainer_class
from agents.episodes import play_episodes, returns_against_opponents
from agents.run import (
    COUNTED,
    Budget,
    Callback,
    CheckpointCallback,
    Checkpointer,
    MetricsLog,
    ProgressCallback,
    RunInterrupted,
    Schedule,
    TrainingError,
    plot_metrics,
)
from agents.runs import check_new_run_dir, validate_run
from agents.vector_self_play import play_vector_episodes, self_play_vector_env
from hiddenenvs.analysis import tree_is_small

_MetricsLog = MetricsLog  # its former name (tests of the safe-file guarantees use it)

# One evaluation's cap when neither evaluation.max_seconds nor budget.seconds sets it: a
# many-player game (combat's 20 fighters) would otherwise play 1,000 episodes per seat.
DEFAULT_EVALUATION_SECONDS = 120.0

BASE_COLUMNS = (
    "episodes",
    "iterations",
    "wall_seconds",
    "episodes_per_second",
    "iterations_per_second",
)
# The first three: the run's metric (exact, or mean return against the evaluation opponent).
EVALUATION_COLUMNS = (
    "exploitability",
    "return_vs_random",
    "return_vs_opponent",
    "evaluation_episodes",
    "win_rate",
)


# ---- exact evaluation -------------------------------------------------------------------------
def exact_exploitability(learner: Learner, tree) -> float:
    """Exploitability of the learner's evaluation policy on the enumerated tree."""
    from hiddenenvs.analysis import exploitability

    return float(exploitability(tree, learner.evaluation_policy(tree)))


class LoopContext:
    """What a learner's :meth:`~agents.base.Learner.step` may use from the loop.

    ``max_episodes`` is the most a self-play step may play now (the next evaluation or
    checkpoint episode, or the budget, comes after that); ``rng`` is the loop's generator
    (checkpointed with it); ``game``, ``num_envs`` and ``env_factory`` describe the env.
    ``deadline`` (a ``time.perf_counter()`` time, or None) is when training must stop:
    :meth:`self_play` cuts its episodes there, and a learner whose step runs many
    iterations or searches checks :meth:`time_left` between them. A learner that stops a
    step at the deadline sets ``step_cut``: the loop then counts nothing of that step.
    """

    def __init__(self, learner: Learner, config: RunConfig, rng: np.random.Generator):
        self.learner = learner
        self.game = learner.game
        self.rng = rng
        self.num_envs = config.num_envs
        self.max_episodes = config.num_envs
        self.env_factory = lambda: hiddenenvs.make(config.env.name, **config.env.params)
        self._envs: list | None = None
        self._seat_agents: dict[str, Agent] | None = None
        self.deadline: float | None = None
        self.step_cut = False
        self._vector_env = (
            _vector_self_play_env(config, learner) if config.vector_self_play else None
        )

    @property
    def envs(self) -> list:
        """The ``num_envs`` unwrapped envs, built once (self-play and evaluation reuse them:
        every episode resets its env with its own seed)."""
        if self._envs is None:
            self._envs = [self.env_factory().unwrapped for _ in range(self.num_envs)]
        return self._envs

    def time_left(self) -> float:
        """Seconds until the deadline (infinite without one)."""
        return float("inf") if self.deadline is None else self.deadline - time.perf_counter()

    def self_play(self, num_episodes: int, learn: bool = True) -> np.ndarray:
        """Play ``num_episodes`` (at most ``num_envs``) with the learner's agents in every
        seat, in lockstep, each env seeded from the loop's generator; ``(n, players)`` returns.

        With ``vector_self_play`` the episodes are the first ``num_episodes`` games of one
        vector env (:func:`agents.vector_self_play.play_vector_episodes`, the rest held
        still), reset with one seed drawn from the loop's generator; the deadline cuts them
        between ticks as it cuts the AEC episodes."""
        if not 1 <= num_episodes <= self.num_envs:
            raise ValueError(
                f"self_play plays 1..num_envs={self.num_envs} episodes, got {num_episodes}"
            )
        if self._vector_env is not None:
            seed = int(self.rng.integers(2**31))
            returns = play_vector_episodes(
                self._vector_env,
                self.learner.agents,
                seed,
                learn=learn,
                deadline=self.deadline,
                num_games=num_episodes,
            )
            if len(returns) < num_episodes:
                self.step_cut = True
            return returns
        if self._seat_agents is None:
            self._seat_agents = dict(zip(self.envs[0].possible_agents, self.learner.agents))
        seeds = self.rng.integers(2**31, size=num_episodes)
        returns = play_episodes(
            self.envs[:num_episodes], self._seat_agents, seeds, learn=learn, deadline=self.deadline
        )
        if len(returns) < num_episodes:
            self.step_cut = True
        return returns


def _vector_self_play_env(config: RunConfig, learner: Learner):
    """The vector env ``vector_self_play`` plays through: ``num_envs`` games of ``env.name``
    with ``env.params``. A one-line :class:`ConfigError` when the env has no vector kernel,
    an agent needs seat views or the true state, or the trainer has its own step."""
    name, trainer = config.env.name, config.trainer.name
    try:
        env = self_play_vector_env(name, config.env.params, config.num_envs, "vector_self_play")
    except ValueError as error:
        raise ConfigError(str(error)) from None
    try:
        agents = learner.agents
    except NotImplementedError:
        agents = []
    for agent in agents:
        for needs, what in (
            (agent.USES_SEAT_VIEW, "seat views"),
            (agent.USES_TRUE_STATE, "the true state"),
        ):
            if needs:
                raise ConfigError(
                    f"vector_self_play: trainer {trainer!r}'s agents need {what}, which the "
                    f"vector env does not build; set vector_self_play: false"
                )
    if type(learner).step is not Learner.step and not trainer_entry(trainer).loop_self_play:
        hint = trainer_entry(trainer).vector_hint
        own = f" ({hint})" if hint else ""
        loop_trainers = [name for name in trainer_names() if trainer_entry(name).loop_self_play]
        raise ConfigError(
            f"vector_self_play: trainer {trainer!r} runs its own step; only trainers that keep "
            f"the loop's self-play step ({', '.join(loop_trainers)}) play through the vector "
            f"env{own}; set vector_self_play: false"
        )
    return env


# ---- the run ------------------------------------------------------------------------------------
def _evaluation_opponent(
    config: RunConfig, num_players: int
) -> Callable[[str, int, int], Agent] | None:
    """``evaluation.opponent`` as a factory ``(seat name, seat, seed) -> Agent`` (None: random),
    checked (with ``evaluation.seats``) before the run starts. A scripted opponent is resolved
    by the leaderboard's spec resolver (the one that knows ``scripted:``), imported only then."""
    seats = config.evaluation.seats
    if seats is not None and (not seats or not all(0 <= s < num_players for s in seats)):
        raise ConfigError(
            f"evaluation.seats must name seats in 0..{num_players - 1} of {config.env.name}, got {seats}"
        )
    spec = config.evaluation.opponent
    if spec == "random":
        return None
    from agents.leaderboard.specs import resolve_agent

    def opponent(name: str, seat: int, seed: int) -> Agent:
        agent = resolve_agent(spec, config.env.name, seat, dict(config.env.params))
        agent.rng = np.random.default_rng(seed)
        return agent

    try:
        opponent("", 0, 0)
    except ValueError as error:
        raise ConfigError(f"evaluation.opponent: {str(error).splitlines()[0]}") from None
    return opponent


class Evaluator:
    """The run's evaluation: it owns the exact game tree (when the game is small enough)
    and chooses the run's ``metric``, the one every row, the progress bar, the plot and
    ``train.py`` report:

    - ``exploitability`` of the learner's evaluation policy, exact, on the enumerated tree
      (``evaluation.exact: yes``, or ``auto`` with at most ``evaluation.max_tree_nodes``);
    - else ``return_vs_random`` (or ``return_vs_opponent`` against ``evaluation.opponent``):
      the evaluation agents' mean return over the evaluated seats, each evaluation capped
      at ``evaluation.max_seconds`` (default a tenth of ``budget.seconds``, else 120 s) and
      by the run's deadline (keeping the last evaluation's time for the final one). Every
      evaluated seat plays at least one episode, past the cap if need be, as long as the
      budget lasts, and the final evaluation (once the budget is spent) always finishes one
      per seat, whatever the clock says; ``unplayed_seats`` names the seats that could
      not, the run says so.
    """

    def __init__(self, config: RunConfig, offers: Any, context: LoopContext, budget: Budget):
        self.config, self.context, self.budget = config, context, budget
        self.learner = context.learner
        self.tree = self._tree(config.evaluation, offers, self.learner.game)
        seconds = config.evaluation.max_seconds
        if seconds is None:
            seconds = DEFAULT_EVALUATION_SECONDS if budget.seconds is None else budget.seconds / 10
        self.max_seconds = seconds
        self.opponent = _evaluation_opponent(config, self.learner.game.info.num_players)
        self.metric = (
            "exploitability"
            if self.tree is not None
            else ("return_vs_random" if self.opponent is None else "return_vs_opponent")
        )
        self.last_seconds = 0.0  # the last evaluation's wall time: the final one's reserve
        self.unplayed_seats: list[int] = []  # the last evaluation's seats that finished none

    @staticmethod
    def _tree(evaluation: Any, offers: Any, game: Any) -> Any:
        small = offers.tree.fits(evaluation.max_tree_nodes)
        if small and offers.tree.how != "exact":  # an estimate says so: count to be sure (bounded)
            small = tree_is_small(game, evaluation.max_tree_nodes)
        if evaluation.exact == "yes" or (evaluation.exact == "auto" and small):
            from hiddenenvs.analysis import GameTree

            return GameTree.build(game)
        return None

    def evaluate(
        self, counters: dict[str, int], unit: str, final: bool = False
    ) -> dict[str, float | None]:
        """The metric columns of an evaluation at ``counters`` (``unit`` seeds its games);
        ``final``: the budget is spent, and this row is the run's result."""
        if self.tree is not None:
            return {"exploitability": exact_exploitability(self.learner, self.tree)}
        evaluation = self.config.evaluation
        if evaluation.episodes_vs_random <= 0:
            return {}
        started = time.perf_counter()
        cap = started + self.max_seconds
        deadline = self.budget.deadline
        # A seat's first episode may run past the cap, until the budget's end (no budget:
        # until it ends). The final row is the run's result, so there each seat finishes
        # one episode whatever the clock says: a reserve measured in seconds came up empty
        # for a starved process. The training's reserve (the last evaluation's time) keeps
        # that overrun small.
        first_episode_deadline = float("inf")
        if deadline is not None:
            if not final:
                first_episode_deadline = deadline
            cap = min(cap, max(deadline, started + self.last_seconds))
        with torch.no_grad():
            result = returns_against_opponents(
                self.context.envs,
                self.learner.evaluation_agent,
                evaluation.episodes_vs_random,
                seed=self.config.seed * 1_000_003 + counters[unit],
                num_envs=self.config.num_envs,
                opponent=self.opponent,
                seats=evaluation.seats,
                deadline=cap,
                first_episode_deadline=first_episode_deadline,
            )
        seats = range(len(result.episodes)) if evaluation.seats is None else evaluation.seats
        self.unplayed_seats = [seat for seat in seats if result.episodes[seat] == 0]
        evaluated = result.episodes > 0
        row: dict[str, float | None] = {
            self.metric: float(result.means[evaluated].mean()) if evaluated.any() else None,
            "evaluation_episodes": result.total_episodes,
        }
        if self.learner.game.info.num_players > 1 and result.total_episodes:
            row["win_rate"] = round(float(result.wins.sum() / result.total_episodes), 4)
        return row


class EvaluationCallback(Callback["Run"]):
    """An evaluation at the start of a new run (:meth:`begin`), on the config's schedule (``evaluation.
    every_episodes`` / ``every_iterations``), when the budget is spent, and at the end
    unless the last row is already there; each row (counters, wall time, rates since the
    last row, the metric, the learner's last update metrics) goes to the metrics log."""

    def __init__(self, evaluator: Evaluator, config: RunConfig, counters: dict[str, int]):
        self.evaluator = evaluator
        evaluation = config.evaluation
        self.schedule = Schedule(evaluation.every_episodes, evaluation.every_iterations, counters)
        self.window_started = time.perf_counter()
        self.window_counters = dict(counters)

    def begin(self, run: Run) -> None:
        """The first row of a new run (at 0), or the last one logged of a resumed run; the
        run calls it once every callback has started, so each sees this row too."""
        if run.resumed:
            run.last_row = run.log.rows[-1] if run.log.rows else {}
        else:
            self._evaluate(run, rates=(0.0, 0.0))
        self.window_started, self.window_counters = time.perf_counter(), dict(run.counters)

    def on_step(self, run: Run, report: StepReport) -> None:
        spent = run.spent()
        if self.schedule.due(run.counters) or spent:
            self._evaluate(run, self._rates(run.counters), final=spent)
            self.window_started, self.window_counters = time.perf_counter(), dict(run.counters)
            self.schedule.advance(run.counters)

    def on_run_end(self, run: Run) -> None:
        if any(run.last_row.get(unit) != run.counters[unit] for unit in COUNTED):
            self._evaluate(run, self._rates(run.counters), final=True)  # wherever it ended

    def episodes_until_due(self, counters: dict[str, int]) -> int | None:
        return self.schedule.episodes_left(counters)

    def _rates(self, counters: dict[str, int]) -> tuple[float, float]:
        elapsed = max(time.perf_counter() - self.window_started, 1e-9)
        episodes, iterations = ((counters[u] - self.window_counters[u]) / elapsed for u in COUNTED)
        return episodes, iterations

    def _unplayed(self, run: Run) -> str:
        """Says that an evaluation finished no episode in some seats (the budget ran out)."""
        config = run.config
        return (
            f"{config.trainer.name} on {config.env.name}: the evaluation at {run.unit} "
            f"{run.counters[run.unit]:,} finished no episode in seat(s) "
            f"{', '.join(map(str, self.evaluator.unplayed_seats))} before budget.seconds="
            f"{config.budget.seconds:g} ran out; its {self.evaluator.metric} leaves them out "
            f"(raise budget.seconds)"
        )

    def _evaluate(self, run: Run, rates: tuple[float, float], final: bool = False) -> None:
        started = time.perf_counter()
        row: dict[str, float | None] = {
            **run.counters,
            "wall_seconds": round(run.budget.wall_seconds(), 3),
            "episodes_per_second": round(rates[0], 1),
            "iterations_per_second": round(rates[1], 2),
        }
        row.update(self.evaluator.evaluate(run.counters, run.unit, final))
        if self.evaluator.unplayed_seats:
            print(self._unplayed(run), file=sys.stderr)
        row.update(run.update_metrics)
        run.log.log(row)
        self.evaluator.last_seconds = time.perf_counter() - started
        run.last_row = row
        for callback in run.callbacks:
            callback.on_evaluation(run, row)


class Run:
    """One training run: set up from a validated config, :meth:`run` calls
    ``learner.step(context)`` until the budget is spent, its callbacks (evaluation,
    checkpoints, progress, then any given) acting after each step, and ends with the final
    evaluation and checkpoint, the exported policies and the plot (:func:`train`)."""

    def __init__(
        self, config: RunConfig, resume: bool = False, callbacks: list[Callback] | None = None
    ):
        self.config, self.resumed = config, resume
        self.budget = Budget(config.budget)  # the session's clock starts here
        self.output_dir = Path(config.output_dir)
        self.checkpointer = Checkpointer(self.output_dir, config, self.budget)
        self.unit = "episodes" if config.evaluation.every_episodes else "iterations"
        self.counters = {unit: 0 for unit in COUNTED}
        self.extra_callbacks = list(callbacks or [])
        self.last_row: dict[str, Any] = {}
        self.update_metrics: dict[str, float] = {}

    def run(self) -> dict[str, Any]:
        """Train to the end of the budget; the counters, wall time, last evaluation row and
        the paths of the checkpoint and plot. Ctrl-C raises :class:`RunInterrupted`."""
        try:
            return self._run()
        except KeyboardInterrupt:
            raise RunInterrupted(self.checkpointer.interrupted_message()) from None

    def _run(self) -> dict[str, Any]:
        validated = validate_run(self.config)  # kept on the config: never checked twice
        if not self.resumed:
            check_new_run_dir(self.output_dir)
        self.output_dir.mkdir(parents=True, exist_ok=True)
        torch.set_num_threads(self.config.torch_threads)
        seed_everything(self.config.seed)
        # The learner's game is built after seeding, as it always was: a game whose making
        # draws from the process-wide generators draws the same numbers in every run.
        game = hiddenenvs.load_game(self.config.env.name, **self.config.env.params)
        trainer = trainer_class(self.config.trainer.name)
        self.learner = trainer(game, validated.trainer_params, self.config.seed)
        if self.learner.device_choice is not None:  # the run's first line: where it trains
            print(
                f"{self.config.trainer.name} on {self.config.env.name}: "
                f"{self.learner.device_choice}",
                flush=True,
            )
        try:  # a distributed learner's actors, a process pool's workers go, however it ends
            self._set_up(validated.offers)
            try:
                self._train()
            finally:
                for callback in self.callbacks:
                    callback.on_close(self)
                self.log.close()
        finally:
            self.learner.close()
        return self._export()

    def _set_up(self, offers: Any) -> None:
        self.rng = np.random.default_rng(self.config.seed)
        if self.resumed:
            self.counters = self.checkpointer.restore(self.learner, self.rng)
        self.counters_at_start = dict(self.counters)
        self.context = LoopContext(self.learner, self.config, self.rng)
        self.evaluator = Evaluator(self.config, offers, self.context, self.budget)
        self.metric = self.evaluator.metric
        columns = [
            *BASE_COLUMNS,
            *EVALUATION_COLUMNS,
            *self.learner.METRICS,
        ]
        resume_iterations = self.counters["iterations"] if self.resumed else None
        self.log = MetricsLog(self.output_dir, columns, self.unit, resume_iterations)
        self.checkpointer.saved_at = time.perf_counter()
        self.evaluation = EvaluationCallback(self.evaluator, self.config, self.counters)
        self.callbacks: list[Callback[Run]] = [
            self.evaluation,
            CheckpointCallback(self.config, self.counters),
            *([ProgressCallback()] if self.config.progress_bar else []),
            *self.extra_callbacks,
        ]

    def _train(self) -> None:
        for callback in self.callbacks:
            callback.on_run_start(self)
        self.evaluation.begin(self)
        while not self.spent():
            report = self._step()
            if report is None:  # the deadline came mid-step: its partial episodes are not counted
                break
            for callback in self.callbacks:
                callback.on_step(self, report)
        if self.counters == self.counters_at_start:
            raise TrainingError(self._trained_nothing())
        for callback in self.callbacks:
            callback.on_run_end(self)

    def reserve_seconds(self) -> float:
        """Seconds kept for the final evaluation and checkpoint, as long as the last ones took
        (the checkpoint grows with the memories: twice the last one's)."""
        return self.evaluator.last_seconds + 2 * self.checkpointer.last_seconds

    def spent(self) -> bool:
        return self.budget.spent(self.counters, self.reserve_seconds())

    def _step(self) -> StepReport | None:
        """One ``learner.step``, its self-play ending exactly on the next scheduled episode
        (an evaluation, a checkpoint) or the budget; None when the deadline cut it."""
        caps = [
            self.config.num_envs,
            self.budget.episodes_left(self.counters),
            *(callback.episodes_until_due(self.counters) for callback in self.callbacks),
        ]
        context = self.context
        context.max_episodes = max(1, min(c for c in caps if c is not None))
        deadline = self.budget.deadline
        context.deadline = None if deadline is None else deadline - self.reserve_seconds()
        context.step_cut = False
        report = self.learner.step(context)
        if context.step_cut:
            return None
        if report.episodes < 0 or report.iterations < 1:
            raise ValueError(
                f"{type(self.learner).__name__}.step() must count at least one iteration and no "
                f"negative episodes, got {report}"
            )
        self.counters["episodes"] += report.episodes
        self.counters["iterations"] += report.iterations
        self.update_metrics = report.metrics or self.update_metrics
        return report

    def _trained_nothing(self) -> str:
        """Why the run trained nothing, and what to change."""
        config = self.config
        what = f"{config.trainer.name} on {config.env.name} trained nothing"
        reached = self.budget.reached(self.counters)
        if reached:
            return (
                f"{what}: the run had already reached {', '.join(reached)}; resume with a "
                f"larger budget"
            )
        seconds = self.budget.wall_seconds() - self.budget.seconds_before
        evaluation_seconds = self.evaluator.last_seconds
        where = (
            f"the first evaluation took {evaluation_seconds:.1f} s of it"
            if evaluation_seconds
            else ""
        )
        if self.context.step_cut:
            return (
                f"{what}: its first step was still running when budget.seconds="
                f"{config.budget.seconds:g} ran out ({seconds:.1f} s in this session"
                f"{'; ' + where if where else ''}); raise budget.seconds, or make a step smaller "
                f"(num_envs={config.num_envs}, the trainer's iterations or searches per step)"
            )
        return (
            f"{what} in {seconds:.1f} s: start-up and the first evaluation used the whole "
            f"budget.seconds={config.budget.seconds}{' (' + where + ')' if where else ''}; "
            f"raise budget.seconds or lower evaluation.episodes_vs_random / evaluation.max_seconds"
        )

    def _export(self) -> dict[str, Any]:
        """The evaluation agents as ``policy_player<p>.pt``, ``metrics.png``; the result."""
        for player in self.learner.trained_players():
            self.learner.evaluation_agent(player).save(
                self.output_dir / f"policy_player{player}.pt"
            )
        plot_path = self.output_dir / "metrics.png"
        title = f"{self.config.trainer.name} on {self.config.env.name}"
        plotted = plot_metrics(self.log.rows, plot_path, title, self.unit, self.metric)
        return {
            **self.counters,
            "wall_seconds": self.budget.wall_seconds(),
            "last_evaluation": self.last_row,
            "metric": self.metric,
            "checkpoint": str(self.checkpointer.path),
            "plot": str(plot_path) if plotted else None,
        }


def train(config: RunConfig, resume: bool = False) -> dict[str, Any]:
    """Run (or resume) a training job (:class:`Run`); returns the counters, the wall time,
    the last evaluation row, the run's metric and the paths of the checkpoint and plot.

    ``budget.seconds`` bounds the whole run: start-up (building the learner and an
    exact-evaluation tree), training, every evaluation (each capped at
    ``evaluation.max_seconds``, by default a tenth of the budget), the final evaluation, the
    checkpoint and the exported policies. Training stops early enough to leave time for the
    final evaluation and checkpoint, as long as the last ones took; a self-play step still
    running at the deadline is cut short. A new run refuses an ``output_dir`` that holds
    anything (:class:`agents.runs.RunDirectoryError`); a resumed one, a checkpoint of another
    env or trainer. Raises :class:`agents.capabilities.CapabilityError` before any work when
    the trainer does not fit the env, :class:`TrainingError` when the run ends having
    trained nothing, and :class:`RunInterrupted` on Ctrl-C (the learner closed, the last
    checkpoint intact).
    """
    return Run(config, resume).run()
