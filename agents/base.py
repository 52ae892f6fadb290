"""The two interfaces every player and every trainer in ``agents/`` implements.

An :class:`Agent` plays one seat of a PettingZoo env from what that seat sees: the
observation array and the legal-action mask of the env's ``{"observation", "action_mask"}``
dict. It is small enough for a scripted bot (implement :meth:`Agent.policy_probabilities`
and nothing else) and rich enough for a learner (override the experience hooks).

==========================================  ====================================================
Method                                      Meaning
==========================================  ====================================================
``act(observation, action_mask, view)``     ``(action, probabilities)``: the action taken and the
                                            distribution over ``num_distinct_actions`` it was
                                            sampled from (zero on illegal actions)
``act_batch(observations, masks, ids,``     the same for ``B`` decisions at once (one row per
``views)``                                  episode in flight; ``ids`` name those episodes)
``policy_probabilities(observation, mask,`` the agent's policy, for exact evaluation (no
``view)``                                   exploration noise, no side effects)
``policy_probabilities_batch(obs, masks,``  the same, ``(B, A)`` at once
``views)``
``start_episode(id)`` / ``end_episode(id)`` episode boundaries (``id`` as in ``act_batch``)
``observe(transition)``                     one :class:`Transition` of this agent's experience
``observe_batch(...)``                      ``n`` of them as arrays (default: ``observe`` each)
``save(path)`` / ``Agent.load(path)``       a self-describing, data-only file (see
                                            :func:`load_agent_file`)
==========================================  ====================================================

Search agents. An agent whose class sets ``USES_SEAT_VIEW = True`` also receives, for
every decision, its seat's :class:`SeatView`: the seat's information-state key (its
public and private observations, step by step), its legal actions and the game model,
never the state itself, so it can search (sample histories consistent with what it knows
with :mod:`hiddenenvs.beliefs`, then simulate) without seeing hidden information. The
training loop, ``evaluate.py`` and the SB3 wrapper build the views from the env
(``env.unwrapped.seat_view(agent)``). :class:`SearchAgent` is the base for such agents:
implement :meth:`SearchAgent.search_policy`.

A :class:`Learner` (a trainer: NFSP, ANFSP, MCNFSP, ExIt-OOS, ReBeL) owns one training
agent per player for self-play, may use the game model directly (search-based trainers
get ``game``), learns in :meth:`Learner.update`, and hands out evaluation agents
(its average policy, for instance) through :meth:`Learner.evaluation_agent`. The common
loop in :mod:`agents.loop` drives any learner on any env.

A transition belongs to one agent: it runs from one of that agent's decisions to its
next decision (or the end of the episode); ``reward`` is everything the agent earned in
between, whoever moved. Players who never see a decision get no transitions.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import torch

from hiddenenvs.game import Game, SeatView, State

if TYPE_CHECKING:
    from agents.device import DeviceChoice

AGENT_FILE_FORMAT = "hiddenenvs-agent-v2"
# v1 files named the class as "module:Class"; one that holds data only still loads when
# "Class" is a registered agent (the module part is ignored, never imported).
_AGENT_FILE_FORMAT_V1 = "hiddenenvs-agent-v1"


@dataclass
class Transition:
    """One step of one agent's experience (see the module docstring)."""

    observation: np.ndarray
    action_mask: np.ndarray
    action: int
    reward: float
    next_observation: np.ndarray
    next_action_mask: np.ndarray  # all zeros when ``done``
    done: bool
    episode_id: int = 0


