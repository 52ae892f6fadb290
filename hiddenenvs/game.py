"""The one game model of hiddenenvs.

Every game in hiddenenvs implements this model once. Search algorithms (CFR, best
response, MCTS, OOS, ReBeL) run on it directly; the PettingZoo adapters in
:mod:`hiddenenvs.pettingzoo_env` turn any game into an AEC or parallel env.

The model is the extensive form with chance and simultaneous moves, as in OpenSpiel:

=====================  ====================================================================
Concept                In the model
=====================  ====================================================================
players                ``0 .. num_players-1``; named by ``GameInfo.player_names``
chance node            ``current_player() == CHANCE``; ``chance_outcomes()`` lists
                       ``(action, probability)`` pairs; ``apply_action`` picks one
decision node          ``current_player() == p``; ``legal_actions()`` are ``p``'s moves
simultaneous node      ``current_player() == SIMULTANEOUS``; every player ``p`` has
                       ``legal_actions(p)``; ``movers()`` are those with a real choice
                       (two or more legal actions); ``apply_actions(joint)`` takes one
                       action per player (forced or absent choices may be anything)
terminal               ``current_player() == TERMINAL``; ``returns()`` per player
actions                integers ``0 .. num_distinct_actions-1`` from one global action
                       space, named by ``action_to_string(player, action)``
information state      ``information_state_key(p)``: hashable, equal for two states iff
                       ``p`` cannot tell their histories apart (perfect recall);
                       ``information_state_tensor(p)``: fixed shape float32 encoding of
                       the same information (for neural nets)
observation            ``observation_tensor(p)``: what ``p`` perceives now (may forget)
public state           ``public_state_key()``: the sequence of public observations, one
                       entry per step, identical for all players; an information-state key
                       has the same steps, each entry ``(public, private)``, so a state is
                       consistent with a public state (or an information set) iff its key
                       starts with it (for OOS targeting and ReBeL's public belief states);
                       ``public_observation_tensor()`` encodes the public state
history                ``history()``: the decisions that led here (chance outcomes, actions,
                       joint actions as tuples); ``game.state_from_history(h)`` replays them
identity               ``game.spec``: registry name + parameters; any process rebuilds the
                       game from it (``load_game(spec)``), and games and states pickle
                       small as their class and spec
beliefs                :mod:`hiddenenvs.beliefs` samples histories consistent with a
                       player's information-state key (weighted by the others' reach under
                       a policy): exactly by pruned enumeration, or by a game's own sampler
randomness             explicit chance lives in the history; a SAMPLED_STOCHASTIC state
                       (combat) carries a generator: ``clone()`` replays exactly the same
                       draws, ``clone().reseed(seed)`` gives the copy fresh randomness
=====================  ====================================================================

Static facts about a game (dynamics, chance mode, information, utility bounds, sizes,
tensor shapes) live in :class:`GameInfo`, apart from the state logic, so an algorithm
can ask a game what it is before playing it.

Worked example (Kuhn poker: deal, player 0 checks, player 1 bets, player 0 folds)::

    >>> import hiddenenvs
    >>> game = hiddenenvs.load_game("kuhn_poker")
    >>> state = game.new_initial_state()
    >>> state.is_chance_node(), state.chance_outcomes()[0]
    (True, (0, 0.3333333333333333))
    >>> state.apply_action(2)          # player 0 gets the King
    >>> state.apply_action(0)          # player 1 gets the Jack
    >>> state.current_player(), [state.action_to_string(0, a) for a in state.legal_actions()]
    (0, ['pass', 'bet'])
    >>> state.apply_action(0); state.apply_action(1); state.apply_action(0)
    >>> state.is_terminal(), state.returns().tolist()
    (True, [-1.0, 1.0])
    >>> state.history()
    (2, 0, 0, 1, 0)
    >>> state.public_state_key()
    ('deal', 'deal', 'pass', 'bet', 'pass')
    >>> state.information_state_key(0)
    (('deal', 'K'), ('deal', None), ('pass', None), ('bet', None), ('pass', None))
    >>> game.state_from_history(state.history()).returns().tolist()
    [-1.0, 1.0]

Player 1 cannot tell this history from one where player 0 holds the Queen: both have
player 1's key, and so they lie in one public state. :mod:`hiddenenvs.beliefs` samples
such histories from player 1's point of view::

    >>> import numpy as np
    >>> from hiddenenvs.beliefs import consistent_histories
    >>> [(h[:2], w) for h, w in consistent_histories(game, 1, state.information_state_key(1))]
    [((1, 0), 0.5), ((2, 0), 0.5)]

Games declare their parameters as :class:`Parameter` objects; ``Game(**params)``
validates them and says which key or value is wrong and what is allowed.
"""

