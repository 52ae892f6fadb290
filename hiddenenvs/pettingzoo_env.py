"""Generic PettingZoo adapters: any hiddenenvs game as an AEC env or a parallel env.

Conventions (the same for every game):

- agents are the game's ``player_names`` (``player_0``, ``player_1`` ... by default);
- the observation is the agent's information-state tensor (perfect recall) by default, or
  its observation tensor with ``observation_type="observation"``, laid out as
  ``observation_layout`` says:

  ==========  ============================================================================
  layout      ``observation_space(agent)`` and where the action mask is
  ==========  ============================================================================
  ``"dict"``  (default, PettingZoo classic) ``Dict(observation=Box(float32),
              action_mask=Box(int8))``
  ``"flat"``  ``Box(float32)`` of one dimension (the tensor flattened); the mask is in
              ``infos[agent]["action_mask"]`` (what SuperSuit's observation wrappers,
              SB3's ``MlpPolicy``, RLlib's default encoder and AgileRL take)
  ==========  ============================================================================

- the mask is non-zero exactly for the agents that act at this node and have not acted
  yet: the player to move at a decision node, every live player at a simultaneous node;
- ``action_space(agent)`` is ``Discrete(num_distinct_actions)``;
- chance is resolved inside the env from a generator seeded by ``reset(seed=...)``;
- rewards follow the game's transitions (terminal utilities, or shaped rewards where a
  game has them) and are accumulated by PettingZoo's rules; at the end every agent is
  terminated and must ``step(None)`` once; an agent whose player the state lists in
  ``finished_players()`` (e.g. a dead fighter) is terminated at once, MAgent-style, and
  leaves ``agents`` (AEC: after its ``step(None)``; parallel: after that step);
- at a simultaneous node of the AEC env every live agent acts in turn, in ``agents``
  order, without seeing the others' choices (the state does not change until the last
  one has acted), and the joint action resolves at once. A player without a real choice
  is asked too (its mask holds its one legal action), so every live agent acts once per
  node, as PettingZoo's ``aec_to_parallel`` expects: ``aec_to_parallel(make(name))``
  plays like ``make_parallel(name)``. A player with no legal action at all gets an
  all-zero mask and whatever it sends is ignored. Nodes where nobody has a real choice
  are played by the env;
- an action outside the agent's mask follows ``illegal_action``:

  ============  ==========================================================================
  rule          what happens
  ============  ==========================================================================
  ``"raise"``   (default) ``ValueError`` naming the legal actions
  ``"lose"``    PettingZoo's terminate-illegal rule: the offender gets the game's minimum
                utility, everyone else 0, the game ends (AEC: ``TerminateIllegalWrapper``;
                parallel: every offender of the step loses)
  ``"no_op"``   the game's declared no-op (``Game.NO_OP_ACTION``, e.g. combat's "hold")
                is played instead, and ``infos[agent]`` says so:
                ``{"illegal_action": sent, "played_action": no_op}`` (parallel: in that
                step's infos; AEC: until the agent acts legally again)
  ============  ==========================================================================

- bad input to the entry points raises at once, naming it, whatever the rule: an action
  that is not an integer (``1.7``, ``"1"``, ``True``; Python and numpy integers are
  accepted) a ``TypeError``; an integer outside the action space, a seed that is not
  ``None`` or a non-negative integer, an unknown agent given to ``observe``, an unknown
  agent key in a parallel ``step``, a missing action of an agent that must act, and a
  parallel ``step`` before ``reset`` a ``ValueError``;
- ``state()`` is the full-information state as one float32 vector in ``state_space``
  (``State.state_tensor``: every player's information-state tensor concatenated, or the
  game's own full state), for centralised critics; ``env.game_state`` is the game's
  :class:`~hiddenenvs.game.State` itself (``env.unwrapped.game_state`` through wrappers);
- action masks are read-only arrays, shared (one per distinct legal set, cached) or made
  fresh by the state in C (see Speed): copy one before writing into it.

Speed: ``make`` wraps the AEC env in :class:`FastOrderEnforcingWrapper`, a subclass of
PettingZoo's ``OrderEnforcingWrapper`` with the same checks and errors whose per-step
paths (``agent_iter``, ``last``, ``step`` and the attributes they read) skip its generic
``__getattr__`` forwarding, which used to cost as much as the game itself. The per-step
methods of both envs and of the wrapper are compiled (``hiddenenvs/_aec.pyx``,
``hiddenenvs/_parallel.pyx``): the same logic as Python would run, with the uncommon
branches (illegal actions, finished agents, rewards mid-game, automatic nodes) handed to
the Python methods of this module. With the default layout and rule the infos stay empty
dicts, untouched from step to step. The parallel env checks the actors' actions in a
compiled loop (``hiddenenvs/_adapters.pyx``). Like every game's compiled core they are built by
every install (setup.py compiles each ``.pyx``), so there is no pure-Python fallback.
These "optional fast paths" are methods of :class:`hiddenenvs.game.State` with Python
defaults that give the same values player by player; the adapters call a state's own
only where its class overrides them.
A state may offer every player's data as one array, which the parallel env then slices
instead of asking player by player: ``legal_actions_masks()`` (players, actions) and
``information_state_tensors()`` / ``observation_tensors()`` (players, ...), e.g. the
combat sim's fighters; a step then builds its observation, reward, termination,
truncation and info dicts in one compiled pass over the agents
(``parallel_step_dicts``), and with at most 12 actions hands out one shared read-only
mask per distinct legal set (looked up by its bit code) instead of a row view per agent.
At simultaneous nodes a state may also hand out read-only masks made in C,
``read_only_legal_actions_mask(player)`` for the AEC env and a read-only int8
``legal_actions_masks()`` the parallel env uses as it is (Goofspiel's hands: thousands of
distinct legal sets, which a cache keyed by the legal tuple kept missing), or keep all
players' masks as one read-only int8 array, ``read_only_legal_actions_masks()`` (combat's
fighters), also used as it is; the AEC env checks an action against the mask the agent
was shown.
"""

