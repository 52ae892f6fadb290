"""Leduc hold'em (Southey et al. 2005): two-round poker with one public card.

| Import             | ``hiddenenvs.make("leduc_holdem", max_raises=2)``  |
|--------------------|-----------------------------------------------------|
| Agents             | ``player_0``, ``player_1``                          |
| Actions            | ``Discrete(3)``: 0 = fold, 1 = call (check), 2 = raise |
| Observation        | ``Box(0, 1, (8 + 6 * (2 + max_raises),), float32)`` information state (32 by default), or ``(10,)`` with ``observation_type="observation"`` |
| Parallel API       | no (turn-based)                                     |
| Game value         | about -0.0856 for player 0 at equilibrium (standard rules) |

Rules: six cards, two each of J < Q < K. Each player antes 1 chip and is dealt one private
card. A betting round follows, then one public card is revealed and a second betting
round follows. Player 0 acts first in each round. A raise costs 2 chips in the first
round and 4 in the second, at most ``max_raises`` raises per round; a player may fold
only when facing a raise. A round ends when a player calls a raise, or after two checks.
At the showdown a player whose card pairs the public card wins; otherwise the higher
card wins; equal ranks split the pot. Returns are chips won.

Suits never matter, so chance deals ranks with their exact probabilities (a rank with
two cards left is twice as likely as one with one card left). This is lossless: the
game value, equilibria and exploitability equal those of the six-card deal (tested
against OpenSpiel's ``leduc_poker``), and information sets are exactly what a player
can tell apart.

Parameters:

| name | default | meaning |
|------|---------|---------|
| ``max_raises`` | 2 | raises allowed per betting round (1 to 4) |

Information-state tensor (``8 + 6 * (2 + max_raises)`` values):

| index | meaning |
|-------|---------|
| 0-1   | one-hot: which player I am |
| 2-4   | one-hot: my card (J, Q, K) |
| 5-7   | one-hot: the public card, once revealed |
| 8-    | round 1 then round 2: for each of the ``2 + max_raises`` betting turns of a round, one-hot fold/call/raise |

Observation tensor (10 values): player one-hot (2), my card (3), public card (3), chips
each player has put in the pot divided by the largest possible contribution (2).
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

FOLD, CALL, RAISE = 0, 1, 2
ACTION_NAMES = ("fold", "call", "raise")
RANK_NAMES = "JQK"
_NUM_RANKS = 3
_CARDS_PER_RANK = 2
_RAISE_SIZES = (2, 4)
_ANTE = 1


class LeducHoldemGame(Game):
    NAME = "leduc_holdem"
    PARAMETERS = (
        Parameter("max_raises", int, 2, "raises allowed per betting round", minimum=1, maximum=4),
    )

    def __init__(self, **params):
        super().__init__(**params)
        self.max_raises = self.params["max_raises"]
        self.turns_per_round = 2 + self.max_raises
        self.max_contribution = _ANTE + sum(self.max_raises * size for size in _RAISE_SIZES)
        self.info = GameInfo(
            short_name=self.NAME,
            long_name="Leduc hold'em",
            num_players=2,
            num_distinct_actions=3,
            max_chance_outcomes=_NUM_RANKS,
            dynamics=Dynamics.SEQUENTIAL,
            chance_mode=ChanceMode.EXPLICIT_STOCHASTIC,
            information=Information.IMPERFECT,
            utility=Utility.ZERO_SUM,
            min_utility=-float(self.max_contribution),
            max_utility=float(self.max_contribution),
            max_game_length=3 + 2 * self.turns_per_round,
            information_state_tensor_shape=(8 + 2 * 3 * self.turns_per_round,),
            observation_tensor_shape=(10,),
        )

    def new_initial_state(self, seed=None):
        return LeducHoldemState(self)

    def action_to_string(self, player, action):
        if player == CHANCE:
            return f"deal {RANK_NAMES[action]}"
        return ACTION_NAMES[action]


class LeducHoldemState(State):
    __slots__ = (
        "private_cards",
        "public_card",
        "round_actions",
        "contributions",
        "raises_this_round",
        "folded_player",
        "_betting_round_over",
        "_current_player",
    )

    def __init__(self, game):
        self.game = game
        self.private_cards: list[int] = []
        self.public_card = -1
        self.round_actions: list[list[int]] = [[]]
        self.contributions = [_ANTE, _ANTE]
        self.raises_this_round = 0
        self.folded_player = -1
        self._betting_round_over = False
        self._current_player = CHANCE

    def clone(self):
        other = LeducHoldemState.__new__(LeducHoldemState)
        other.game = self.game
        other.private_cards = self.private_cards[:]
        other.public_card = self.public_card
        other.round_actions = [actions[:] for actions in self.round_actions]
        other.contributions = self.contributions[:]
        other.raises_this_round = self.raises_this_round
        other.folded_player = self.folded_player
        other._betting_round_over = self._betting_round_over
        other._current_player = self._current_player
        return other

    def current_player(self):
        return self._current_player

    def _next_player(self) -> int:
        if self.folded_player >= 0:
            return TERMINAL
        if len(self.private_cards) < 2:
            return CHANCE
        if self._betting_round_over:
            return TERMINAL if self.public_card >= 0 else CHANCE
        return len(self.round_actions[-1]) % 2

    def _remaining(self, rank: int) -> int:
        used = self.private_cards.count(rank) + (self.public_card == rank)
        return _CARDS_PER_RANK - used

    def chance_outcomes(self):
        if self.current_player() != CHANCE:
            return super().chance_outcomes()
        counts = [self._remaining(rank) for rank in range(_NUM_RANKS)]
        total = sum(counts)
        return [(rank, count / total) for rank, count in enumerate(counts) if count]

    def legal_actions(self, player=None):
        current = self.current_player()
        if player is not None and player != current:
            return []
        if current == CHANCE:
            return [rank for rank in range(_NUM_RANKS) if self._remaining(rank)]
        if current == TERMINAL:
            return []
        facing_raise = self.contributions[current] < self.contributions[1 - current]
        actions = [FOLD, CALL] if facing_raise else [CALL]
        if self.raises_this_round < self.game.max_raises:
            actions.append(RAISE)
        return actions

    def _apply_action(self, action):
        self._apply_move(action)
        self._current_player = self._next_player()

    def _apply_move(self, action: int) -> None:
        if len(self.private_cards) < 2:
            self.private_cards.append(action)
            return
        if self._betting_round_over:  # deal the public card, start round 2
            self.public_card = action
            self.round_actions.append([])
            self.raises_this_round = 0
            self._betting_round_over = False
            return
        actions = self.round_actions[-1]
        player = len(actions) % 2
        actions.append(action)
        if action == FOLD:
            self.folded_player = player
        elif action == CALL:
            self.contributions[player] = self.contributions[1 - player]
            self._betting_round_over = len(actions) >= 2
        else:
            raise_size = _RAISE_SIZES[len(self.round_actions) - 1]
            self.contributions[player] = self.contributions[1 - player] + raise_size
            self.raises_this_round += 1

    def returns(self):
        result = np.zeros(2)
        if self.folded_player >= 0:
            loser = self.folded_player
        elif self.is_terminal():
            strengths = [self._hand_strength(card) for card in self.private_cards]
            if strengths[0] == strengths[1]:
                return result
            loser = int(strengths[0] > strengths[1])
        else:
            return result
        result[loser] = -self.contributions[loser]
        result[1 - loser] = self.contributions[loser]
        return result

    def _hand_strength(self, card: int) -> int:
        return card + (_NUM_RANKS if card == self.public_card else 0)

    def information_state_key(self, player):
        card = RANK_NAMES[self.private_cards[player]] if len(self.private_cards) > player else None
        public = RANK_NAMES[self.public_card] if self.public_card >= 0 else None
        betting = tuple("".join("fcr"[a] for a in actions) for actions in self.round_actions)
        return (card, public, betting)

    def information_state_tensor(self, player):
        tensor = np.zeros(self.game.info.information_state_tensor_shape, dtype=np.float32)
        tensor[player] = 1
        if len(self.private_cards) > player:
            tensor[2 + self.private_cards[player]] = 1
        if self.public_card >= 0:
            tensor[5 + self.public_card] = 1
        offset = 8
        for actions in self.round_actions:
            for turn, action in enumerate(actions):
                tensor[offset + 3 * turn + action] = 1
            offset += 3 * self.game.turns_per_round
        return tensor

    def observation_tensor(self, player):
        tensor = np.zeros(10, dtype=np.float32)
        tensor[player] = 1
        if len(self.private_cards) > player:
            tensor[2 + self.private_cards[player]] = 1
        if self.public_card >= 0:
            tensor[5 + self.public_card] = 1
        tensor[8] = self.contributions[0] / self.game.max_contribution
        tensor[9] = self.contributions[1] / self.game.max_contribution
        return tensor

    def public_state_key(self):
        betting = tuple("".join("fcr"[a] for a in actions) for actions in self.round_actions)
        return (len(self.private_cards), self.public_card, betting)

    def __str__(self):
        cards = " ".join(RANK_NAMES[c] for c in self.private_cards) or "-"
        public = RANK_NAMES[self.public_card] if self.public_card >= 0 else "-"
        betting = " / ".join(
            " ".join(ACTION_NAMES[a] for a in actions) or "-" for actions in self.round_actions
        )
        text = (
            f"private: {cards} | public: {public} | betting: {betting} | "
            f"pot: {self.contributions[0]}+{self.contributions[1]}"
        )
        if self.is_terminal():
            text += f" | returns: {self.returns().tolist()}"
        return text
