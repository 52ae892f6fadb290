"""Stable-Baselines3's ``VecEnv`` over a learner seat of a vector game (MaskablePPO-ready).

| Import        | ``SB3VecEnv("leduc_holdem", num_envs=64, seat=0, opponents="random", seed=0)`` |
|---------------|----------------------------------------------------------------------------------|
| Observation   | ``Box(0, 1, shape, float32)`` per env: the learner's tensor                       |
| Action        | ``Discrete(A)`` per env                                                          |
| Action masks  | ``env.action_masks()`` ``[B, A]`` bool (sb3-contrib's ``MaskablePPO`` asks for them through ``env_method("action_masks")``) |

SB3 takes its own ``VecEnv`` interface rather than Gymnasium's vector envs; this adapter
gives it :class:`hiddenenvs.vector.gymnasium_env.SeatedVectorEnv` (the same arguments:
``seat``, ``opponents``, ``seed``, ``observation_type``, ``illegal_action``, the game's
parameters). SB3's conventions apply: ``dones = terminated | truncated``, and a finished
game's terminal observation (the learner's tensor) is in ``infos[i]["terminal_observation"]``
while the returned observation is already the next game's. ``env.seed(s)`` seeds the next
``reset`` (all games from ``s``; SB3's per-env ``s + i`` is not needed, the vector env
seeds each game from its index).

    from sb3_contrib import MaskablePPO
    model = MaskablePPO("MlpPolicy", SB3VecEnv("leduc_holdem", num_envs=64, seed=0), n_steps=64)
    model.learn(50_000)
"""

from __future__ import annotations

from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import VecEnv

from hiddenenvs.vector.gymnasium_env import SeatedVectorEnv


class SB3VecEnv(VecEnv):
    """A learner seat of ``num_envs`` games of ``name`` as an SB3 ``VecEnv`` (see the module)."""

    render_mode = None

    def __init__(self, name: str, num_envs: int = 1, **seated_arguments: Any):
        self.seated = SeatedVectorEnv(name, num_envs=num_envs, **seated_arguments)
        super().__init__(
            self.seated.num_envs,
            self.seated.single_observation_space,
            self.seated.single_action_space,
        )
        self._masks = np.ones((self.num_envs, self.seated.env.num_actions), dtype=bool)
        self._actions: np.ndarray | None = None

    def reset(self):
        observations, infos = self.seated.reset(seed=self._seeds[0])
        self._reset_seeds()
        self._masks = infos["action_mask"]
        return observations

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self):
        if self._actions is None:
            raise ValueError("SB3VecEnv.step_wait: call step_async(actions) first")
        observations, rewards, terminated, truncated, infos = self.seated.step(self._actions)
        self._actions = None
        self._masks = infos["action_mask"]
        dones = terminated | truncated
        env_infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for row in np.flatnonzero(dones):
            env_infos[row]["terminal_observation"] = infos["final_obs"][row]
            env_infos[row]["TimeLimit.truncated"] = bool(truncated[row] and not terminated[row])
        return observations, rewards, dones, env_infos

    def action_masks(self) -> np.ndarray:
        """``[B, A]`` bool: the learner's legal actions in every game."""
        return self._masks

    def close(self) -> None:
        """Nothing to release: the games live in this process's arrays."""

    # ---- SB3's per-env attribute access, answered for the whole batch ------------------
    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        value = getattr(self, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        raise AttributeError(
            f"SB3VecEnv: the games share one vector env; {attr_name!r} cannot be set per env"
        )

    def env_method(
        self, method_name: str, *method_args, indices=None, **method_kwargs
    ) -> list[Any]:
        if method_name != "action_masks":
            raise AttributeError(
                f"SB3VecEnv: the games have no per-env method {method_name!r} (only 'action_masks')"
            )
        return [self._masks[row] for row in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]
