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

Public and private observations, one step per chance outcome or action: a private deal
is public as an event (``"deal"``) and private in its card (the receiver's private
observation is the rank, ``"J"``, ``"Q"`` or ``"K"``); the public card is public (its
rank); bets are public (``"fold"``, ``"call"``, ``"raise"``). So after a raise, a call
and the public Queen ``public_state_key()`` is ``("deal", "deal", "raise", "call", "Q")``
and ``information_state_key(0)`` is ``(("deal", "K"), ("deal", None), ("raise", None),
("call", None), ("Q", None))`` for player 0 holding the King. The keys grow by one entry
per step and are shared between clones (tuples), so reading one costs nothing.

Public observation tensor (``5 + 6 * (2 + max_raises)`` values, 29 by default): private
cards dealt (2), the public card one-hot (3), then the betting of round 1 and round 2 as
in the information-state tensor.

Beliefs: ``game.sample_consistent_history`` draws the opponent's card from the ranks
left (after one's own card and the public card), weighted by chance and the opponent's
reach under the given policy (no tree walk).
"""

from __future__ import annotations

import numpy as np

from hiddenenvs._encoding import float32_ones_at
from hiddenenvs.beliefs import draw_weighted
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
# A public key entry back to the history entry it came from (a bet or the public card).
_HISTORY_ENTRY = {
    **{name: a for a, name in enumerate(ACTION_NAMES)},
    **{r: c for c, r in enumerate(RANK_NAMES)},
}
# Key steps shared by every state (keys grow by tuple concatenation): a public step by
# its name; a private deal by receiver and rank, as (player 0's step, player 1's step).
_PUBLIC_STEPS = {name: ((name, None),) for name in (*ACTION_NAMES, *RANK_NAMES)}
_PUBLIC_DEAL_STEP = ("deal",)
_DEAL_STEPS = tuple(
    tuple(
        tuple((("deal", RANK_NAMES[rank] if player == receiver else None),) for player in range(2))
        for rank in range(_NUM_RANKS)
    )
    for receiver in range(2)
)


class LeducHoldemGame(Game):
    NAME = "leduc_holdem"
    RENDER_MODES = ("ansi", "human", "rgb_array")
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
            public_observation_tensor_shape=(5 + 2 * 3 * self.turns_per_round,),
        )

    def new_initial_state(self, seed=None):
        return LeducHoldemState(self)

    def sample_consistent_history(self, player, information_state_key, rng, policy=None):
        key = tuple(information_state_key)
        if len(key) < 2:  # the deal is not over: nothing hidden to weigh but the deal
            return super().sample_consistent_history(player, key, rng, policy)
        own = RANK_NAMES.index(key[player][1])
        public = [_HISTORY_ENTRY[entry] for entry, _ in key[2:]]
        public_card = next(
            (public[i] for i, (entry, _) in enumerate(key[2:]) if entry in RANK_NAMES), -1
        )
        candidates = []
        for card in range(_NUM_RANKS):
            if _CARDS_PER_RANK - (card == own) - (card == public_card) > 0:
                cards = (own, card) if player == 0 else (card, own)
                candidates.append((*cards, *public))
        return draw_weighted(self, player, candidates, rng, policy)

    def action_to_string(self, player, action):
        if player == CHANCE:
            return f"deal {RANK_NAMES[action]}"
        return ACTION_NAMES[action]

    def describe_step(self, player, public, private):
        """A key step in words: a card dealt (yours named), the public card, or a bet."""
        if public == "deal":
            return (
                "a card to your opponent, face down" if private is None else f"your card: {private}"
            )
        return f"public card: {public}" if public in RANK_NAMES else public


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
        "_public_key",
        "_information_state_keys",
    )
    game: LeducHoldemGame

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
        self._public_key: tuple = ()
        self._information_state_keys: tuple[tuple, tuple] = ((), ())

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
        other._public_key = self._public_key
        other._information_state_keys = self._information_state_keys
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

    def _remaining_counts(self) -> list[int]:
        """Cards left in the deck per rank (one pass: the env deals three times a game)."""
        private_cards, public_card = self.private_cards, self.public_card
        return [
            _CARDS_PER_RANK - private_cards.count(rank) - (public_card == rank)
            for rank in range(_NUM_RANKS)
        ]

    def chance_outcomes(self):
        if self.current_player() != CHANCE:
            return super().chance_outcomes()
        counts = self._remaining_counts()
        total = sum(counts)
        return [(rank, count / total) for rank, count in enumerate(counts) if count]

    def legal_actions(self, player=None):
        current = self.current_player()
        if player is not None and player != current:
            return []
        if current == CHANCE:
            return [rank for rank, count in enumerate(self._remaining_counts()) if count]
        if current == TERMINAL:
            return []
        facing_raise = self.contributions[current] < self.contributions[1 - current]
        actions = [FOLD, CALL] if facing_raise else [CALL]
        if self.raises_this_round < self.game.max_raises:
            actions.append(RAISE)
        return actions

    def _apply_action(self, action):
        keys = self._information_state_keys
        if len(self.private_cards) < 2:  # a private deal: the receiver alone sees the rank
            steps = _DEAL_STEPS[len(self.private_cards)][action]
            self._information_state_keys = (keys[0] + steps[0], keys[1] + steps[1])
            self._public_key += _PUBLIC_DEAL_STEP
        else:  # the public card or a bet: public
            names = RANK_NAMES if self._betting_round_over else ACTION_NAMES
            step = _PUBLIC_STEPS[names[action]]
            self._information_state_keys = (keys[0] + step, keys[1] + step)
            self._public_key += (names[action],)
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

    def history(self):
        public_card = (self.public_card,) if self.public_card >= 0 else ()
        second_round = self.round_actions[1] if len(self.round_actions) > 1 else ()
        return (*self.private_cards, *self.round_actions[0], *public_card, *second_round)

    def information_state_key(self, player):
        return self._information_state_keys[player]

    def public_state_key(self):
        return self._public_key

    def public_observation_tensor(self):
        ones = list(range(len(self.private_cards)))
        if self.public_card >= 0:
            ones.append(2 + self.public_card)
        self._add_betting_ones(ones, 5)
        return float32_ones_at(self.game.info.public_observation_tensor_shape, ones)

    def _add_betting_ones(self, ones: list[int], offset: int) -> None:
        """Append the places of the betting features (one-hot action per turn and round)."""
        for actions in self.round_actions:
            for turn, action in enumerate(actions):
                ones.append(offset + 3 * turn + action)
            offset += 3 * self.game.turns_per_round

    def information_state_tensor(self, player):
        # The ones' places gathered, then written in one compiled call (numpy's
        # per-element writes cost more than the rest of an env step).
        ones = [player]
        if len(self.private_cards) > player:
            ones.append(2 + self.private_cards[player])
        if self.public_card >= 0:
            ones.append(5 + self.public_card)
        self._add_betting_ones(ones, 8)
        return float32_ones_at(self.game.info.information_state_tensor_shape, ones)

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

    def render_rgb(self, player: int | None = None) -> np.ndarray:
        """The table as an ``(360, 440, 3)`` uint8 image: each seat's card, the public
        card once dealt, the chips each seat has put in, the betting of each round and
        whose turn it is; seen by ``player`` (None: the true state), the opponent's card
        is face down until a showdown."""
        from hiddenenvs.envs import _render

        game = self.game
        _render.check_viewer(game, player)
        seats = game.info.player_names
        over = self.is_terminal()
        showdown = over and self.folded_player < 0
        cards: list[str | None] = [
            RANK_NAMES[card] if player in (None, seat) or showdown else None
            for seat, card in enumerate(self.private_cards)
        ]
        cards += [""] * (2 - len(cards))
        rounds = [
            ", ".join(f"p{turn % 2} {ACTION_NAMES[a]}" for turn, a in enumerate(actions)) or "-"
            for actions in self.round_actions
        ]
        current = self.current_player()
        if over:
            status = "returns " + " / ".join(f"{r:+g}" for r in self.returns())
        elif current == CHANCE:
            status = "dealing"
        else:
            status = f"{seats[current]} to act: " + ", ".join(
                ACTION_NAMES[a] for a in self.legal_actions()
            )
        return _render.poker_table(
            _render.seat_title("Leduc hold'em", seats, player),
            seats,
            cards,
            self.contributions,
            "betting: " + " | ".join(rounds),
            status,
            public=RANK_NAMES[self.public_card] if self.public_card >= 0 else "",
        )

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
