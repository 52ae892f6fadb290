"""Vectorised games: ``num_envs`` games of one kind stepped by one compiled call.

| Import        | ``hiddenenvs.vector.make("leduc_holdem", num_envs=1024, seed=0)``                 |
|---------------|-------------------------------------------------------------------------------------|
| Games         | ``kuhn_poker``, ``leduc_holdem``, ``rps``, ``biased_rps``, ``matching_pennies``, ``othello``, ``liars_dice``, ``goofspiel`` (both variants), ``combat`` (``mode="fighter"``) |
| Actions       | ``step(actions)``: int ``[B]`` for turn-based games, ``[B, P]`` for simultaneous ones |
| Observations  | the scalar game's tensor for the player to move: ``[B, *shape]`` float32 (``[B, P, *shape]`` for simultaneous games) |
| Autoreset     | same step (Gymnasium's ``AutoresetMode.SAME_STEP``): a finished game restarts inside ``step`` |

Every ``reset()`` and ``step()`` returns a :class:`VectorStep` of numpy arrays:

| field | shape | meaning |
|-------|-------|---------|
| ``observations`` | ``[B, *shape]`` float32 | the player to move's information-state tensor (or observation tensor with ``observation_type="observation"``), exactly as the scalar game's ``information_state_tensor(player)``; ``[B, P, *shape]`` (every player's) in simultaneous games |
| ``legal_action_masks`` | ``[B, A]`` int8 (``[B, P, A]``) | 1 where the action is legal, as ``state.legal_actions_mask(player)`` |
| ``current_players`` | ``[B]`` int64 | the player to move, or ``SIMULTANEOUS`` (-2) |
| ``rewards`` | ``[B, P]`` float32 | each player's reward for the step's transition (the game's returns where it ended; combat pays its shaped reward every tick, as ``state.rewards()``) |
| ``terminated`` | ``[B]`` bool | the env's game ended in this step (and a new one began) |
| ``truncated`` | ``[B]`` bool | always false: these games end by their rules |
| ``final_observations`` | ``[B, P, *shape]`` float32 | in rows where ``terminated`` is set: every player's tensor at the terminal state |

Autoreset: a game that ends in ``step`` starts again at once; that row's
``observations``, masks and current player are the new game's first decision, and
``rewards``, ``terminated`` and ``final_observations`` describe the game that ended. This
is Gymnasium 1.x's ``SAME_STEP`` mode (where ``infos["final_obs"]`` holds what
``final_observations`` holds here), chosen because a turn-based env must always name a
player to move, and a terminal state has none.

Chance (the deals) comes from one generator per env seeded from ``(seed, env index)``, so
a batch's games are a function of the seed alone (see :mod:`hiddenenvs.vector._kernels`).
``env.deals`` is ``[B, K]``: each env's chance outcomes for its current game, in the order
the scalar game model asks for them; tests replay them into scalar states. Combat
samples its hit rolls inside the state: ``deals`` is ``[B, 1]``, each env's seed of its
current game, and the env draws the rolls exactly as ``new_initial_state(seed)`` does
(see :mod:`hiddenenvs.vector._combat`).

Arguments of :func:`make`:

| name | default | meaning |
|------|---------|---------|
| ``name`` | | a registered game with a vector kernel (:data:`VECTOR_GAMES`) |
| ``num_envs`` | 1 | B, the number of games stepped together |
| ``seed`` | ``None`` | seeds the per-env generators (``None``: fresh entropy); a non-negative int, 2**64 and above mixed into 64 bits |
| ``observation_type`` | ``"information_state"`` | or ``"observation"`` (the scalar ``observation_tensor``) |
| ``copy`` | ``True`` | return fresh arrays; ``False`` returns read-only views of buffers the next call overwrites (faster) |
| ``max_bytes`` | 4 GiB | refuse a ``num_envs`` whose output buffers would take more (or more than half the process's memory: the machine's, or ``RLIMIT_AS``), by an estimate made before any is allocated |
| ``**params`` | | the game's parameters, validated by the scalar game (``max_raises=2``, ``board_size=6``) |

An illegal action raises ``ValueError`` naming the env, the action and the legal actions,
and no env moves. A simultaneous player with a single legal action has it played for
them (as in the scalar model's ``apply_actions``).

:meth:`VectorEnv.play` plays ``K`` steps of every env in one call (rollouts, leaf
evaluation, data generation): the same games as ``K`` ``step`` calls, returning the last
step's outputs, each env's summed rewards and finished games. Its policy is one of:

- :class:`RandomLegalPolicy`: uniform legal actions, drawn in the compiled loop
  (:meth:`VectorEnv.play_random`); called on masks it draws them in one compiled call;
- :class:`TabularPolicy`: a tabular policy (CFR's average policy, any
  :class:`hiddenenvs.analysis.TabularPolicy`) as a table of information-state tensors
  and cumulative probabilities, drawn in the compiled loop from each decision's tensor;
- any callable ``policy(vector_step) -> actions`` (a torch network over the batch): one
  Python call per step for the whole batch.

The compiled loops split the batch over ``threads``. :mod:`hiddenenvs.vector.gymnasium_env`
seats a learner against given opponents as a Gymnasium ``VectorEnv``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

import numpy as np

import hiddenenvs.vector._combat as _combat
import hiddenenvs.vector._kernels as _kernels
from hiddenenvs.envs.combat.simulation import MAX_HEALTH
from hiddenenvs.game import SIMULTANEOUS, Dynamics, Game
from hiddenenvs.registries import Registry
from hiddenenvs.registry import load_game

OBSERVATION_TYPES = ("information_state", "observation")
MAX_BUFFER_BYTES = 4 * 2**30  # make's default max_bytes (docs/guides/limits.md)


def _kuhn(game: Game, num_envs: int, information_state: bool):
    return _kernels.KuhnKernel(num_envs, information_state)


def _leduc(game: Game, num_envs: int, information_state: bool):
    return _kernels.LeducKernel(num_envs, information_state, game.params["max_raises"])


def _matrix(game: Game, num_envs: int, information_state: bool):
    from hiddenenvs.envs.matrix_games import MatrixGame

    assert isinstance(game, MatrixGame)  # make() passes the game its name loads
    return _kernels.MatrixKernel(num_envs, game.payoff)


def _othello(game: Game, num_envs: int, information_state: bool):
    from hiddenenvs.envs.othello import OthelloGame

    assert isinstance(game, OthelloGame)  # make() passes the game its name loads
    return _kernels.OthelloKernel(num_envs, game.board_size)


def _liars_dice(game: Game, num_envs: int, information_state: bool):
    from hiddenenvs.envs.liars_dice import LiarsDiceGame

    assert isinstance(game, LiarsDiceGame)  # make() passes the game its name loads
    return _kernels.LiarsDiceKernel(num_envs, information_state, game.num_dice, game.faces)


def _goofspiel(game: Game, num_envs: int, information_state: bool):
    from hiddenenvs.envs.goofspiel import GoofspielGame

    assert isinstance(game, GoofspielGame)  # make() passes the game its name loads
    return _kernels.GoofspielKernel(
        num_envs,
        information_state,
        game.num_cards,
        game.fixed_points,
        game.imp_info,
        game.point_difference,
    )


def _combat_fighters(game: Game, num_envs: int, information_state: bool):
    if game.params["mode"] != "fighter":
        raise ValueError(
            "hiddenenvs.vector.make('combat'): only fighter mode has a vector kernel; "
            "pass mode='fighter'"
        )
    return _combat.CombatFighterKernel(game, num_envs, MAX_HEALTH)


# Registered game name -> kernel factory ``(game, num_envs, information_state) -> kernel``.
VECTOR_GAMES: Registry[Callable[[Game, int, bool], Any]] = Registry(
    "vector game",
    {
        "kuhn_poker": _kuhn,
        "leduc_holdem": _leduc,
        "rps": _matrix,
        "biased_rps": _matrix,
        "matching_pennies": _matrix,
        "othello": _othello,
        "liars_dice": _liars_dice,
        "goofspiel": _goofspiel,
        "combat": _combat_fighters,
    },
)


class VectorStep(NamedTuple):
    """What :meth:`VectorEnv.reset` and :meth:`VectorEnv.step` return (see the module)."""

    observations: np.ndarray
    legal_action_masks: np.ndarray
    current_players: np.ndarray
    rewards: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    final_observations: np.ndarray


class RandomPlay(NamedTuple):
    """What :meth:`VectorEnv.play` and :meth:`VectorEnv.play_random` return."""

    step: VectorStep  # the outputs after the last step, as step() returns them
    reward_sums: np.ndarray  # [B, P] float64: each env's rewards over the steps
    episodes: np.ndarray  # [B] int64: the games each env finished


class VectorEnv:
    """``num_envs`` games of one kind, stepped together (see the module docstring)."""

    def __init__(self, game: Game, kernel, seed: int | None, observation_type: str, copy: bool):
        self.game = game
        self.num_envs = kernel.num_envs
        self.num_players = game.info.num_players
        self.num_actions = game.info.num_distinct_actions
        self.simultaneous = game.info.dynamics is Dynamics.SIMULTANEOUS
        self.observation_type = observation_type
        self.observation_shape = tuple(
            game.info.information_state_tensor_shape
            if observation_type == "information_state"
            else game.info.observation_tensor_shape
        )
        self.copy = copy
        self._kernel = kernel
        self._seed = seed
        self._outputs = (
            kernel.observations,
            kernel.legal_action_masks,
            kernel.current_players,
            kernel.rewards,
            kernel.terminated,
            kernel.truncated,
            kernel.final_observations,
        )
        self._started = False
        self._all_active = np.ones(self.num_envs, dtype=np.int8)
        # The kernel rewrites its buffers in place, so one set of read-only views serves
        # every call with copy=False.
        views = []
        for array in self._outputs:
            view = array.view()
            view.flags.writeable = False
            views.append(view)
        self._views = VectorStep(*views)

    def __repr__(self) -> str:
        return f"hiddenenvs.vector.VectorEnv({self.game!r}, num_envs={self.num_envs})"

    @property
    def deals(self) -> np.ndarray:
        """``[B, K]`` int64: each env's chance outcomes for its current game (a copy)."""
        return self._kernel.deals.copy()

    def reset(self, seed: int | None = None) -> VectorStep:
        """Start a new game in every env; ``seed`` (or, on the first reset, ``make``'s
        seed) reseeds every env's generator, else they continue."""
        if seed is None and not self._started:
            if self._seed is not None:
                seed = self._seed
            else:
                entropy = np.random.SeedSequence().entropy
                assert isinstance(entropy, int)  # drawn from the OS: none was given
                seed = entropy % 2**64
        if seed is not None:
            _kernels.seed_generators(
                self._kernel.generator_states, generator_seed(seed, f"{self!r}.reset")
            )
        self._kernel.reset()
        self._started = True
        return self._result()

    def step(self, actions, active=None) -> VectorStep:
        """Play one decision in every env: ``actions`` int ``[B]`` (turn-based games) or
        ``[B, P]`` (simultaneous games, one action per player).

        ``active`` (bool ``[B]``, default all) restricts the step to some envs: the others
        keep their state, observations and masks, with zero rewards and ``terminated``
        unset, and their entries in ``actions`` are ignored (seat wrappers move only the
        envs where an opponent is to play).
        """
        self._step_rows(actions, active)
        return self._result()

    def _step_rows(self, actions, active=None) -> None:
        """:meth:`step` without the outputs' copies (:meth:`play`'s loop reads the views)."""
        if not self._started:
            raise ValueError(f"{self!r}.step: call reset() first")
        if active is None:
            active_flags = self._all_active
        else:
            active = np.ascontiguousarray(active)
            if active.shape != (self.num_envs,) or active.dtype != bool:
                raise ValueError(
                    f"{self!r}.step: active must be bool of shape ({self.num_envs},), got "
                    f"{active.dtype} {active.shape}"
                )
            active_flags = active.view(np.int8)
        actions = np.asarray(actions)
        expected = (self.num_envs, self.num_players) if self.simultaneous else (self.num_envs,)
        if actions.shape != expected or actions.dtype.kind not in "iu":
            raise ValueError(
                f"{self!r}.step: actions must be integers of shape {expected}, got "
                f"{actions.dtype} {actions.shape}"
            )
        if actions.dtype.kind == "u" and actions.size and actions.max() > np.iinfo(np.int64).max:
            env_index = int(np.argmax(actions.reshape(self.num_envs, -1).max(axis=1)))
            raise ValueError(  # as int64 it would read as a negative action
                f"{self!r}.step: illegal action in env {env_index}: {int(actions.max())} is not "
                f"an action (0..{self.num_actions - 1}); no env moved"
            )
        rows = np.ascontiguousarray(actions, dtype=np.int64).reshape(self.num_envs, -1)
        illegal = self._kernel.step(rows, active_flags)
        if illegal >= 0:
            self._raise_illegal(illegal, rows[illegal])

    def play(self, num_steps: int, policy: Any, threads: int = 1) -> RandomPlay:
        """``num_steps`` steps of every env with ``policy``'s actions; returns the last
        step's outputs, each env's summed rewards and its number of finished games (the
        same games and results as ``num_steps`` times ``env.step(policy(...))``):

        - a :class:`RandomLegalPolicy`: :meth:`play_random`, one compiled call;
        - a :class:`TabularPolicy`: one compiled call, its draws made in the kernel from
          each decision's information-state tensor (``threads`` as in :meth:`play_random`);
        - any other callable ``policy(vector_step) -> actions`` (``[B]``, or ``[B, P]`` in
          simultaneous games), e.g. a torch network over the whole batch: one Python call
          per step for the whole batch, never one per game. It gets read-only views of
          the env's outputs, which the next step overwrites (copy what it keeps).
        """
        self._check_play("play", num_steps, threads)
        if isinstance(policy, RandomLegalPolicy):
            return self.play_random(num_steps, policy, threads)
        reward_sums = np.zeros((self.num_envs, self.num_players))
        episodes = np.zeros(self.num_envs, dtype=np.int64)
        if isinstance(policy, TabularPolicy):
            policy.check_env(self, "play")
            states = policy.generators(self._kernel.legal_action_masks[..., 0].size)

            def play(env_range: tuple[int, int]):
                return _kernels.tabular_steps(
                    self._kernel,
                    policy.index,
                    int(num_steps),
                    states,
                    reward_sums,
                    episodes,
                    *env_range,
                )

            failures = [failure for failure in self._in_parts(play, threads) if failure is not None]
            if failures:
                env_index, player, code = min(failures)
                raise ValueError(
                    f"{self!r}.play: {_tabular_failure(code, env_index, player)}; the envs stopped "
                    f"mid-play (call reset() before using them again)"
                )
        elif callable(policy):
            views = self._views
            for _ in range(num_steps):
                self._step_rows(policy(views))
                reward_sums += self._kernel.rewards
                episodes += self._kernel.terminated
        else:
            raise TypeError(
                f"{self!r}.play: policy must be a RandomLegalPolicy, a TabularPolicy or a callable "
                f"policy(vector_step) -> actions, got {type(policy).__name__}"
            )
        return RandomPlay(self._result(), reward_sums, episodes)

    def play_random(
        self, num_steps: int, policy: RandomLegalPolicy, threads: int = 1
    ) -> RandomPlay:
        """``num_steps`` steps of every env with ``policy``'s uniform legal actions, in
        one compiled call (rollouts, leaf evaluation, data generation): the same draws,
        games and final outputs as ``num_steps`` times
        ``env.step(policy(env_step.legal_action_masks))``, without returning to Python
        between steps. Returns the last step's outputs, each env's summed rewards and its
        number of finished games.

        ``threads > 1`` splits the batch into that many contiguous parts played at once
        by as many threads (the compiled loop holds no GIL), one core each: the same
        games and results as one thread, since every env and every policy row has its
        own generator."""
        self._check_play("play_random", num_steps, threads)
        masks = self._kernel.legal_action_masks
        states = policy.generators(int(np.prod(masks.shape[:-1])))
        reward_sums = np.zeros((self.num_envs, self.num_players))
        episodes = np.zeros(self.num_envs, dtype=np.int64)
        if hasattr(self._kernel, "random_steps"):

            def play(env_range: tuple[int, int]) -> None:
                self._kernel.random_steps(int(num_steps), states, reward_sums, episodes, *env_range)

            self._in_parts(play, threads)
        else:  # combat's kernel: the same steps from Python
            for _ in range(num_steps):
                self.step(policy(masks))
                reward_sums += self._kernel.rewards
                episodes += self._kernel.terminated
        return RandomPlay(self._result(), reward_sums, episodes)

    def _check_play(self, method: str, num_steps: Any, threads: Any) -> None:
        if not self._started:
            raise ValueError(f"{self!r}.{method}: call reset() first")
        if not isinstance(num_steps, (int, np.integer)) or num_steps < 0:
            raise ValueError(f"{self!r}.{method}: num_steps must be an int >= 0, got {num_steps!r}")
        if not isinstance(threads, (int, np.integer)) or threads < 1:
            raise ValueError(f"{self!r}.{method}: threads must be an int >= 1, got {threads!r}")

    def _in_parts(self, play: Callable[[tuple[int, int]], Any], threads: int) -> list[Any]:
        """``play(env_range)`` over ``threads`` contiguous parts of the batch at once (one
        thread each; the compiled loops hold no GIL); their results, in order."""
        bounds = np.linspace(0, self.num_envs, min(int(threads), self.num_envs) + 1).astype(int)
        ranges = list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))
        if len(ranges) == 1:
            return [play(ranges[0])]
        return list(_thread_pool(len(ranges)).map(play, ranges))  # raises a thread's error here

    def _raise_illegal(self, env_index: int, actions: np.ndarray):
        masks = self._kernel.legal_action_masks[env_index]
        if self.simultaneous:
            players = range(self.num_players)
            legal = [np.flatnonzero(masks[p]).tolist() for p in players]
            bad = [p for p in players if len(legal[p]) > 1 and int(actions[p]) not in legal[p]]
            detail = "; ".join(
                f"player {p} played {int(actions[p])}, legal {legal[p]}" for p in bad
            )
        else:
            player = int(self._kernel.current_players[env_index])
            detail = (
                f"player {player} played {int(actions[0])}, legal {np.flatnonzero(masks).tolist()}"
            )
        raise ValueError(
            f"{self!r}.step: illegal action in env {env_index}: {detail}; no env moved"
        )

    def _result(self) -> VectorStep:
        if self.copy:
            return VectorStep(*(array.copy() for array in self._outputs))
        return self._views