def sample_batch(probabilities: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One action per row of ``probabilities`` ``(B, A)``, one uniform draw per row."""
    cumulative = np.cumsum(probabilities, axis=1)
    thresholds = rng.random(len(probabilities)) * cumulative[:, -1]
    actions = (cumulative <= thresholds[:, None]).sum(axis=1)
    return np.minimum(actions, probabilities.shape[1] - 1).astype(np.int64)


def uniform_over_legal(action_masks: np.ndarray) -> np.ndarray:
    """Uniform probabilities over the legal actions of each row of ``action_masks``."""
    masks = np.asarray(action_masks, dtype=np.float64)
    counts = masks.sum(axis=-1, keepdims=True)
    if np.any(counts == 0):
        raise ValueError("an action mask has no legal action; the agent is not to move")
    return masks / counts


class Agent(ABC):
    """A player of one seat (see the module docstring).

    Subclasses implement :meth:`policy_probabilities_batch`; acting samples from it with
    the agent's own generator ``self.rng``, so two agents built with the same seed act
    alike.
    """

    USES_SEAT_VIEW: ClassVar[bool] = False  # True: every call also gets the seats' views
    # True: the agent reads the true state (a scripted bot with full information, a search
    # told to search from it): the episode runner passes ``roots=`` (the states) to
    # act_batch, and the vector env, which builds no states, refuses it. An instance may
    # set it (MCNFSP's ``search_from``).
    USES_TRUE_STATE: bool = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        from agents.checkpoint import register_agent_class

        register_agent_class(cls)  # agent files name registered classes, never modules

    def __init__(self, num_actions: int, seed: int | None = None):
        self.num_actions = num_actions
        self.rng = np.random.default_rng(seed)

    # ---- the policy ---------------------------------------------------------------
    @abstractmethod
    def policy_probabilities_batch(
        self,
        observations: np.ndarray,
        action_masks: np.ndarray,
        views: Sequence[SeatView] | None = None,
    ) -> np.ndarray:
        """``(B, num_actions)`` probabilities, zero on illegal actions, rows summing to 1.

        ``views`` (one per row) are given to agents with ``USES_SEAT_VIEW``.
        """

    def policy_probabilities(
        self, observation: np.ndarray, action_mask: np.ndarray, view: SeatView | None = None
    ) -> np.ndarray:
        return self.policy_with_views(
            np.asarray(observation)[None],
            np.asarray(action_mask)[None],
            None if view is None else [view],
        )[0]

    def policy_at_state(self, state: State, player: int) -> np.ndarray:
        """The probabilities this agent plays for ``player`` at the true ``state`` (a search
        asks a fixed opponent): by default from the seat's observation and view; an agent
        that reads the true state (the combat doctrine) overrides it."""
        return self.policy_probabilities(
            state.information_state_tensor(player),
            state.legal_actions_mask(player),
            state.seat_view(player),
        )

    def policy_with_views(self, observations, action_masks, views=None) -> np.ndarray:
        """:meth:`policy_probabilities_batch`, passing ``views`` only to agents that use them
        (an agent written before seat views existed takes two arguments)."""
        if self.USES_SEAT_VIEW:
            return self.policy_probabilities_batch(observations, action_masks, views)
        return self.policy_probabilities_batch(observations, action_masks)

    # ---- acting ---------------------------------------------------------------------
    def act_batch(
        self,
        observations: np.ndarray,
        action_masks: np.ndarray,
        episode_ids: Sequence[int] | None = None,
        views: Sequence[SeatView] | None = None,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Actions ``(B,)`` and the probabilities ``(B, A)`` they were sampled from."""
        probabilities = self.policy_with_views(observations, action_masks, views)
        return sample_batch(probabilities, self.rng), probabilities

    def act(
        self, observation: np.ndarray, action_mask: np.ndarray, view: SeatView | None = None
    ) -> tuple[int, np.ndarray]:
        actions, probabilities = self.act_batch(
            np.asarray(observation)[None],
            np.asarray(action_mask)[None],
            [0],
            None if view is None else [view],
        )
        return int(actions[0]), probabilities[0]

    def act_in_env(self, env, agent_name: str, observation: dict) -> int:
        """One move for ``agent_name`` of a hiddenenvs PettingZoo env (AEC or parallel).

        Builds the seat's view only for agents that use it.
        """
        view = env.unwrapped.seat_view(agent_name) if self.USES_SEAT_VIEW else None
        return self.act(observation["observation"], observation["action_mask"], view)[0]

    # ---- experience (learners override; scripted agents ignore) -----------------------
    def start_episode(self, episode_id: int = 0) -> None:
        pass

    def observe(self, transition: Transition) -> None:
        pass

    def observe_batch(
        self,
        observations: np.ndarray,
        action_masks: np.ndarray,
        actions: np.ndarray,
        rewards: np.ndarray,
        next_observations: np.ndarray,
        next_action_masks: np.ndarray,
        dones: np.ndarray,
        episode_ids: np.ndarray,
    ) -> None:
        """:meth:`observe` for ``n`` transitions at once (arrays ``[n, ...]``, in play
        order; batched self-play); by default one :meth:`observe` each, a learner with a
        flat memory writes them in one go (NFSP)."""
        for row in range(len(actions)):
            self.observe(
                Transition(
                    observation=np.array(observations[row]),
                    action_mask=np.array(action_masks[row]),
                    action=int(actions[row]),
                    reward=float(rewards[row]),
                    next_observation=np.array(next_observations[row]),
                    next_action_mask=np.array(next_action_masks[row]),
                    done=bool(dones[row]),
                    episode_id=int(episode_ids[row]),
                )
            )

    def end_episode(self, episode_id: int = 0) -> None:
        pass

    # ---- persistence ----------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Everything needed to rebuild this agent with :meth:`from_state_dict`."""
        return {"num_actions": self.num_actions}

    @classmethod
    def from_state_dict(cls, state: dict[str, Any]) -> Agent:
        return cls(state["num_actions"])

    def save(self, path: str | Path) -> None:
        """Write a data-only agent file (atomically) that :func:`load_agent_file` reads.

        The file holds ``{"format", "agent": registered class name, "state": state_dict()}``
        as tensors, numbers and strings (:mod:`agents.checkpoint`).
        """
        from agents.checkpoint import atomic_torch_save, registered_agent_name

        atomic_torch_save(
            {
                "format": AGENT_FILE_FORMAT,
                "agent": registered_agent_name(type(self)),
                "state": self.state_dict(),
            },
            path,
        )

    @classmethod
    def load(cls, path: str | Path) -> Agent:
        agent = load_agent_file(path)
        if not isinstance(agent, cls):
            raise TypeError(f"{path} holds a {type(agent).__name__}, not a {cls.__name__}")
        return agent


def load_agent_file(path: str | Path) -> Agent:
    """The agent saved at ``path`` by :meth:`Agent.save`, whatever its registered class.

    The file is read as data only (``torch.load(weights_only=True)``) and its class looked
    up in the agent registry, so a hostile file raises
    :class:`agents.checkpoint.UnsafeFileError` (a ``ValueError``) and nothing in it runs.
    """
    from agents.checkpoint import UnsafeFileError, agent_class_named, load_checkpoint
    from agents.device import agent_device_setting

    agent_device_setting()  # a bad device setting is the environment's error, not the file's
    payload = load_checkpoint(path)
    version = payload.get("format") if isinstance(payload, dict) else None
    if version == AGENT_FILE_FORMAT:
        name = payload.get("agent")
    elif version == _AGENT_FILE_FORMAT_V1 and isinstance(payload.get("agent_class"), str):
        name = payload["agent_class"].rpartition(":")[2]
    else:
        raise UnsafeFileError(f"{path} is not an agent file written by Agent.save()")
    if not isinstance(payload.get("state"), dict):
        raise UnsafeFileError(f"{path}: the agent file has no state dict")
    agent_class = agent_class_named(name, path)
    if not issubclass(agent_class, Agent):
        raise UnsafeFileError(f"{path}: the registered class {name!r} is not an Agent")
    try:
        return agent_class.from_state_dict(payload["state"])
    except (
        KeyError,
        TypeError,
        ValueError,
        RuntimeError,
        IndexError,
    ) as error:  # a state of another shape
        reason = " ".join(str(error).split())
        raise UnsafeFileError(
            f"{path}: the file's state does not build a {name} "
            f"({type(error).__name__}: {reason[:500]})"
        ) from None


class SearchAgent(Agent):
    """An agent that decides by search from its seat's view (see the module docstring).

    Subclasses implement :meth:`search_policy`; a search runs once per decision, so the
    batch methods loop over the views.
    """

    USES_SEAT_VIEW = True

    @abstractmethod
    def search_policy(self, view: SeatView) -> np.ndarray:
        """Probabilities over ``num_distinct_actions`` (zero on illegal actions) at ``view``."""

    def policy_probabilities_batch(self, observations, action_masks, views=None):
        if views is None:
            raise ValueError(
                f"{type(self).__name__} searches from the seat's view: call it with views= "
                f"(the loop, evaluate.py and the SB3 wrapper do; or use act_in_env)"
            )
        return np.stack([self.search_policy(view) for view in views])


@dataclass
class StepReport:
    """What one :meth:`Learner.step` did: games played, iterations, scalars to log."""

    episodes: int = 0
    iterations: int = 1
    metrics: dict[str, float] = field(default_factory=dict)


class Learner(ABC):
    """A trainer, driven by the common loop one :meth:`step` at a time.

    The loop builds it as ``LearnerClass(game, config, seed)``, where ``config`` is the
    learner's own typed config (a dataclass declared as ``CONFIG_CLASS``), calls
    :meth:`step` until the budget is spent, and keeps everything else: evaluation,
    checkpoints, resuming, CSV, TensorBoard and plots. What a step does is the
    learner's choice:

    - self-play learners (NFSP) keep the default: ``loop.self_play(n)`` plays ``n``
      episodes with :attr:`agents` in every seat (batched, seeded by the loop), then
      :meth:`update` learns from the transitions the agents observed;
    - solvers and search-based learners (CFR, MCCFR, ExIt-OOS, ReBeL) override
      :meth:`step` to run iterations or searches on ``self.game``, playing episodes
      through the loop where they need them;
    - distributed learners gather from remote actors inside :meth:`step`.

    A step returns a :class:`StepReport`; checkpoints fall between steps, so the
    learner's :meth:`state_dict` must hold everything the next step depends on.
    """

    CONFIG_CLASS: type = object
    # The update metrics this learner reports (the metrics log's extra columns, in order).
    METRICS: ClassVar[tuple[str, ...]] = ()
    # Where the learner's networks run and why (its ``device`` setting, agents/device.py),
    # said in the run's first line; None for a learner without networks (CFR, MCCFR).
    device_choice: DeviceChoice | None = None

    def __init__(self, game: Game, config: Any, seed: int):
        self.game = game
        self.config = config
        self.seed = seed

    def step(self, loop: Any) -> StepReport:
        """One unit of training. ``loop`` is :class:`agents.loop.LoopContext`."""
        returns = loop.self_play(loop.max_episodes)
        return StepReport(episodes=len(returns), iterations=1, metrics=self.update())

    def trained_players(self) -> list[int]:
        """The players this learner trains (their evaluation agents are exported); seats held
        by a fixed opponent are left out."""
        return list(range(self.game.info.num_players))

    @property
    def agents(self) -> list[Agent]:
        """The training agent of each player, for self-play (one object may sit in several seats)."""
        raise NotImplementedError(f"{type(self).__name__} does not play self-play episodes")

    def update(self) -> dict[str, float]:
        """Learn from the experience gathered so far; return scalars worth logging."""
        return {}

    def close(self) -> None:
        """Release what the learner holds outside this process (a distributed learner's actors);
        the loop calls it when the run ends, however it ends."""

    @abstractmethod
    def evaluation_agent(self, player: int) -> Agent:
        """The agent to evaluate and export for ``player`` (e.g. NFSP's average policy)."""

    @abstractmethod
    def state_dict(self) -> dict[str, Any]:
        """Everything to resume training: networks, optimisers, buffers, generators, counters."""

    @abstractmethod
    def load_state_dict(self, state: dict[str, Any]) -> None: ...

    def evaluation_policy(self, tree: Any) -> Any:
        """The evaluation agents' policy on an enumerated tree, for exact exploitability."""
        return tabular_policy_of_agents(tree, self.evaluation_agent)


def tabular_policy_of_agents(tree: Any, agent_for_player: Any) -> Any:
    """The policy ``agent_for_player(p)`` plays at every information set of ``tree``.

    One batched call per player, on the information-state tensors, legal masks and (for
    agents that search) the seat views of a representative state of each information set.
    """
    from hiddenenvs.analysis import TabularPolicy

    states = tree.representative_states()

    def batch(player: int, tensors: np.ndarray, masks: np.ndarray) -> np.ndarray:
        agent = agent_for_player(player)
        views = None
        if agent.USES_SEAT_VIEW:
            infosets = np.flatnonzero(tree.infoset_player == player)
            views = [states[i].seat_view(player) for i in infosets]
        with torch.no_grad():
            return agent.policy_with_views(np.asarray(tensors, dtype=np.float32), masks, views)

    return TabularPolicy.from_tensor_function(tree, batch)
