"""Kuhn poker (Kuhn 1950): the smallest interesting poker.

| Import             | ``hiddenenvs.make("kuhn_poker")``                 |
|--------------------|----------------------------------------------------|
| Agents             | ``player_0``, ``player_1``                         |
| Actions            | ``Discrete(2)``: 0 = pass (check/fold), 1 = bet (bet/call) |
| Observation        | ``Box(0, 1, (11,), float32)`` information state, or (7,) with ``observation_type="observation"`` |
| Parallel API       | no (turn-based)                                    |
| Game value         | -1/18 for player 0 at equilibrium                  |

Rules: a deck of three cards J < Q < K. Each player antes 1 chip and is dealt one card
privately (chance deals player 0 first). Player 0 passes or bets 1; after a pass player 1
may pass (showdown for 1) or bet 1, after which player 0 folds (pass) or calls (bet);
after a bet the other player folds or calls. At a showdown the higher card wins the pot.
Returns are chips won: +-1 or +-2.

Parameters: none.

Information-state tensor (11 values):

| index | meaning |
|-------|---------|
| 0-1   | one-hot: which player I am |
| 2-4   | one-hot: my card (J, Q, K) |
| 5-10  | for each of the (at most 3) betting turns, one-hot pass/bet |

Observation tensor (7 values): player one-hot (2), my card one-hot (3), chips each
player has put in the pot divided by 2, the most one can put in (2).

Public and private observations: a deal is public as an event (``"deal"``) and private
in its card (the receiving player's private observation is the card's name); bets are
public. So ``public_state_key()`` is ``("deal", "deal", "pass", "bet", ...)`` and
``information_state_key(p)`` pairs each entry with ``p``'s card at its own deal, ``None``
elsewhere. Public observation tensor (8 values): cards dealt (2), then each betting
turn one-hot pass/bet (6).

Speed: the state's moves, returns and tensors are compiled (``_kuhn_poker.pyx``), on the
rules written once in C in ``hiddenenvs/envs/_kuhn_poker.pxd``, which the vector kernel
uses too; keys and ``history()`` are built in Python from the core's cards and bets.

Beliefs: ``game.sample_consistent_history`` draws the opponent's card from the cards
left, weighted by its reach under the given policy (no tree walk).
"""

from __future__ import annotations

import numpy as np

from hiddenenvs.beliefs import draw_weighted
from hiddenenvs.envs import _kuhn_poker as _compiled
from hiddenenvs.envs._kuhn_poker import KuhnCore
from hiddenenvs.game import (
    CHANCE,
    ChanceMode,
    Dynamics,
    Game,
    GameInfo,
    Information,
    State,
    Utility,
)

PASS, BET = 0, 1
CARD_NAMES = "JQK"
ACTION_NAMES = ("pass", "bet")
_NUM_CARDS = 3
_MAX_BETTING_TURNS = 3


class KuhnPokerGame(Game):
    NAME = "kuhn_poker"
    RENDER_MODES = ("ansi", "human", "rgb_array")

    def __init__(self, **params):
        super().__init__(**params)
        self.info = GameInfo(
            short_name=self.NAME,
            long_name="Kuhn poker",
            num_players=2,
            num_distinct_actions=2,
            max_chance_outcomes=_NUM_CARDS,
            dynamics=Dynamics.SEQUENTIAL,
            chance_mode=ChanceMode.EXPLICIT_STOCHASTIC,
            information=Information.IMPERFECT,
            utility=Utility.ZERO_SUM,
            min_utility=-2.0,
            max_utility=2.0,
            max_game_length=2 + _MAX_BETTING_TURNS,
            information_state_tensor_shape=(2 + _NUM_CARDS + 2 * _MAX_BETTING_TURNS,),
            observation_tensor_shape=(2 + _NUM_CARDS + 2,),
            public_observation_tensor_shape=(2 + 2 * _MAX_BETTING_TURNS,),
        )

    def new_initial_state(self, seed=None):
        return KuhnPokerState(self)

    def sample_consistent_history(self, player, information_state_key, rng, policy=None):
        key = tuple(information_state_key)
        if len(key) < 2:  # the deal is not over: nothing hidden to weigh but the deal
            return super().sample_consistent_history(player, key, rng, policy)
        own = CARD_NAMES.index(key[player][1])
        bets = [ACTION_NAMES.index(public) for public, _ in key[2:]]
        candidates = []
        for card in range(_NUM_CARDS):
            if card != own:
                cards = [own, card] if player == 0 else [card, own]
                candidates.append((*cards, *bets))
        return draw_weighted(self, player, candidates, rng, policy)

    def action_to_string(self, player, action):
        if player == CHANCE:
            return f"deal {CARD_NAMES[action]}"
        return ACTION_NAMES[action]

    def describe_step(self, player, public, private):
        """A key step in words: a card dealt (yours named), or a pass or bet."""
        if public == "deal":
            return (
                "a card to your opponent, face down" if private is None else f"your card: {private}"
            )
        return public


