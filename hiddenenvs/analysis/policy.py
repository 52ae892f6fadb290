"""Tabular policies over the information sets of an enumerated game tree.

A :class:`TabularPolicy` stores one probability per infoset-action slot of a
:class:`~hiddenenvs.analysis.tree.GameTree`. Any policy a user holds can be turned into
one with :func:`as_tabular_policy`:

- a ``TabularPolicy`` (of this tree, or of another tree of the same game: matched by key);
- a mapping ``{(player, information_state_key): probabilities}``;
- a callable ``fn(state, player)`` evaluated once per information set at a representative
  state;
- :meth:`TabularPolicy.from_tensor_function` for neural policies: one batched call per
  player on the information-state tensors and legal-action masks.

Probabilities may be a length-``num_distinct_actions`` array or an ``{action: p}`` dict;
they must put (almost) all mass on legal actions and are renormalised over them.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any

import numpy as np

from hiddenenvs.analysis.tree import GameTree
from hiddenenvs.game import State

_MASS_TOLERANCE = 1e-6


class TabularPolicy:
    """Action probabilities for every information set of ``tree``."""

    def __init__(self, tree: GameTree, slot_probabilities: np.ndarray):
        slot_probabilities = np.asarray(slot_probabilities, dtype=np.float64)
        if slot_probabilities.shape != (tree.num_slots,):
            raise ValueError(
                f"a tabular policy of {tree.game.NAME} needs {tree.num_slots} slot "
                f"probabilities, got shape {slot_probabilities.shape}"
            )
        self.tree = tree
        self.slot_probabilities = slot_probabilities

    @classmethod
    def uniform(cls, tree: GameTree) -> TabularPolicy:
        counts = np.diff(tree.infoset_slot_start)
        return cls(tree, 1.0 / counts[tree.slot_infoset])

    @classmethod
    def from_callable(cls, tree: GameTree, fn: Callable[[State, int], Any]) -> TabularPolicy:
        states = tree.representative_states()
        rows = [fn(state, int(player)) for state, player in zip(states, tree.infoset_player)]
        return cls(tree, _rows_to_slots(tree, rows))

    @classmethod
    def from_mapping(
        cls, tree: GameTree, mapping: Mapping[tuple[int, Hashable], Any]
    ) -> TabularPolicy:
        missing = [key for key in tree.infoset_keys if key not in mapping]
        if missing:
            raise ValueError(
                f"the policy has no entry for {len(missing)} of {tree.num_infosets} information "
                f"sets of {tree.game.NAME}, e.g. {missing[0]!r}"
            )
        return cls(tree, _rows_to_slots(tree, [mapping[key] for key in tree.infoset_keys]))

    @classmethod
    def from_tensor_function(
        cls,
        tree: GameTree,
        fn: Callable[[int, np.ndarray, np.ndarray], np.ndarray],
    ) -> TabularPolicy:
        """``fn(player, information_state_tensors (B, ...), legal_masks (B, A)) -> probs (B, A)``."""
        rows: list[Any] = [None] * tree.num_infosets
        for player in range(tree.num_players):
            infosets, tensors, masks = information_state_batch(tree, player)
            if not len(infosets):
                continue
            probabilities = np.asarray(fn(player, tensors, masks), dtype=np.float64)
            for row, infoset in enumerate(infosets):
                rows[infoset] = probabilities[row]
        return cls(tree, _rows_to_slots(tree, rows))

    # ---- lookups --------------------------------------------------------------------
    def infoset_probabilities(self, infoset: int) -> dict[int, float]:
        start, stop = (
            self.tree.infoset_slot_start[infoset],
            self.tree.infoset_slot_start[infoset + 1],
        )
        return dict(
            zip(
                self.tree.slot_action[start:stop].tolist(),
                self.slot_probabilities[start:stop].tolist(),
            )
        )

    def probabilities(self, player: int, information_state_key: Hashable) -> dict[int, float]:
        key = (player, information_state_key)
        if key not in self.tree.infoset_index:
            raise KeyError(f"{self.tree.game.NAME}: no information set {key!r} in this policy")
        return self.infoset_probabilities(self.tree.infoset_index[key])

    def action_probabilities(self, state: State, player: int | None = None) -> dict[int, float]:
        """``{action: probability}`` for ``player`` (default: the player to move) at ``state``."""
        if player is None:
            player = state.current_player()
        return self.probabilities(player, state.information_state_key(player))

    def to_dict(self) -> dict[tuple[int, Hashable], dict[int, float]]:
        return {key: self.infoset_probabilities(i) for i, key in enumerate(self.tree.infoset_keys)}

    def __call__(self, state: State, player: int) -> dict[int, float]:
        return self.action_probabilities(state, player)


def _rows_to_slots(tree: GameTree, rows: list[Any]) -> np.ndarray:
    num_actions = tree.game.info.num_distinct_actions
    slots = np.zeros(tree.num_slots)
    for infoset, row in enumerate(rows):
        legal = tree.infoset_legal_actions(infoset)
        if isinstance(row, Mapping):
            dense = np.zeros(num_actions)
            for action, probability in row.items():
                dense[int(action)] = probability
        else:
            dense = np.asarray(row, dtype=np.float64)
            if dense.shape != (num_actions,):
                raise ValueError(
                    f"policy at {tree.infoset_keys[infoset]!r}: expected {num_actions} "
                    f"probabilities, got shape {dense.shape}"
                )
        legal_mass = dense[legal].sum()
        if abs(dense.sum() - legal_mass) > _MASS_TOLERANCE or legal_mass <= 0:
            raise ValueError(
                f"policy at {tree.infoset_keys[infoset]!r} puts probability on illegal actions "
                f"or none on legal ones (legal: {legal.tolist()}, got {dense.tolist()})"
            )
        start = tree.infoset_slot_start[infoset]
        slots[start : start + len(legal)] = dense[legal] / legal_mass
    return slots


def information_state_batch(
    tree: GameTree, player: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``player``'s information sets, their information-state tensors ``(B, ...)`` and legal
    masks ``(B, A)``, in one batch (what a network is asked about each set)."""
    states = tree.representative_states()
    infosets = np.flatnonzero(tree.infoset_player == player)
    masks = np.zeros((len(infosets), tree.game.info.num_distinct_actions), dtype=np.int8)
    if not len(infosets):
        return infosets, np.zeros((0,)), masks
    tensors = np.stack([states[i].information_state_tensor(player) for i in infosets])
    for row, infoset in enumerate(infosets):
        masks[row, tree.infoset_legal_actions(infoset)] = 1
    return infosets, tensors, masks


def as_tabular_policy(tree: GameTree, policy: Any) -> TabularPolicy:
    """Any supported policy form as a TabularPolicy on ``tree`` (see the module docstring)."""
    if isinstance(policy, TabularPolicy):
        if policy.tree is tree:
            return policy
        return TabularPolicy.from_mapping(tree, policy.to_dict())
    if isinstance(policy, Mapping):
        return TabularPolicy.from_mapping(tree, policy)
    if callable(policy):
        return TabularPolicy.from_callable(tree, policy)
    raise TypeError(
        f"cannot use a {type(policy).__name__} as a policy; give a TabularPolicy, a mapping "
        f"{{(player, information_state_key): probabilities}} or a callable fn(state, player)"
    )