from __future__ import annotations

import operator
import random
import warnings
from collections.abc import Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers.order_enforcing import AECOrderEnforcingIterable

import hiddenenvs._aec as _aec
import hiddenenvs._parallel as _parallel
from hiddenenvs._adapters import observation_dicts, row_views, values_by_agent
from hiddenenvs.game import (
    CHANCE,
    SIMULTANEOUS,
    ChanceMode,
    Dynamics,
    Game,
    State,
    sample_chance_outcome,
)

OBSERVATION_TYPES = ("information_state", "observation")
OBSERVATION_LAYOUTS = ("dict", "flat")
ILLEGAL_ACTION_RULES = ("raise", "lose", "no_op")
_NOBODY: frozenset[int] = frozenset()  # no player waits to act at a simultaneous node
# Distinct legal sets whose read-only masks an env keeps (Leduc has a handful; 8x8
# Othello many more, so the cache is bounded).
MASK_CACHE_SIZE = 4096


def _fast_path(state_class: type, name: str):
    """``state_class``'s override of the optional :class:`State` method ``name`` (its
    "optional fast paths"), or None where it keeps State's default: the adapters then ask
    player by player, which gives the same values."""
    method = getattr(state_class, name)
    return None if method is getattr(State, name) else method


class _GameEnvBase:
    """What the AEC and the parallel adapter share: spaces, seeding, chance, rendering."""

    def _integer_action(self, agent: str, action: Any) -> int:
        """``action`` as an int; TypeError naming it unless it is an integer (not a bool)."""
        if type(action) is int or (
            isinstance(action, (int, np.integer)) and not isinstance(action, bool)
        ):
            return int(action)
        raise TypeError(
            f"{self.game.NAME}: the action for {agent} must be an integer in "
            f"0..{self.game.info.num_distinct_actions - 1}, got {action!r} ({type(action).__name__})"
        )

    def _unknown_agent(self, agent: Any) -> ValueError:
        shown = repr(agent) if len(repr(agent)) <= 60 else repr(agent)[:57] + "..."
        return ValueError(
            f"{self.game.NAME}: no agent named {shown}; agents: {self.possible_agents}"
        )

    def _setup(
        self,
        game: Game,
        render_mode: str | None,
        observation_type: str,
        observation_layout: str,
        illegal_action: str,
    ) -> None:
        if observation_type not in OBSERVATION_TYPES:
            raise ValueError(
                f"observation_type must be one of {OBSERVATION_TYPES}, got {observation_type!r}"
            )
        if observation_layout not in OBSERVATION_LAYOUTS:
            raise ValueError(
                f"observation_layout must be one of {OBSERVATION_LAYOUTS}, got {observation_layout!r}"
            )
        check_illegal_action_rule(illegal_action, game)
        render_modes = list(game.RENDER_MODES)
        if render_mode is not None and render_mode not in render_modes:
            raise ValueError(
                f"{game.NAME}: render_mode must be one of {render_modes}, got {render_mode!r}"
            )
        self.game = game
        self.render_mode = render_mode
        self.observation_type = observation_type
        self.observation_layout = observation_layout
        self.illegal_action = illegal_action
        self._flat = observation_layout == "flat"
        # Infos carry masks (flat layout) or no-op reports; otherwise they stay empty.
        self._infos_in_use = self._flat or illegal_action == "no_op"
        info = game.info
        self.possible_agents = list(info.player_names)
        self.agent_to_player = {agent: p for p, agent in enumerate(self.possible_agents)}
        self._agent_names = frozenset(self.possible_agents)
        self.metadata: dict[str, Any] = {
            "name": pettingzoo_id(game.spec.name),
            "render_modes": render_modes,
            "render_fps": game.RENDER_FPS,
            "is_parallelizable": info.dynamics is Dynamics.SIMULTANEOUS,
        }
        shape = (
            info.information_state_tensor_shape
            if observation_type == "information_state"
            else info.observation_tensor_shape
        )
        low, high = game.TENSOR_BOUNDS
        self._observation_spaces: dict[str, spaces.Space]
        if self._flat:
            size = int(np.prod(shape))
            self._observation_spaces = {
                agent: spaces.Box(low, high, (size,), dtype=np.float32)
                for agent in self.possible_agents
            }
        else:
            self._observation_spaces = {
                agent: spaces.Dict(
                    {
                        "observation": spaces.Box(low, high, shape, dtype=np.float32),
                        "action_mask": spaces.Box(
                            0, 1, (info.num_distinct_actions,), dtype=np.int8
                        ),
                    }
                )
                for agent in self.possible_agents
            }
        self._action_spaces = {
            agent: spaces.Discrete(info.num_distinct_actions) for agent in self.possible_agents
        }
        # Chance draws and episode seeds come from Python's Mersenne Twister: seeding it
        # and drawing one number cost a fraction of numpy's Generator per call, and the
        # envs draw one number at a time (sample_chance_outcome only calls .random()).
        self._rng = random.Random()
        # reset(seed) applies the seed, and draws the state's seed, only once they matter
        # (_chance_rng): the state's seed only for SAMPLED_STOCHASTIC games.
        self._state_takes_seed = game.info.chance_mode is ChanceMode.SAMPLED_STOCHASTIC
        self._seed_not_applied: int | None = None
        self._state_seeds_not_drawn = 0
        self.game_state: State | None = None
        # render_mode="human" with a picture: matplotlib's (figure, image), see render.
        self._window: tuple[Any, Any] | None = None
        self._warned_no_window = False
        initial_state = game.new_initial_state()
        state_class = type(initial_state)
        self.state_space = spaces.Box(
            low, high, initial_state.state_tensor().shape, dtype=np.float32
        )
        self._terminal_rewards_only = state_class.rewards is State.rewards
        # Per-step shortcuts: the tensor method looked up once; most games never finish a
        # player early; masks repeat.
        self._tensor_of = getattr(state_class, f"{observation_type}_tensor")
        # A state may hand out every player's tensor as one (players, ...) array, e.g. the
        # combat sim's fighter views: the parallel env then slices rows instead of asking
        # player by player.
        self._tensors_of_all = _fast_path(state_class, f"{observation_type}_tensors")
        # ... and every player's mask as one read-only int8 array it keeps (combat's
        # fighters), or as one array made for the node (Goofspiel's hands)
        self._read_only_masks_of = _fast_path(state_class, "read_only_legal_actions_masks")
        self._masks_of_all = _fast_path(state_class, "legal_actions_masks")
        self._may_finish_early = state_class.finished_players is not State.finished_players
        # A state may offer read-only masks made in C at simultaneous nodes (Goofspiel's
        # hands): a fresh one costs less than building and hashing the legal set's tuple for
        # the cache, which thousands of distinct sets keep missing.
        self._state_mask_of = _fast_path(state_class, "read_only_legal_actions_mask")
        self._num_players = info.num_players
        self._num_actions = info.num_distinct_actions
        self._no_action_mask = self._read_only_mask(())
        self._mask_of_legal = lru_cache(maxsize=MASK_CACHE_SIZE)(self._read_only_mask)

    def __getstate__(self) -> dict:
        # Vector-env constructors (SuperSuit's concat_vec_envs, Gymnasium's async envs)
        # pickle envs; the per-env mask cache is rebuilt rather than carried.
        state = self.__dict__.copy()
        del state["_mask_of_legal"]
        state.pop("_fixed", None)  # the compiled AEC methods' view of the above, remade on use
        state["_window"] = None  # render_mode="human"'s matplotlib window stays here
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._mask_of_legal = lru_cache(maxsize=MASK_CACHE_SIZE)(self._read_only_mask)

    def _read_only_mask(self, legal: tuple[int, ...]) -> np.ndarray:
        mask = np.zeros(self.game.info.num_distinct_actions, dtype=np.int8)
        mask[list(legal)] = 1
        mask.flags.writeable = False
        return mask

    def observation_space(self, agent):
        space = self._observation_spaces.get(agent) if isinstance(agent, str) else None
        if space is None:
            raise self._unknown_agent(agent)
        return space

    def state(self) -> np.ndarray:
        """The full-information state now, as ``state_space`` says: every player's
        information-state tensor concatenated, or the game's own full state where it has
        one (:meth:`hiddenenvs.game.State.state_tensor`), for centralised critics."""
        if self.game_state is None:
            raise ValueError(f"{self.game.NAME}: call reset() before state()")
        return self.game_state.state_tensor()

    def seat_view(self, agent: str):
        """What ``agent``'s seat may know now, for search agents (``hiddenenvs.game.SeatView``):
        its information-state key, legal actions and the game model; never the state."""
        if self.game_state is None:
            raise ValueError(f"{self.game.NAME}: call reset() before seat_view()")
        if agent not in self.agent_to_player:
            raise ValueError(
                f"{self.game.NAME}: no agent {agent!r}; agents are {self.possible_agents}"
            )
        return self.game_state.seat_view(self.agent_to_player[agent])

    def action_space(self, agent):
        space = self._action_spaces.get(agent) if isinstance(agent, str) else None
        if space is None:
            raise self._unknown_agent(agent)
        return space

    def _new_episode(self, seed: int | None) -> None:
        if seed is not None:
            if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
                raise TypeError(
                    f"{self.game.NAME}: reset(seed=...) takes None or a non-negative "
                    f"integer, got {seed!r} ({type(seed).__name__})"
                )
            if seed < 0:
                raise ValueError(
                    f"{self.game.NAME}: reset(seed=...) takes None or a non-negative "
                    f"integer, got {seed}"
                )
            seed = operator.index(seed)
        if self._state_takes_seed:
            if seed is not None:
                self._seed_not_applied, self._state_seeds_not_drawn = seed, 0
            self.game_state = self.game.new_initial_state(seed=self._chance_rng().getrandbits(31))
            return
        # The state ignores its seed: seeding the generator (a few microseconds) and the
        # draw wait until a chance node needs them, which II-Goofspiel's fixed deck never does.
        if seed is not None:
            self._seed_not_applied, self._state_seeds_not_drawn = seed, 1
        else:
            self._state_seeds_not_drawn += 1
        self.game_state = self.game.new_initial_state()

    def _chance_rng(self) -> random.Random:
        """The generator, seeded and advanced as every ``reset`` so far left it: the same
        stream whether or not the state seeds were drawn at once."""
        rng = self._rng
        if self._seed_not_applied is not None:
            rng.seed(self._seed_not_applied)
            self._seed_not_applied = None
        for _ in range(self._state_seeds_not_drawn):
            rng.getrandbits(31)
        self._state_seeds_not_drawn = 0
        return rng

    def _resolve_automatic_nodes(self) -> np.ndarray | None:
        """Play chance nodes and simultaneous nodes where nobody has a real choice.

        Returns the rewards those transitions earned, or None when there were none.
        """
        rewards = None
        state = self.game_state
        assert state is not None  # in an episode: reset() made it
        while True:
            player = state.current_player()
            if player == CHANCE:
                # sample_chance_outcome takes any generator with random() (its docstring),
                # though annotated with numpy's.
                outcome = sample_chance_outcome(state, self._chance_rng())  # type: ignore[arg-type]
                state._apply_action(outcome)
            elif player == SIMULTANEOUS and not state.movers():
                state.apply_actions([-1] * self.game.info.num_players)
            else:
                return rewards
            rewards = self._add_rewards(rewards)

    def _add_rewards(self, rewards: np.ndarray | None) -> np.ndarray | None:
        """Add the last transition's rewards (games with terminal utilities only pay at the end)."""
        state = self.game_state
        assert state is not None  # in an episode: reset() made it
        if self._terminal_rewards_only and not state.is_terminal():
            return rewards
        step_rewards = state.rewards()
        return step_rewards if rewards is None else rewards + step_rewards

    def _illegal(self, agent: str, action: Any, legal: list[int]) -> ValueError:
        player = self.agent_to_player[agent]
        state = self.game_state
        assert state is not None  # in an episode: reset() made it
        described = ", ".join(f"{a} ({state.action_to_string(player, a)})" for a in legal)
        return ValueError(
            f"{self.game.NAME}: action {action!r} is illegal for {agent}; legal actions: "
            f"{described or 'none (this agent does not act now)'}"
        )

    def _observation(self, player: int, mask: np.ndarray):
        """One agent's observation in this env's layout (the mask goes to infos when flat)."""
        tensor = self._tensor_of(self.game_state, player)
        if self._flat:
            return tensor.reshape(-1)
        return {"observation": tensor, "action_mask": mask}

    def _played_for_illegal(self, agent: str, action: Any, legal: list[int], report: dict) -> int:
        """The action to play for ``agent``'s ``action``, which is not in ``legal``.

        ``"no_op"`` plays the game's no-op and records ``report[agent]``; anything else (and
        an action that is not an integer of the action space, under any rule) raises.
        """
        if (
            self.illegal_action == "no_op"
            and action is not None
            and 0 <= self._integer_action(agent, action) < self.game.info.num_distinct_actions
        ):
            no_op = self.game.NO_OP_ACTION
            if no_op in legal:
                report[agent] = {"illegal_action": int(action), "played_action": no_op}
                return no_op
        raise self._illegal(agent, action, legal)

    def render(self):
        if self.render_mode is None:
            return None
        if self.game_state is None:
            raise ValueError(f"{self.game.NAME}: call reset() before render()")
        if self.render_mode == "rgb_array":
            return self.game_state.render_rgb()
        if self.render_mode == "human" and "rgb_array" in self.metadata["render_modes"]:
            if self._show_picture(self.game_state.render_rgb()):
                return None
        text = str(self.game_state)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def _show_picture(self, image: np.ndarray) -> bool:
        """``render_mode="human"`` for a game with a picture: draw it in a matplotlib
        window (one per env, redrawn in place), held ``1 / render_fps`` seconds. Where
        matplotlib has no window to draw in (a terminal without a display), warn once and
        return False: the caller prints the text rendering instead, as a terminal user
        expects."""
        try:
            import matplotlib.pyplot as plt
        except ImportError:
            raise ImportError(
                f"{self.game.NAME}: render_mode='human' draws the picture with matplotlib; "
                "pip install 'hiddenenvs[render]' (or use render_mode='rgb_array' or 'ansi')"
            ) from None
        if not _window_backend(plt.get_backend()):
            if not self._warned_no_window:
                self._warned_no_window = True
                warnings.warn(
                    f"{self.game.NAME}: render_mode='human' shows a picture in a window, and "
                    f"matplotlib's backend {plt.get_backend()!r} draws none (no display?): "
                    "printing the text rendering instead; render_mode='rgb_array' returns the "
                    "picture as an array",
                    stacklevel=3,
                )
            return False
        window = self._window
        if window is None or not plt.fignum_exists(window[0].number):
            plt.ion()
            figure, axes = plt.subplots()
            axes.axis("off")
            window = self._window = (figure, axes.imshow(image))
        else:
            window[1].set_data(image)
        window[0].canvas.draw_idle()
        plt.pause(1.0 / self.metadata["render_fps"])
        return True

    def close(self):
        self.game_state = None
        if self._window is not None:
            import matplotlib.pyplot as plt

            plt.close(self._window[0])
            self._window = None