from __future__ import annotations

import functools
import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from hiddenenvs.beliefs import sample_from_posterior
from hiddenenvs.core import (  # re-exported: the model's vocabulary
    CHANCE,
    SIMULTANEOUS,
    TERMINAL,
    ChanceMode,
    Dynamics,
    GameSpec,
    Information,
    Utility,
    draw_index,  # noqa: F401 (re-exported, as all of these)
)


@dataclass(frozen=True)
class GameInfo:
    """What a game is, independent of any state."""

    short_name: str
    long_name: str
    num_players: int
    num_distinct_actions: int
    max_chance_outcomes: int
    dynamics: Dynamics
    chance_mode: ChanceMode
    information: Information
    utility: Utility
    min_utility: float
    max_utility: float
    max_game_length: int
    information_state_tensor_shape: tuple[int, ...]
    observation_tensor_shape: tuple[int, ...]
    player_names: tuple[str, ...] = ()
    utility_sum: float | None = None
    public_observation_tensor_shape: tuple[int, ...] = ()

    def __post_init__(self):
        if not self.player_names:
            object.__setattr__(
                self, "player_names", tuple(f"player_{p}" for p in range(self.num_players))
            )
        if len(self.player_names) != self.num_players:
            raise ValueError(
                f"{self.short_name}: {len(self.player_names)} player names for "
                f"{self.num_players} players"
            )
        if self.utility is Utility.ZERO_SUM and self.utility_sum is None:
            object.__setattr__(self, "utility_sum", 0.0)

    @property
    def is_two_player_zero_sum(self) -> bool:
        return self.num_players == 2 and self.utility in (Utility.ZERO_SUM, Utility.CONSTANT_SUM)


@dataclass(frozen=True)
class Parameter:
    """One game parameter: its type, default, allowed values and meaning."""

    name: str
    type: type
    default: Any
    doc: str
    choices: tuple | None = None
    minimum: float | None = None
    maximum: float | None = None

    def validate(self, value: Any, game_name: str) -> Any:
        where = f"{game_name}: parameter {self.name!r}"
        if self.type is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if self.type is int and isinstance(value, bool) or not isinstance(value, self.type):
            raise ValueError(
                f"{where} must be {self.type.__name__}, got {type(value).__name__} {value!r}"
            )
        if self.choices is not None and value not in self.choices:
            raise ValueError(f"{where} must be one of {list(self.choices)}, got {value!r}")
        if isinstance(value, float) and math.isnan(value):  # NaN passes every comparison below
            raise ValueError(f"{where} must be a number, got nan")
        # value has the runtime type self.type (checked above), which mypy cannot follow
        if self.minimum is not None and value < self.minimum:  # type: ignore[operator]
            raise ValueError(f"{where} must be >= {self.minimum}, got {value!r}")
        if self.maximum is not None and value > self.maximum:  # type: ignore[operator]
            raise ValueError(f"{where} must be <= {self.maximum}, got {value!r}")
        return value


@functools.lru_cache(maxsize=32)
def _rebuilt_game(
    game_class: type[Game], spec: GameSpec, fixed: tuple[tuple[str, Any], ...]
) -> Game:
    """An unpickled game: ``game_class`` with the spec's parameters and ``fixed`` (those a
    registry variant set), cached per process since some (GDL sheets) take a while to ground."""
    game = game_class(**dict(fixed), **dict(spec.params))
    game.spec = spec
    return game


def _state_from_history(game: Game, history: tuple, seed: int | None) -> State:
    return game.state_from_history(history, seed=seed)


