"""Liar's Dice (Lisy, Lanctot & Bowling 2015; OpenSpiel's ``liars_dice``): bid or call "liar".

| Import             | ``hiddenenvs.make("liars_dice", num_dice=1, faces=6)``                    |
|--------------------|----------------------------------------------------------------------------|
| Agents             | ``player_0``, ``player_1``                                                 |
| Actions            | ``Discrete(2 * D * F + 1)``: bids, then "liar" last (13 with the defaults) |
| Observation        | ``Box(0, 1, (2 + D * F + 2 * D * F + 1,), float32)`` information state (21 with the defaults), or ``(2 + D * F + 2 * D * F + 3,)`` with ``observation_type="observation"`` |
| Parallel API       | no (turn-based)                                                            |

Rules: each player rolls ``D`` dice with faces 1..F (F = 6 in the ExIt-OOS references)
and sees only their own. The top face F is wild: it counts as every face. Player 0
bids first; the players alternate, and each may either make a bid strictly higher than
the last one or (once a bid has been made) call "liar" on it. A bid ``(quantity, face)``
claims that at least ``quantity`` of all ``2D`` dice show ``face`` or the wild face. On
"liar" the dice are revealed: if the bid holds, the caller loses; otherwise the bidder
loses. Returns are +1 for the winner and -1 for the loser.

Bid order (OpenSpiel's "reset-face" rule): ``(q, f)`` is higher than ``(q', f')`` when
``q > q'``, or ``q == q'`` and ``f > f'``. Bids are numbered in that order: action
``(q - 1) * F + (f - 1)`` bids ``(q, f)`` for ``q`` in 1..2D and ``f`` in 1..F, so a bid
is higher exactly when its action number is; action ``2 * D * F`` calls "liar". Chance
rolls the dice one at a time, player 0's first (outcome ``f - 1`` rolls face ``f``,
probability ``1 / F``). Action numbers, chance outcomes and returns coincide with
OpenSpiel's ``liars_dice(numdice=D, dice_sides=F)``.

Parameters:

| name | default | meaning |
|------|---------|---------|
| ``num_dice`` | 1 | D: dice per player (1 to 5) |
| ``faces`` | 6 | F: faces per die (2 to 6); the top face is wild. Fewer faces give small test variants |

Information state key of player ``p``: ``(own dice sorted ascending, bid actions so far)``:
the order in which one's own dice were rolled carries no information, so the
information sets are the ones of OpenSpiel (which also sorts the dice).

Information-state tensor (``2 + D * F + 2 * D * F + 1`` values):

| index | meaning |
|-------|---------|
| 0-1 | one-hot: which player I am |
| 2 .. 2+D*F | my dice sorted ascending, one-hot face per die |
| then 2DF + 1 | 1 for every bid made so far, and for "liar" once called (bids only rise, so the set gives the order, and players alternate from player 0) |

Observation tensor (``2 + D * F + 2 * D * F + 3`` values): which player I am (2), my
dice as above (D * F), the current (last) bid one-hot (2DF), who made it (2: me,
the opponent), and 1 once "liar" has been called.
"""

from __future__ import annotations

import numpy as np

from hiddenenvs.game import (
    CHANCE,
    TERMINAL,
    ChanceMode,
    Dynamics,
    Game,
    GameInfo,
    Information,
    Parameter,
    State,
    Utility,
)


class LiarsDiceGame(Game):
    NAME = "liars_dice"
    PARAMETERS = (
        Parameter("num_dice", int, 1, "dice per player", minimum=1, maximum=5),
        Parameter("faces", int, 6, "faces per die; the top face is wild", minimum=2, maximum=6),
    )

    def __init__(self, **params):
        super().__init__(**params)
        self.num_dice = self.params["num_dice"]
        self.faces = self.params["faces"]
        self.total_dice = 2 * self.num_dice
        self.num_bids = self.total_dice * self.faces
        self.liar = self.num_bids
        dice_size = self.num_dice * self.faces
        self.info = GameInfo(
            short_name=self.NAME,
            long_name=f"Liar's Dice({self.num_dice}, {self.faces} faces)",
            num_players=2,
            num_distinct_actions=self.num_bids + 1,
            max_chance_outcomes=self.faces,
            dynamics=Dynamics.SEQUENTIAL,
            chance_mode=ChanceMode.EXPLICIT_STOCHASTIC,
            information=Information.IMPERFECT,
            utility=Utility.ZERO_SUM,
            min_utility=-1.0,
            max_utility=1.0,
            max_game_length=self.total_dice + self.num_bids + 1,
            information_state_tensor_shape=(2 + dice_size + self.num_bids + 1,),
            observation_tensor_shape=(2 + dice_size + self.num_bids + 3,),
        )

    def new_initial_state(self, seed=None):
        return LiarsDiceState(self)

    def bid(self, action: int) -> tuple[int, int]:
        """``(quantity, face)`` of a bid action."""
        return action // self.faces + 1, action % self.faces + 1

    def action_to_string(self, player, action):
        if player == CHANCE:
            return f"roll {action + 1}"
        if action == self.liar:
            return "liar"
        quantity, face = self.bid(action)
        return f"{quantity}-{face}"


