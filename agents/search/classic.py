"""What the classic game-playing searchers share (:mod:`agents.search.minimax`,
:mod:`agents.search.montecarlo`): goals on GDL's 0..100 scale, deadlines, random playouts,
the search-agent base, and spec options.

Goals. GDL scores every role 0..100, and the lecture's alpha-beta window (0, 100), the
UCT constant and the single-player "stop at 100" rule are stated on that scale
(Kissmann, *Spielen allgemeiner Spiele*). :func:`goal_values`
maps any game's returns there linearly from ``[min_utility, max_utility]``; for a GDL
sheet that is the raw goal, whether or not the game was built with ``scale_returns``.

Deadlines. A search runs for a number of iterations (a depth for the minimax family), a
number of seconds, or both, and never past ``agent.deadline`` (a ``time.monotonic()``
instant a GGP player sets from the play clock, :mod:`hiddenenvs.ggp.player`, :mod:`agents.ggp_player`).

Playouts. :func:`playout_goals` plays uniformly random joint moves (chance by its
probabilities) to the end. On a GDL state it runs the propnet's compiled depth charge;
any other game plays through the game model.

The searched state. Search agents get a :class:`~hiddenenvs.game.SeatView` (the seat's
information-state key and legal actions, never the state). A GDL-I key names the whole
history, so :func:`hiddenenvs.beliefs.sample_history` returns exactly the true one; on an
imperfect-information game the state is a *determinisation*, drawn from the belief
posterior (uniform opponents) and searched as if it were the truth, which is how these
classic players play GDL-II at all (IS-MCTS and OOS are the principled searchers there).
"""

from __future__ import annotations

import math
import time
from abc import abstractmethod

import numpy as np

from agents.base import SearchAgent
from agents.search import parse_budget
from hiddenenvs.beliefs import sample_history
from hiddenenvs.envs.gdl.game import GdlState
from hiddenenvs.game import CHANCE, SIMULTANEOUS, Game, SeatView, State, sample_chance_outcome

GOAL_MAX = 100.0


def goal_values(state: State) -> np.ndarray:
    """Every player's return on GDL's 0..100 scale (see the module docstring)."""
    info = state.game.info
    span = (info.max_utility - info.min_utility) or 1.0
    return GOAL_MAX * (state.returns() - info.min_utility) / span


def goal_sum_bound(game: Game) -> float:
    """Upper bound of the players' goal sum: the proven constant sum, else 100 per player."""
    info = game.info
    if info.utility_sum is None:
        return GOAL_MAX * info.num_players
    span = (info.max_utility - info.min_utility) or 1.0
    return GOAL_MAX * (info.utility_sum - info.num_players * info.min_utility) / span


class TimeUp(Exception):
    """A search passed its deadline (caught where the last complete answer is kept)."""


def deadline_of(seconds: float | None, limit: float | None) -> float:
    """The ``time.monotonic()`` instant to stop at: ``seconds`` from now, capped by ``limit``."""
    end = time.monotonic() + seconds if seconds is not None else math.inf
    return min(end, limit) if limit is not None else end


def forced_joint(state: State) -> list[int]:
    """A joint action with every player's first legal action (``-1`` for none)."""
    joint = []
    for player in range(state.game.info.num_players):
        legal = state.legal_actions(player)
        joint.append(legal[0] if legal else -1)
    return joint


def apply_choices(state: State, choices: dict[int, int]) -> tuple | int:
    """Play ``choices`` (mover -> action) at a decision node, in place; the history entry.

    At a simultaneous node the players without a choice play their forced action; the
    entry is the joint tuple ``history()`` records (``-1`` for them).
    """
    if state.current_player() == SIMULTANEOUS:
        joint = forced_joint(state)
        entry = [-1] * len(joint)
        for player, action in choices.items():
            joint[player] = entry[player] = action
        state.apply_actions(joint)
        return tuple(entry)
    (action,) = choices.values()
    state.apply_action(action)
    return action