class Game(ABC):
    """A game: its parameters, its static facts (``info``) and its initial state."""

    NAME: ClassVar[str] = ""
    PARAMETERS: ClassVar[tuple[Parameter, ...]] = ()
    # What the PettingZoo adapters read (games override the ones that differ):
    # render modes offered ("rgb_array" needs State.render_rgb), frames per second for
    # "human", the bounds of every tensor (observation and state spaces), and the action
    # played for an illegal one under illegal_action="no_op" (None: the game has none).
    RENDER_MODES: ClassVar[tuple[str, ...]] = ("ansi", "human")
    RENDER_FPS: ClassVar[int] = 4
    TENSOR_BOUNDS: ClassVar[tuple[float, float]] = (0.0, 1.0)
    NO_OP_ACTION: ClassVar[int | None] = None

    info: GameInfo

    def __init__(self, **params: Any):
        self.params = self.validate_parameters(params)
        # A game built from its class is its own spec; the registry overrides this with
        # the registered name (a variant such as ``gdl_biased_rps``).
        self.spec = GameSpec.of(self.NAME, {name: self.params[name] for name in params})

    def __reduce__(self):
        # Rebuilt from its class and spec in the receiving process (a GDL game re-grounds
        # its sheet), so a pickle is a few hundred bytes. The parameters a registry variant
        # fixed (not in the spec) and that differ from their defaults travel along.
        given = dict(self.spec.params)
        fixed = tuple(
            (parameter.name, self.params[parameter.name])
            for parameter in self.PARAMETERS
            if parameter.name not in given and self.params[parameter.name] != parameter.default
        )
        return (_rebuilt_game, (type(self), self.spec, fixed))

    def sample_consistent_history(
        self, player: int, information_state_key: tuple, rng: np.random.Generator, policy=None
    ) -> tuple:
        """A history consistent with ``player``'s key, drawn from the belief posterior.

        See :mod:`hiddenenvs.beliefs`: ``policy`` weights the other players' actions
        (``None``: uniform). The default draws from the exact posterior by pruned
        enumeration; games whose trees are large override this with their own sampler.
        """
        return sample_from_posterior(self, player, information_state_key, rng, policy)

    def sample_consistent_histories(
        self,
        player: int,
        information_state_key: tuple,
        rng: np.random.Generator,
        count: int,
        policy=None,
    ) -> list[tuple]:
        """``count`` draws of :meth:`sample_consistent_history` under one fixed ``policy``
        (the same draws, in order, from the same ``rng``); a game whose sampler has set-up
        work per key (GDL-II's forward filter) overrides this to do it once."""
        return [
            self.sample_consistent_history(player, information_state_key, rng, policy)
            for _ in range(count)
        ]

    def state_from_history(self, history: Sequence, seed: int | None = None) -> State:
        """The state reached by replaying ``history`` (as ``State.history()`` gives it).

        Each entry is a chance outcome or an action (an int) or, at a simultaneous node,
        a joint action (a sequence, one entry per player); every entry is validated.
        ``seed`` is the ``new_initial_state`` seed, for SAMPLED_STOCHASTIC games whose
        history does not name its seeds (combat's does: an int entry is a seed).
        """
        state = self.new_initial_state(seed=seed)
        for step, entry in enumerate(history):
            try:
                state._replay(entry)
            except ValueError as error:
                raise ValueError(
                    f"{self.NAME}: history entry {step} ({entry!r}): {error}"
                ) from None
        return state

    @classmethod
    def validate_parameters(
        cls, params: dict[str, Any], env_name: str = "", fixed: Sequence[str] = ()
    ) -> dict[str, Any]:
        """``params`` checked and completed with defaults. Errors name ``env_name`` (the
        registered name the user asked for, e.g. a variant) or else the class's ``NAME``, and
        list the allowed parameters other than the ``fixed`` ones."""
        where = env_name or cls.NAME
        known = {p.name: p for p in cls.PARAMETERS}
        unknown = sorted(set(params) - set(known))
        if unknown:
            allowed = ", ".join(
                f"{p.name} (default {p.default!r})" for p in cls.PARAMETERS if p.name not in fixed
            )
            raise ValueError(
                f"{where}: unknown parameter(s) {unknown}; allowed: {allowed or 'none'}"
            )
        return {
            name: p.validate(params[name], where) if name in params else p.default
            for name, p in known.items()
        }

    @abstractmethod
    def new_initial_state(self, seed: int | None = None) -> State:
        """The root of the game. ``seed`` only matters for SAMPLED_STOCHASTIC games."""

    def action_to_string(self, player: int, action: int) -> str:
        return str(action)

    def order_structure(self) -> dict[str, Any] | None:
        """The layout of a game whose actions are orders (areas x destinations x counts), as
        a factored order head (:class:`agents.networks.FactoredOrderHead`) reads it; None
        (the default): the game's actions are not orders."""
        return None

    def describe_step(self, player: int, public: Any, private: Any) -> str:
        """One step of ``player``'s information-state key, ``(public, private)``, in words
        for a person (``python -m agents.play`` prints it). The default shows the values as
        they are; a game whose steps are bare numbers names them."""
        return repr(public) + ("" if private is None else f" | yours: {private!r}")

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"{self.NAME}({args})"


