"""A Gymnasium ``VectorEnv`` that seats one learner in a vector game against given opponents.

| Import        | ``SeatedVectorEnv("leduc_holdem", num_envs=64, seat=0, opponents="random", seed=0)`` |
|---------------|--------------------------------------------------------------------------------------|
| Observation   | ``Box(0, 1, [B, *shape], float32)``: the learner's tensor (as :mod:`hiddenenvs.vector`) |
| Action        | ``MultiDiscrete([A] * B)``: the learner's action in every env                        |
| Action masks  | ``infos["action_mask"]``: ``[B, A]`` bool, the learner's legal actions              |
| Autoreset     | ``metadata["autoreset_mode"] = AutoresetMode.SAME_STEP``                            |

Single-agent RL libraries that take a Gymnasium vector env (CleanRL-style PPO loops,
anything that reads ``num_envs``, ``single_observation_space`` and
``single_action_space``) train on it directly; see ``examples/vector_ppo_masked.py``.

How a step goes: every env is at the learner's decision. ``step(actions)`` plays the
learner's actions, then the opponents move (one batched call per opponent and
round, only in the envs where an opponent is to play; a game that ended restarts and
its opponents open the next one) until every env is back at the learner's decision.
In simultaneous games the learner's and the opponents' actions form one joint action.
``rewards[i]`` is the learner's reward over all of that, so it carries the game's result
for the learner in the step where the game ended, whoever moved last.

Opponents: ``"random"`` (uniform legal actions, seeded from ``seed``), or a callable
``policy(observations, legal_action_masks) -> actions`` given the whole batch (``[B,
*shape]`` float32, ``[B, A]`` int8) and returning ``[B]`` ints; only the rows where that
opponent is to move are used. Give one for every other seat as a dict ``{seat:
policy}``, or one policy for all of them.

Same-step autoreset as in Gymnasium 1.x: when a game ends during ``step``, the returned
observation and ``action_mask`` already belong to the next game; ``infos["final_obs"]``
(``[B, *shape]`` float32, dense rather than Gymnasium's object array) holds the
learner's tensor at the terminal state in the rows where ``infos["_final_obs"]`` is set.
``truncated`` is always false (the games end by their rules).

An illegal learner action raises ``ValueError`` (``illegal_action="raise"``, the
default), or with ``illegal_action="replace"`` is replaced by a uniform legal action
(seeded) and flagged in ``infos["illegal_action"]`` (``[B]`` bool): for libraries that
probe an env with unmasked random actions, such as TorchRL's ``GymWrapper`` when it
infers the info specs.

TorchRL: ``torchrl.envs.GymWrapper(SeatedVectorEnv(..., illegal_action="replace"))`` is a
batched TorchRL env (``batch_size [B]``) whose tensordicts carry ``action_mask``; see
``examples/torchrl_vector_leduc.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from hiddenenvs.vector import RandomLegalPolicy, VectorStep, make

OpponentPolicy = Callable[[np.ndarray, np.ndarray], np.ndarray]
ILLEGAL_ACTION_RULES = ("raise", "replace")


class SeatedVectorEnv(VectorEnv):
    """A learner at ``seat`` of ``num_envs`` games of ``name`` (see the module docstring)."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(
        self,
        name: str,
        num_envs: int = 1,
        seat: int = 0,
        opponents: str | OpponentPolicy | dict[int, OpponentPolicy] = "random",
        seed: int | None = None,
        observation_type: str = "information_state",
        illegal_action: str = "raise",
        **params: Any,
    ):
        if illegal_action not in ILLEGAL_ACTION_RULES:
            raise ValueError(
                f"SeatedVectorEnv({name!r}): illegal_action must be one of {ILLEGAL_ACTION_RULES}, got {illegal_action!r}"
            )
        self.illegal_action = illegal_action
        self.env = make(
            name,
            num_envs=num_envs,
            seed=seed,
            observation_type=observation_type,
            copy=False,
            **params,
        )
        num_players = self.env.num_players
        if not isinstance(seat, int) or not 0 <= seat < num_players:
            raise ValueError(
                f"SeatedVectorEnv({name!r}): seat must be 0..{num_players - 1}, got {seat!r}"
            )
        self.seat = seat
        self.opponents = self._opponent_policies(name, opponents, seed)
        self._replacements = RandomLegalPolicy(0 if seed is None else seed)
        self.num_envs = self.env.num_envs
        self.single_observation_space = spaces.Box(0.0, 1.0, self.env.observation_shape, np.float32)
        self.single_action_space = spaces.Discrete(self.env.num_actions)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.autoreset_mode = AutoresetMode.SAME_STEP  # as Gymnasium's own vector envs declare it
        self._step: VectorStep | None = None  # the last reset's or step's, None before reset()

    def _opponent_policies(self, name, opponents, seed) -> dict[int, OpponentPolicy]:
        others = [p for p in range(self.env.num_players) if p != self.seat]
        if isinstance(opponents, dict):
            if sorted(opponents) != others:
                raise ValueError(
                    f"SeatedVectorEnv({name!r}): opponents must name the seats {others}, got {sorted(opponents)}"
                )
            return dict(opponents)
        if opponents == "random":
            base = 0 if seed is None else seed
            return {p: _random_opponent(base + 1 + p) for p in others}
        if callable(opponents):
            return {p: opponents for p in others}
        raise ValueError(
            f"SeatedVectorEnv({name!r}): opponents must be 'random', a policy or a dict seat -> policy, got {opponents!r}"
        )

    # ---- the Gymnasium API ---------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        self._step = self.env.reset(seed=seed)
        rewards = np.zeros(self.num_envs, dtype=np.float32)
        ended = np.zeros(self.num_envs, dtype=bool)
        final = np.zeros((self.num_envs, *self.env.observation_shape), dtype=np.float32)
        if not self.env.simultaneous:
            self._play_opponents(rewards, ended, final)
        return self._observation(), {"action_mask": self._mask()}

    def step(self, actions):
        if self._step is None:
            raise ValueError("SeatedVectorEnv.step: call reset() first")
        actions = np.asarray(actions).astype(np.int64, copy=True)
        mask = self._mask()
        in_range = (actions >= 0) & (actions < self.env.num_actions)
        illegal = ~in_range
        illegal[in_range] = ~mask[np.flatnonzero(in_range), actions[in_range]]
        if self.illegal_action == "replace":
            actions[illegal] = self._replacements(mask)[illegal]
        if self.env.simultaneous:
            joint = np.empty((self.num_envs, self.env.num_players), dtype=np.int64)
            for player, policy in self.opponents.items():
                joint[:, player] = policy(
                    self._step.observations[:, player], self._step.legal_action_masks[:, player]
                )
            joint[:, self.seat] = actions
            self._step = self.env.step(joint)
        else:
            self._step = self.env.step(actions)
        rewards = self._step.rewards[:, self.seat].copy()
        ended = self._step.terminated.copy()
        final = np.zeros((self.num_envs, *self.env.observation_shape), dtype=np.float32)
        final[ended] = self._step.final_observations[ended, self.seat]
        if not self.env.simultaneous:
            self._play_opponents(rewards, ended, final)
        infos = {"action_mask": self._mask(), "final_obs": final, "_final_obs": ended}
        if self.illegal_action == "replace":
            infos["illegal_action"] = illegal
        truncated = np.zeros(self.num_envs, dtype=bool)
        return self._observation(), rewards, ended, truncated, infos

    # ---- helpers -------------------------------------------------------------------------
    def _play_opponents(self, rewards: np.ndarray, ended: np.ndarray, final: np.ndarray) -> None:
        """Let the opponents move until every env is at the learner's decision."""
        assert self._step is not None  # reset() and step() set it before calling this
        while True:
            players = self._step.current_players
            waiting = players != self.seat
            if not waiting.any():
                return
            actions = np.zeros(self.num_envs, dtype=np.int64)
            for player, policy in self.opponents.items():
                rows = players == player
                if rows.any():
                    chosen = policy(self._step.observations, self._step.legal_action_masks)
                    actions[rows] = np.asarray(chosen)[rows]
            self._step = self.env.step(actions, active=waiting)
            rewards += self._step.rewards[:, self.seat]
            now_ended = self._step.terminated
            if (now_ended & ended).any():
                raise RuntimeError(
                    f"SeatedVectorEnv: a game of {self.env.game.NAME} ended twice in one learner "
                    f"step (the learner at seat {self.seat} never moved in the second)"
                )
            final[now_ended] = self._step.final_observations[now_ended, self.seat]
            ended |= now_ended

    def _observation(self) -> np.ndarray:
        assert self._step is not None  # reset() and step() set it before calling this
        if self.env.simultaneous:
            return self._step.observations[:, self.seat].copy()
        return self._step.observations.copy()

    def _mask(self) -> np.ndarray:
        assert self._step is not None  # reset() and step() set it before calling this
        masks = self._step.legal_action_masks
        return (masks[:, self.seat] if self.env.simultaneous else masks).astype(bool)


def _random_opponent(seed: int) -> OpponentPolicy:
    policy = RandomLegalPolicy(seed)
    return lambda observations, masks: policy(masks)
