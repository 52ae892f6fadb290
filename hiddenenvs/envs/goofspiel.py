"""Goofspiel and II-Goofspiel (Ross 1971; Lanctot 2013; Lisy et al. 2015): bidding with cards.

| Import             | ``hiddenenvs.make("goofspiel", num_cards=4, points_order="ascending", imp_info=True)`` |
|--------------------|------------------------------------------------------------------------------|
| Agents             | ``player_0``, ``player_1``                                                   |
| Actions            | ``Discrete(N)``: action ``a`` bids the card of rank ``a + 1``                  |
| Observation        | ``Box(0, 1, (2 + 2N + N * (2N + K),), float32)`` information state, ``K = 3`` with ``imp_info`` else ``N`` ((58,) by default), or ``(4N + 4,)`` with ``observation_type="observation"`` |
| Parallel API       | yes (``hiddenenvs.make_parallel("goofspiel", ...)``): both players bid at once |
| Game value         | 0 (the game is symmetric)                                                    |

Rules: each player holds the cards 1..N and there is a deck of point cards 1..N. There
are N rounds. Each round a point card is revealed, then both players bid one card from
their hand simultaneously; the higher bid wins the point card's value, equal bids score
nothing, and the bid cards are discarded. The last round is forced (one card left in
each hand, one point card left) and is played automatically, as in OpenSpiel. The winner
is the player with more points.

Card ranks 1..N and point values 1..N follow Ross (1971), OpenSpiel's ``goofspiel`` and
Fujii's feature-importance study (Goofspiel(5), random deck). The ExIt-OOS paper numbers
ranks 0..N-1, which orders bids identically, and its point values 0..N-1 (one less per
round); this implementation uses 1..N points.

In II-Goofspiel (``imp_info=True``; Lisy, Lanctot & Bowling 2015) a player learns only
who won each round, never the opponent's bid. Its information sets are exact: every
opponent bid sequence consistent with the observed winners, given the player's own bids.

Speed: the state is a compiled core (``hiddenenvs/envs/_goofspiel.pyx``): cards, bids,
hands and deck in one small C buffer, moves, legal actions and masks, returns, clones and
the tensors (written straight into float32 arrays) in C; keys and ``history()`` are built
only when asked. The rules themselves (moves, masks, returns, tensors) are written once,
in ``hiddenenvs/envs/_goofspiel.pxd``, which the vector kernel uses too. ``information_state_tensors()`` / ``observation_tensors()`` and
``legal_actions_masks()`` give both players' at once, for the parallel env.

Exact analysis: the game supplies its own vectorised tree builder (``build_game_tree``,
used by ``GameTree.build``), which enumerates Goofspiel(5) with a random deck (3.3
million histories, 0.9 million information sets) in seconds.

Parameters:

| name | default | meaning |
|------|---------|---------|
| ``num_cards`` | 4 | N: cards per hand, point cards and rounds (2 to 1,000) |
| ``points_order`` | ``"ascending"`` | ``"ascending"`` (1, 2, ..., N; the ExIt-OOS setting), ``"descending"`` (N, ..., 1), or ``"random"`` (a shuffled deck: a chance node draws each point card uniformly from those left) |
| ``imp_info`` | ``False`` | True: only the winner of each round is revealed (II-Goofspiel); False: both bids are revealed |
| ``returns`` | ``"win_loss"`` | ``"win_loss"``: +1 / 0 / -1 by the sign of the point difference; ``"point_difference"``: my points minus the opponent's (twice OpenSpiel's, which subtracts the mean of both) |

Public and private observations, one step per point card revealed and one per round
bid: a revealed point card is public (its value, drawn by chance with a random deck);
a round is public in its result and, with ``imp_info``, private in one's own bid. Without
``imp_info`` the round's public observation is both bids ``(bid_0, bid_1)`` and nothing
is private; with ``imp_info`` it is who won, ``1`` (player 0), ``-1`` (player 1) or ``0``
(a tie): the sign of ``bid_0 - bid_1``, and each player's private observation is its
own bid. Bids and points are card ranks 1..N. With a fixed order the first point card
is revealed at the start (the root's key has one entry) and each bidding move adds the
round and the next point card (the forced last round adds its point card and result
too). II-Goofspiel(4), player 0 bids 3 against 1 on the first point card::

    public_state_key()        (1, 1, 2)
    information_state_key(0)  ((1, None), (1, 3), (2, None))
    information_state_key(1)  ((1, None), (1, 1), (2, None))

``history()`` lists the chance draws (action ``v - 1`` reveals ``v``; random deck only)
and the joint bids (tuples of actions ``bid - 1``), without the forced last round.

Public observation tensor (``N * (N + K)`` values, ``K = 3`` with ``imp_info`` else
``2N``): per round, the point card one-hot (N; once revealed), then the result one-hot
(player 0 won / player 1 won / tie) or both bids one-hot (N each), once played.

Beliefs: ``game.sample_consistent_history`` lists the opponent's bid sequences
consistent with the observed results and one's own bids, round by round (each round
keeps the prefixes whose new bid is unused and gives the observed winner; at most N!
sequences), and draws one by the opponent's reach under the given policy (uniform over
the sequences when no policy is given: every opponent decision then has the same number
of legal bids). Point cards are public, so chance weighs every sequence alike.

Information-state tensor (``2 + 2N + N * (2N + K)`` values, ``K = 3`` with ``imp_info``,
else ``K = N``):

| index | meaning |
|-------|---------|
| 0-1 | one-hot: which player I am |
| 2 .. 2+N | one-hot: the current point card (zero between rounds and at the end) |
| 2+N .. 2+2N | my hand: 1 for every card I still hold |
| then N blocks, one per round | one-hot point card (N), one-hot my bid (N), then one-hot opponent bid (N) or one-hot result win / loss / tie (3) |

Observation tensor (``2 + 4N + 2`` values): which player I am (2), the current point
card one-hot (N), my hand (N), the opponent's hand (N; all zero with ``imp_info``,
where it is hidden), the point cards not yet revealed (N; with a fixed order these are
known in advance), and both players' points divided by N(N+1)/2 (mine first).
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable

import numpy as np

from hiddenenvs.beliefs import action_probability_function
from hiddenenvs.envs import _goofspiel as _compiled
from hiddenenvs.envs._goofspiel import GoofspielCore
from hiddenenvs.game import (
    CHANCE,
    SIMULTANEOUS,
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

# The information-state tensor holds about 3 * num_cards**2 floats (12 MB at 1,000 cards,
# 4.8 GB at 20,000, which took 6.9 GB in make).
MAX_NUM_CARDS = 1_000
POINTS_ORDERS = ("ascending", "descending", "random")
RETURNS_TYPES = ("win_loss", "point_difference")


def _sign(value: int) -> int:
    return (value > 0) - (value < 0)


class GoofspielGame(Game):
    NAME = "goofspiel"
    RENDER_MODES = ("ansi", "human", "rgb_array")
    PARAMETERS = (
        Parameter(
            "num_cards",
            int,
            4,
            "cards per hand, point cards and rounds",
            minimum=2,
            maximum=MAX_NUM_CARDS,
        ),
        Parameter(
            "points_order", str, "ascending", "order of the point cards", choices=POINTS_ORDERS
        ),
        Parameter("imp_info", bool, False, "reveal only who won each round (II-Goofspiel)"),
        Parameter(
            "returns",
            str,
            "win_loss",
            "utility: win/loss sign or point difference",
            choices=RETURNS_TYPES,
        ),
    )

    def __init__(self, **params):
        super().__init__(**params)
        self.num_cards = n = self.params["num_cards"]
        self.points_order = self.params["points_order"]
        self.imp_info = self.params["imp_info"]
        self.point_difference = self.params["returns"] == "point_difference"
        self.fixed_points = {
            "ascending": tuple(range(1, n + 1)),
            "descending": tuple(range(n, 0, -1)),
            "random": None,
        }[self.points_order]
        self.total_points = n * (n + 1) // 2
        self.round_block = 2 * n + (3 if self.imp_info else n)
        max_utility = float(self.total_points if self.point_difference else 1)
        random_deck = self.fixed_points is None
        self.info = GameInfo(
            short_name=self.NAME,
            long_name=("II-" if self.imp_info else "") + f"Goofspiel({n})",
            num_players=2,
            num_distinct_actions=n,
            max_chance_outcomes=n if random_deck else 0,
            dynamics=Dynamics.SIMULTANEOUS,
            chance_mode=ChanceMode.EXPLICIT_STOCHASTIC if random_deck else ChanceMode.DETERMINISTIC,
            information=Information.IMPERFECT,
            utility=Utility.ZERO_SUM,
            min_utility=-max_utility,
            max_utility=max_utility,
            # One bidding move per round but the forced last, plus the chance draws.
            max_game_length=(n - 1) * (2 if random_deck else 1),
            information_state_tensor_shape=(2 + 2 * n + n * self.round_block,),
            observation_tensor_shape=(2 + 4 * n + 2,),
            public_observation_tensor_shape=(n * (n + (3 if self.imp_info else 2 * n)),),
        )

    def new_initial_state(self, seed=None):
        return GoofspielState(self)

    def action_to_string(self, player, action):
        if player == CHANCE:
            return f"point card {action + 1}"
        return f"bid {action + 1}"

    def describe_step(self, player, public, private):
        """A key step in words: a revealed point card, or a round's bids (both, or one's
        own and who won with ``imp_info``); see the observations above."""
        if isinstance(public, tuple):
            mine, theirs = public[player], public[1 - player]
            return f"round: you bid {mine}, your opponent bid {theirs}"
        if private is None:
            return f"point card {public} revealed"
        if public == 0:
            return f"round: you bid {private}; a tie"
        you_won = (public == 1) == (player == 0)  # 1: player 0 won, -1: player 1 won
        return f"round: you bid {private}; {'you' if you_won else 'your opponent'} won"

    def sample_consistent_history(self, player, information_state_key, rng, policy=None):
        key = tuple(information_state_key)
        n, opponent = self.num_cards, 1 - player
        points = [public for public, _ in key[0::2]]
        rounds = key[1::2]
        probabilities_of = action_probability_function(policy) if policy is not None else None
        # Consistent opponent bid prefixes, round by round: (bids, weight, the state they
        # reach, kept only to ask the policy).
        layer = [((), 1.0, self.new_initial_state() if policy is not None else None)]
        for round_index, (public, private) in enumerate(rounds):
            own = private if self.imp_info else public[player]
            decided = round_index < n - 1  # the last round is forced
            grown = []
            for bids, weight, state in layer:
                probabilities = None
                if state is not None and decided:
                    if state.current_player() == CHANCE:
                        state.apply_action(points[round_index] - 1)
                    probabilities = probabilities_of(state, opponent)
                for bid in range(1, n + 1):
                    if bid in bids:
                        continue
                    if self.imp_info:
                        if _sign(own - bid if player == 0 else bid - own) != public:
                            continue
                    elif bid != public[opponent]:
                        continue
                    child_weight = (
                        weight * probabilities.get(bid - 1, 0.0)
                        if probabilities is not None
                        else weight
                    )
                    if child_weight <= 0.0:
                        continue
                    child = None
                    if state is not None and decided:
                        child = state.clone()
                        child.apply_actions(
                            (own - 1, bid - 1) if player == 0 else (bid - 1, own - 1)
                        )
                    grown.append(((*bids, bid), child_weight, child))
            layer = grown
        if not layer:
            raise ValueError(
                f"{self.spec}: no history is consistent with player {player}'s information-state "
                f"key {key!r} (with positive reach under the policy)"
            )
        weights = np.fromiter(
            (weight for _, weight, _ in layer), dtype=np.float64, count=len(layer)
        )
        index = min(
            int(np.searchsorted(np.cumsum(weights), rng.random() * weights.sum(), "right")),
            len(layer) - 1,
        )
        own_bids = [private if self.imp_info else public[player] for public, private in rounds]
        other_bids = layer[index][0]
        history = []
        for round_index, point in enumerate(points[: n - 1]):
            if self.fixed_points is None:
                history.append(point - 1)
            if round_index < len(rounds):
                pair = (own_bids[round_index] - 1, other_bids[round_index] - 1)
                history.append(pair if player == 0 else pair[::-1])
        return tuple(history)

    def build_game_tree(self):
        """The whole tree, built level by level with numpy (see :func:`build_goofspiel_tree`)."""
        return build_goofspiel_tree(self)


class GoofspielState(State):
    """A Goofspiel history; its rules, keys and tensors are compiled
    (:class:`hiddenenvs.envs._goofspiel.GoofspielCore`)."""

    __slots__ = ("core", "phase")
    game: GoofspielGame

    def __init__(self, game):
        self.game = game
        self.core = GoofspielCore(game.num_cards, game.fixed_points, game.imp_info)
        self.phase = self.core.phase  # the current player: CHANCE, SIMULTANEOUS or TERMINAL

    def clone(self):
        other = GoofspielState.__new__(GoofspielState)
        other.game = self.game
        other.core = self.core.clone()
        other.phase = self.phase
        return other

    # ---- the state's contents, as lists (card ranks and point values 1..N) --------------
    @property
    def point_cards(self) -> list[int]:
        """The revealed point values, one per round begun."""
        return self.core.point_cards()

    @property
    def bids(self) -> tuple[list[int], list[int]]:
        """The card ranks each player bid, round by round."""
        return self.core.bid_ranks(0), self.core.bid_ranks(1)

    @property
    def hands(self) -> tuple[list[int], list[int]]:
        """The card ranks each player still holds, ascending."""
        return self.core.hand_ranks(0), self.core.hand_ranks(1)

    @property
    def deck(self) -> list[int]:
        """The point values not yet revealed, ascending."""
        return self.core.deck_ranks()

    @property
    def scores(self) -> list[int]:
        return self.core.score_list()

    # The per-step methods are compiled (hiddenenvs/envs/_goofspiel.pyx), one C call each.
    current_player = _compiled.state_current_player
    movers = _compiled.state_movers

    def legal_actions(self, player=None):
        phase = self.phase
        if phase == SIMULTANEOUS:
            if player is None:
                raise ValueError(f"{self.game.NAME}: simultaneous node; name the player")
            return self.core.hand_actions(player)
        if phase == CHANCE and player is None:
            return self.core.deck_actions()
        return []

    def legal_actions_mask(self, player=None):
        if self.phase == SIMULTANEOUS and player is not None:
            return self.core.hand_mask(player)
        return super().legal_actions_mask(player)

    read_only_legal_actions_mask = _compiled.state_read_only_legal_actions_mask
    legal_actions_masks = _compiled.state_legal_actions_masks

    def chance_outcomes(self):
        if self.phase != CHANCE:
            return super().chance_outcomes()
        remaining = self.core.deck_actions()
        return [(action, 1.0 / len(remaining)) for action in remaining]

    def apply_actions(self, joint):
        # Two ints naming cards in hand play at once; anything else takes the validated
        # path of the base class, which names what is wrong.
        if len(joint) == 2 and self.core.play_if_legal(joint[0], joint[1]):
            self.phase = self.core.phase
        else:
            super().apply_actions(joint)

    def _apply_action(self, action):
        self.core.reveal(action)
        self.phase = self.core.phase

    _apply_actions = _compiled.state_apply_actions

    # ---- outcome ------------------------------------------------------------------
    def returns(self):
        if self.phase != TERMINAL:
            return np.zeros(2)
        return np.array(self.core.returns(self.game.point_difference), dtype=np.float64)

    # ---- what players know ----------------------------------------------------------
    def history(self):
        return self.core.history()

    def public_state_key(self):
        return self.core.public_state_key()

    def information_state_key(self, player):
        return self.core.information_state_key(player)

    def public_observation_tensor(self):
        return self.core.public_observation_tensor()

    information_state_tensor = _compiled.state_information_state_tensor
    information_state_tensors = _compiled.state_information_state_tensors
    observation_tensor = _compiled.state_observation_tensor
    observation_tensors = _compiled.state_observation_tensors

    def render_rgb(self, player: int | None = None) -> np.ndarray:
        """The game as an ``(360, 440, 3)`` uint8 image: the prize card of each round, each
        seat's bid in it (the winner's on gold), each seat's hand and points, whose move it
        is. In II-Goofspiel (``imp_info``) ``player``'s view (None: the true state) turns
        the opponent's bids and hand face down: it learns only who won each round."""
        from hiddenenvs.envs import _render

        game = self.game
        _render.check_viewer(game, player)
        seats = game.info.player_names
        bids, hands = self.bids, self.hands
        winners = [None if mine == theirs else int(theirs > mine) for mine, theirs in zip(*bids)]

        def seen(seat: int, ranks: list[int]) -> list[str | None]:
            hidden = game.imp_info and player is not None and player != seat
            return [None if hidden else str(rank) for rank in ranks]

        if self.phase == TERMINAL:
            status = "returns " + " / ".join(f"{r:+g}" for r in self.returns())
        elif self.phase == CHANCE:
            status = "revealing the next prize card"
        else:
            status = f"both bid for prize {self.point_cards[-1]}"
        return _render.goofspiel_table(
            _render.seat_title("II-Goofspiel" if game.imp_info else "Goofspiel", seats, player),
            seats,
            [str(points) for points in self.point_cards],
            [seen(seat, bids[seat]) for seat in (0, 1)],
            winners,
            [seen(seat, hands[seat]) for seat in (0, 1)],
            self.scores,
            status,
        )

    def __str__(self):
        n = self.game.num_cards
        point_cards, bids, hands = self.point_cards, self.bids, self.hands
        scores = self.scores
        lines = [
            f"round {min(len(point_cards), n)}/{n} | point cards: "
            + (" ".join(map(str, point_cards)) or "-"),
            f"player_0 bids: {' '.join(map(str, bids[0])) or '-'} | hand: {' '.join(map(str, hands[0])) or '-'}",
            f"player_1 bids: {' '.join(map(str, bids[1])) or '-'} | hand: {' '.join(map(str, hands[1])) or '-'}",
            f"points: {scores[0]} - {scores[1]}",
        ]
        if self.is_terminal():
            lines[-1] += f" | returns: {self.returns().tolist()}"
        return "\n".join(lines)