class GameAECEnv(_GameEnvBase, AECEnv):
    """A hiddenenvs game as a PettingZoo AEC env (see the module docstring)."""

    def __init__(
        self,
        game: Game,
        render_mode=None,
        observation_type="information_state",
        observation_layout="dict",
        illegal_action="raise",
    ):
        super().__init__()
        if illegal_action == "lose":
            raise ValueError(
                'GameAECEnv takes "raise" or "no_op"; hiddenenvs.make(..., '
                'illegal_action="lose") adds PettingZoo\'s TerminateIllegalWrapper'
            )
        self._setup(game, render_mode, observation_type, observation_layout, illegal_action)
        # Players still to act at the current node, in order (the selected one first, unless
        # a finished agent's step(None) comes first): the player to move at a decision node,
        # every live player at a simultaneous node; _waiting holds them as a set at a
        # simultaneous node (empty at a decision node; None: not made yet), for masks.
        self._to_act: list[int] = []
        self._waiting: frozenset[int] | None = _NOBODY
        self._pending_joint: list[int] = []
        # The selected agent's legal actions and mask at the current node: observe() and
        # step() both need them, so they are computed once per selection (None: not yet).
        self._selection_legal: list[int] | None = None
        self._selection_mask: np.ndarray | None = None
        self._illegal_reports: dict[str, dict] = {}  # "no_op": agent -> its last report

    # Compiled (hiddenenvs/_aec.pyx): a new episode; after a transition, credit the
    # rewards and pick the next agent to act (or end the game).
    reset = _aec.reset
    _after_transition = _aec.after_transition

    def _legal_actions_of_selection(self) -> list[int]:
        """The selected agent's legal actions (none once the game is over), once per node."""
        legal = self._selection_legal
        if legal is None:
            state = self.game_state
            assert state is not None  # in an episode: reset() made it
            player = state.current_player()
            if player >= 0:
                legal = state.legal_actions()
            elif player == SIMULTANEOUS:
                legal = state.legal_actions(self.agent_to_player[self.agent_selection])
            else:
                legal = []
            self._selection_legal = legal
        return legal

    # Compiled (hiddenenvs/_aec.pyx): the selected agent's mask, made once per selection;
    # an agent's observation.
    _mask = _aec.mask
    observe = _aec.observe

    def _refresh_infos(self) -> None:
        """New info dicts (callers may keep the old ones): masks when flat, no-op reports."""
        reports, flat, to_player = self._illegal_reports, self._flat, self.agent_to_player
        infos = {}
        for agent in self.agents:
            info = dict(reports.get(agent, ()))
            if flat:
                info["action_mask"] = self._mask(agent, to_player[agent])
            infos[agent] = info
        self.infos = infos

    # Compiled (hiddenenvs/_aec.pyx): the usual case in C, an unusual action through the
    # method below, a transition that pays, plays automatic nodes or ends through
    # _settle_transition.
    step = _aec.step

    def _checked_action(self, agent: str, action: Any) -> int:
        """The selected agent's action when it is not an int its shown mask allows: the
        legal action itself, the no-op, -1 (no legal action at a simultaneous node: asked
        for the cycle, ignored), or the error naming the legal actions."""
        legal = self._legal_actions_of_selection()
        if action is None or self._integer_action(agent, action) not in legal:
            state = self.game_state
            assert state is not None  # in an episode: reset() made it
            if legal or state.current_player() != SIMULTANEOUS:
                return int(self._played_for_illegal(agent, action, legal, self._illegal_reports))
            return -1
        if self._illegal_reports:
            self._illegal_reports.pop(agent, None)
        return int(action)

    _settle_transition = _aec.settle_transition  # compiled: the general end of a step

    def _end_game_over_at_reset(self) -> None:
        """The first step of an episode whose game was over at reset (terminal at its
        initial state, or every move to the end forced): whatever the action (the agent
        was shown an empty mask), every agent is terminated and paid the game's returns,
        which are everything the automatic moves earned."""
        state = self.game_state
        assert state is not None and state.is_terminal()  # reset() left it over
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards[self.agent_selection] = 0.0
        self._after_transition(state.returns())
        self._accumulate_rewards()
        if self._infos_in_use:
            self._refresh_infos()
        if self.render_mode == "human":
            self.render()


