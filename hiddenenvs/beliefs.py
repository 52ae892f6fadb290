"""Beliefs: histories consistent with what one player knows, and how likely each is.

A searcher that plays seat ``p`` knows its information-state key ``I`` (its public and
private observations, step by step) and the game's rules, never the true history. OOS
restores a lost target, IS-MCTS determinises and ReBeL builds subgames from samples of

    P(h | I) ∝ π_c(h) · Π_{q ≠ p} π_q(h)      for every history h with key_p(h) = I,

where ``π_c`` is the product of the chance probabilities along ``h`` and ``π_q`` the
product of ``q``'s action probabilities under the given policy (uniform over legal
actions when no policy is given). ``p``'s own reach is the same for every such ``h``
(perfect recall), so it cancels.

Two ways to get there:

- :func:`consistent_histories` enumerates the posterior exactly. Keys grow by at least
  one entry per step and a consistent history's key is a prefix of ``I`` at every step
  (``hiddenenvs.game``), so the walk only descends into children whose new key entries
  agree with ``I``: it visits the consistent histories and their one-step neighbours.
  A node budget turns a game too large for this into a clear error.
- ``game.sample_consistent_history`` is a game's own sampler. The default draws from
  the exact posterior above; the poker games, Liar's Dice, Goofspiel and GDL-II sheets
  override it with samplers that never enumerate the tree. Every sampler returns a
  history in the form of ``State.history()``.

A policy is ``None`` (uniform), a callable ``fn(state, player)`` returning probabilities
(an array over ``num_distinct_actions`` or an ``{action: p}`` dict), or a mapping
``{(player, information_state_key): probabilities}`` (a ``TabularPolicy`` is callable).

>>> import numpy as np, hiddenenvs
>>> game = hiddenenvs.load_game("kuhn_poker")
>>> state = game.state_from_history([0, 2, 1])     # J to player 0, K to player 1; 0 bets
>>> key = state.information_state_key(1)           # player 1 sees its King and the bet
>>> [(history[0], round(p, 3)) for history, p in consistent_histories(game, 1, key)]
[(0, 0.5), (1, 0.5)]
>>> sample_state(game, 1, key, np.random.default_rng(0)).information_state_key(1) == key
True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

import numpy as np

from hiddenenvs.core import CHANCE, SIMULTANEOUS, ChanceMode, GameSpec, draw_index


# What this module asks of the game model, declared here (structurally) rather than
# imported: the model (hiddenenvs.game) calls this module for its default sampler, so the
# dependency runs one way, game -> beliefs. Every hiddenenvs.game.State and Game fits.
class StateLike(Protocol):
    def current_player(self) -> int: ...
    def legal_actions(self, player: int | None = None) -> list[int]: ...
    def chance_outcomes(self) -> list[tuple[int, float]]: ...
    def apply_action(self, action: int) -> None: ...
    def apply_actions(self, joint: Sequence[int]) -> None: ...
    def clone(self) -> StateLike: ...
    def information_state_key(self, player: int) -> tuple: ...


StateT = TypeVar("StateT", bound=StateLike, covariant=True)


class GameLike(Protocol[StateT]):
    # Read-only (properties): a Game's attributes of these names fit.
    @property
    def info(self) -> Any: ...  # GameInfo: num_players, chance_mode, ...
    @property
    def spec(self) -> GameSpec: ...
    def new_initial_state(self, seed: int | None = None) -> StateT: ...
    def state_from_history(self, history: Sequence, seed: int | None = None) -> StateT: ...
    def sample_consistent_history(
        self, player: int, information_state_key: tuple, rng: np.random.Generator, policy=None
    ) -> tuple: ...
    def sample_consistent_histories(
        self,
        player: int,
        information_state_key: tuple,
        rng: np.random.Generator,
        count: int,
        policy=None,
    ) -> list[tuple]: ...


DEFAULT_MAX_NODES = 2_000_000

Policy = Any  # None | callable(state, player) | mapping {(player, key): probabilities}


def action_probability_function(
    policy: Policy,
) -> Callable[[StateLike, int], Mapping[int, float] | None]:
    """``policy`` as ``fn(state, player) -> {action: probability}`` (None: uniform)."""
    if policy is None:
        return lambda state, player: None
    if isinstance(policy, Mapping):

        def from_mapping(state: StateLike, player: int):
            key = (player, state.information_state_key(player))
            if key not in policy:
                raise KeyError(f"the policy has no entry for {key!r}")
            return _as_dict(policy[key])

        return from_mapping
    if callable(policy):
        return lambda state, player: _as_dict(policy(state, player))
    raise TypeError(
        f"a policy is None, a callable fn(state, player) or a mapping "
        f"{{(player, information_state_key): probabilities}}; got a {type(policy).__name__}"
    )


def _as_dict(probabilities: Any) -> Mapping[int, float]:
    if isinstance(probabilities, Mapping):
        return probabilities
    array = np.asarray(probabilities, dtype=np.float64)
    return {int(a): float(array[a]) for a in np.flatnonzero(array)}


def _action_weight(
    probabilities: Mapping[int, float] | None, action: int, legal: Sequence[int]
) -> float:
    if probabilities is None:
        return 1.0 / len(legal)
    return float(probabilities.get(action, 0.0))


def consistent_histories(
    game: GameLike,
    player: int,
    information_state_key: Sequence,
    policy: Policy = None,
    max_nodes: int = DEFAULT_MAX_NODES,
) -> list[tuple[tuple, float]]:
    """Every history consistent with ``player``'s key, with its posterior probability.

    Returns ``[(history, probability), ...]`` (histories as ``State.history()`` gives
    them), probabilities summing to 1. Raises ``ValueError`` when no history is
    consistent (or all have zero reach under ``policy``), and when the walk would visit
    more than ``max_nodes`` states.
    """
    if game.info.chance_mode is ChanceMode.SAMPLED_STOCHASTIC:
        raise ValueError(
            f"{game.spec}: chance is sampled inside the state, so consistent histories "
            f"cannot be enumerated"
        )
    target = tuple(information_state_key)
    probabilities_of = action_probability_function(policy)
    num_players = game.info.num_players
    found: list[tuple[tuple, float]] = []
    visited = 0
    # (state, its history, reach of chance and the others, length of its key so far)
    stack: list[tuple[StateLike, tuple, float, int]] = [(game.new_initial_state(), (), 1.0, 0)]
    while stack:
        state, history, weight, known = stack.pop()
        visited += 1
        if visited > max_nodes:
            raise ValueError(
                f"{game.spec}: more than {max_nodes} states visited enumerating the histories "
                f"consistent with player {player}'s key ({len(target)} steps); use the "
                f"game's own sampler (game.sample_consistent_history) or raise max_nodes"
            )
        key = state.information_state_key(player)
        if key[known:] != target[known : len(key)]:
            continue
        if len(key) >= len(target):
            if len(key) == len(target):
                found.append((history, weight))
            continue
        # Zero-weight children are walked too, so "no consistent history" and "zero reach
        # under this policy" stay two different errors.
        for action, child_weight in _children(state, player, probabilities_of, num_players):
            child = state.clone()
            if isinstance(action, tuple):
                child.apply_actions(action)
            else:
                child.apply_action(action)
            stack.append((child, history + (action,), weight * child_weight, len(key)))
    if not found:
        raise ValueError(
            f"{game.spec}: no history is consistent with player {player}'s information-state "
            f"key {target!r}"
        )
    total = sum(w for _, w in found)
    if total <= 0.0:
        raise ValueError(
            f"{game.spec}: the policy gives zero reach to all {len(found)} histories "
            f"consistent with player {player}'s key"
        )
    found.sort(key=lambda item: tuple((isinstance(e, tuple), e) for e in item[0]))
    return [(history, w / total) for history, w in found if w > 0.0]


def _children(state: StateLike, player: int, probabilities_of, num_players: int):
    """``(action or joint action, weight)`` for every child, weighted by chance and the others."""
    current = state.current_player()
    if current == CHANCE:
        return state.chance_outcomes()
    if current == SIMULTANEOUS:
        joints: list[tuple[tuple, float]] = [((), 1.0)]
        for q in range(num_players):
            legal = state.legal_actions(q)
            if len(legal) <= 1:  # forced or absent: not a choice, weight 1
                options = [(-1, 1.0)]  # as history() records it
            elif q == player:
                options = [(a, 1.0) for a in legal]
            else:
                probabilities = probabilities_of(state, q)
                options = [(a, _action_weight(probabilities, a, legal)) for a in legal]
            joints = [(joint + (a,), w * wa) for joint, w in joints for a, wa in options]
        return joints
    legal = state.legal_actions()
    if current == player:
        return [(a, 1.0) for a in legal]
    probabilities = probabilities_of(state, current)
    return [(a, _action_weight(probabilities, a, legal)) for a in legal]


def history_weight(game: GameLike, player: int, history: Sequence, policy: Policy = None) -> float:
    """``π_c(h) · Π_{q≠p} π_q(h)``: the unnormalised posterior weight of ``history``."""
    probabilities_of = action_probability_function(policy)
    num_players = game.info.num_players
    state = game.new_initial_state()
    weight = 1.0
    for entry in history:
        current = state.current_player()
        if current == CHANCE:
            weight *= dict(state.chance_outcomes()).get(entry, 0.0)
        elif current == SIMULTANEOUS:
            for q in range(num_players):
                legal = state.legal_actions(q)
                if q != player and len(legal) > 1:
                    weight *= _action_weight(probabilities_of(state, q), entry[q], legal)
        elif current != player:
            weight *= _action_weight(probabilities_of(state, current), entry, state.legal_actions())
        if weight == 0.0:
            return 0.0
        if current == SIMULTANEOUS:
            state.apply_actions(entry)
        else:
            state.apply_action(entry)
    return weight


def draw_weighted(
    game: GameLike,
    player: int,
    candidates: Sequence[tuple],
    rng: np.random.Generator,
    policy: Policy = None,
) -> tuple:
    """One of ``candidates`` (consistent histories), drawn by :func:`history_weight`.

    The building block of the games' own samplers: they list the hidden completions of
    a key (an opponent's card, a die roll) and let this weigh them.
    """
    weights = np.array([history_weight(game, player, h, policy) for h in candidates])
    total = weights.sum()
    if not len(candidates) or total <= 0.0:
        raise ValueError(
            f"{game.spec}: no history consistent with player {player}'s key has positive "
            f"reach ({len(candidates)} candidates)"
        )
    return tuple(candidates[draw_index(weights, rng)])


def sample_from_posterior(
    game: GameLike,
    player: int,
    information_state_key: Sequence,
    rng: np.random.Generator,
    policy: Policy = None,
) -> tuple:
    """One history drawn from the exact posterior (see :func:`consistent_histories`)."""
    histories = consistent_histories(game, player, information_state_key, policy)
    probabilities = np.fromiter((p for _, p in histories), dtype=np.float64, count=len(histories))
    return histories[draw_index(probabilities, rng)][0]


def sample_history(
    game: GameLike,
    player: int,
    information_state_key: Sequence,
    rng: np.random.Generator,
    policy: Policy = None,
) -> tuple:
    """A history consistent with the key, drawn by the game's own sampler."""
    return game.sample_consistent_history(player, tuple(information_state_key), rng, policy)


def sample_histories(
    game: GameLike,
    player: int,
    information_state_key: Sequence,
    rng: np.random.Generator,
    count: int,
    policy: Policy = None,
) -> list[tuple]:
    """``count`` histories consistent with the key, as ``count`` calls of
    :func:`sample_history` would draw them (the game's sampler sets up once)."""
    return game.sample_consistent_histories(
        player, tuple(information_state_key), rng, count, policy
    )


def sample_state(
    game: GameLike[StateT],
    player: int,
    information_state_key: Sequence,
    rng: np.random.Generator,
    policy: Policy = None,
) -> StateT:
    """A state consistent with the key, drawn by the game's own sampler."""
    return game.state_from_history(sample_history(game, player, information_state_key, rng, policy))
