"""Self-play through :mod:`hiddenenvs.vector`: one episode in each of ``B`` games, in lockstep.

The batched counterpart of :func:`agents.loop.play_episodes` for agents that act from
their observation tensor alone (NFSP, ANFSP's actors, DQN-like learners): the games are
stepped by one compiled call per tick instead of ``B`` PettingZoo steps, and every seat's
agent gets one ``act_batch`` call per tick for all the games where it is to move.

What an agent sees is what :func:`agents.loop.play_episodes` gives it: ``start_episode``
and ``end_episode`` per game (episode id = the game's index in the batch), and with
``learn`` one :class:`agents.base.Transition` per decision, from that decision to the
player's next one (or to the end of the game): the reward is the player's reward summed
over the steps in between, ``next_observation`` is the player's tensor at its next
decision (its terminal tensor, ``final_observations``, when ``done``) and
``next_action_mask`` its mask there (zeros when ``done``). Tensors are the scalar game's
``information_state_tensor``, as the AEC env's default observation. Each tick's
transitions of a seat go to its agent in one ``Agent.observe_batch`` call, as ``[n, ...]``
arrays in the order ``observe`` would have seen them (by default one ``observe`` each;
NFSP writes them into its memory in one go).

Determinism: the batch's deals follow ``seed`` (:func:`hiddenenvs.vector.make`'s per-env
generators); the actions follow the agents' own generators.

Agents that need a seat view or the true state (search agents: ``USES_SEAT_VIEW``,
``USES_TRUE_STATE``) cannot play here: they need the scalar states that the vector env
does not build.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from agents.base import Agent
from hiddenenvs.vector import VECTOR_GAMES, VectorEnv, make

# PettingZoo adapter options in env.params that the vector env has no use for.
AEC_ONLY_PARAMS = ("render_mode", "observation_layout", "illegal_action")


def self_play_vector_env(name: str, params: dict, num_envs: int, where: str) -> VectorEnv:
    """``num_envs`` games of the env ``name`` with the run's ``env.params`` (the adapter-only
    ones dropped), unseeded: :func:`play_vector_episodes` resets it with a seed. A one-line
    ``ValueError`` naming ``where`` (the setting that asked) when the env has no kernel."""
    if name not in VECTOR_GAMES:
        raise ValueError(
            f"{where}: env {name!r} has no vector kernel (hiddenenvs.vector has "
            f"{', '.join(VECTOR_GAMES.names())}); set {where}: false"
        )
    kept = {key: value for key, value in params.items() if key not in AEC_ONLY_PARAMS}
    return make(name, num_envs=num_envs, copy=False, **kept)


def play_vector_episodes(
    env: VectorEnv,
    agents: Sequence[Agent],
    seed: int,
    learn: bool = True,
    deadline: float | None = None,
    num_games: int | None = None,
) -> np.ndarray:
    """Play one episode in each of ``env``'s games (or in its first ``num_games``: the others
    stay still, through ``step``'s ``active`` mask), ``agents[p]`` in seat ``p``; returns the
    ``(n, P)`` returns of the finished episodes (all ``n`` games unless ``deadline``, a
    ``time.perf_counter()`` time, cut the rest: their agents get ``end_episode``)."""
    num_envs, num_players = env.num_envs, env.num_players
    num_games = num_envs if num_games is None else num_games
    if not 1 <= num_games <= num_envs:
        raise ValueError(
            f"play_vector_episodes: num_games must be 1..{num_envs} (the env's games), got {num_games}"
        )
    if len(agents) != num_players:
        raise ValueError(
            f"play_vector_episodes: {len(agents)} agents for {num_players} seats of {env.game.NAME}"
        )
    for agent in agents:
        if agent.USES_SEAT_VIEW or agent.USES_TRUE_STATE:
            raise ValueError(
                f"play_vector_episodes: {type(agent).__name__} needs seat views or the true state, "
                "which the vector env does not build; play it with agents.loop.play_episodes"
            )
    step = env.reset(seed=seed)
    episode_ids = np.arange(num_games)
    if learn:
        for agent in agents:
            for episode_id in episode_ids:
                agent.start_episode(int(episode_id))
    returns = np.zeros((num_envs, num_players))
    active = np.arange(num_envs) < num_games
    pending = [
        _Pending(num_envs, env.observation_shape, env.num_actions) for _ in range(num_players)
    ]
    while active.any():
        if deadline is not None and time.perf_counter() > deadline:
            if learn:
                for agent in agents:
                    for episode_id in np.flatnonzero(active):
                        agent.end_episode(int(episode_id))
            return returns[:num_games][~active[:num_games]]
        actions = np.zeros(
            (num_envs, num_players) if env.simultaneous else num_envs, dtype=np.int64
        )
        for player, agent in enumerate(agents):
            if env.simultaneous:
                rows = np.flatnonzero(active)
                observations = step.observations[rows, player]
                masks = step.legal_action_masks[rows, player]
            else:
                rows = np.flatnonzero(active & (step.current_players == player))
                observations = step.observations[rows]
                masks = step.legal_action_masks[rows]
            if len(rows) == 0:
                continue
            if learn:
                pending[player].emit(agent, rows, observations, masks, done=False)
            chosen, _ = agent.act_batch(observations, masks, [int(i) for i in rows])
            chosen = np.asarray(chosen, dtype=np.int64)
            pending[player].hold(rows, observations, masks, chosen)
            if env.simultaneous:
                actions[rows, player] = chosen
            else:
                actions[rows] = chosen
        step = env.step(actions, active=active)
        rewards = np.where(active[:, None], step.rewards, 0.0)
        returns += rewards
        for player in range(num_players):
            pending[player].rewards += rewards[:, player]
        ended = np.flatnonzero(step.terminated & active)
        if len(ended):
            if learn:
                for player, agent in enumerate(agents):
                    final = step.final_observations[ended, player]
                    pending[player].emit(
                        agent,
                        ended,
                        final,
                        np.zeros((len(ended), env.num_actions), np.int8),
                        done=True,
                    )
                    for episode_id in ended:
                        agent.end_episode(int(episode_id))
            active[ended] = False
    return returns[:num_games]


class _Pending:
    """Each game's last decision of one player, waiting for its outcome."""

    def __init__(self, num_envs: int, observation_shape: tuple[int, ...], num_actions: int):
        self.waiting = np.zeros(num_envs, dtype=bool)
        self.observations = np.zeros((num_envs, *observation_shape), dtype=np.float32)
        self.masks = np.zeros((num_envs, num_actions), dtype=np.int8)
        self.actions = np.zeros(num_envs, dtype=np.int64)
        self.rewards = np.zeros(num_envs)

    def hold(self, rows, observations, masks, actions) -> None:
        self.waiting[rows] = True
        self.observations[rows] = observations
        self.masks[rows] = masks
        self.actions[rows] = actions
        self.rewards[rows] = 0.0

    def emit(self, agent: Agent, rows, next_observations, next_masks, done: bool) -> None:
        """Hand ``agent`` the transitions of ``rows`` that have a decision waiting, in one
        ``observe_batch`` call (NFSP writes them in one go; other agents observe each)."""
        rows = np.asarray(rows)
        positions = np.flatnonzero(self.waiting[rows])
        if len(positions):
            waiting = rows[positions]
            agent.observe_batch(
                self.observations[waiting],
                self.masks[waiting],
                self.actions[waiting],
                self.rewards[waiting],
                next_observations[positions],
                next_masks[positions],
                np.full(len(positions), done),
                waiting,
            )
            self.waiting[waiting] = False
