# cython: boundscheck=False, wraparound=False, cdivision=True, language_level=3
"""Compiled Othello move generation and flipping on bitboards (rules in
:mod:`hiddenenvs.envs.othello`).

A position is two bitboards, one bit per square (``row * size + column``), so a board up
to 8x8 fits one ``uint64``. A step in one of the eight directions is a shift by 1 (along a
row), ``size`` (along a column), ``size + 1`` or ``size - 1`` (diagonals), left for east
and south, right for west and north, then a mask that drops the squares a row step
wrapped onto from the opposite edge column.
"""

from libc.stdint cimport uint64_t

import numpy as np

cdef extern from *:
    int __builtin_ctzll(unsigned long long) nogil


cdef inline uint64_t _step(uint64_t bits, int shift, uint64_t mask) noexcept nogil:
    """``bits`` moved one square along a direction: a positive ``shift`` shifts left."""
    if shift > 0:
        return (bits << shift) & mask
    return (bits >> -shift) & mask


cdef class Bitboards:
    """Move generation and flips for one board size (4, 6 or 8)."""

    cdef readonly int size
    cdef readonly int num_squares
    cdef int extend_steps  # a bracketed run has at most size - 2 discs
    cdef uint64_t full
    cdef int shifts[8]
    cdef uint64_t masks[8]

    def __init__(self, int size):
        if not 3 <= size <= 8:
            raise ValueError(f"Bitboards: size {size} does not fit a 64-bit board (3 to 8 squares a side)")
        cdef uint64_t column_0 = 0
        cdef int row
        for row in range(size):
            column_0 |= (<uint64_t>1) << (row * size)
        self.size = size
        self.num_squares = size * size
        self.extend_steps = size - 3
        self.full = ((<uint64_t>1) << self.num_squares) - 1 if self.num_squares < 64 else ~(<uint64_t>0)
        cdef uint64_t not_first_column = self.full & ~column_0
        cdef uint64_t not_last_column = self.full & ~(column_0 << (size - 1))
        # east, south, south-east, south-west; then west, north, north-west, north-east
        self.shifts[:] = [1, size, size + 1, size - 1, -1, -size, -(size + 1), -(size - 1)]
        self.masks[:] = [not_first_column, self.full, not_first_column, not_last_column,
                         not_last_column, self.full, not_last_column, not_first_column]

    cdef uint64_t _moves(self, uint64_t own, uint64_t opponent) noexcept nogil:
        # Per direction, runs of opponent discs next to one's own discs grow one square
        # per step (at most size - 2 long), then one more step must land on an empty square.
        cdef uint64_t empty = self.full & ~(own | opponent)
        cdef uint64_t moves = 0, stepping, line
        cdef int direction, step, shift
        for direction in range(8):
            shift = self.shifts[direction]
            stepping = opponent & self.masks[direction]
            line = _step(own, shift, stepping)
            for step in range(self.extend_steps):
                line |= _step(line, shift, stepping)
            moves |= _step(line, shift, self.masks[direction]) & empty
        return moves

    cdef uint64_t _flips(self, uint64_t square_bit, uint64_t own, uint64_t opponent) noexcept nogil:
        cdef uint64_t flipped = 0, line, cursor, mask
        cdef int direction, shift
        for direction in range(8):
            shift = self.shifts[direction]
            mask = self.masks[direction]
            line = 0
            cursor = _step(square_bit, shift, mask)
            while cursor & opponent:
                line |= cursor
                cursor = _step(cursor, shift, mask)
            if cursor & own:
                flipped |= line
        return flipped

    def moves_and_end(self, uint64_t own, uint64_t opponent):
        """``(moves, over)``: the mover's move bitboard, and whether neither side can move."""
        cdef uint64_t moves = self._moves(own, opponent)
        return moves, moves == 0 and self._moves(opponent, own) == 0

    def play(self, uint64_t own, uint64_t opponent, int action):
        """One move by the owner of ``own``: a square (assumed legal) or the pass
        (``num_squares``). Returns ``(own, opponent, moves, over)``: both bitboards after
        the move, the opponent's (next mover's) move bitboard, and whether the game is over."""
        cdef uint64_t square_bit, flipped, moves
        if action != self.num_squares:
            square_bit = (<uint64_t>1) << action
            flipped = self._flips(square_bit, own, opponent)
            own |= square_bit | flipped
            opponent &= ~flipped
        moves = self._moves(opponent, own)
        return own, opponent, moves, moves == 0 and self._moves(own, opponent) == 0

    def disc_planes(self, uint64_t first, uint64_t second, int num_planes=3):
        """``(num_planes, size, size)`` float32 zeros with three planes filled: 1 where
        ``first`` has a disc, where ``second`` has one, where the square is empty."""
        planes = np.zeros((num_planes, self.size, self.size), dtype=np.float32)
        cdef float[:, ::1] by_square = planes.reshape(num_planes, self.num_squares)
        cdef uint64_t square_bit
        cdef int square
        for square in range(self.num_squares):
            square_bit = (<uint64_t>1) << square
            if first & square_bit:
                by_square[0, square] = 1
            elif second & square_bit:
                by_square[1, square] = 1
            else:
                by_square[2, square] = 1
        return planes


def squares(uint64_t bits):
    """The squares set in ``bits``, ascending."""
    cdef list found = []
    while bits:
        found.append(__builtin_ctzll(bits))
        bits &= bits - 1
    return found