_THREAD_POOLS: dict[int, ThreadPoolExecutor] = {}


def _thread_pool(threads: int) -> ThreadPoolExecutor:
    """One pool per thread count for the process: starting and joining threads on every
    ``play_random`` call cost as much as a call over 1,024 Kuhn games (two threads were
    slower than one)."""
    pool = _THREAD_POOLS.get(threads)
    if pool is None:
        pool = _THREAD_POOLS[threads] = ThreadPoolExecutor(threads, "play_random")
    return pool


def make(
    name: str,
    num_envs: int = 1,
    seed: int | None = None,
    observation_type: str = "information_state",
    copy: bool = True,
    max_bytes: int = MAX_BUFFER_BYTES,
    **params: Any,
) -> VectorEnv:
    """``num_envs`` games of the registered game ``name`` (see the module docstring)."""
    if name not in VECTOR_GAMES:
        raise ValueError(
            f"hiddenenvs.vector.make: no vector kernel for {name!r}; vector games: {', '.join(VECTOR_GAMES)}"
        )
    if not isinstance(num_envs, (int, np.integer)) or isinstance(num_envs, bool) or num_envs < 1:
        raise ValueError(
            f"hiddenenvs.vector.make({name!r}): num_envs must be an int >= 1, got {num_envs!r}"
        )
    if seed is not None:
        generator_seed(seed, f"hiddenenvs.vector.make({name!r})")  # refused now, not at reset
    if observation_type not in OBSERVATION_TYPES:
        raise ValueError(
            f"hiddenenvs.vector.make({name!r}): observation_type must be one of {OBSERVATION_TYPES}, "
            f"got {observation_type!r}"
        )
    game = load_game(name, **params)
    estimate = int(num_envs) * _bytes_per_env(game.info, observation_type, copy)
    limit = min(max_bytes, _memory_limit() // 2)
    if estimate > limit:
        raise ValueError(
            f"hiddenenvs.vector.make({name!r}): num_envs={num_envs:,} needs about "
            f"{estimate / 2**30:,.1f} GiB of buffers, over the limit of {limit / 2**30:,.1f} "
            f"GiB (max_bytes=, at most half this process's memory); use fewer envs"
        )
    kernel = VECTOR_GAMES[name](game, int(num_envs), observation_type == "information_state")
    return VectorEnv(game, kernel, seed, observation_type, copy)


def generator_seed(seed: Any, where: str) -> int:
    """The 64-bit seed of the per-env generators for a non-negative int ``seed``: itself
    below 2**64, else all its bits mixed into 64 by numpy's ``SeedSequence`` (cutting
    them gave 2**70 and 2**70 + 2**64 the same games)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"{where}: seed must be a non-negative int, got {seed!r}")
    seed = int(seed)
    if seed < 2**64:
        return seed
    return int(np.random.SeedSequence(seed).generate_state(1, np.uint64)[0])


def _memory_limit() -> int:
    """Bytes this process can have: the machine's memory, or the address-space limit
    (``RLIMIT_AS``) if lower."""
    limit = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    try:
        import resource
    except ImportError:  # not POSIX
        return limit
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return limit if soft == resource.RLIM_INFINITY else min(limit, soft)


def _bytes_per_env(info, observation_type: str, copy: bool) -> int:
    """An upper estimate of one env's output buffers: observations and final
    observations for every player, masks, rewards and flags (twice with ``copy``)."""
    shape = (
        info.information_state_tensor_shape
        if observation_type == "information_state"
        else info.observation_tensor_shape
    )
    players = info.num_players
    per_env = 2 * players * 4 * math.prod(shape) + players * (info.num_distinct_actions + 8) + 64
    return per_env * (2 if copy else 1)


def _row_generators(policy: RandomLegalPolicy | TabularPolicy, rows: int) -> np.ndarray:
    """``policy``'s per-row generator states, seeded from ``(policy.seed, row)`` on the
    first call; every later call must ask for as many rows."""
    if policy._states is None:
        policy._states = np.zeros(rows, dtype=np.uint64)
        _kernels.seed_generators(policy._states, policy.seed)
    elif policy._states.shape[0] != rows:
        raise ValueError(
            f"{type(policy).__name__}: {rows} rows; this policy's generators serve "
            f"{policy._states.shape[0]} (make one policy per batch size)"
        )
    return policy._states


class RandomLegalPolicy:
    """Uniform legal actions for a batch of masks, in one compiled call.

    ``policy(masks)`` takes ``[B, A]`` (or ``[B, P, A]``) int8 masks and returns int64
    actions ``[B]`` (or ``[B, P]``), drawn with one generator per row seeded from
    ``(seed, row)`` on the first call; its draws never touch an env's chance generators.
    Every later call must have the same number of rows.
    """

    def __init__(self, seed: int = 0):
        self.seed = generator_seed(seed, "RandomLegalPolicy")
        self._states: np.ndarray | None = None

    def __call__(self, masks: np.ndarray) -> np.ndarray:
        if self._states is not None:  # int8 C-contiguous masks of the known batch: one call
            actions = _kernels.draw_from_masks(masks, self._states)
            if actions is not None:
                return actions
        masks = np.ascontiguousarray(masks, dtype=np.int8)
        rows = masks.reshape(-1, masks.shape[-1])
        actions = np.empty(rows.shape[0], dtype=np.int64)
        _kernels.random_legal_actions(rows, self.generators(rows.shape[0]), actions)
        return actions.reshape(masks.shape[:-1])

    def generators(self, rows: int) -> np.ndarray:
        """The per-row generator states (``[rows]`` uint64), seeded on first use; they
        advance with every draw (:meth:`VectorEnv.play` draws with them too)."""
        return _row_generators(self, rows)


MAX_TABLE_NODES = 2_000_000  # TabularPolicy.from_policy's default cap on the game tree


def _tabular_failure(code: int, env_index: int, player: int) -> str:
    if code == -1:
        return (
            f"env {env_index}: player {player}'s information state is not in the policy's table "
            f"(a table of another game, or of part of this one)"
        )
    return f"env {env_index}: the policy's table puts player {player} on an illegal action"


class TabularPolicy:
    """A tabular policy the vector kernels play without Python per step.

    One row per information set: its player, its information-state tensor (float32, as
    the env writes it) and its action probabilities. The rows are indexed by an
    open-addressing hash table over ``(player, tensor bytes)`` with an exact match on
    every probe, built once: a decision's row is found from the tensor the kernel has
    just written, so nothing per game type is needed, and a tensor no row has is an
    error, never a wrong row. This works because the information-state tensor says which
    information set a state is in (perfect recall; :meth:`from_policy` checks that no two
    information sets of the game share one).

    ``policy(vector_step)`` returns the actions (``[B]``, ``[B, P]`` in simultaneous
    games) for a :class:`VectorStep`; :meth:`VectorEnv.play` plays it in one compiled
    call. Both draw alike: a decision with one legal action takes it without a draw;
    otherwise a uniform double ``u`` (the top 53 bits of one output of the row's
    generator, seeded from ``(seed, row)`` on the first call like
    :class:`RandomLegalPolicy`'s) picks the first action whose cumulative probability
    exceeds ``u``. Every later call must have the same number of rows.
    """

    def __init__(
        self,
        game: Game,
        players: np.ndarray,
        tensors: np.ndarray,
        probabilities: np.ndarray,
        seed: int = 0,
    ):
        """Rows of ``players`` ``[N]``, information-state ``tensors`` ``[N, *shape]`` and
        action ``probabilities`` ``[N, A]`` (each row summing to 1) for ``game``;
        :meth:`from_policy` builds them from a game tree."""
        info = game.info
        players = np.asarray(players, dtype=np.int64)
        tensors = np.asarray(tensors, dtype=np.float32)
        probabilities = np.asarray(probabilities, dtype=np.float64)
        rows = players.shape[0] if players.ndim == 1 else -1
        shape = tuple(info.information_state_tensor_shape)
        if tensors.shape != (rows, *shape) or probabilities.shape != (
            rows,
            info.num_distinct_actions,
        ):
            raise ValueError(
                f"TabularPolicy({game!r}): players [N], tensors [N, {', '.join(map(str, shape))}] "
                f"and probabilities [N, {info.num_distinct_actions}], got {players.shape}, "
                f"{tensors.shape} and {probabilities.shape}"
            )
        if ((players < 0) | (players >= info.num_players)).any():
            raise ValueError(f"TabularPolicy({game!r}): players must be 0..{info.num_players - 1}")
        bad = ~np.isfinite(probabilities).all(axis=1) | (probabilities < 0).any(axis=1)
        bad |= np.abs(probabilities.sum(axis=1) - 1) > 1e-6
        if bad.any():
            row = int(np.argmax(bad))
            raise ValueError(
                f"TabularPolicy({game!r}): row {row}'s probabilities must be >= 0 and sum to 1, "
                f"got {probabilities[row].tolist()}"
            )
        cumulative = np.cumsum(probabilities, axis=1)
        # 1.0 from the last action with mass on: a draw below 1 always finds an action,
        # whatever the rounding of the sums.
        last = probabilities.shape[1] - 1 - np.argmax(probabilities[:, ::-1] > 0, axis=1)
        cumulative[np.arange(probabilities.shape[1]) >= last[:, None]] = 1.0
        self.game = game
        self.players = players
        self.tensors = tensors
        self.probabilities = probabilities
        self.seed = generator_seed(seed, "TabularPolicy")
        self.index = _kernels.TabularIndex(tensors.reshape(rows, -1), players, cumulative)
        self._states: np.ndarray | None = None

    @classmethod
    def from_policy(
        cls, env: VectorEnv, policy: Any, seed: int = 0, max_nodes: int = MAX_TABLE_NODES
    ) -> TabularPolicy:
        """The table of ``policy`` for ``env``'s game: a
        :class:`hiddenenvs.analysis.TabularPolicy` (e.g. CFR's ``average_policy()``), or
        anything :func:`hiddenenvs.analysis.as_tabular_policy` takes (a mapping
        ``{(player, information_state_key): probabilities}``, a callable
        ``fn(state, player)``). Enumerates the game tree (refused above ``max_nodes``
        nodes) and computes each information set's tensor once."""
        from hiddenenvs.analysis import GameTree, as_tabular_policy, tree_is_small
        from hiddenenvs.analysis import TabularPolicy as AnalysisTabularPolicy

        game = env.game
        where = f"hiddenenvs.vector.TabularPolicy.from_policy({game!r})"
        if env.observation_type != "information_state":
            raise ValueError(
                f"{where}: the table is keyed by information-state tensors; make the env with "
                f"observation_type='information_state'"
            )
        if isinstance(policy, AnalysisTabularPolicy) and (
            policy.tree.game.NAME != game.NAME or policy.tree.game.params != game.params
        ):
            raise ValueError(f"{where}: the policy is for {policy.tree.game!r}")
        if not tree_is_small(game, max_nodes):
            raise ValueError(
                f"{where}: the game tree has more than {max_nodes:,} nodes; a table needs every "
                f"information set enumerated (pass max_nodes= to allow a larger tree)"
            )
        tree = GameTree.build(game)
        tabular = as_tabular_policy(tree, policy)
        states = tree.representative_states()
        players = tree.infoset_player
        tensors = np.stack(
            [
                np.asarray(state.information_state_tensor(int(player)), dtype=np.float32)
                for state, player in zip(states, players)
            ]
        ).reshape(tree.num_infosets, *game.info.information_state_tensor_shape)
        seen: dict[tuple[int, bytes], int] = {}
        for infoset, (player, tensor) in enumerate(zip(players.tolist(), tensors)):
            other = seen.setdefault((player, tensor.tobytes()), infoset)
            if other != infoset:
                raise ValueError(
                    f"{where}: information sets {tree.infoset_keys[other]!r} and "
                    f"{tree.infoset_keys[infoset]!r} have the same information-state tensor; "
                    f"a table keyed by tensors cannot tell them apart"
                )
        probabilities = np.zeros((tree.num_infosets, game.info.num_distinct_actions))
        probabilities[tree.slot_infoset, tree.slot_action] = tabular.slot_probabilities
        return cls(game, players, tensors, probabilities, seed)

    def check_env(self, env: VectorEnv, where: str) -> None:
        """Refuse an env of another game than the table's."""
        if env.game.NAME != self.game.NAME or env.game.params != self.game.params:
            raise ValueError(f"{env!r}.{where}: the TabularPolicy is for {self.game!r}")
        if env.observation_type != "information_state":
            raise ValueError(
                f"{env!r}.{where}: a TabularPolicy reads information-state tensors; this env "
                f"has observation_type={env.observation_type!r}"
            )

    def __call__(self, step: VectorStep) -> np.ndarray:
        masks = np.ascontiguousarray(step.legal_action_masks, dtype=np.int8)
        actions_shape = masks.shape[:-1]
        num_rows = int(np.prod(actions_shape))
        tensors = np.ascontiguousarray(step.observations, dtype=np.float32).reshape(num_rows, -1)
        if masks.ndim == 3:  # simultaneous: every player's row
            players = np.tile(np.arange(masks.shape[1], dtype=np.int64), masks.shape[0])
        else:
            players = np.ascontiguousarray(step.current_players, dtype=np.int64)
        actions = np.empty(num_rows, dtype=np.int64)
        failure = self.index.draw(
            tensors, masks.reshape(num_rows, -1), players, self.generators(num_rows), actions
        )
        if failure != -1:
            row, code = failure
            env_index = row // masks.shape[1] if masks.ndim == 3 else row
            raise ValueError(
                f"TabularPolicy: {_tabular_failure(code, env_index, int(players[row]))}"
            )
        return actions.reshape(actions_shape)

    def generators(self, rows: int) -> np.ndarray:
        """The per-row generator states (``[rows]`` uint64), seeded on first use; they
        advance with every draw (:meth:`VectorEnv.play` draws with them too)."""
        return _row_generators(self, rows)


__all__ = [
    "OBSERVATION_TYPES",
    "SIMULTANEOUS",
    "VECTOR_GAMES",
    "RandomLegalPolicy",
    "RandomPlay",
    "TabularPolicy",
    "VectorEnv",
    "VectorStep",
    "make",
]