class GameParallelEnv(_GameEnvBase, ParallelEnv):
    """A game with simultaneous moves as a PettingZoo parallel env.

    Every live agent with a legal action sends one each step (one with no legal action
    may send anything, or nothing: it is ignored); an action outside the agent's mask
    follows ``illegal_action`` (module docstring).
    """

    def __init__(
        self,
        game: Game,
        render_mode=None,
        observation_type="information_state",
        observation_layout="dict",
        illegal_action="raise",
    ):
        if game.info.dynamics is not Dynamics.SIMULTANEOUS:
            raise ValueError(
                f"{game.NAME} is turn-based; use hiddenenvs.make({game.NAME!r}) for its AEC env"
            )
        self._setup(game, render_mode, observation_type, observation_layout, illegal_action)
        self._masks: np.ndarray | None = None  # the current node's, see _node_masks
        self._actors: list[int] = []  # players with at least one legal action at this node
        # With few actions every legal set's read-only mask is made once and handed out
        # again (bit code -> mask, at most MASK_CACHE_SIZE of them) instead of a row view
        # per player per step: combat's 160 fighters share a few dozen masks.
        self._mask_table: dict[int, np.ndarray] | None = (
            {} if 2**self._num_actions <= MASK_CACHE_SIZE else None
        )
        self._rows_of_agents: tuple[list[str], np.ndarray] | None = None  # see action_masks

    def action_masks(self) -> np.ndarray:
        """Every agent in ``agents``'s action mask, stacked in ``agents`` order: a read-only
        ``(len(agents), num_distinct_actions)`` int8 array with the rows the observations
        (flat layout: the infos) carry, so all agents' actions can be drawn in one
        vectorised pass, e.g. uniformly random legal ones with
        ``(rng.random(masks.shape) * masks).argmax(axis=1)``. It is made for this node
        and never modified, so it stays valid after later steps; while every agent is in
        play it is the node's own array (no copy)."""
        if self.game_state is None:
            raise ValueError(f"{self.game.NAME}: call reset() before action_masks()")
        masks = self._node_masks()
        agents = self.agents
        if len(agents) == self._num_players:  # agents keeps possible_agents' order
            return masks
        if self._rows_of_agents is None or self._rows_of_agents[0] is not agents:
            to_player = self.agent_to_player
            self._rows_of_agents = (
                agents,
                np.array([to_player[agent] for agent in agents], dtype=np.intp),
            )
        stacked = masks[self._rows_of_agents[1]]
        stacked.flags.writeable = False
        return stacked

    # Compiled (hiddenenvs/_parallel.pyx): every player's mask at this node, once per node.
    _node_masks = _parallel.node_masks

    def _masks_player_by_player(self, current_player: int) -> np.ndarray:
        """``_node_masks`` for a state without a masks array: from ``legal_actions``."""
        state = self.game_state
        assert state is not None  # in an episode: reset() made it
        masks = np.zeros((self._num_players, self.game.info.num_distinct_actions), np.int8)
        players: Sequence[int]
        if current_player == SIMULTANEOUS:
            players = range(self._num_players)
        else:
            players = [current_player] if current_player >= 0 else []
        self._actors = []
        for player in players:
            legal = state.legal_actions(player)
            if legal:
                masks[player, legal] = 1
                self._actors.append(player)
        masks.flags.writeable = False
        return masks

    _mask_rows = _parallel.node_mask_rows  # compiled: each player's mask at this node

    def _observations(self) -> dict:
        self._masks = None  # a new node
        masks = self._node_masks()
        to_player = self.agent_to_player
        if self._tensors_of_all is None:
            return {
                agent: self._observation(to_player[agent], masks[to_player[agent]])
                for agent in self.agents
            }
        tensors = self._tensors_of_all(self.game_state)
        if self._flat:
            rows = row_views(tensors.reshape(len(tensors), -1))
            return {agent: rows[to_player[agent]] for agent in self.agents}
        return observation_dicts(self.agents, to_player, tensors, self._mask_rows(masks))

    def _infos(self, agents: list[str], reports: dict[str, dict]) -> dict[str, dict]:
        """Fresh info dicts: each agent's mask when flat, and no-op or "lose" reports."""
        if not self._flat:
            return {agent: dict(reports.get(agent, ())) for agent in agents}
        rows, to_player = self._mask_rows(self._node_masks()), self.agent_to_player
        return {
            agent: {**reports.get(agent, {}), "action_mask": rows[to_player[agent]]}
            for agent in agents
        }

    def reset(self, seed=None, options=None):
        self._new_episode(seed)
        self.agents = self.possible_agents[:]
        self._resolve_automatic_nodes()
        observations = self._observations()
        return observations, self._infos(self.agents, {})

    # Compiled (hiddenenvs/_parallel.pyx): the validated joint action, or None when an
    # action lost the game; the unusual actions go through _checked_action.
    _joint_action = _parallel.joint_action

    def _checked_action(self, player: int, actions: dict, reports: dict[str, dict]) -> int | None:
        """One actor's action, validated: raises naming the legal ones, or the no-op, or
        None when ``"lose"`` applies (recorded in ``reports``)."""
        agent = self.possible_agents[player]
        if agent not in actions:
            raise ValueError(f"{self.game.NAME}: no action given for {agent}, which must move")
        action = actions[agent]
        assert self._masks is not None  # _joint_action made this node's masks
        legal = np.flatnonzero(self._masks[player]).tolist()
        if action is not None and self._integer_action(agent, action) in legal:
            return int(action)
        if (
            self.illegal_action == "lose"
            and action is not None
            and 0 <= action < self.game.info.num_distinct_actions
        ):
            reports[agent] = {"illegal_action": int(action)}
            return None
        return self._played_for_illegal(agent, action, legal, reports)

    def _lost_by_illegal_actions(self, reports: dict[str, dict]):
        """End the episode: every offender gets the game's minimum utility, the others 0."""
        agents = self.agents
        penalty = float(self.game.info.min_utility)
        rewards = {agent: penalty if agent in reports else 0.0 for agent in agents}
        terminations = dict.fromkeys(agents, True)
        truncations = dict.fromkeys(agents, False)
        observations = self._observations()
        infos = self._infos(agents, reports)
        self.agents = []
        return observations, rewards, terminations, truncations, infos

    # Compiled (hiddenenvs/_parallel.pyx): the step, and its five dicts from the state's
    # arrays; a state that answers player by player goes through the method below.
    step = _parallel.step
    _step_dicts = _parallel.step_dicts

    def _step_dicts_by_player(
        self,
        agents: list[str],
        step_rewards: np.ndarray | None,
        done: bool,
        reports: dict[str, dict],
    ) -> tuple:
        """``_step_dicts`` for a state that answers player by player."""
        state = self.game_state
        assert state is not None  # in an episode: reset() made it
        if step_rewards is None:
            rewards = dict.fromkeys(agents, 0.0)
        else:
            rewards = values_by_agent(agents, self.agent_to_player, step_rewards.tolist())
        terminations = dict.fromkeys(agents, done)  # its keys: the live agents
        finished = []
        if not done and self._may_finish_early:
            possible_agents = self.possible_agents
            finished = [
                possible_agents[p]
                for p in state.finished_players()
                if possible_agents[p] in terminations
            ]
            for agent in finished:
                terminations[agent] = True
        truncations = dict.fromkeys(agents, False)
        observations = self._observations()
        infos = (
            self._infos(agents, reports)
            if self._infos_in_use or reports
            else {agent: {} for agent in agents}
        )
        if done:
            staying = []
        elif finished:
            gone = set(finished)
            staying = [agent for agent in agents if agent not in gone]
        else:
            staying = agents
        return observations, rewards, terminations, truncations, infos, staying