class KuhnPokerState(State):
    """A Kuhn poker history; its moves, returns and tensors are compiled
    (:class:`hiddenenvs.envs._kuhn_poker.KuhnCore`, the rules of ``_kuhn_poker.pxd`` that
    the vector kernel shares)."""

    __slots__ = ("game", "core")

    def __init__(self, game):
        self.game = game
        self.core = KuhnCore()

    def clone(self):
        other = KuhnPokerState.__new__(KuhnPokerState)
        other.game = self.game
        other.core = self.core.clone()
        return other

    @property
    def cards(self) -> list[int]:
        """The cards dealt (0 = J, 1 = Q, 2 = K), player 0's first."""
        return self.core.cards

    @property
    def bets(self) -> list[int]:
        """The betting actions (0 = pass, 1 = bet), in order."""
        return self.core.bets

    # The per-step methods are compiled (hiddenenvs/envs/_kuhn_poker.pyx), one C call each.
    current_player = _compiled.state_current_player
    legal_actions = _compiled.state_legal_actions
    _apply_action = _compiled.state_apply_action
    returns = _compiled.state_returns
    information_state_tensor = _compiled.state_information_state_tensor
    observation_tensor = _compiled.state_observation_tensor

    def chance_outcomes(self):
        if self.current_player() != CHANCE:
            return super().chance_outcomes()
        remaining = _compiled.state_chance_outcomes_left(self)
        return [(c, 1.0 / len(remaining)) for c in remaining]

    def history(self):
        return (*self.cards, *self.bets)

    def public_state_key(self):
        return ("deal",) * len(self.cards) + tuple(ACTION_NAMES[a] for a in self.bets)

    def information_state_key(self, player):
        deals = tuple(
            ("deal", CARD_NAMES[card] if receiver == player else None)
            for receiver, card in enumerate(self.cards)
        )
        return deals + tuple((ACTION_NAMES[a], None) for a in self.bets)

    def public_observation_tensor(self):
        tensor = np.zeros(self.game.info.public_observation_tensor_shape, dtype=np.float32)
        tensor[: len(self.cards)] = 1
        for turn, action in enumerate(self.bets):
            tensor[2 + 2 * turn + action] = 1
        return tensor

    def render_rgb(self, player: int | None = None) -> np.ndarray:
        """The table as an ``(360, 440, 3)`` uint8 image: each seat's card, the chips it
        has put in, the betting and whose turn it is; seen by ``player`` (None: the true
        state), the opponent's card is face down until the game ends at a showdown."""
        from hiddenenvs.envs import _render

        game = self.game
        _render.check_viewer(game, player)
        seats = game.info.player_names
        bets = self.bets
        over = self.is_terminal()
        showdown = over and not (bets[-1] == PASS and BET in bets)
        cards: list[str | None] = [
            CARD_NAMES[card] if player in (None, seat) or showdown else None
            for seat, card in enumerate(self.cards)
        ]
        cards += [""] * (2 - len(cards))
        chips = [1, 1]  # the antes, then a chip for each bet or call
        for turn, action in enumerate(bets):
            chips[turn % 2] += action == BET
        moves = [f"p{turn % 2} {ACTION_NAMES[a]}" for turn, a in enumerate(bets)]
        if over:
            status = "returns " + " / ".join(f"{r:+g}" for r in self.returns())
        elif self.current_player() == CHANCE:
            status = "dealing"
        else:
            status = f"{seats[self.current_player()]} to act: pass or bet"
        return _render.poker_table(
            _render.seat_title("Kuhn poker", seats, player),
            seats,
            cards,
            chips,
            "betting: " + (", ".join(moves) or "none yet"),
            status,
        )

    def __str__(self):
        cards = " ".join(CARD_NAMES[c] for c in self.cards) or "-"
        history = " ".join(ACTION_NAMES[a] for a in self.bets) or "-"
        text = f"cards: {cards} | betting: {history}"
        if self.is_terminal():
            text += f" | returns: {self.returns().tolist()}"
        return text