class LiarsDiceState(State):
    __slots__ = ("dice", "actions")

    def __init__(self, game):
        self.game = game
        self.dice: tuple[list[int], list[int]] = ([], [])  # faces 1..F, in roll order
        self.actions: list[int] = []  # bids, then "liar"

    def clone(self):
        other = LiarsDiceState.__new__(LiarsDiceState)
        other.game = self.game
        other.dice = (self.dice[0][:], self.dice[1][:])
        other.actions = self.actions[:]
        return other

    def current_player(self):
        game = self.game
        if len(self.dice[1]) < game.num_dice:
            return CHANCE
        if self.actions and self.actions[-1] == game.liar:
            return TERMINAL
        return len(self.actions) % 2

    def legal_actions(self, player=None):
        current = self.current_player()
        if player is not None and player != current:
            return []
        game = self.game
        if current == CHANCE:
            return list(range(game.faces))
        if current == TERMINAL:
            return []
        if not self.actions:
            return list(range(game.num_bids))
        return list(range(self.actions[-1] + 1, game.num_bids + 1))

    def chance_outcomes(self):
        if self.current_player() != CHANCE:
            return super().chance_outcomes()
        faces = self.game.faces
        return [(face, 1.0 / faces) for face in range(faces)]

    def _apply_action(self, action):
        if len(self.dice[1]) < self.game.num_dice:
            roller = 0 if len(self.dice[0]) < self.game.num_dice else 1
            self.dice[roller].append(action + 1)
        else:
            self.actions.append(action)

    def returns(self):
        if not self.is_terminal():
            return np.zeros(2)
        game = self.game
        quantity, face = game.bid(self.actions[-2])
        matching = sum(die == face or die == game.faces for hand in self.dice for die in hand)
        caller = (len(self.actions) - 1) % 2
        loser = caller if matching >= quantity else 1 - caller
        result = np.ones(2)
        result[loser] = -1.0
        return result

    def information_state_key(self, player):
        return (tuple(sorted(self.dice[player])), tuple(self.actions))

    def _dice_features(self, tensor: np.ndarray, player: int) -> None:
        faces = self.game.faces
        for index, face in enumerate(sorted(self.dice[player])):
            tensor[2 + index * faces + face - 1] = 1

    def information_state_tensor(self, player):
        game = self.game
        tensor = np.zeros(game.info.information_state_tensor_shape, dtype=np.float32)
        tensor[player] = 1
        self._dice_features(tensor, player)
        base = 2 + game.num_dice * game.faces
        tensor[[base + a for a in self.actions]] = 1
        return tensor

    def observation_tensor(self, player):
        game = self.game
        tensor = np.zeros(game.info.observation_tensor_shape, dtype=np.float32)
        tensor[player] = 1
        self._dice_features(tensor, player)
        base = 2 + game.num_dice * game.faces
        bids = self.actions[:-1] if self.is_terminal() else self.actions
        if bids:
            tensor[base + bids[-1]] = 1
            bidder = (len(bids) - 1) % 2
            tensor[base + game.num_bids + (0 if bidder == player else 1)] = 1
        if self.is_terminal():
            tensor[base + game.num_bids + 2] = 1
        return tensor

    def public_state_key(self):
        rolled = len(self.dice[0]) + len(self.dice[1])
        return (rolled, tuple(self.actions))

    def __str__(self):
        game = self.game
        dice = " | ".join(
            f"player_{p} dice: {' '.join(map(str, self.dice[p])) or '-'}" for p in range(2)
        )
        history = " ".join(game.action_to_string(0, a) for a in self.actions) or "-"
        text = f"{dice} | bids: {history}"
        if self.is_terminal():
            text += f" | returns: {self.returns().tolist()}"
        return text
