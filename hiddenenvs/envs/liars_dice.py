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

Public and private observations, one step per die rolled and per bid: a roll is public
as an event (``"roll"``); the dice are rolled under a cup, so a player sees its own dice
when its last die has been rolled, as a sorted tuple (its private observation at that
step; ``None`` at its earlier dice and at the opponent's). The order in which one's own
dice were rolled carries no information, and the information sets are the ones of
OpenSpiel (which also sorts the dice; tests/test_liars_dice.py checks the bijection).
Bids are public, by name (``"1-3"``, ``"liar"``). With one die of three faces, after
rolls 1 and 3 and bids "1-2" and "liar": ``public_state_key()`` is ``("roll", "roll",
"1-2", "liar")`` and ``information_state_key(1)`` is ``(("roll", None), ("roll", (3,)),
("1-2", None), ("liar", None))``. The keys grow by one entry per step and are shared
between clones.

Public observation tensor (``2D + 2DF + 1`` values): 1 for every die rolled (2D), then
the bids made as in the information-state tensor (2DF + 1).

Beliefs: ``game.sample_consistent_history`` weighs every multiset of the opponent's dice
(``C(F + D - 1, D)`` of them) by its number of orderings times its reach under the
opponent's policy (which sees only the multiset), draws one, and deals it, and one's own
dice, in a uniformly random order (every order is equally likely under the cup). Exact,
without a tree walk.

Information-state tensor (``2 + D * F + 2 * D * F + 1`` values):

| index | meaning |
|-------|---------|
| 0-1 | one-hot: which player I am |
| 2 .. 2+D*F | my dice sorted ascending, one-hot face per die |
| then 2DF + 1 | 1 for every bid made so far, and for "liar" once called (bids only rise, so the set gives the order, and players alternate from player 0) |

Observation tensor (``2 + D * F + 2 * D * F + 3`` values): which player I am (2), my
dice as above (D * F), the current (last) bid one-hot (2DF), who made it (2: me,
the opponent), and 1 once "liar" has been called.

Speed: the player to move, legal bids, returns and both tensors are compiled
(``_liars_dice.pyx``), on the rules written once in C in
``hiddenenvs/envs/_liars_dice.pxd``, which the vector kernel uses too; the dice in roll
order and the keys (grown step by step) stay Python.
"""

from __future__ import annotations

import itertools
from collections import Counter
from math import factorial, prod

import numpy as np

from hiddenenvs.beliefs import history_weight
from hiddenenvs.envs import _liars_dice as _compiled
from hiddenenvs.envs._liars_dice import LiarsDiceCore

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


class LiarsDiceGame(Game):
    NAME = "liars_dice"
    RENDER_MODES = ("ansi", "human", "rgb_array")
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
            public_observation_tensor_shape=(self.total_dice + self.num_bids + 1,),
        )
        self.action_names = tuple(self.action_to_string(0, a) for a in range(self.num_bids + 1))
        self._action_of_name = {name: action for action, name in enumerate(self.action_names)}
        # One key step per bid, shared by every state (keys grow by tuple concatenation).
        self.public_steps = tuple((name,) for name in self.action_names)
        self.key_steps = tuple(((name, None),) for name in self.action_names)

    def new_initial_state(self, seed=None):
        return LiarsDiceState(self)

    def sample_consistent_history(self, player, information_state_key, rng, policy=None):
        key = tuple(information_state_key)
        if len(key) < self.total_dice:  # still rolling: nothing to weigh but the rolls
            return super().sample_consistent_history(player, key, rng, policy)
        own = key[(player + 1) * self.num_dice - 1][1]  # the sorted hand, seen at its last die
        bids = [self._action_of_name[name] for name, _ in key[self.total_dice :]]
        hands = list(
            itertools.combinations_with_replacement(range(1, self.faces + 1), self.num_dice)
        )
        weights = np.empty(len(hands))
        for index, hand in enumerate(hands):
            orderings = factorial(self.num_dice) // prod(map(factorial, Counter(hand).values()))
            dice = (own, hand) if player == 0 else (hand, own)
            rolls = [face - 1 for face in dice[0] + dice[1]]
            weights[index] = orderings * history_weight(self, player, (*rolls, *bids), policy)
        total = weights.sum()
        if total <= 0.0:
            raise ValueError(
                f"{self.spec}: no history consistent with player {player}'s key has positive reach"
            )
        index = min(
            int(np.searchsorted(np.cumsum(weights), rng.random() * total, "right")), len(hands) - 1
        )
        dice = (own, hands[index]) if player == 0 else (hands[index], own)
        rolls = [int(face) - 1 for hand in dice for face in rng.permutation(hand)]
        return (*rolls, *bids)

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

    def describe_step(self, player, public, private):
        """A key step in words: your dice once all are rolled (the opponent's stay under
        their cup), a bid as what it claims, or the call."""
        if public == "roll":
            return "" if private is None else f"your dice: {' '.join(map(str, private))}"
        if public == "liar":
            return "liar is called"
        quantity, face = public.split("-")
        wild = "" if int(face) == self.faces else f" or the wild {self.faces}"
        return f"bid {public}: at least {quantity} of all dice show {face}{wild}"


class LiarsDiceState(State):
    __slots__ = ("dice", "actions", "core", "_public_key", "_information_state_keys")
    game: LiarsDiceGame

    def __init__(self, game):
        self.game = game
        self.dice: tuple[list[int], list[int]] = ([], [])  # faces 1..F, in roll order
        self.actions: list[int] = []  # bids, then "liar"
        self.core = LiarsDiceCore(game.num_dice, game.faces)
        self._public_key: tuple = ()
        self._information_state_keys: tuple[tuple, tuple] = ((), ())

    def clone(self):
        other = LiarsDiceState.__new__(LiarsDiceState)
        other.game = self.game
        other.dice = (self.dice[0][:], self.dice[1][:])
        other.actions = self.actions[:]
        other.core = self.core.clone()
        other._public_key = self._public_key
        other._information_state_keys = self._information_state_keys
        return other

    # The rules are compiled (hiddenenvs/envs/_liars_dice.pyx), one C call each.
    current_player = _compiled.state_current_player
    legal_actions = _compiled.state_legal_actions
    returns = _compiled.state_returns
    information_state_tensor = _compiled.state_information_state_tensor
    observation_tensor = _compiled.state_observation_tensor

    def chance_outcomes(self):
        if self.current_player() != CHANCE:
            return super().chance_outcomes()
        faces = self.game.faces
        return [(face, 1.0 / faces) for face in range(faces)]

    def _apply_action(self, action):
        game, keys = self.game, self._information_state_keys
        if len(self.dice[1]) < game.num_dice:
            roller = 0 if len(self.dice[0]) < game.num_dice else 1
            hand = self.dice[roller]
            hand.append(action + 1)
            self.core.roll(action + 1)
            entry = "roll"
            entries = [(entry, None), (entry, None)]
            if len(hand) == game.num_dice:  # the cup is lifted: the roller sees its hand
                entries[roller] = (entry, tuple(sorted(hand)))
            self._information_state_keys = (keys[0] + (entries[0],), keys[1] + (entries[1],))
            self._public_key += ("roll",)
        else:
            self.actions.append(action)
            self.core.act(action)
            step = game.key_steps[action]
            self._information_state_keys = (keys[0] + step, keys[1] + step)
            self._public_key += game.public_steps[action]

    def history(self):
        return (*(face - 1 for face in self.dice[0] + self.dice[1]), *self.actions)

    def information_state_key(self, player):
        return self._information_state_keys[player]

    def public_state_key(self):
        return self._public_key

    def public_observation_tensor(self):
        game = self.game
        tensor = np.zeros(game.info.public_observation_tensor_shape, dtype=np.float32)
        tensor[: len(self.dice[0]) + len(self.dice[1])] = 1
        tensor[[game.total_dice + a for a in self.actions]] = 1
        return tensor

    def render_rgb(self, player: int | None = None) -> np.ndarray:
        """The table as an ``(360, 440, 3)`` uint8 image: each seat's dice, the current
        bid, the bids so far and whose turn it is; seen by ``player`` (None: the true
        state), the opponent's dice stay under the cup until "liar" is called."""
        from hiddenenvs.envs import _render

        game = self.game
        _render.check_viewer(game, player)
        seats = game.info.player_names
        over = self.is_terminal()
        hands = [
            [str(face) if player in (None, seat) or over else "?" for face in sorted(hand)]
            for seat, hand in enumerate(self.dice)
        ]
        bids = [a for a in self.actions if a != game.liar]
        if bids:
            quantity, face = game.bid(bids[-1])
            bid, bid_face = f"bid: {quantity} x", str(face)
        else:
            bid, bid_face = "no bid yet", None
        names = [
            f"p{turn % 2} {game.action_to_string(0, a)}" for turn, a in enumerate(self.actions)
        ]
        current = self.current_player()
        if over:
            status = "returns " + " / ".join(f"{r:+g}" for r in self.returns())
        elif current == CHANCE:
            status = "rolling"
        else:
            status = f"{seats[current]} to bid higher" + (" or call liar" if bids else "")
        return _render.dice_cups(
            _render.seat_title("Liar's Dice", seats, player),
            seats,
            hands,
            bid,
            bid_face,
            f"bids (quantity-face, {game.faces} wild): " + (", ".join(names[-6:]) or "none yet"),
            status,
        )

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
