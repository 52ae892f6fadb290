"""The one training loop every trainer runs through.

``train(config)`` builds the env and the trainer (a :class:`agents.base.Learner`), then
repeats until the budget (episodes and/or wall seconds) is spent:

1. **Self-play.** ``num_envs`` copies of the PettingZoo AEC env play one episode each in
   lockstep; at every tick the decisions waiting in all copies are grouped by seat and
   answered with one batched ``act_batch`` call per training agent (one network forward
   for all of them). Chance and simultaneous moves are resolved by the env (a
   simultaneous node asks its movers one after another, none seeing the others'
   choices), so any number of players works. Each agent's experience is routed to it as
   :class:`agents.base.Transition` objects: from one of its decisions to its next one (or
   the end), with everything it earned in between.
2. **Update.** ``learner.update()`` after every batch; the learner decides how many
   gradient steps that is (NFSP: one per ``learn_every`` new transitions).
3. **Evaluation** every ``evaluation.every_episodes``: the exact exploitability of the
   learner's evaluation policy (NFSP: the average policy) when the game tree is small
   enough to enumerate (:mod:`hiddenenvs.analysis`; the networks are evaluated once per
   information set, one batched call per player, at a representative state), otherwise
   the mean return of each evaluation agent against uniform random in every seat.
4. **Checkpoint** every ``checkpoint_every_episodes`` and at the end, atomically
   (temporary file + ``os.replace``): the learner's networks, optimisers, buffers and
   generators, the loop's counters and generators, and the config.

Determinism and resuming. Every episode's env is reset with a seed drawn from the loop's
generator, so the env's own generator is part of the checkpointed state; checkpoints are
written between batches, so a run killed at any moment (even by SIGKILL) and resumed
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
from agents.base import Agent, Learner, Transition
from agents.baselines import RandomAgent
from agents.checkpoint import (
    atomic_torch_save,
    atomic_write,
    global_rng_state,
    load_checkpoint,
    seed_everything,
    set_global_rng_state,
)
from agents.config import RunConfig, config_from_dict, trainer_class, trainer_config
from hiddenenvs.game import CHANCE, SIMULTANEOUS, ChanceMode, Game

RUN_CHECKPOINT_FORMAT = "hiddenenvs-run-v1"
CHECKPOINT_NAME = "checkpoint.pt"
BASE_COLUMNS = ("episodes", "wall_seconds", "episodes_per_second", "exploitability", "return_vs_random")


# ---- playing episodes -----------------------------------------------------------------------
def play_episodes(
    envs: list,
    seat_agents: dict[str, Agent],
    seeds: np.ndarray,
    learn: bool = True,
) -> np.ndarray:
    """Play one episode in each env in lockstep; returns ``(len(envs), num_agents)`` returns.

    ``seat_agents`` maps each PettingZoo agent name to the Agent in that seat. With
    ``learn`` the agents get their transitions and episode boundaries.
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
    while active:
        requests: dict[str, list[tuple[int, dict]]] = defaultdict(list)
        still_active = []
        for episode_id in active:
            env = envs[episode_id]
            if not env.agents:
                if learn:
                    for name in possible:
                        seat_agents[name].end_episode(episode_id)
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
            actions, _ = seat_agents[name].act_batch(observations, masks, [i for i, _ in items])
            for (episode_id, _), observation, mask, action in zip(items, observations, masks, actions):
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
    envs = [env_factory().unwrapped for _ in range(min(num_envs, episodes))]
    names = envs[0].possible_agents
    num_actions = envs[0].action_space(names[0]).n
    rng = np.random.default_rng(seed)
    means = np.zeros(len(names))
    for seat, seat_name in enumerate(names):
        agent = agent_for_seat(seat)
        agent.rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(seat,)))  # not the env stream
        opponents = {name: RandomAgent(num_actions, int(rng.integers(2**31))) for name in names}
        opponents[seat_name] = agent
        total, played = 0.0, 0
        while played < episodes:
            batch = envs[: min(len(envs), episodes - played)]
            returns = play_episodes(batch, opponents, rng.integers(2**31, size=len(batch)), learn=False)
            total += returns[:, seat].sum()
            played += len(batch)
        means[seat] = total / episodes
    return means


# ---- exact evaluation -------------------------------------------------------------------------
def tree_is_small(game: Game, max_nodes: int) -> bool:
    """Whether the game tree has at most ``max_nodes`` nodes (stops counting beyond)."""
    if game.info.chance_mode is ChanceMode.SAMPLED_STOCHASTIC:
        return False
    stack = [game.new_initial_state()]
    count = 0
    while stack:
        state = stack.pop()
        count += 1
        if count > max_nodes:
            return False
        player = state.current_player()
        if state.is_terminal():
            continue
        if player == CHANCE:
            actions = [action for action, _ in state.chance_outcomes()]
        elif player == SIMULTANEOUS:
            legal = [state.legal_actions(p) or [-1] for p in range(game.info.num_players)]
            joints = [[]]
            for options in legal:
                joints = [joint + [a] for joint in joints for a in options]
            for joint in joints:
                child = state.clone()
                child.apply_actions(joint)
                stack.append(child)
            continue
        else:
            actions = state.legal_actions()
        stack.extend(state.child(action) for action in actions)
    return True


