"""Baseline agents.

===========================  ==============================================================
Agent                        What it plays
===========================  ==============================================================
:class:`RandomAgent`         uniformly random legal actions
:class:`TabularPolicyAgent`  a table of probabilities per information set (e.g. CFR+'s
                             average policy), looked up by the seat's information-state key
===========================  ==============================================================

Agent specs (``random``, ``cfr+:200``, a run directory, ...) resolve to these and to the
other agents in :mod:`agents.specs`.
"""

from __future__ import annotations

import ast
import math

import numpy as np

import hiddenenvs
from agents.base import Agent, uniform_over_legal
from hiddenenvs.analysis import TabularPolicy
from hiddenenvs.game import Game, GameSpec


class RandomAgent(Agent):
    """Uniformly random over the legal actions."""

    def policy_probabilities_batch(self, observations, action_masks, views=None):
        return uniform_over_legal(action_masks)


class TabularPolicyAgent(Agent):
    """Plays a table ``{(player, information_state_key): probabilities}``.

    It looks its seat's information set up by key from the seat's view, so it works on
    any game (a table filled by CFR over the whole tree, or by sampling methods over the
    information sets they visited) and never depends on how a tensor encodes the key.
    An information set missing from the table is an error naming it. ``player`` limits
    the table to one seat (None: every seat).

    Files (``save``) hold data only: the game's spec, the keys as Python literals (read
    back with ``ast.literal_eval``) and the probabilities as one array.
    """

    USES_SEAT_VIEW = True

    def __init__(self, game: Game, table: dict, player: int | None = None, seed: int | None = None):
        super().__init__(game.info.num_distinct_actions, seed)
        self.game = game
        self.player = player
        self.table = {
            key: np.asarray(row, dtype=np.float64)
            for key, row in table.items()
            if player is None or key[0] == player
        }

    @classmethod
    def from_policy(
        cls, policy: TabularPolicy, player: int | None = None, seed: int | None = None
    ) -> TabularPolicyAgent:
        """The agent playing a :class:`TabularPolicy` (e.g. CFR+'s average policy)."""
        tree = policy.tree
        num_actions = tree.game.info.num_distinct_actions
        table = {}
        for infoset, key in enumerate(tree.infoset_keys):
            if player is None or key[0] == player:
                row = np.zeros(num_actions)
                for action, probability in policy.infoset_probabilities(infoset).items():
                    row[action] = probability
                table[key] = row
        return cls(tree.game, table, player, seed)

    def policy_probabilities_batch(self, observations, action_masks, views=None):
        if views is None:
            raise ValueError(
                "TabularPolicyAgent looks information sets up by key: call it with the seats' "
                "views (the loop, evaluate.py and the SB3 wrapper do; or use act_in_env)"
            )
        rows = []
        for view, mask in zip(views, np.asarray(action_masks)):
            row = self.table.get((view.player, view.information_state_key))
            if row is None and np.count_nonzero(mask) == 1:
                # A forced move (a GDL noop while another player moves): the enumerated tree
                # has no information set there, since there is nothing to choose.
                row = (np.asarray(mask) > 0).astype(np.float64)
            if row is None:
                raise KeyError(
                    f"{self.game.spec}: the table has no information set of player "
                    f"{view.player} with key {view.information_state_key!r}"
                )
            rows.append(row)
        return np.stack(rows)

    def tabular_policy(self, tree) -> TabularPolicy:
        """The table as a :class:`TabularPolicy` on ``tree`` (every information set needed)."""
        return TabularPolicy.from_mapping(tree, self.table)

    def state_dict(self):
        keys = list(self.table)
        encoded = [repr(key) for key in keys]
        for key in keys:
            if not _is_literal(key):
                raise ValueError(
                    f"{self.game.spec}: information-state key {key!r} does not survive a round "
                    f"trip through a Python literal; keys must be built from str, int, float, "
                    f"bool, None, bytes and tuples"
                )
        return {
            "game": self.game.spec.to_dict(),
            "player": self.player,
            "keys": encoded,
            "probabilities": np.stack([self.table[key] for key in keys])
            if keys
            else np.zeros((0, self.num_actions)),
        }

    @classmethod
    def from_state_dict(cls, state):
        game = hiddenenvs.load_game(GameSpec.from_dict(state["game"]))
        table = {
            _literal(text): row
            for text, row in zip(state["keys"], np.asarray(state["probabilities"]))
        }
        return cls(game, table, state["player"])


_LITERAL_TYPES = (str, int, bool, type(None), bytes)


def _is_literal(value) -> bool:
    """Whether ``repr(value)`` reads back as an equal value through ``ast.literal_eval``:
    built from str, int, bool, None, bytes, finite floats and tuples (checked by type, which
    is much cheaper than parsing every key of a large table back)."""
    if isinstance(value, tuple):
        return all(_is_literal(item) for item in value)
    if isinstance(value, float):
        return math.isfinite(value)
    return type(value) in _LITERAL_TYPES


def _literal(text: str):
    """A key written by ``repr``, read back without evaluating code."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError) as error:
        raise ValueError(f"not a Python literal information-state key: {text[:80]!r}") from error
