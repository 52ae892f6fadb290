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

Speed: the state's deal, moves, returns, keys and tensors are compiled
(``_leduc_holdem.pyx``), on the rules written once in C in
``hiddenenvs/envs/_leduc_holdem.pxd``, which the vector kernel uses too: this module holds
the game's description and beliefs, not a second copy of its betting or showdown.

Beliefs: ``game.sample_consistent_history`` draws the opponent's card from the ranks
left (after one's own card and the public card), weighted by chance and the opponent's
reach under the given policy (no tree walk).
"""

from __future__ import annotations

import numpy as np

from hiddenenvs.beliefs import draw_weighted
from hiddenenvs.envs import _leduc_holdem as _compiled
from hiddenenvs.envs._leduc_holdem import ACTION_NAMES, RANK_NAMES, LeducCore
from hiddenenvs.game import (
    CHANCE,
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
_NUM_RANKS = 3
_CARDS_PER_RANK = 2
# A public key entry back to the history entry it came from (a bet or the public card).
_HISTORY_ENTRY = {
    **{name: a for a, name in enumerate(ACTION_NAMES)},
    **{r: c for c, r in enumerate(RANK_NAMES)},
}


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
        self.max_contribution = LeducCore(self.max_raises).max_contribution
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
    """A Leduc hold'em history; its deal, moves, returns, keys and tensors are compiled
    (:class:`hiddenenvs.envs._leduc_holdem.LeducCore`, the rules of ``_leduc_holdem.pxd``
    that the vector kernel shares)."""

    __slots__ = ("core",)
    game: LeducHoldemGame

    def __init__(self, game):
        self.game = game
        self.core = LeducCore(game.max_raises)

    def clone(self):
        other = self.__class__.__new__(self.__class__)
        other.game = self.game
        other.core = self.core.clone()
        return other

    @property
    def private_cards(self) -> list[int]:
        """The private cards dealt (0 = J, 1 = Q, 2 = K), player 0's first."""
        return self.core.private_cards

    @property
    def public_card(self) -> int:
        """The public card, or -1 before it is dealt."""
        return self.core.public_card

    @property
    def round_actions(self) -> list[list[int]]:
        """The bets of each round begun (round 2's once the public card is out)."""
        return self.core.round_actions

    @property
    def contributions(self) -> list[int]:
        """The chips each player has put in the pot, the ante included."""
        return self.core.contributions

    @property
    def folded_player(self) -> int:
        """The player who folded, or -1."""
        return self.core.folded_player

    # The per-step methods are compiled (hiddenenvs/envs/_leduc_holdem.pyx), one C call each.
    current_player = _compiled.state_current_player
    legal_actions = _compiled.state_legal_actions
    _apply_action = _compiled.state_apply_action
    returns = _compiled.state_returns
    history = _compiled.state_history
    information_state_key = _compiled.state_information_state_key
    public_state_key = _compiled.state_public_state_key
    information_state_tensor = _compiled.state_information_state_tensor
    observation_tensor = _compiled.state_observation_tensor
    public_observation_tensor = _compiled.state_public_observation_tensor

    def chance_outcomes(self):
        if self.current_player() != CHANCE:
            return super().chance_outcomes()
        return _compiled.state_chance_outcomes(self)

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
