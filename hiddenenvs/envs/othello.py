"""Othello (Reversi) on a 4x4, 6x6 or 8x8 board.

| Import             | ``hiddenenvs.make("othello", board_size=6, render_mode="rgb_array")``      |
|--------------------|-----------------------------------------------------------------------------|
| Agents             | ``player_0`` (black, moves first), ``player_1`` (white)                    |
| Actions            | ``Discrete(S * S + 1)``: action ``row * S + column`` places a disc, ``S * S`` passes (65 on 8x8) |
| Observation        | ``Box(0, 1, (3, S, S), float32)``: my discs, the opponent's discs, empty squares |
| Parallel API       | no (turn-based)                                                             |
| Render modes       | ``"ansi"``, ``"human"``, ``"rgb_array"`` (a ``(32 S, 32 S, 3)`` uint8 image) |

Rules (standard Othello): the board starts with four discs in the centre, white on the
top-left and bottom-right of the central square, black on the other two. Black
(player 0) moves first. A move places a disc of one's colour on an empty square so that
it brackets, in at least one of the eight directions, an unbroken line of opponent discs
ended by one's own disc; every bracketed disc is flipped. A player who has no such move
must pass (the only legal action is then the pass, ``S * S``); passing is never legal
otherwise. The game ends when neither player can move (a full board included); the
player with more discs wins: returns +1 / -1, or 0 for a draw.

Small boards keep the game tree small enough for exact analysis (exploitability,
CFR) as in the MCNFSP experiments; 8x8 is standard Othello (action numbers and rules
coincide with OpenSpiel's ``othello``).

Parameters:

| name | default | meaning |
|------|---------|---------|
| ``board_size`` | 8 | S: the side of the board, 4, 6 or 8 |

It is a perfect-information game: every move is public and nothing is private. The
public state key is the move history, one entry per move (so that transpositions stay
different histories, as the extensive form needs): ``(19, 18, ...)`` on 8x8; the
information-state key of either player pairs each move with ``None``: ``((19, None),
(18, None), ...)``; ``history()`` is the moves. The information-state and observation
tensors need only the position:

| plane | meaning (both the information-state and the observation tensor) |
|-------|------------------------------------------------------------------|
| 0 | 1 where I (the observing player) have a disc |
| 1 | 1 where the opponent has a disc |
| 2 | 1 where the square is empty |

Public observation tensor (``(4, S, S)``): black's discs, white's discs, the empty
squares, and a plane of ones when black (player 0) is to move (zeros otherwise).

Beliefs: nothing is hidden, so ``game.sample_consistent_history`` returns the key's
moves (checked by replaying them, weighted by the policy like any sampler: a policy that
never plays one of the opponent's moves is a clear error).
"""

from __future__ import annotations

import numpy as np