class FastOrderEnforcingWrapper(wrappers.OrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper`` without its per-step attribute forwarding.

    The base class reaches every attribute of the wrapped env through ``__getattr__``
    (a name check, then ``BaseWrapper.__getattr__``, then ``getattr``), several times per
    step. Here the attributes the AEC loop reads are properties and ``last``, ``step``,
    ``observe`` and the ``agent_iter`` iterator read the wrapped env directly; every
    check, error and warning of the base class is kept (before ``reset()`` the
    properties raise the same ``AttributeError``), and so is the class itself for
    ``isinstance`` and ``unwrapped``.
    """

    def _forwarded(name: str):  # noqa: N805 -- builds the class's properties below
        def get(self):
            if not self._has_reset:
                raise AttributeError(f"{name} cannot be accessed before reset")
            return getattr(self.env, name)

        return property(get, doc=f"The wrapped env's ``{name}`` (after ``reset()``).")

    agents = _forwarded("agents")
    agent_selection = _forwarded("agent_selection")
    rewards = _forwarded("rewards")
    terminations = _forwarded("terminations")
    truncations = _forwarded("truncations")
    infos = _forwarded("infos")
    _cumulative_rewards = _forwarded("_cumulative_rewards")
    del _forwarded

    @property
    def num_agents(self) -> int:
        return len(self.agents)

    reset = _aec.wrapper_reset  # compiled: the base class's flags, then the env's reset
    last = _aec.wrapper_last  # compiled: reads the wrapped env directly

    def observe(self, agent):
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return self.env.observe(agent)

    step = _aec.wrapper_step  # compiled: the base class's checks, then the env's step

    def agent_iter(self, max_iter: int = 2**63):
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _FastOrderEnforcingIterable(self, max_iter)


class _FastOrderEnforcingIterable(AECOrderEnforcingIterable):
    def __iter__(self):
        return _aec.AgentIterator(self.env, self.max_iter)  # the base iterator's checks, in C


def _window_backend(backend: str) -> bool:
    """Whether matplotlib's ``backend`` opens windows (not a file-only one such as Agg)."""
    return backend.lower() not in {"agg", "cairo", "pdf", "pgf", "ps", "svg", "template"}


class IllegalActionLosesWrapper(wrappers.TerminateIllegalWrapper):
    """PettingZoo's ``TerminateIllegalWrapper`` (the ``"lose"`` rule of the AEC env) that
    first checks the action as the other rules do: a non-integer is the adapter's
    ``TypeError`` and an integer outside the action space its ``ValueError`` (the base
    class indexed the mask with them: numpy errors), and a game over at reset ends as
    under the other rules (its agents were shown empty masks, not offered a move)."""

    def step(self, action):
        env = self.env.unwrapped
        agent = env.agent_selection
        if (
            not (env.terminations[agent] or env.truncations[agent])
            and not env.game_state.is_terminal()
        ):
            integer = env._integer_action(agent, action)
            if not 0 <= integer < env.game.info.num_distinct_actions:
                raise env._illegal(agent, action, env._legal_actions_of_selection())
            action = integer
        elif env.game_state.is_terminal() and not env.terminations[agent]:
            self._prev_obs = self._prev_info = None
            env.step(action)  # over at reset: the step that ends it
            return
        super().step(action)


def check_illegal_action_rule(illegal_action: str, game: Game | None = None) -> None:
    """Refuse an unknown rule, and ``"no_op"`` for a game that declares no no-op."""
    if illegal_action not in ILLEGAL_ACTION_RULES:
        raise ValueError(
            f"illegal_action must be one of {ILLEGAL_ACTION_RULES}, got {illegal_action!r}"
        )
    if game is not None and illegal_action == "no_op" and game.NO_OP_ACTION is None:
        raise ValueError(
            f"{game.NAME}: illegal_action='no_op' needs a game with a no-op action "
            f"(Game.NO_OP_ACTION, e.g. combat's hold); {game.NAME} has none: use 'raise' or 'lose'"
        )


def make(
    name: str,
    render_mode: str | None = None,
    observation_type: str = "information_state",
    observation_layout: str = "dict",
    illegal_action: str = "raise",
    **params: Any,
) -> AECEnv:
    """A registered game as a PettingZoo AEC env (``params`` are the game's parameters)."""
    from hiddenenvs.registry import load_game

    check_illegal_action_rule(illegal_action)  # before a game that may take a while to load
    game = load_game(name, **params)
    # The "lose" rule is PettingZoo's wrapper around an env that would raise.
    env = GameAECEnv(
        game,
        render_mode=render_mode,
        observation_type=observation_type,
        observation_layout=observation_layout,
        illegal_action="raise" if illegal_action == "lose" else illegal_action,
    )
    if illegal_action == "lose":
        env = IllegalActionLosesWrapper(env, illegal_reward=game.info.min_utility)
    return FastOrderEnforcingWrapper(env)


def make_parallel(
    name: str,
    render_mode: str | None = None,
    observation_type: str = "information_state",
    observation_layout: str = "dict",
    illegal_action: str = "raise",
    **params: Any,
) -> ParallelEnv:
    """A registered game with simultaneous moves as a PettingZoo parallel env."""
    from hiddenenvs.registry import load_game

    check_illegal_action_rule(illegal_action)
    game = load_game(name, **params)
    return GameParallelEnv(
        game,
        render_mode=render_mode,
        observation_type=observation_type,
        observation_layout=observation_layout,
        illegal_action=illegal_action,
    )


# ---- PettingZoo's registry ------------------------------------------------------------------
# Every registered game under "hiddenenvs/<name>-v<version>" in PettingZoo's registry
# (``pettingzoo.make("aec", "hiddenenvs/leduc_holdem-v0")``; ``"parallel"`` for the games
# with simultaneous moves), added when hiddenenvs is imported. A version bumps when the
# same id with the same parameters would give different spaces, observations, legal
# actions, rewards or dynamics (anything a trained policy or a stored result depends on);
# fixes that only change speed or messages keep it. docs/guides/pettingzoo_ids.md.
PETTINGZOO_NAMESPACE = "hiddenenvs"


class _PettingZooEnvs(Mapping[str, tuple[int, bool]]):
    """name -> (version, whether the game has simultaneous moves: a parallel env too), read
    from each game's :class:`hiddenenvs.registry.EnvEntry` (``version``, ``simultaneous``):
    a read-only view kept for code that reads this table, always the registry's."""

    def __getitem__(self, name: str) -> tuple[int, bool]:
        from hiddenenvs.registry import REGISTRY

        if name not in REGISTRY:
            raise KeyError(name)
        entry = REGISTRY[name]
        return entry.version, entry.simultaneous

    def __iter__(self) -> Iterator[str]:
        from hiddenenvs.registry import REGISTRY

        return iter(list(REGISTRY))

    def __len__(self) -> int:
        from hiddenenvs.registry import REGISTRY

        return len(REGISTRY)


PETTINGZOO_ENVS: Mapping[str, tuple[int, bool]] = _PettingZooEnvs()


def pettingzoo_id(name: str) -> str:
    """The PettingZoo id of the game registered as ``name`` (version 0 for a name not
    registered): ``metadata["name"]`` of its envs."""
    version = PETTINGZOO_ENVS.get(name, (0, False))[0]
    return f"{PETTINGZOO_NAMESPACE}/{name}-v{version}"


def register_pettingzoo_envs() -> None:
    """Add every game registered so far to PettingZoo's AEC registry, and the simultaneous
    ones to its parallel registry too (ids already there are left alone).
    PettingZoo before 1.27 has no registry: nothing to do there."""
    try:
        from pettingzoo import aec_registry, parallel_registry, register
    except ImportError:
        return

    for name, (_, simultaneous) in PETTINGZOO_ENVS.items():
        env_id = pettingzoo_id(name)
        kinds = [("aec", aec_registry, "make")]
        if simultaneous:
            kinds.append(("parallel", parallel_registry, "make_parallel"))
        for kind, registry, factory in kinds:
            if env_id not in registry:
                register(kind, env_id, entry_point=f"{__name__}:{factory}", kwargs={"name": name})
