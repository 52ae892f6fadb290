"""Stable-Baselines3 on any hiddenenvs (or PettingZoo AEC) env: one seat as a gymnasium env.

| Import         | ``from agents.sb3 import single_agent_env``                               |
|----------------|----------------------------------------------------------------------------|
| Learner's seat | ``seat=0`` (an index or agent name), or ``"alternate"`` (switches every reset) |
| Opponents      | ``"random"``, an agent spec for :func:`agents.load_agent` (``cfr+:200``, a checkpoint), an :class:`agents.base.Agent`, or a dict per seat |
| Observation    | the seat's ``observation`` array (``Box``), without the mask              |
| Actions        | ``Discrete(num_distinct_actions)``; ``action_masks()`` for MaskablePPO     |
| Reward         | everything the seat earned since its previous decision; the episode ends when the game does |
| Illegal action | ``illegal_action="raise"`` (default, a ``ValueError`` naming the legal ones) or ``"lose"`` (the episode ends, the seat gets the game's minimum utility: for algorithms without masking) |

One line to train sb3-contrib's MaskablePPO against uniform random on Kuhn poker::

    from sb3_contrib import MaskablePPO
    from agents.sb3 import single_agent_env

    model = MaskablePPO("MlpPolicy", single_agent_env("kuhn_poker", opponents="random")).learn(20_000)

Self-play against a frozen copy of the learner: ``FrozenSB3Agent(model)`` snapshots the
model's policy as an :class:`~agents.base.Agent`; pass it as the opponent, and refresh it
during training with :class:`RefreshFrozenOpponent` (an SB3 callback)::

    env = single_agent_env("leduc_holdem", seat="alternate")
    model = MaskablePPO("MlpPolicy", env)
    env.set_opponents(FrozenSB3Agent(model))
    model.learn(100_000, callback=RefreshFrozenOpponent(every_steps=10_000))

Opponent moves, chance and simultaneous moves are played inside ``step``; a seat with
nothing to decide in an episode still gets its final reward at the end.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

import gymnasium
import numpy as np
import torch

import hiddenenvs
from agents.base import Agent


class FrozenSB3Agent(Agent):
    """A snapshot of an SB3 model's policy, playing as an :class:`Agent` (masked when it can)."""

    def __init__(self, model: Any, seed: int | None = None):
        super().__init__(int(model.action_space.n), seed)
        # A fresh policy with the model's weights (deepcopy trips over tensors cached by SB3).
        source = model.policy
        self.policy = type(source)(**source._get_constructor_parameters())
        self.policy.load_state_dict(source.state_dict())
        self.policy.set_training_mode(False)
        # sb3-contrib's maskable policies take the mask; decided from the signature, never
        # by catching a TypeError (which would hide a real error and drop the mask).
        self.takes_masks = (
            "action_masks" in inspect.signature(self.policy.get_distribution).parameters
        )

    def policy_probabilities_batch(self, observations, action_masks, views=None):
        masks = np.asarray(action_masks, dtype=bool)
        with torch.no_grad():
            tensors = torch.as_tensor(np.asarray(observations), dtype=torch.float32)
            if self.takes_masks:
                distribution = self.policy.get_distribution(tensors, action_masks=masks)
            else:
                distribution = self.policy.get_distribution(tensors)
            probabilities = distribution.distribution.probs.double().numpy()
        probabilities = probabilities * masks
        return probabilities / probabilities.sum(axis=1, keepdims=True)


