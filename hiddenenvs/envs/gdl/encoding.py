"""What one seat of a GDL game has perceived, as a fixed-size tensor for neural nets.

At every GDL step a seat perceives its own move and its percepts: for GDL-II the ``sees``
facts the rules give it for the step's joint move, for GDL-I the whole joint move. Its
information-state key holds that sequence exactly (perfect recall; CFR, OOS and ReBeL
search on the key). This module encodes the same sequence for a network, in a size that
depends on the sheet's vocabulary and not on the length of the game:

| Part       | Size     | Values                                                             |
|------------|----------|--------------------------------------------------------------------|
| progress   | 1        | GDL steps played / ``max_steps``                                   |
| chance     | 1        | 1 when random has moved in the current step (its key entry is      |
|            |          | there, its percepts are not yet), else 0                           |
| window     | W (A+P)  | the last W steps, most recent first: own move one-hot (A), then    |
|            |          | percepts multi-hot (P); zero for steps not yet played              |
| earlier    | A + P    | only when W is below the horizon: 1 for every own move played and  |
|            |          | every percept seen in a step older than the window                 |

``A`` is the most moves of a role, ``P`` the percept features: for GDL-II the most percepts
of a role (indices into ``propnet.percept_names[role]``); for GDL-I every role's move, one
block per role, so the joint move is one-hot per role. ``W`` is the game's ``history_window``
capped at the horizon (the longest game when the reachable-state search proves it, else
``max_steps``).

Why this layout: the steps are aligned by recency, so what decides a move (Meier's own roll
one step back and the claim just heard) reaches the same inputs at every turn, where a
layout by absolute step spreads it over every step a turn can fall on (Meier: 63 slots of
88 features, 5,546 floats, for at most 2 nonzero features of interest). Steps older than
the window keep what was perceived, not when: the set of facts seen. For GDL-I that set is
which role made which move, e.g. the marks on a tic-tac-toe board; in Meier the claims,
which rise strictly, so their set gives their order.

Exactness: the tensor is a function of the seat's key (a seat that cannot tell two
histories apart gets one tensor). When the window covers the horizon it is also one to one
on the keys at which a step's entries are complete or random has just moved: every step
is in its slot, and the chance flag tells the two key lengths of a step apart. With a
shorter window, histories that differ only in the order or the repetition of facts older
than the window share a tensor (perfect recall stays in the key).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from hiddenenvs._encoding import float32_ones_at

HEADER = 2  # progress, chance


class PerceptionEncoding:
    """The information-state tensor layout of one GDL game (module docstring).

    ``role_offsets`` is ``None`` for GDL-II (a step's percepts are percept indices) and,
    for GDL-I, the cumulative move counts of the roles (a step's percepts are the joint move).
    """

    def __init__(
        self,
        num_actions: int,
        percept_features: int,
        role_offsets: np.ndarray | None,
        horizon: int,
        max_steps: int,
        window: int,
    ):
        if window < 1:
            raise ValueError(f"gdl: history_window must be at least 1 step, got {window}")
        self.num_actions = num_actions
        self.percept_features = percept_features
        self.role_offsets = None if role_offsets is None else tuple(int(o) for o in role_offsets)
        self.max_steps = max_steps
        self.window = min(window, horizon)
        self.summarises = self.window < horizon
        self.step_width = num_actions + percept_features
        self.earlier_offset = HEADER + self.window * self.step_width
        self.size = self.earlier_offset + (self.step_width if self.summarises else 0)
        self.shape = (self.size,)
        # A step's features depend on its own move and percepts only; games repeat them.
        self.step_features = functools.lru_cache(maxsize=1 << 14)(self._step_features)

    def _step_features(self, move: int, seen: tuple) -> tuple[int, ...]:
        """Offsets within a step block of the own move and the percepts ``seen`` (percept
        indices for GDL-II, the joint move for GDL-I)."""
        if self.role_offsets is None:
            percepts = tuple(self.num_actions + k for k in seen)
        else:
            percepts = tuple(
                self.num_actions + offset + role_move
                for offset, role_move in zip(self.role_offsets, seen)
            )
        return (move, *percepts)

    def tensor(
        self, steps_played: int, random_moved: bool, own_steps: Sequence[tuple[int, tuple]]
    ) -> np.ndarray:
        """The tensor of a seat whose ``(own move, percepts)`` per step are ``own_steps``."""
        ones: list[int] = []
        for back, (move, seen) in enumerate(reversed(own_steps[-self.window :])):
            offset = HEADER + back * self.step_width
            ones.extend(offset + feature for feature in self.step_features(move, seen))
        for move, seen in own_steps[: -self.window]:  # empty unless the window summarises
            ones.extend(self.earlier_offset + feature for feature in self.step_features(move, seen))
        tensor = float32_ones_at(self.shape, ones)
        tensor[0] = min(1.0, steps_played / self.max_steps)
        tensor[1] = float(random_moved)
        return tensor

    def last_step_into(self, out: np.ndarray, offset: int, move: int, seen: tuple) -> None:
        """Write one step's block (own move one-hot, percepts multi-hot) at ``offset``."""
        out[[offset + feature for feature in self.step_features(move, seen)]] = 1.0

    def recent_steps(self, tensor: np.ndarray) -> list[tuple[int, list[int]]]:
        """The window's steps, oldest first, as ``(own move, percept features)``: the
        inverse of the window part, for players that read their history back (the scripted
        bots). Percept features are percept indices for GDL-II."""
        if tensor.shape != self.shape:
            raise ValueError(
                f"gdl: an information-state tensor of this game has shape {self.shape}, "
                f"got {tensor.shape}"
            )
        blocks = tensor[HEADER : self.earlier_offset].reshape(self.window, self.step_width)
        steps = []
        for block in blocks:
            moves = np.flatnonzero(block[: self.num_actions])
            if not len(moves):  # the game has not lasted this long
                break
            steps.append((int(moves[0]), np.flatnonzero(block[self.num_actions :]).tolist()))
        return steps[::-1]