from hiddenenvs.beliefs import draw_weighted
from hiddenenvs.envs._othello import Bitboards, squares
from hiddenenvs.game import (
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

BLACK, WHITE = 0, 1
_CELL_PIXELS = 32
_BOARD_GREEN = (0, 110, 50)
_GRID_COLOUR = (0, 60, 25)
_DISC_COLOURS = ((20, 20, 20), (235, 235, 235))


class OthelloGame(Game):
    NAME = "othello"
    PARAMETERS = (Parameter("board_size", int, 8, "side of the board", choices=(4, 6, 8)),)
    RENDER_MODES = ("ansi", "human", "rgb_array")

    def __init__(self, **params):
        super().__init__(**params)
        size = self.board_size = self.params["board_size"]
        self.num_squares = size * size
        self.pass_action = self.num_squares
        self.key_steps = tuple(((action, None),) for action in range(self.num_squares + 1))
        self.bitboards = Bitboards(size)
        half = size // 2
        centre = [
            (half - 1) * size + half - 1,
            (half - 1) * size + half,
            half * size + half - 1,
            half * size + half,
        ]
        self.initial_discs = (1 << centre[1] | 1 << centre[2], 1 << centre[0] | 1 << centre[3])
        self.info = GameInfo(
            short_name=self.NAME,
            long_name=f"Othello {size}x{size}",
            num_players=2,
            num_distinct_actions=self.num_squares + 1,
            max_chance_outcomes=0,
            dynamics=Dynamics.SEQUENTIAL,
            chance_mode=ChanceMode.DETERMINISTIC,
            information=Information.PERFECT,
            utility=Utility.ZERO_SUM,
            min_utility=-1.0,
            max_utility=1.0,
            # Every move fills a square; a pass can follow each move at most once.
            max_game_length=2 * (self.num_squares - 4),
            information_state_tensor_shape=(3, size, size),
            public_observation_tensor_shape=(4, size, size),
            observation_tensor_shape=(3, size, size),
            player_names=("player_0", "player_1"),
        )
        self._disc_mask = _disc_mask(_CELL_PIXELS)

    def new_initial_state(self, seed=None):
        return OthelloState(self)

    def sample_consistent_history(self, player, information_state_key, rng, policy=None):
        moves = tuple(public for public, _ in information_state_key)
        return draw_weighted(self, player, [moves], rng, policy)

    def action_to_string(self, player, action):
        if action == self.pass_action:
            return "pass"
        row, column = divmod(action, self.board_size)
        return f"{'abcdefgh'[column]}{row + 1}"

    def describe_step(self, player, public, private):
        """A move by its square (``d3``), or ``pass``; the board is public."""
        return f"move {self.action_to_string(player, public)}"


class OthelloState(State):
    __slots__ = ("discs", "to_move", "actions", "_key", "_moves", "_over", "_legal")
    game: OthelloGame

    def __init__(self, game):
        self.game = game
        self.discs = list(game.initial_discs)  # bitboards, black then white
        self.to_move = BLACK
        self.actions: list[int] = []  # the moves so far, passes included
        self._key: tuple = ()  # the information-state key, shared by clones
        self._update_moves()

    def clone(self):
        other = OthelloState.__new__(OthelloState)
        other.game = self.game
        other.discs = self.discs[:]
        other.to_move = self.to_move
        other.actions = self.actions[:]
        other._key = self._key
        other._moves = self._moves
        other._over = self._over
        other._legal = self._legal
        return other

    def _update_moves(self) -> None:
        player = self.to_move
        self._moves, self._over = self.game.bitboards.moves_and_end(
            self.discs[player], self.discs[1 - player]
        )
        self._legal = None  # the sorted legal actions, listed on first use; clones share the list, callers get copies

    def current_player(self):
        return TERMINAL if self._over else self.to_move

    def legal_actions(self, player=None):
        if self._over or (player is not None and player != self.to_move):
            return []
        if self._legal is None:
            self._legal = squares(self._moves) if self._moves else [self.game.pass_action]
        return self._legal[:]

    def _apply_action(self, action):
        player, discs = self.to_move, self.discs
        discs[player], discs[1 - player], self._moves, self._over = self.game.bitboards.play(
            discs[player], discs[1 - player], action
        )
        self._legal = None
        self.actions.append(action)
        self._key += self.game.key_steps[action]
        self.to_move = 1 - player

    def disc_counts(self) -> tuple[int, int]:
        return self.discs[BLACK].bit_count(), self.discs[WHITE].bit_count()

    def returns(self):
        if not self._over:
            return np.zeros(2)
        black, white = self.disc_counts()
        result = float(np.sign(black - white))
        return np.array([result, -result])

    # ---- what players see (everything) -------------------------------------------------
    def history(self):
        return tuple(self.actions)

    def information_state_key(self, player):
        return self._key

    def board(self) -> np.ndarray:
        """``(S, S)`` int8: -1 empty, 0 black, 1 white."""
        _, white, empty = self.game.bitboards.disc_planes(self.discs[BLACK], self.discs[WHITE])
        return (white - empty).astype(np.int8)

    def information_state_tensor(self, player):
        return self.game.bitboards.disc_planes(self.discs[player], self.discs[1 - player])

    def public_state_key(self):
        return tuple(self.actions)

    def public_observation_tensor(self):
        planes = self.game.bitboards.disc_planes(self.discs[BLACK], self.discs[WHITE], num_planes=4)
        planes[3] = self.to_move == BLACK and not self._over
        return planes

    def __str__(self):
        game = self.game
        symbols = {-1: ".", BLACK: "x", WHITE: "o"}
        header = "  " + " ".join("abcdefgh"[: game.board_size])
        rows = [
            f"{row + 1} " + " ".join(symbols[int(v)] for v in line)
            for row, line in enumerate(self.board())
        ]
        black, white = self.disc_counts()
        status = (
            f"game over, returns: {self.returns().tolist()}"
            if self._over
            else f"{'black (x)' if self.to_move == BLACK else 'white (o)'} to move"
        )
        return "\n".join([header, *rows, f"discs: black {black}, white {white} | {status}"])

    def render_rgb(self) -> np.ndarray:
        """The board as an ``(32 S, 32 S, 3)`` uint8 image: green squares, black and white discs."""
        game = self.game
        size, cell = game.board_size, _CELL_PIXELS
        image = np.empty((size * cell, size * cell, 3), dtype=np.uint8)
        image[:] = _BOARD_GREEN
        image[::cell, :] = _GRID_COLOUR
        image[:, ::cell] = _GRID_COLOUR
        image[-1, :] = _GRID_COLOUR
        image[:, -1] = _GRID_COLOUR
        board = self.board()
        for (row, column), colour in np.ndenumerate(board):
            if colour >= 0:
                block = image[row * cell : (row + 1) * cell, column * cell : (column + 1) * cell]
                block[game._disc_mask] = _DISC_COLOURS[colour]
        return image


def _disc_mask(cell: int) -> np.ndarray:
    """``(cell, cell)`` bool: a disc filling most of a square."""
    centre = (cell - 1) / 2
    y, x = np.mgrid[:cell, :cell]
    return (y - centre) ** 2 + (x - centre) ** 2 <= (0.4 * cell) ** 2