class SingleAgentEnv(gymnasium.Env):
    """One seat of an AEC env as a gymnasium env (see the module docstring)."""

    metadata = {"render_modes": []}

    def __init__(
        self,
        aec_env: Any,
        seat: int | str = 0,
        opponents: Any = "random",
        env_name: str | None = None,
        env_params: dict | None = None,
        seed: int | None = None,
        illegal_action: str = "raise",
    ):
        if illegal_action not in ("raise", "lose"):
            raise ValueError(f"illegal_action must be 'raise' or 'lose', got {illegal_action!r}")
        self.illegal_action = illegal_action
        self.aec_env = aec_env
        self.names = list(aec_env.possible_agents)
        self.env_name = env_name
        self.env_params = env_params or {}
        self.alternate = seat == "alternate"
        self.seat_name = self.names[0] if self.alternate else self._seat_name(seat)
        space = aec_env.observation_space(self.names[0])
        self.observation_space = (
            space["observation"] if isinstance(space, gymnasium.spaces.Dict) else space
        )
        action_space = aec_env.action_space(self.names[0])  # Discrete: the game's actions
        self.action_space = action_space
        self.num_actions = int(action_space.n)
        self._seed_rng = np.random.default_rng(seed)
        self._mask = np.zeros(self.num_actions, dtype=bool)
        self.set_opponents(opponents)

    def _seat_name(self, seat: int | str) -> str:
        if isinstance(seat, int) and 0 <= seat < len(self.names):
            return self.names[seat]
        if isinstance(seat, str) and seat in self.names:
            return seat
        raise ValueError(
            f"seat must be 'alternate', an index 0..{len(self.names) - 1} or one of {self.names}, got {seat!r}"
        )

    def _resolve(self, spec: Any, player: int) -> Agent:
        if isinstance(spec, Agent):
            return spec
        if isinstance(spec, str):
            if self.env_name is None:
                raise ValueError("opponent specs need a registered env; pass Agent objects instead")
            from agents.specs import load_agent

            return load_agent(
                spec,
                self.env_name,
                player=player,
                seed=int(self._seed_rng.integers(2**31)),
                **self.env_params,
            )
        raise TypeError(
            f"an opponent must be an Agent or an agent spec string, got {type(spec).__name__}"
        )

    def set_opponents(self, opponents: Any) -> None:
        """One opponent for every other seat, or a dict ``{seat name or index: opponent}``."""
        if isinstance(opponents, dict):
            by_name = {
                (self.names[k] if isinstance(k, int) else k): v for k, v in opponents.items()
            }
            unknown = sorted(set(by_name) - set(self.names))
            if unknown:
                raise ValueError(f"opponents for unknown seats {unknown}; seats are {self.names}")
        else:
            by_name = dict.fromkeys(self.names, opponents)
        self.opponents = {
            name: self._resolve(spec, self.names.index(name)) for name, spec in by_name.items()
        }

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learner now (for sb3-contrib's MaskablePPO)."""
        return self._mask.copy()

    def _play_until_learner_moves(self) -> tuple[np.ndarray, float, bool]:
        env = self.aec_env
        reward, last_observation = 0.0, None
        while env.agents:
            name = env.agent_selection
            observation, step_reward, termination, truncation, _ = env.last()
            done = termination or truncation
            if name == self.seat_name:
                reward += step_reward
                last_observation = observation["observation"]
                if not done:
                    self._mask = observation["action_mask"].astype(bool)
                    return last_observation, reward, False
                env.step(None)
            elif done:
                env.step(None)
            else:
                action = self.opponents[name].act_in_env(env, name, observation)
                env.step(action)
        if last_observation is None:
            last_observation = env.observe(self.seat_name)["observation"]
        self._mask = np.zeros(self.num_actions, dtype=bool)
        return last_observation, reward, True

    def reset(self, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is not None:  # same seed, same episode: the opponents' sampling included
            self._seed_rng = np.random.default_rng(seed)
            for index, opponent in enumerate(self.opponents.values()):
                opponent.rng = np.random.default_rng(
                    np.random.SeedSequence(seed, spawn_key=(index,))
                )
            if self.alternate:  # the first seat after a seeded reset is always the first seat
                self.seat_name = self.names[-1]
        if self.alternate:
            self.seat_name = self.names[(self.names.index(self.seat_name) + 1) % len(self.names)]
        self.aec_env.reset(seed=int(self._seed_rng.integers(2**31)))
        observation, _, done = self._play_until_learner_moves()
        if done:  # the learner had nothing to decide; start over
            return self.reset(options=options)
        return observation, {"seat": self.seat_name}

    def step(self, action):
        if not self._mask.any():
            raise ValueError("the episode is over; call reset()")
        if not self._mask[int(action)]:
            legal = np.flatnonzero(self._mask).tolist()
            if self.illegal_action == "raise":
                raise ValueError(
                    f"action {int(action)} is illegal for {self.seat_name}; legal actions: {legal}"
                )
            game = getattr(self.aec_env.unwrapped, "game", None)
            penalty = game.info.min_utility if game is not None else -1.0
            self._mask = np.zeros(self.num_actions, dtype=bool)
            observation = self.aec_env.observe(self.seat_name)["observation"]
            return (
                observation,
                float(penalty),
                True,
                False,
                {"seat": self.seat_name, "illegal": True},
            )
        self.aec_env.step(int(action))
        observation, reward, done = self._play_until_learner_moves()
        return observation, float(reward), done, False, {"seat": self.seat_name}


def single_agent_env(
    env_name: str,
    seat: int | str = 0,
    opponents: Any = "random",
    seed: int | None = None,
    illegal_action: str = "raise",
    **env_params: Any,
) -> SingleAgentEnv:
    """A registered env's seat as a gymnasium env whose other seats ``opponents`` play."""
    aec_env = hiddenenvs.make(env_name, **env_params)
    return SingleAgentEnv(
        aec_env,
        seat,
        opponents,
        env_name=env_name,
        env_params=env_params,
        seed=seed,
        illegal_action=illegal_action,
    )


if TYPE_CHECKING:
    from stable_baselines3.common.callbacks import BaseCallback
else:
    try:
        from stable_baselines3.common.callbacks import BaseCallback
    except ImportError:  # SB3 is the "train" extra
        BaseCallback = object


class RefreshFrozenOpponent(BaseCallback):
    """SB3 callback: every ``every_steps`` steps, the opponents become a fresh frozen copy."""

    def __init__(self, every_steps: int = 10_000):
        super().__init__()
        self.every_steps = every_steps

    def _on_step(self) -> bool:
        if self.num_timesteps % self.every_steps == 0:
            self.training_env.env_method("set_opponents", FrozenSB3Agent(self.model))
        return True