# ---- the fast tree builder ------------------------------------------------------------
def build_goofspiel_tree(game: GoofspielGame):
    """The exact game tree of ``game``, level by level with numpy.

    Produces the same tree as the generic builder (same nodes in the same order, the
    same information-set keys and legal actions; tests/test_goofspiel.py compares them)
    in a fraction of its time: every node of one level has the same number of children
    (the cards or point cards not yet used), so a level expands with one ``np.nonzero``
    over a ``(nodes, N)`` mask of unused cards, and information sets are the distinct
    rows of a ``(nodes, key length)`` array of key values (``np.unique``).

    Per round (but the forced last): a chance level (random deck only), player 0's
    level, player 1's level (the sequentialised simultaneous bid: player 1's information
    set ignores player 0's pending bid). Player 1's children finish the round; after the
    second-to-last round they are terminal, with the last round scored automatically.
    """
    from hiddenenvs.analysis.tree import GameTree

    n = game.num_cards
    random_deck = game.fixed_points is None
    parents, actors, infosets, edge_actions, chance_probabilities = [], [], [], [], []
    infoset_players: list[np.ndarray] = []
    infoset_keys: list[tuple[int, Hashable]] = []
    infoset_legal: list[np.ndarray] = []
    num_nodes = 1
    num_infosets = 0

    # Per node of the current level: history columns, one per finished round.
    level_ids = np.zeros(1, dtype=np.int64)
    points = np.zeros((1, 0), dtype=np.int64)
    bids = [np.zeros((1, 0), dtype=np.int64), np.zeros((1, 0), dtype=np.int64)]
    current_point = np.full(1, 0 if random_deck else game.fixed_points[0], dtype=np.int64)
    root_parent, root_action, root_probability = -1, -1, 1.0
    pending = (np.array([root_parent]), np.array([root_action]), np.array([root_probability]))

    def unused(used_columns: np.ndarray) -> np.ndarray:
        """``(nodes, N - used)`` the unused ranks 1..N of each row, ascending."""
        mask = np.ones((len(used_columns), n + 1), dtype=bool)
        mask[:, 0] = False
        np.put_along_axis(mask, used_columns, False, axis=1)
        return np.nonzero(mask)[1].reshape(len(used_columns), -1)

    def emit(actor: int, level_infosets: np.ndarray) -> None:
        parent, action, probability = pending
        parents.append(parent)
        edge_actions.append(action)
        chance_probabilities.append(probability)
        actors.append(np.full(len(parent), actor, dtype=np.int64))
        infosets.append(level_infosets)

    # Key entries are drawn from small tables of shared tuples, indexed by the key's values:
    # a point card's entry by its value, a round's by (result or bid_0, own bid or bid_1).
    point_entries = np.empty(n + 1, dtype=object)
    point_entries[:] = [(value, None) for value in range(n + 1)]
    round_entries = np.empty((n + 2, n + 1), dtype=object)  # the first index is shifted by 1
    for first, second in itertools.product(range(-1, n + 1), range(n + 1)):
        round_entries[first + 1, second] = (
            (first, second) if game.imp_info else ((first, second), None)
        )

    def key_columns(player: int) -> np.ndarray:
        """Per node, the values its key is made of: per round (point, X, Y), then the current
        point; ``(X, Y)`` is (sign of bid_0 - bid_1, own bid) with imp_info, else both bids."""
        first, second = (np.sign(bids[0] - bids[1]), bids[player]) if game.imp_info else bids
        rounds = np.stack([points, first, second], axis=2).reshape(len(points), -1)
        return np.concatenate([rounds, current_point[:, None]], axis=1)

    def keys_of(rows: np.ndarray) -> list[tuple]:
        """The information-state keys of ``key_columns`` rows (as ``information_state_key``)."""
        entries = np.empty((len(rows), 2 * (rows.shape[1] // 3) + 1), dtype=object)
        entries[:, 0::2] = point_entries[np.concatenate([rows[:, 0:-1:3], rows[:, -1:]], axis=1)]
        entries[:, 1::2] = round_entries[rows[:, 1::3] + 1, rows[:, 2::3]]
        return list(map(tuple, entries.tolist()))

    def decision_level(player: int) -> np.ndarray:
        nonlocal num_infosets
        columns = key_columns(player)
        radix = n + 2  # key values lie in -1..N
        if (
            columns.shape[1] * np.log2(radix) < 62
        ):  # pack each row into one int64: a 1-D unique is faster
            packed = (columns + 1) @ (radix ** np.arange(columns.shape[1], dtype=np.int64))
            _, first, inverse = np.unique(packed, return_index=True, return_inverse=True)
            rows = columns[first]
        else:
            rows, first, inverse = np.unique(
                columns, axis=0, return_index=True, return_inverse=True
            )
        inverse = inverse.reshape(-1)
        legal = unused(bids[player])[first] - 1
        infoset_players.append(np.full(len(rows), player, dtype=np.int64))
        infoset_keys.extend(zip(itertools.repeat(player), keys_of(rows)))
        infoset_legal.extend(legal)
        level_infosets = num_infosets + inverse
        num_infosets += len(rows)
        return level_infosets

    def expand(choices: np.ndarray, probability: float) -> np.ndarray:
        """Children of every node of the level, one per column of ``choices``; returns the row of each child's parent."""
        nonlocal level_ids, num_nodes, pending
        count = choices.shape[1]
        parent_rows = np.repeat(np.arange(len(level_ids)), count)
        child_ids = num_nodes + np.arange(len(parent_rows))
        num_nodes += len(parent_rows)
        pending = (
            level_ids[parent_rows],
            choices.reshape(-1) - 1,
            np.full(len(parent_rows), probability),
        )
        level_ids = child_ids
        return parent_rows

    for round_index in range(n - 1):
        if random_deck:
            emit(CHANCE, np.full(len(level_ids), -1, dtype=np.int64))
            draws = unused(points)
            rows = expand(draws, 1.0 / draws.shape[1])
            points, bids = points[rows], [bids[0][rows], bids[1][rows]]
            current_point = draws.reshape(-1)
        emit(0, decision_level(0))
        pending_bid_0 = unused(bids[0])
        rows = expand(pending_bid_0, 1.0)
        points, bids, current_point = (
            points[rows],
            [bids[0][rows], bids[1][rows]],
            current_point[rows],
        )
        pending_bid_0 = pending_bid_0.reshape(-1)
        emit(1, decision_level(1))
        bid_1 = unused(bids[1])
        rows = expand(bid_1, 1.0)
        if round_index == n - 2:
            break
        points = np.concatenate([points[rows], current_point[rows, None]], axis=1)
        bids = [
            np.concatenate([bids[0][rows], pending_bid_0[rows, None]], axis=1),
            np.concatenate([bids[1][rows], bid_1.reshape(-1, 1)], axis=1),
        ]
        current_point = (
            np.zeros(len(rows), dtype=np.int64)
            if random_deck
            else np.full(len(rows), game.fixed_points[round_index + 1], dtype=np.int64)
        )

    # The leaves: score the finished rounds once per parent, then the last two rounds per
    # leaf. The forced last round's cards are the ones not yet used: N(N+1)/2 minus the
    # sum of those used.
    emit(TERMINAL, np.full(len(level_ids), -1, dtype=np.int64))
    finished = (points * np.sign(bids[0] - bids[1])).sum(axis=1)[rows]
    bid_0, bid_1, point = pending_bid_0[rows], bid_1.reshape(-1), current_point[rows]
    last_point = game.total_points - points.sum(axis=1)[rows] - point
    last_bid_0 = game.total_points - bids[0].sum(axis=1)[rows] - bid_0
    last_bid_1 = game.total_points - bids[1].sum(axis=1)[rows] - bid_1
    difference = (
        finished + point * np.sign(bid_0 - bid_1) + last_point * np.sign(last_bid_0 - last_bid_1)
    ).astype(np.float64)
    if not game.point_difference:
        difference = np.sign(difference)
    terminal_returns = np.zeros((num_nodes, 2))
    terminal_returns[level_ids, 0] = difference
    terminal_returns[level_ids, 1] = -difference

    return GameTree.from_arrays(
        game,
        parent=np.concatenate(parents),
        actor=np.concatenate(actors),
        infoset=np.concatenate(infosets),
        edge_action=np.concatenate(edge_actions),
        chance_probability=np.concatenate(chance_probabilities),
        terminal_returns=terminal_returns,
        infoset_player=np.concatenate(infoset_players),
        infoset_keys=infoset_keys,
        infoset_legal_actions=infoset_legal,
    )