def playout_goals(state: State, rng: np.random.Generator) -> np.ndarray:
    """Goals (0..100) at the end of a uniformly random playout from ``state`` (not changed)."""
    if state.is_terminal():
        return goal_values(state)
    if isinstance(state, GdlState) and state.pending_random is None:
        return _gdl_depth_charge(state, int(rng.integers(1, 2**63)))
    state = state.clone()
    while not state.is_terminal():
        if state.current_player() == CHANCE:
            state.apply_action(sample_chance_outcome(state, rng))
        else:
            apply_choices(state, {p: _uniform(state.legal_actions(p), rng) for p in state.movers()})
    return goal_values(state)


def _uniform(actions: list[int], rng: np.random.Generator) -> int:
    return actions[int(rng.integers(len(actions)))]


def _gdl_depth_charge(state: GdlState, seed: int) -> np.ndarray:
    """A GDL playout in compiled code, scored as ``GdlState.returns`` (a cut game: goal or 0)."""
    game = state.game
    net = game.propnet
    final, _, status = net.depth_charge(state.fluents, seed, game.max_steps - state.steps)
    info = net.evaluate(final)
    if status == 2:  # a role without a legal move: the model's clear error
        net.check_playable(final, info)
    values = []
    for role in game.player_roles:
        goals = info.goals[role]
        if len(goals) != 1 and status == 0:
            raise ValueError(
                f"{game.spec}: a terminal state reached by a playout gives role "
                f"{net.roles[role]} goal values {list(goals)} (needs exactly one)"
            )
        values.append(float(goals[0]) if len(goals) == 1 else 0.0)
    return np.asarray(values)


def one_hot(num_actions: int, action: int) -> np.ndarray:
    policy = np.zeros(num_actions)
    policy[action] = 1.0
    return policy


class ClassicSearchAgent(SearchAgent):
    """A :class:`SearchAgent` that searches a state rebuilt from its seat view.

    Subclasses implement :meth:`choose`; the search policy is one-hot on its answer. A
    seat with one legal action plays it without searching. ``deadline`` (monotonic time,
    None: none) caps every search; a GGP player sets it per move.
    """

    def __init__(self, game: Game, player: int, seed: int | None = None):
        super().__init__(game.info.num_distinct_actions, seed)
        self.game = game
        self.player = player
        self.deadline: float | None = None

    def search_policy(self, view: SeatView) -> np.ndarray:
        legal = list(view.legal_actions)
        if not legal:
            raise ValueError(f"{view.game.spec}: player {view.player} has no legal action here")
        if len(legal) == 1:
            return one_hot(self.num_actions, legal[0])
        history = sample_history(view.game, view.player, view.information_state_key, self.rng)
        state = view.game.state_from_history(history)
        action = self.choose(state, view.player)
        if action not in legal:
            raise RuntimeError(f"{type(self).__name__} chose {action}, not legal here ({legal})")
        return one_hot(self.num_actions, action)

    @abstractmethod
    def choose(self, state: State, player: int) -> int:
        """The action ``player`` plays in ``state``."""


def parse_spec(
    prefix: str, argument: str, options: dict[str, type]
) -> tuple[int | None, float | None, dict]:
    """``"6"``, ``"1s"``, ``"1s,c=40"`` or ``""`` -> (iterations, seconds, options).

    An empty budget means none: the search runs to its own end or the GGP deadline.
    """
    spec = f"{prefix}:{argument}" if argument else prefix
    head, *rest = argument.split(",")
    values: dict[str, object] = {}
    for item in rest:
        key, separator, value = item.partition("=")
        if not separator or key not in options:
            known = ", ".join(f"{k}=<{t.__name__}>" for k, t in options.items()) or "none"
            raise ValueError(f"agent spec {spec!r}: unknown option {item!r}; options: {known}")
        try:
            values[key] = options[key](value)
        except ValueError:
            raise ValueError(
                f"agent spec {spec!r}: option {key} must be {options[key].__name__}, got {value!r}"
            ) from None
    iterations, seconds = parse_budget(spec, head) if head else (None, None)
    return iterations, seconds, values
