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
   lockstep; at every tick the decisions waiting in all copies are grouped by seat and
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

Outputs in ``output_dir``: ``checkpoint.pt``, ``metrics.csv``, ``tensorboard/``,
``metrics.png`` (the evaluation metric against episodes and wall time),
``policy_player<p>.pt`` (evaluation agents, loadable with :func:`agents.load_agent`).
"""

from __future__ import annotations

import csv
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

import hiddenenvs
from agents.base import Agent, Learner, StepReport, Transition
from agents.baselines import RandomAgent
from agents.checkpoint import (
    atomic_torch_save,
    atomic_write,
    global_rng_state,
    interrupts_deferred,
    load_checkpoint,
    seed_everything,
    set_global_rng_state,
)
from agents.config import ConfigError, RunConfig
from agents.runs import (
    CHECKPOINT_NAME,
    RUN_CHECKPOINT_FORMAT,
    build_learner,
    check_new_run_dir,
    check_same_run,
    load_learner_state,
)
from agents.vector_self_play import play_vector_episodes, self_play_vector_env
from hiddenenvs.analysis import tree_is_small

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


# ---- playing episodes -----------------------------------------------------------------------
def play_episodes(
    envs: list,
    seat_agents: dict[str, Agent],
    seeds: np.ndarray,
    learn: bool = True,
    deadline: float | None = None,
) -> np.ndarray:
    """Play one episode in each env in lockstep; returns ``(len(envs), num_agents)`` returns.

    ``seat_agents`` maps each PettingZoo agent name to the Agent in that seat. With
    ``learn`` the agents get their transitions and episode boundaries. Agents that search
    from their seat's information get its view with each decision; agents that act from
    the true state (``USES_TRUE_STATE``: scripted bots with full information, a search told
    to start from the true state) get the game state. Past ``deadline`` (a
    ``time.perf_counter()`` time) the episodes still running are abandoned (their
    agents get ``end_episode``) and only the finished episodes' rows are returned.
    """
    possible = envs[0].possible_agents
    seat_index = {name: k for k, name in enumerate(possible)}
    returns = np.zeros((len(envs), len(possible)))
    for episode_id, (env, seed) in enumerate(zip(envs, seeds)):
        env.reset(seed=int(seed))
        if learn:
            for name in possible:
                seat_agents[name].start_episode(episode_id)
    pending: dict[tuple[int, str], tuple[np.ndarray, np.ndarray, int]] = {}
    active = list(range(len(envs)))
    finished: list[int] = []
    while active:
        if deadline is not None and time.perf_counter() > deadline:
            if learn:
                for episode_id in active:
                    for name in possible:
                        seat_agents[name].end_episode(episode_id)
            return returns[sorted(finished)]
        requests: dict[str, list[tuple[int, dict]]] = defaultdict(list)
        still_active = []
        for episode_id in active:
            env = envs[episode_id]
            if not env.agents:
                if learn:
                    for name in possible:
                        seat_agents[name].end_episode(episode_id)
                finished.append(episode_id)
                continue
            still_active.append(episode_id)
            name = env.agent_selection
            observation, reward, termination, truncation, _ = env.last()
            returns[episode_id, seat_index[name]] += reward
            done = termination or truncation
            previous = pending.pop((episode_id, name), None)
            if learn and previous is not None:
                seat_agents[name].observe(
                    Transition(
                        observation=previous[0],
                        action_mask=previous[1],
                        action=previous[2],
                        reward=float(reward),
                        next_observation=observation["observation"],
                        next_action_mask=(
                            np.zeros_like(previous[1]) if done else observation["action_mask"]
                        ),
                        done=bool(done),
                        episode_id=episode_id,
                    )
                )
            if done:
                env.step(None)
            else:
                requests[name].append((episode_id, observation))
        for name, items in requests.items():
            observations = np.stack([obs["observation"] for _, obs in items])
            masks = np.stack([obs["action_mask"] for _, obs in items])
            agent = seat_agents[name]
            ids = [i for i, _ in items]
            if getattr(agent, "USES_TRUE_STATE", False):
                actions, _ = agent.act_batch(
                    observations, masks, ids, roots=[envs[i].game_state for i in ids]
                )
            else:
                views = [envs[i].seat_view(name) for i in ids] if agent.USES_SEAT_VIEW else None
                actions, _ = agent.act_batch(observations, masks, ids, views)
            for (episode_id, _), observation, mask, action in zip(
                items, observations, masks, actions
            ):
                pending[(episode_id, name)] = (observation, mask, int(action))
                envs[episode_id].step(int(action))
        active = still_active
    return returns


def returns_against_random(
    env_factory: Callable[[], Any],
    agent_for_seat: Callable[[int], Agent],
    episodes: int,
    seed: int,
    num_envs: int = 32,
) -> np.ndarray:
    """Mean return of ``agent_for_seat(p)`` in seat ``p`` against uniform random, per seat."""
    return returns_against_opponents(env_factory, agent_for_seat, episodes, seed, num_envs).means


class OpponentReturns:
    """Per evaluated seat: the mean return and the episodes played (``NaN`` / 0 elsewhere)."""

    def __init__(self, num_seats: int):
        self.means = np.full(num_seats, np.nan)
        self.episodes = np.zeros(num_seats, dtype=np.int64)
        self.wins = np.zeros(num_seats, dtype=np.int64)

    @property
    def total_episodes(self) -> int:
        return int(self.episodes.sum())


def returns_against_opponents(
    env_factory: Callable[[], Any],
    agent_for_seat: Callable[[int], Agent],
    episodes: int,
    seed: int,
    num_envs: int = 32,
    opponent: Callable[[str, int, int], Agent] | None = None,
    seats: list[int] | None = None,
    deadline: float | None = None,
) -> OpponentReturns:
    """``agent_for_seat(p)`` in each seat ``p`` of ``seats`` (default: all) for ``episodes``
    episodes, every other seat played by ``opponent(name, seat, seed)`` (default: uniform
    random). Past ``deadline`` it stops, dropping the episodes in flight (fewer episodes,
    counted; a seat that finished none has a NaN mean). ``env_factory`` may instead be a
    list of unwrapped envs to reuse (the loop's own)."""
    if isinstance(env_factory, list):
        envs = env_factory[: min(len(env_factory), episodes)]
    else:
        envs = [env_factory().unwrapped for _ in range(min(num_envs, episodes))]
    names = envs[0].possible_agents
    num_actions = envs[0].action_space(names[0]).n
    rng = np.random.default_rng(seed)
    result = OpponentReturns(len(names))
    evaluated = [seat for seat in range(len(names)) if seats is None or seat in seats]
    for seat, seat_name in enumerate(names):
        if seat not in evaluated:
            continue
        # Each seat gets an equal share of what is left before the deadline.
        seat_deadline = (
            None
            if deadline is None
            else (
                time.perf_counter()
                + (deadline - time.perf_counter()) / (len(evaluated) - evaluated.index(seat))
            )
        )
        agent = agent_for_seat(seat)
        agent.rng = np.random.default_rng(
            np.random.SeedSequence(seed, spawn_key=(seat,))
        )  # not the env stream
        if opponent is None:
            opponents = {name: RandomAgent(num_actions, int(rng.integers(2**31))) for name in names}
        else:
            opponents = {
                name: opponent(name, k, int(rng.integers(2**31))) for k, name in enumerate(names)
            }
        opponents[seat_name] = agent
        total, played, wins = 0.0, 0, 0
        while played < episodes and (seat_deadline is None or time.perf_counter() < seat_deadline):
            batch = envs[: min(len(envs), episodes - played)]
            returns = play_episodes(
                batch,
                opponents,
                rng.integers(2**31, size=len(batch)),
                learn=False,
                deadline=seat_deadline,
            )
            total += returns[:, seat].sum()
            wins += int(
                (
                    returns[:, seat]
                    > returns.max(axis=1, where=np.arange(len(names)) != seat, initial=-np.inf)
                ).sum()
            )
            played += len(returns)
        result.means[seat] = total / played if played else np.nan
        result.episodes[seat] = played
        result.wins[seat] = wins
    return result


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
        for flag, what in (("USES_SEAT_VIEW", "seat views"), ("USES_TRUE_STATE", "the true state")):
            if getattr(agent, flag, False):
                raise ConfigError(
                    f"vector_self_play: trainer {trainer!r}'s agents need {what}, which the "
                    f"vector env does not build; set vector_self_play: false"
                )
    if type(learner).step is not Learner.step:
        own = " (ANFSP's actors: trainer.params.vector_envs: true)" if trainer == "anfsp" else ""
        raise ConfigError(
            f"vector_self_play: trainer {trainer!r} runs its own step; only trainers that keep "
            f"the loop's self-play step (nfsp) play through the vector env{own}; set "
            f"vector_self_play: false"
        )
    return env


class _Schedule:
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


class _MetricsLog:
    """``metrics.csv`` plus TensorBoard scalars; on resume, rows after the checkpoint go.

    Rows are ordered by ``iterations`` (every step counts at least one); TensorBoard's
    step is the schedule's unit (``episodes`` or ``iterations``). The file is never
    rewritten in place: the rows kept on resume go to a new file that atomically replaces
    the old one (a kill mid-resume leaves the old file whole); then rows are only appended.
    """

    def __init__(
        self, output_dir: Path, columns: list[str], unit: str, resume_iterations: int | None
    ):
        import io

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
        resume_step = int(self.rows[-1][unit]) if self.rows else None
        self.writer = SummaryWriter(
            log_dir=str(output_dir / "tensorboard"),
            purge_step=resume_step + 1 if resume_step is not None else None,
        )

    def log(self, row: dict[str, float | None]) -> None:
        with self.path.open("a", newline="") as handle:
            csv.DictWriter(handle, fieldnames=self.columns).writerow(
                {k: ("" if row.get(k) is None else row[k]) for k in self.columns}
            )
        for key, value in row.items():
            if key not in ("episodes", "iterations") and value is not None:
                self.writer.add_scalar(key, value, global_step=int(row[self.unit]))
        self.writer.flush()
        self.rows.append(row)

    def close(self) -> None:
        self.writer.close()


def plot_metrics(rows: list[dict], path: Path, title: str, unit: str = "episodes") -> str | None:
    """PNG of exploitability (or return vs random) against ``unit`` and wall time."""
    metric = next(
        (
            m
            for m in ("exploitability", "return_vs_random")
            if any(r.get(m) is not None for r in rows)
        ),
        None,
    )
    if metric is None:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = [r for r in rows if r.get(metric) is not None]
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


# ---- the loop -----------------------------------------------------------------------------------
class TrainingError(RuntimeError):
    """A run that cannot train (it trained nothing within its budget); the message says why."""


def _evaluation_opponent(
    config: RunConfig, num_players: int
) -> Callable[[str, int, int], Agent] | None:
    """``evaluation.opponent`` as a factory ``(seat name, seat, seed) -> Agent`` (None: random),
    checked (with ``evaluation.seats``) before the run starts."""
    from agents.config import ConfigError

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


def _save_run_checkpoint(
    path: Path,
    config: RunConfig,
    learner: Learner,
    counters: dict[str, int],
    wall_seconds: Callable[[], float],
    rng: np.random.Generator,
) -> None:
    atomic_torch_save(
        {
            "format": RUN_CHECKPOINT_FORMAT,
            "config": config.to_dict(),
            "learner": learner.state_dict(),
            "loop": {
                **counters,
                "wall_seconds": wall_seconds(),
                "rng": rng.bit_generator.state,
                "global_rng": global_rng_state(),
            },
        },
        path,
    )


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C ended a run: the message says where its last checkpoint is and how to resume.

    A ``KeyboardInterrupt``, so code that stops on Ctrl-C still stops; nothing was written
    after the last checkpoint but metrics rows (which a resume drops and logs again)."""


def _interrupted_message(config: RunConfig, progress: dict[str, Any]) -> str:
    where = config.output_dir
    saved = progress.get("checkpointed")
    if saved is None:
        return (
            f"interrupted (Ctrl-C) before {where} had a checkpoint: nothing to resume; "
            f"remove {where} to start again"
        )
    return (
        f"interrupted (Ctrl-C); the last checkpoint, at {saved['episodes']} episodes and "
        f"{saved['iterations']} iterations, is {Path(where) / CHECKPOINT_NAME}: continue with "
        f"train.py --resume {where}"
    )


def train(config: RunConfig, resume: bool = False) -> dict[str, Any]:
    """Run (or resume) a training job; returns the last evaluation row and paths.

    Ctrl-C (``KeyboardInterrupt``) ends the run at once: the learner is closed (its workers
    and actors go), nothing more is written, and :class:`RunInterrupted` says where the last
    checkpoint is and how to resume.
    """
    progress: dict[str, Any] = {"checkpointed": None}
    try:
        return _train(config, resume, progress)
    except KeyboardInterrupt:
        raise RunInterrupted(_interrupted_message(config, progress)) from None


def _train(config: RunConfig, resume: bool, progress_record: dict[str, Any]) -> dict[str, Any]:
    """:func:`train`'s work; ``progress_record["checkpointed"]`` holds the counters of the
    last checkpoint on disk.

    ``budget.seconds`` bounds the whole run: start-up (building the game, the learner and an
    exact-evaluation tree), training, every evaluation (each capped at
    ``evaluation.max_seconds``, by default a tenth of the budget), the final evaluation, the
    checkpoint and the exported policies. Training stops early enough to leave time for the
    final evaluation and checkpoint, as long as the last ones took; a self-play step still
    running at the deadline is cut short. Raises :class:`agents.capabilities.CapabilityError`
    before any work when the trainer does not fit the env, and :class:`TrainingError` when
    the run ends having trained nothing.
    """
    from agents.capabilities import check_exact_evaluation, check_trainer

    session_started = time.perf_counter()
    offers = check_trainer(
        config.trainer.name, config.trainer.params, config.env.name, config.env.params
    )
    evaluation = config.evaluation
    if evaluation.exact == "yes":
        check_exact_evaluation(config.env.name, config.env.params, evaluation.max_tree_nodes)
    output_dir = Path(config.output_dir)
    if not resume:
        check_new_run_dir(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    checkpoint_path = output_dir / CHECKPOINT_NAME
    torch.set_num_threads(config.torch_threads)
    seed_everything(config.seed)
    learner = build_learner(config)
    game = learner.game
    loop_rng = np.random.default_rng(config.seed)
    counters = {"episodes": 0, "iterations": 0}
    wall_seconds_before = 0.0
    if resume:
        if not checkpoint_path.exists():
            raise FileNotFoundError(f"cannot resume: no {CHECKPOINT_NAME} in {output_dir}")
        payload = load_checkpoint(checkpoint_path)
        check_same_run(payload["config"], config.to_dict(), output_dir)
        load_learner_state(learner, payload["learner"], checkpoint_path)
        loop_state = payload["loop"]
        counters = {"episodes": loop_state["episodes"], "iterations": loop_state["iterations"]}
        wall_seconds_before = loop_state["wall_seconds"]
        progress_record["checkpointed"] = dict(counters)
        loop_rng.bit_generator.state = loop_state["rng"]
        set_global_rng_state(loop_state["global_rng"])
    counters_at_start = dict(counters)
    budget = config.budget
    # The wall-clock deadline of this session (budget.seconds counts resumed sessions too).
    deadline = (
        None if budget.seconds is None else session_started + budget.seconds - wall_seconds_before
    )

    def wall_seconds() -> float:
        return wall_seconds_before + time.perf_counter() - session_started

    context = LoopContext(learner, config, loop_rng)
    unit = "episodes" if evaluation.every_episodes else "iterations"
    tree = None
    small = offers.tree.fits(evaluation.max_tree_nodes)
    if small and offers.tree.how != "exact":  # an estimate says so: count to be sure (bounded)
        small = tree_is_small(game, evaluation.max_tree_nodes)
    if evaluation.exact == "yes" or (evaluation.exact == "auto" and small):
        from hiddenenvs.analysis import GameTree

        tree = GameTree.build(game)
    evaluation_seconds = evaluation.max_seconds
    if evaluation_seconds is None:
        evaluation_seconds = (
            DEFAULT_EVALUATION_SECONDS if budget.seconds is None else budget.seconds / 10
        )
    opponent = _evaluation_opponent(config, game.info.num_players)
    metric = (
        "exploitability"
        if tree is not None
        else ("return_vs_random" if opponent is None else "return_vs_opponent")
    )
    columns = list(BASE_COLUMNS) + list(EVALUATION_COLUMNS) + list(getattr(learner, "METRICS", ()))
    log = _MetricsLog(output_dir, columns, unit, counters["iterations"] if resume else None)
    # The last evaluation's and checkpoint's wall time: the final ones' reserve.
    costs = {"evaluation": 0.0, "checkpoint": 0.0, "checkpointed_at": time.perf_counter()}

    def save_checkpoint() -> None:
        started = time.perf_counter()
        with interrupts_deferred():  # on disk whole, and known to be: Ctrl-C waits for it
            _save_run_checkpoint(checkpoint_path, config, learner, counters, wall_seconds, loop_rng)
            progress_record["checkpointed"] = dict(counters)
        costs["checkpoint"] = time.perf_counter() - started
        costs["checkpointed_at"] = time.perf_counter()

    def evaluate(
        update_metrics: dict[str, float], rates: tuple[float, float]
    ) -> dict[str, float | None]:
        started = time.perf_counter()
        row: dict[str, float | None] = {
            **counters,
            "wall_seconds": round(wall_seconds(), 3),
            "episodes_per_second": round(rates[0], 1),
            "iterations_per_second": round(rates[1], 2),
        }
        if tree is not None:
            row["exploitability"] = exact_exploitability(learner, tree)
        elif evaluation.episodes_vs_random > 0:
            cap = None if evaluation_seconds is None else started + evaluation_seconds
            if deadline is not None:
                # The reserve holds the last evaluation's time for this one: a step that ran
                # past the deadline does not take it away (the final row is never empty).
                until = max(deadline, started + costs["evaluation"])
                cap = until if cap is None else min(cap, until)
            with torch.no_grad():
                result = returns_against_opponents(
                    context.envs,
                    learner.evaluation_agent,
                    evaluation.episodes_vs_random,
                    seed=config.seed * 1_000_003 + counters[unit],
                    num_envs=config.num_envs,
                    opponent=opponent,
                    seats=evaluation.seats,
                    deadline=cap,
                )
            evaluated = result.episodes > 0
            row[metric] = float(result.means[evaluated].mean()) if evaluated.any() else None
            row["evaluation_episodes"] = result.total_episodes
            if game.info.num_players > 1 and result.total_episodes:
                row["win_rate"] = round(float(result.wins.sum() / result.total_episodes), 4)
        row.update(update_metrics)
        with interrupts_deferred():  # a metrics row is written whole
            log.log(row)
        costs["evaluation"] = time.perf_counter() - started
        return row

    limits = {"episodes": budget.episodes, "iterations": budget.iterations}
    progress = None
    if config.progress_bar:
        from agents.progress import end_at_reached
        from agents.progress import progress_bar as tqdm  # a bar on a terminal, lines in a log

        # The bar counts toward what the run will reach: seconds when time bounds it.
        if budget.seconds is not None:
            bar_unit = "seconds"
            progress = tqdm(
                total=round(budget.seconds),
                initial=round(wall_seconds_before),
                unit="s",
                dynamic_ncols=True,
                bar_format="{l_bar}{bar}| {n:.0f}/{total_fmt} s{postfix}",
            )
        else:
            bar_unit = (
                unit
                if limits[unit] is not None
                else next((u for u, limit in limits.items() if limit is not None), unit)
            )
            progress = tqdm(
                total=limits[bar_unit],
                initial=counters[bar_unit],
                unit=bar_unit[:2] if bar_unit == "episodes" else "it",
                dynamic_ncols=True,
            )

    def advance_progress(report: StepReport) -> None:
        if progress is None:
            return
        if bar_unit == "seconds":
            progress.update(max(0.0, min(budget.seconds, wall_seconds()) - progress.n))
        else:
            progress.update(report.episodes if bar_unit == "episodes" else report.iterations)

    def reserve() -> float:
        """Seconds kept for the final evaluation and checkpoint, as long as the last ones took
        (the checkpoint grows with the memories: twice the last one's)."""
        return costs["evaluation"] + 2 * costs["checkpoint"]

    def finished() -> bool:
        return any(limit is not None and counters[u] >= limit for u, limit in limits.items()) or (
            deadline is not None and time.perf_counter() + reserve() >= deadline
        )

    evaluation_schedule = _Schedule(
        evaluation.every_episodes, evaluation.every_iterations, counters
    )
    checkpoint_schedule = _Schedule(
        config.checkpoint_every_episodes, config.checkpoint_every_iterations, counters
    )
    if not resume:
        last_row = evaluate({}, (0.0, 0.0))
    else:
        last_row = log.rows[-1] if log.rows else {}
    update_metrics: dict[str, float] = {}
    window_start, window_counters = time.perf_counter(), dict(counters)
    try:  # a distributed learner's actors go, however the run ends
        while not finished():
            # Self-play steps end exactly on evaluation and checkpoint episodes (and the budget).
            caps = [
                config.num_envs,
                evaluation_schedule.episodes_left(counters),
                checkpoint_schedule.episodes_left(counters),
                None if budget.episodes is None else budget.episodes - counters["episodes"],
            ]
            context.max_episodes = max(1, min(c for c in caps if c is not None))
            context.deadline = None if deadline is None else deadline - reserve()
            context.step_cut = False
            report = learner.step(context)
            if context.step_cut:  # the deadline came mid-step: its partial episodes are not counted
                break
            if report.episodes < 0 or report.iterations < 1:
                raise ValueError(
                    f"{type(learner).__name__}.step() must count at least one iteration and no "
                    f"negative episodes, got {report}"
                )
            counters["episodes"] += report.episodes
            counters["iterations"] += report.iterations
            update_metrics = report.metrics or update_metrics
            advance_progress(report)
            if evaluation_schedule.due(counters) or finished():
                elapsed = max(time.perf_counter() - window_start, 1e-9)
                rates = tuple(
                    (counters[u] - window_counters[u]) / elapsed for u in ("episodes", "iterations")
                )
                last_row = evaluate(update_metrics, rates)
                window_start, window_counters = time.perf_counter(), dict(counters)
                evaluation_schedule.advance(counters)
                if progress is not None and last_row.get(metric) is not None:
                    progress.set_postfix({metric: f"{last_row[metric]:.4f}"})
            # Under a time budget a checkpoint also falls every tenth of it: the final one's
            # cost is then known (the reserve) and a crash loses at most that much.
            timed_checkpoint = (
                deadline is not None
                and time.perf_counter() - costs["checkpointed_at"] >= budget.seconds / 10
            )
            if checkpoint_schedule.due(counters) or timed_checkpoint:
                save_checkpoint()
                checkpoint_schedule.advance(counters)
        if counters == counters_at_start:
            reached = [
                f"budget.{u}={limit}"
                for u, limit in limits.items()
                if limit is not None and counters[u] >= limit
            ]
            if reached:
                raise TrainingError(
                    f"{config.trainer.name} on {config.env.name} trained nothing: the run had already "
                    f"reached {', '.join(reached)}; resume with a larger budget"
                )
            raise TrainingError(
                _trained_nothing(config, wall_seconds() - wall_seconds_before, costs, context)
            )
        if (
            last_row.get("episodes") != counters["episodes"]
            or last_row.get("iterations") != counters["iterations"]
        ):
            elapsed = max(time.perf_counter() - window_start, 1e-9)
            rates = tuple(
                (counters[u] - window_counters[u]) / elapsed for u in ("episodes", "iterations")
            )
            last_row = evaluate(update_metrics, rates)  # the final state, wherever the budget ended
        save_checkpoint()
        if progress is not None:
            advance_progress(StepReport(episodes=0, iterations=0))
            end_at_reached(progress)
    finally:
        learner.close()
        log.close()
    for player in learner.trained_players():
        learner.evaluation_agent(player).save(output_dir / f"policy_player{player}.pt")
    plot_path = output_dir / "metrics.png"
    plotted = plot_metrics(log.rows, plot_path, f"{config.trainer.name} on {config.env.name}", unit)
    return {
        **counters,
        "wall_seconds": wall_seconds(),
        "last_evaluation": last_row,
        "checkpoint": str(checkpoint_path),
        "plot": str(plot_path) if plotted else None,
    }


def _trained_nothing(
    config: RunConfig, seconds: float, costs: dict[str, float], context: LoopContext
) -> str:
    """Why a run trained nothing, and what to change."""
    where = (
        f"the first evaluation took {costs['evaluation']:.1f} s of it"
        if costs["evaluation"]
        else ""
    )
    if context.step_cut:
        return (
            f"{config.trainer.name} on {config.env.name} trained nothing: its first step was still running "
            f"when budget.seconds={config.budget.seconds:g} ran out ({seconds:.1f} s in this session"
            f"{'; ' + where if where else ''}); raise budget.seconds, or make a step smaller "
            f"(num_envs={config.num_envs}, the trainer's iterations or searches per step)"
        )
    return (
        f"{config.trainer.name} on {config.env.name} trained nothing in {seconds:.1f} s: start-up and "
        f"the first evaluation used the whole budget.seconds={config.budget.seconds}"
        f"{' (' + where + ')' if where else ''}; "
        f"raise budget.seconds or lower evaluation.episodes_vs_random / evaluation.max_seconds"
    )