class State(ABC):
    """A history of a game. Subclasses implement the ``_``-prefixed hooks.

    Optional: ``render_rgb(player=None)`` returning an ``(H, W, 3)`` uint8 image (the true
    state, or what ``player`` sees), for games whose ``Game.RENDER_MODES`` include
    ``"rgb_array"``.
    """

    __slots__ = ("game",)

    def __init__(self, game: Game):
        self.game = game

    # ---- whose turn --------------------------------------------------------------
    @abstractmethod
    def current_player(self) -> int:
        """A player index, or CHANCE, SIMULTANEOUS or TERMINAL."""

    def is_terminal(self) -> bool:
        return self.current_player() == TERMINAL

    def is_chance_node(self) -> bool:
        return self.current_player() == CHANCE

    def is_simultaneous_node(self) -> bool:
        return self.current_player() == SIMULTANEOUS

    def movers(self) -> list[int]:
        """Players who must choose at this node (empty at chance and terminal nodes)."""
        player = self.current_player()
        if player >= 0:
            return [player]
        if player == SIMULTANEOUS:
            return [p for p in range(self.game.info.num_players) if len(self.legal_actions(p)) > 1]
        return []

    # ---- actions ------------------------------------------------------------------
    @abstractmethod
    def legal_actions(self, player: int | None = None) -> list[int]:
        """Sorted legal actions of ``player`` (default: the player to move).

        At chance nodes, the outcomes with positive probability. A player who does not
        act at this node has none.
        """

    def legal_actions_mask(self, player: int | None = None) -> np.ndarray:
        mask = np.zeros(self.game.info.num_distinct_actions, dtype=np.int8)
        mask[self.legal_actions(player)] = 1
        return mask

    def chance_outcomes(self) -> list[tuple[int, float]]:
        raise ValueError(f"{self.game.NAME}: chance_outcomes() called at a non-chance node")

    def apply_action(self, action: int) -> None:
        """Play ``action`` at a decision or chance node (validated)."""
        player = self.current_player()
        if player == SIMULTANEOUS:
            raise ValueError(
                f"{self.game.NAME}: simultaneous node; use apply_actions(joint) with one "
                f"action per player"
            )
        if player == TERMINAL:
            raise ValueError(f"{self.game.NAME}: the game is over; no action can be applied")
        legal = self.legal_actions()
        if action not in legal:
            who = "chance" if player == CHANCE else f"player {player}"
            raise ValueError(
                f"{self.game.NAME}: action {action!r} is illegal for {who}; legal actions: "
                f"{self._describe(player, legal)}"
            )
        self._apply_action(int(action))

    def apply_actions(self, joint: Sequence[int]) -> None:
        """Play one action per player at a simultaneous node (validated).

        Entries for players without a real choice are ignored and replaced by their
        forced action (if any).
        """
        if self.current_player() != SIMULTANEOUS:
            raise ValueError(f"{self.game.NAME}: apply_actions() needs a simultaneous node")
        num_players = self.game.info.num_players
        if len(joint) != num_players:
            raise ValueError(
                f"{self.game.NAME}: joint action needs {num_players} entries, got {len(joint)}"
            )
        resolved = []
        for player, action in enumerate(joint):
            legal = self.legal_actions(player)
            if len(legal) > 1 and action not in legal:
                raise ValueError(
                    f"{self.game.NAME}: action {action!r} is illegal for player {player}; "
                    f"legal actions: {self._describe(player, legal)}"
                )
            resolved.append(int(action) if len(legal) > 1 else (legal[0] if legal else -1))
        self._apply_actions(resolved)

    def _apply_action(self, action: int) -> None:
        raise NotImplementedError(f"{self.game.NAME} has no sequential or chance nodes")

    def _apply_actions(self, joint: list[int]) -> None:
        raise NotImplementedError(f"{self.game.NAME} has no simultaneous nodes")

    def child(self, action: int) -> State:
        new_state = self.clone()
        new_state.apply_action(action)
        return new_state

    def history(self) -> tuple:
        """The decisions that led here, for :meth:`Game.state_from_history`.

        One entry per decision the caller made: a chance outcome or a single player's
        action (int), or a joint action at a simultaneous node (a tuple, one entry per
        player, ``-1`` for players without a choice). Steps a game plays by itself (forced
        moves) are not listed. A SAMPLED_STOCHASTIC game lists what determines its draws
        (combat: the episode seed first, and every :meth:`reseed`, as int entries).
        """
        raise NotImplementedError(f"{self.game.NAME} does not record its history")

    def _replay(self, entry) -> None:
        """Apply one entry of :meth:`history` (for :meth:`Game.state_from_history`)."""
        if isinstance(entry, (tuple, list)):
            self.apply_actions(entry)
        else:
            self.apply_action(entry)

    def reseed(self, seed: int) -> None:
        """Give this state fresh randomness (SAMPLED_STOCHASTIC games).

        ``clone()`` copies a sampled-chance state's generator, so a search that rolls out
        the same clone twice replays the same draws (useful for exact replays). A search
        that needs independent rollouts reseeds each copy:
        ``copy = state.clone(); copy.reseed(int(rng.integers(2**63)))``. Games whose chance
        is explicit (in the history) have nothing to reseed and ignore it.
        """
        if self.game.info.chance_mode is ChanceMode.SAMPLED_STOCHASTIC:
            raise NotImplementedError(f"{self.game.NAME} must implement reseed()")

    def __reduce__(self):
        # Small pickles: the game travels as its spec and the state as its history.
        # Combat overrides this: it sends its arrays, cheaper than replaying a long episode.
        return (_state_from_history, (self.game, tuple(self.history()), None))

    def action_to_string(self, player: int, action: int) -> str:
        return self.game.action_to_string(player, action)

    def _describe(self, player: int, actions: Sequence[int]) -> str:
        return ", ".join(f"{a} ({self.action_to_string(player, a)})" for a in actions)

    # ---- outcome ------------------------------------------------------------------
    @abstractmethod
    def returns(self) -> np.ndarray:
        """Total reward per player so far (the final utilities once terminal)."""

    def finished_players(self) -> list[int]:
        """Players whose part ended before the game did (e.g. dead fighters), in order.

        They have no legal actions; the PettingZoo adapters terminate their agents early
        (MAgent-style). Most games never finish a player early and inherit this.
        """
        return []

    def rewards(self) -> np.ndarray:
        """Reward per player earned by the last transition.

        Games with only terminal utilities inherit this; games with intermediate
        rewards override it (and keep ``returns()`` equal to the sum of rewards).
        """
        if self.is_terminal():
            return self.returns()
        return np.zeros(self.game.info.num_players)

    @abstractmethod
    def clone(self) -> State:
        """An independent copy, cheap enough to call at every node of a search."""

    # ---- what players know ------------------------------------------------------
    @abstractmethod
    def information_state_key(self, player: int) -> tuple:
        """Equal for two states iff ``player`` cannot distinguish them (perfect recall).

        One ``(public_observation, private_observation)`` entry per step (see
        :meth:`public_state_key`); ``private_observation`` is what only ``player`` (or not
        everyone) perceived at that step, ``None`` when nothing.
        """

    @abstractmethod
    def information_state_tensor(self, player: int) -> np.ndarray:
        """A float32 array of ``info.information_state_tensor_shape`` (perfect recall)."""

    def observation_tensor(self, player: int) -> np.ndarray:
        """A float32 array of ``info.observation_tensor_shape`` (what is perceived now)."""
        return self.information_state_tensor(player)

    @abstractmethod
    def public_state_key(self) -> tuple:
        """The public observations so far, one entry per step: the same for every player.

        ``information_state_key(p)`` has one entry per step too, ``(public, private)``,
        with ``public`` equal to this key's entry; so every information set lies in one
        public state, and a history is consistent with a public state (or an information
        set) iff its key starts with it.
        """

    def public_observation_tensor(self) -> np.ndarray:
        """A float32 array of ``info.public_observation_tensor_shape``: the public state.

        Equal for any two states with equal ``public_state_key()`` (belief encoders).
        """
        raise NotImplementedError(f"{self.game.NAME} has no public observation tensor")

    def state_tensor(self) -> np.ndarray:
        """The full-information state as one float32 array of a fixed shape: what a
        centralised critic sees (PettingZoo's ``env.state()``).

        By default every player's information-state tensor, flattened and concatenated in
        player order: everything any player knows. A game whose state holds more than the
        players know together (GDL's true fluents) overrides it, with values in the same
        bounds as its tensors (``Game.TENSOR_BOUNDS``, default 0..1).
        """
        return np.concatenate(
            [
                np.asarray(self.information_state_tensor(p), dtype=np.float32).reshape(-1)
                for p in range(self.game.info.num_players)
            ]
        )

    # ---- optional fast paths ------------------------------------------------------
    # The PettingZoo adapters call these where a game overrides them (they compare the
    # state's class attribute with State's) and otherwise ask player by player; the
    # defaults below give the same values, so an override changes speed, never results.

    def information_state_tensors(self) -> np.ndarray:
        """Every player's information-state tensor as one ``(players, ...)`` float32 array
        (the parallel env slices its rows). An override may share the array with the rows
        it hands out: callers never modify it."""
        return np.stack(
            [self.information_state_tensor(p) for p in range(self.game.info.num_players)]
        )

    def observation_tensors(self) -> np.ndarray:
        """Every player's observation tensor as one ``(players, ...)`` float32 array."""
        return np.stack([self.observation_tensor(p) for p in range(self.game.info.num_players)])

    def legal_actions_masks(self) -> np.ndarray:
        """At a simultaneous node, every player's legal-action mask as one
        ``(players, num_distinct_actions)`` array (int8 or bool; the parallel env copies
        it unless it is read-only C-ordered int8)."""
        return np.stack([self.legal_actions_mask(p) for p in range(self.game.info.num_players)])

    def read_only_legal_actions_masks(self) -> np.ndarray:
        """At a simultaneous node, every player's mask as one read-only C-ordered int8
        ``(players, num_distinct_actions)`` array the state keeps: the parallel env hands
        out its rows as they are (combat's fighters)."""
        masks = np.ascontiguousarray(self.legal_actions_masks(), dtype=np.int8)
        masks.flags.writeable = False
        return masks

    def read_only_legal_actions_mask(self, player: int) -> np.ndarray:
        """At a simultaneous node, ``player``'s mask as a new read-only int8 array (the AEC
        env hands it out instead of looking the legal set up in its cache)."""
        mask = self.legal_actions_mask(player)
        mask.flags.writeable = False
        return mask

    def seat_view(self, player: int) -> SeatView:
        """``player``'s :class:`SeatView` here: its key, its legal actions, the game."""
        if self.is_simultaneous_node():
            legal = self.legal_actions(player)
        else:
            legal = self.legal_actions() if self.current_player() == player else []
        return SeatView(player, self.game, self.information_state_key(player), tuple(legal))

    def __str__(self) -> str:
        return repr(self)