def exact_exploitability(learner: Learner, tree) -> float:
    """Exploitability of the learner's evaluation policy, one batched call per player."""
    from hiddenenvs.analysis import TabularPolicy, exploitability

    with torch.no_grad():
        policy = TabularPolicy.from_tensor_function(tree, learner.tensor_policy)
    return float(exploitability(tree, policy))


# ---- checkpoints --------------------------------------------------------------------------------
def build_learner(config: RunConfig) -> Learner:
    game = hiddenenvs.load_game(config.env.name, **config.env.params)
    return trainer_class(config.trainer.name)(game, trainer_config(config), config.seed)


def learner_from_checkpoint(payload: dict[str, Any]) -> Learner:
    learner = build_learner(config_from_dict(payload["config"]))
    learner.load_state_dict(payload["learner"])
    return learner


class _MetricsLog:
    """``metrics.csv`` plus TensorBoard scalars; on resume, rows after the checkpoint go.

    The file is never rewritten in place: the rows kept on resume go to a new file that
    atomically replaces the old one (a kill mid-resume leaves the old file whole); then rows
    are only appended.
    """

    def __init__(self, output_dir: Path, columns: list[str], resume_episodes: int | None):
        import io

        from torch.utils.tensorboard import SummaryWriter

        self.path = output_dir / "metrics.csv"
        self.columns = columns
        kept: list[dict[str, str]] = []
        if resume_episodes is not None and self.path.exists():
            with self.path.open(newline="") as handle:
                kept = [row for row in csv.DictReader(handle) if int(row["episodes"]) <= resume_episodes]
        text = io.StringIO(newline="")
        writer = csv.DictWriter(text, fieldnames=columns)
        writer.writeheader()
        writer.writerows(kept)
        atomic_write(self.path, lambda handle: handle.write(text.getvalue().encode()))
        self.rows = [{k: float(v) if v != "" else None for k, v in row.items()} for row in kept]
        self.writer = SummaryWriter(
            log_dir=str(output_dir / "tensorboard"),
            purge_step=resume_episodes + 1 if resume_episodes is not None else None,
        )

    def log(self, row: dict[str, float | None]) -> None:
        with self.path.open("a", newline="") as handle:
            csv.DictWriter(handle, fieldnames=self.columns).writerow(
                {k: ("" if row.get(k) is None else row[k]) for k in self.columns}
            )
        for key, value in row.items():
            if key != "episodes" and value is not None:
                self.writer.add_scalar(key, value, global_step=int(row["episodes"]))
        self.writer.flush()
        self.rows.append(row)

    def close(self) -> None:
        self.writer.close()


def plot_metrics(rows: list[dict], path: Path, title: str) -> str | None:
    """PNG of exploitability (or return vs random) against episodes and wall time."""
    metric = next((m for m in ("exploitability", "return_vs_random")
                   if any(r.get(m) is not None for r in rows)), None)
    if metric is None:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = [r for r in rows if r.get(metric) is not None]
    figure, (by_episodes, by_time) = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    values = [r[metric] for r in points]
    by_episodes.plot([r["episodes"] for r in points], values, marker=".")
    by_episodes.set_xlabel("episodes")
    by_episodes.set_ylabel(metric.replace("_", " "))
    by_time.plot([r["wall_seconds"] for r in points], values, marker=".")
    by_time.set_xlabel("wall time (s)")
    if metric == "exploitability":
        by_episodes.set_yscale("log")
    figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return metric


