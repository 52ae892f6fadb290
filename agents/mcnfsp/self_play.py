"""MCNFSP's self-play outside the loop's lockstep: on worker processes or Ray actors
(:class:`SelfPlayWorker`), and against a fixed opponent on the game model
(:func:`play_against_policy`, the paper's combat setting)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import torch

import hiddenenvs
from agents.base import Agent, Learner
from agents.episodes import (
    SeatTransitions,
    model_episode,
    never_suspends,
    play_episodes,
    play_out,
)
from agents.mcnfsp.agent import MCNFSPAgent
from agents.mcnfsp.config import MCNFSPConfig, OpponentPolicy
from agents.parallel import local_deadline
from hiddenenvs.game import Game, State, draw_index


# ---- self-play in worker processes or Ray actors ------------------------------------------------
class SelfPlayWorker:
    """A self-play worker of :class:`agents.parallel.WorkerPool` (a process or a Ray actor):
    a copy of the learner (its players, each with its search) on the CPU, and envs, playing
    pieces of a step's episodes with a snapshot of the networks through the loop's lockstep
    (:func:`agents.episodes.play_episodes`). A piece's episodes depend on the piece alone
    (its seeds, and ``piece_seed`` for the players' generators), not on the worker."""

    def __init__(self, learner_class: type[Learner], game: Game, config: MCNFSPConfig, seed: int):
        torch.set_num_threads(1)
        local = dataclasses.replace(config, workers=1, ray_address=None, device="cpu")
        # The learner's class, sent by the learner (agents.mcnfsp.learner imports this module).
        self.learner: Any = learner_class(game, local, seed)
        self.network_version: int | None = None
        self.envs: list = []
        self.seat_agents: dict[str, Agent] = {}

    def play_games(
        self,
        network_version: int,
        networks: list[dict[str, dict[str, np.ndarray]]],
        seeds: list[int],
        piece_seed: int,
        unix_deadline: float | None = None,
    ) -> list[dict[str, Any]] | None:
        """The episodes of ``seeds``; per trained player its searches (M_RL and M_SL rows,
        in the order played) and their count; None when the deadline cut an episode."""
        if network_version != self.network_version:
            self.learner.load_network_arrays(networks)
            self.network_version = network_version
        deadline = local_deadline(unix_deadline)
        self.learner.start_piece(piece_seed, deadline)
        searches = self.learner.search_counts()
        returns = play_episodes(
            self._envs(len(seeds)), self.seat_agents, np.asarray(seeds), deadline=deadline
        )
        if len(returns) < len(seeds):
            return None
        return self.learner.piece_memories(searches)

    def _envs(self, count: int) -> list:
        spec = self.learner.game.spec
        while len(self.envs) < count:
            self.envs.append(hiddenenvs.make(spec.name, **dict(spec.params)).unwrapped)
        if not self.seat_agents:
            self.seat_agents = dict(zip(self.envs[0].possible_agents, self.learner.agents))
        return self.envs[:count]


# ---- against a fixed opponent, on the game model ------------------------------------------------
def _draw_from(policy: OpponentPolicy, state: State, player: int, rng: np.random.Generator) -> int:
    """One of ``player``'s legal actions, drawn by ``policy(state, player)`` with ``rng``."""
    legal = state.legal_actions(player)
    return int(legal[draw_index(np.asarray(policy(state, player))[legal], rng)])


def play_against_policy(
    agent: Agent,
    player: int,
    opponent_policy: OpponentPolicy,
    state: State,
    rng: np.random.Generator,
    learn: bool = True,
    episode_id: int = 0,
) -> State:
    """Play ``state`` to the end: ``agent`` in seat ``player``, every other seat drawn from
    ``opponent_policy(state, q)`` with ``rng``, chance by its probabilities (with ``rng``,
    :func:`agents.episodes.draw_chance`).

    With ``learn`` the agent gets its episode boundaries and transitions, as in the loop.
    An :class:`~agents.mcnfsp.agent.MCNFSPAgent` searches from the true state (``roots=``): the way to search a
    game without a belief sampler (combat), at the price of seeing what its seat does not.
    """
    seat = SeatTransitions(agent, player, episode_id, learn)

    def choose(state: State, movers: list[int], joint: list[int] | None) -> list[int]:
        # The others first (in seat order), then the agent: one stream of rng draws.
        chosen = {q: _draw_from(opponent_policy, state, q, rng) for q in movers if q != player}
        if player in movers:
            observation = state.information_state_tensor(player)
            mask = state.legal_actions_mask(player)
            seat.reached(observation, mask)
            if isinstance(agent, MCNFSPAgent):  # it searches from the true state
                actions, _ = agent.act_batch(
                    observation[None], mask[None], [episode_id], roots=[state]
                )
            else:
                actions, _ = agent.act_batch(observation[None], mask[None], [episode_id])
            chosen[player] = int(actions[0])
            seat.chose(observation, mask, chosen[player])
        return [chosen[q] for q in movers]

    state = play_out(model_episode(state, never_suspends(choose), rng, after_move=seat.earn))
    seat.end()
    return state
