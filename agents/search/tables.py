"""Regret and average-strategy tables keyed by information state, shared by MCCFR and OOS.

One :class:`InfosetEntry` per ``(player, information_state_key)``: the legal actions,
the cumulative regrets and the cumulative average-strategy weights (arrays over the
legal actions). Regret matching (Hart & Mas-Colell 2000) gives the current strategy
``sigma(I, a) = R+(I, a) / sum_b R+(I, b)``, uniform when no regret is positive; the
average strategy normalises the cumulative weights.

Tables grow as a sampling algorithm visits information sets; :meth:`RegretTables.average_table`
turns them into ``{(player, key): probabilities}`` for :class:`TablePolicyAgent` or
:class:`hiddenenvs.analysis.TabularPolicy` (information sets never visited play uniform).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.baselines import TabularPolicyAgent
from hiddenenvs.analysis import TabularPolicy
from hiddenenvs.game import SIMULTANEOUS, State


class InfosetEntry:
    """Legal actions, cumulative regrets and cumulative average weights of one information set."""

    __slots__ = ("legal", "regret", "average")

    def __init__(self, legal: list[int]):
        self.legal = legal
        self.regret = np.zeros(len(legal))
        self.average = np.zeros(len(legal))

    def current_strategy(self) -> np.ndarray:
        positive = np.maximum(self.regret, 0.0)
        total = positive.sum()
        return positive / total if total > 0.0 else np.full(len(self.legal), 1.0 / len(self.legal))

    def average_strategy(self) -> np.ndarray:
        total = self.average.sum()
        return (
            self.average / total if total > 0.0 else np.full(len(self.legal), 1.0 / len(self.legal))
        )


class RegretTables:
    """``{(player, information_state_key): InfosetEntry}``, grown on demand."""

    def __init__(self, num_actions: int):
        self.num_actions = num_actions
        self.entries: dict[tuple, InfosetEntry] = {}

    def __len__(self) -> int:
        return len(self.entries)

    def entry(self, state: State, player: int) -> InfosetEntry:
        """The entry of ``player``'s information set at ``state`` (created if new)."""
        key = (player, state.information_state_key(player))
        found = self.entries.get(key)
        if found is None:
            found = self.entries[key] = InfosetEntry(legal_actions_of(state, player))
        return found

    def _rows(self, strategy: str) -> dict[tuple, np.ndarray]:
        table = {}
        for key, entry in self.entries.items():
            row = np.zeros(self.num_actions)
            row[entry.legal] = (
                entry.average_strategy() if strategy == "average" else entry.current_strategy()
            )
            table[key] = row
        return table

    def average_table(self) -> dict[tuple, np.ndarray]:
        """``{(player, key): probabilities over num_distinct_actions}`` of the average strategy."""
        return self._rows("average")

    def current_table(self) -> dict[tuple, np.ndarray]:
        return self._rows("current")

    def tabular_policy(self, tree, strategy: str = "average") -> TabularPolicy:
        """The strategy on an enumerated tree; information sets never visited play uniform."""
        table = self._rows(strategy)
        rows = []
        for infoset, key in enumerate(tree.infoset_keys):
            row = table.get(key)
            if row is None:
                row = np.zeros(self.num_actions)
                legal = tree.infoset_legal_actions(infoset)
                row[legal] = 1.0 / len(legal)
            rows.append(row)
        return TabularPolicy.from_mapping(tree, dict(zip(tree.infoset_keys, rows)))

    def state_dict(self) -> dict[tuple, Any]:
        return {
            key: (entry.legal, entry.regret.copy(), entry.average.copy())
            for key, entry in self.entries.items()
        }

    def load_state_dict(self, state: dict[tuple, Any]) -> None:
        self.entries = {}
        for key, (legal, regret, average) in state.items():
            entry = self.entries[key] = InfosetEntry(list(legal))
            entry.regret[:] = regret
            entry.average[:] = average


class TablePolicyAgent(TabularPolicyAgent):
    """A :class:`TabularPolicyAgent` for tables filled by sampling: an information set the
    sampling never visited plays uniformly over its legal actions (instead of an error)."""

    def policy_probabilities_batch(self, observations, action_masks, views=None):
        if views is None:
            return super().policy_probabilities_batch(observations, action_masks, views)
        rows = []
        for view, mask in zip(views, np.asarray(action_masks, dtype=np.float64)):
            row = self.table.get((view.player, view.information_state_key))
            rows.append(row if row is not None else mask / mask.sum())
        return np.stack(rows)


def legal_actions_of(state: State, player: int) -> list[int]:
    """``player``'s legal actions at ``state``, a decision or a simultaneous node."""
    return list(
        state.legal_actions(player)
        if state.current_player() == SIMULTANEOUS
        else state.legal_actions()
    )


def movers_and_joint(state: State) -> tuple[list[int], list[int] | None]:
    """The players who choose at ``state`` and, at a simultaneous node, a joint action
    holding every forced entry (movers' entries to be filled in); None at a decision node."""
    player = state.current_player()
    if player != SIMULTANEOUS:
        return [player], None
    joint = []
    for p in range(state.game.info.num_players):
        legal = state.legal_actions(p)
        joint.append(legal[0] if legal else -1)
    return state.movers(), joint


def apply_choices(
    state: State, joint: list[int] | None, movers: list[int], actions: list[int]
) -> None:
    """Play the movers' ``actions`` at ``state`` (in place), one action or a joint action."""
    if joint is None:
        state.apply_action(actions[0])
        return
    joint = list(joint)
    for mover, action in zip(movers, actions):
        joint[mover] = action
    state.apply_actions(joint)


def chance_distribution(state: State) -> tuple[list[int], np.ndarray]:
    outcomes = state.chance_outcomes()
    return [a for a, _ in outcomes], np.array([p for _, p in outcomes])