@dataclass(frozen=True)
class SeatView:
    """What one seat may know at a decision: enough to search, nothing hidden.

    ``information_state_key`` is the seat's perfect-recall key (one ``(public, private)``
    entry per step); ``game`` is the model (rules, no state). Search agents receive it
    from the PettingZoo adapters (``env.unwrapped.seat_view(agent)``) and sample what
    they cannot see with :mod:`hiddenenvs.beliefs`.
    """

    player: int
    game: Game
    information_state_key: tuple
    legal_actions: tuple[int, ...]

    @property
    def public_state_key(self) -> tuple:
        return tuple(public for public, _ in self.information_state_key)


@dataclass
class Trajectory:
    """A played episode through the game model, for tests and benchmarks."""

    actions: list = field(default_factory=list)
    returns: np.ndarray | None = None


def sample_chance_outcome(state: State, rng: np.random.Generator) -> int:
    """One chance outcome, drawn by its probability (one uniform draw, no allocation).

    The probabilities sum to 1 (the model's contract); rounding short of 1 goes to the
    last outcome. ``rng`` is anything with ``random()`` (numpy's or Python's generator).
    """
    outcomes = state.chance_outcomes()
    threshold = rng.random()
    for action, probability in outcomes:
        threshold -= probability
        if threshold < 0:
            return action
    return outcomes[-1][0]


def random_playout(state: State, rng: np.random.Generator) -> Trajectory:
    """Play uniformly random legal moves (and chance by its probabilities) to the end."""
    trajectory = Trajectory()
    num_players = state.game.info.num_players
    while not state.is_terminal():
        player = state.current_player()
        action: int | list[int]
        if player == CHANCE:
            action = sample_chance_outcome(state, rng)
            state.apply_action(action)
        elif player == SIMULTANEOUS:
            joint = []
            for p in range(num_players):
                legal = state.legal_actions(p)
                joint.append(legal[rng.integers(len(legal))] if legal else -1)
            state.apply_actions(joint)
            action = joint
        else:
            legal = state.legal_actions()
            action = legal[rng.integers(len(legal))]
            state.apply_action(action)
        trajectory.actions.append(action)
    trajectory.returns = state.returns()
    return trajectory
