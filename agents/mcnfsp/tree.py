"""The search's nodes: one per information set of the searcher (PUCT's statistics)."""

from __future__ import annotations

import math

import numpy as np

from hiddenenvs.game import SIMULTANEOUS, State


class Node:
    """One of the searcher's information sets: priors, visit counts, summed returns."""

    __slots__ = ("actions", "prior", "visits", "return_sum", "value")

    def __init__(self, actions: np.ndarray, prior: np.ndarray, value: float):
        self.actions = actions
        self.prior = prior
        self.visits = np.zeros(len(actions))
        self.return_sum = np.zeros(len(actions))
        self.value = value  # f_BR's value here, in [-1, 1]: Q of unvisited actions

    def select(self, c_puct: float, scale: float) -> int:
        """The PUCT choice (an index into ``actions``; ties to the first)."""
        q = np.where(
            self.visits > 0, self.return_sum / np.maximum(self.visits, 1) / scale, self.value
        )
        exploration = c_puct * self.prior * math.sqrt(self.visits.sum()) / (1.0 + self.visits)
        return int(np.argmax(q + exploration))


def searcher_decides(state: State, player: int) -> bool:
    """Whether ``player`` has a real choice (two or more legal actions) at ``state``."""
    current = state.current_player()
    if current == player or current == SIMULTANEOUS:
        return len(state.legal_actions(player)) > 1
    return False