# ---- the loop -----------------------------------------------------------------------------------
def train(config: RunConfig, resume: bool = False) -> dict[str, Any]:
    """Run (or resume) a training job; returns the last evaluation row and paths."""
    output_dir = Path(config.output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    checkpoint_path = output_dir / CHECKPOINT_NAME
    # Tiny networks: one thread is faster than two fighting over a shared 2-core machine,
    # and keeps runs bit-for-bit reproducible.
    torch.set_num_threads(1)
    seed_everything(config.seed)
    learner = build_learner(config)
    game = learner.game
    loop_rng = np.random.default_rng(config.seed)
    episodes, wall_seconds_before = 0, 0.0
    if resume:
        if not checkpoint_path.exists():
            raise FileNotFoundError(f"cannot resume: no {CHECKPOINT_NAME} in {output_dir}")
        payload = load_checkpoint(checkpoint_path)
        learner.load_state_dict(payload["learner"])
        loop_state = payload["loop"]
        episodes, wall_seconds_before = loop_state["episodes"], loop_state["wall_seconds"]
        loop_rng.bit_generator.state = loop_state["rng"]
        set_global_rng_state(loop_state["global_rng"])

    session_started = time.perf_counter()

    def wall_seconds() -> float:
        return wall_seconds_before + time.perf_counter() - session_started

    def env_factory():
        return hiddenenvs.make(config.env.name, **config.env.params)

    envs = [env_factory().unwrapped for _ in range(config.num_envs)]
    names = envs[0].possible_agents
    seat_agents = dict(zip(names, learner.agents))

    evaluation = config.evaluation
    tree = None
    if evaluation.exact == "yes" or (
        evaluation.exact == "auto" and tree_is_small(game, evaluation.max_tree_nodes)
    ):
        from hiddenenvs.analysis import GameTree

        tree = GameTree.build(game)
    columns = list(BASE_COLUMNS) + list(getattr(learner, "METRICS", ()))
    log = _MetricsLog(output_dir, columns, episodes if resume else None)

    def save_checkpoint() -> None:
        atomic_torch_save(
            {
                "format": RUN_CHECKPOINT_FORMAT,
                "config": config.to_dict(),
                "learner": learner.state_dict(),
                "loop": {
                    "episodes": episodes,
                    "wall_seconds": wall_seconds(),
                    "rng": loop_rng.bit_generator.state,
                    "global_rng": global_rng_state(),
                },
            },
            checkpoint_path,
        )

    def evaluate(update_metrics: dict[str, float], rate: float) -> dict[str, float | None]:
        row: dict[str, float | None] = {
            "episodes": episodes, "wall_seconds": round(wall_seconds(), 3),
            "episodes_per_second": round(rate, 1),
        }
        if tree is not None:
            row["exploitability"] = exact_exploitability(learner, tree)
        elif evaluation.episodes_vs_random > 0:
            with torch.no_grad():
                per_seat = returns_against_random(
                    env_factory, learner.evaluation_agent, evaluation.episodes_vs_random,
                    seed=config.seed * 1_000_003 + episodes, num_envs=config.num_envs,
                )
            row["return_vs_random"] = float(per_seat.mean())
        row.update(update_metrics)
        log.log(row)
        return row

    budget_episodes = config.budget.episodes
    budget_seconds = config.budget.seconds
    progress = None
    if config.progress_bar:
        from tqdm import tqdm

        progress = tqdm(total=budget_episodes, initial=episodes, unit="ep", dynamic_ncols=True)

    def finished() -> bool:
        return (budget_episodes is not None and episodes >= budget_episodes) or (
            budget_seconds is not None and wall_seconds() >= budget_seconds
        )

    next_evaluation = (episodes // evaluation.every_episodes + 1) * evaluation.every_episodes
    next_checkpoint = (episodes // config.checkpoint_every_episodes + 1) * config.checkpoint_every_episodes
    if not resume:
        last_row = evaluate({}, 0.0)
    else:
        last_row = log.rows[-1] if log.rows else {}
    update_metrics: dict[str, float] = {}
    rate_window_start, rate_window_episodes = time.perf_counter(), episodes
    while not finished():
        # Batches end exactly on evaluation and checkpoint episodes (and the budget).
        batch = min(config.num_envs, next_evaluation - episodes, next_checkpoint - episodes)
        if budget_episodes is not None:
            batch = min(batch, budget_episodes - episodes)
        seeds = loop_rng.integers(2**31, size=batch)
        play_episodes(envs[:batch], seat_agents, seeds, learn=True)
        update_metrics = learner.update() or update_metrics
        episodes += batch
        if progress is not None:
            progress.update(batch)
        if episodes >= next_evaluation or finished():
            now = time.perf_counter()
            rate = (episodes - rate_window_episodes) / max(now - rate_window_start, 1e-9)
            last_row = evaluate(update_metrics, rate)
            rate_window_start, rate_window_episodes = time.perf_counter(), episodes
            next_evaluation = (episodes // evaluation.every_episodes + 1) * evaluation.every_episodes
            if progress is not None:
                metric = "exploitability" if tree is not None else "return_vs_random"
                if last_row.get(metric) is not None:
                    progress.set_postfix({metric: f"{last_row[metric]:.4f}", "ep/s": f"{rate:.0f}"})
        if episodes >= next_checkpoint:
            save_checkpoint()
            next_checkpoint = (episodes // config.checkpoint_every_episodes + 1) * config.checkpoint_every_episodes
    if progress is not None:
        progress.close()
    save_checkpoint()  # the final state, wherever the budget ended
    for player in range(game.info.num_players):
        learner.evaluation_agent(player).save(output_dir / f"policy_player{player}.pt")
    log.close()
    plot_path = output_dir / "metrics.png"
    plotted = plot_metrics(log.rows, plot_path, f"{config.trainer.name} on {config.env.name}")
    return {
        "episodes": episodes,
        "wall_seconds": wall_seconds(),
        "last_evaluation": last_row,
        "checkpoint": str(checkpoint_path),
        "plot": str(plot_path) if plotted else None,
    }
