# cython: boundscheck=False, wraparound=False, cdivision=True, language_level=3
"""Compiled Othello for the game model (rules in :mod:`hiddenenvs.envs.othello`): the
bitboard move generation and flips of ``_othello.pxd``, which the vector kernel shares."""

import numpy as np

cdef extern from *:
    int __builtin_ctzll(unsigned long long) nogil


cdef class Bitboards:
    """Move generation and flips for one board size (4, 6 or 8)."""

    cdef OthelloGeometry geometry
    cdef readonly int size
    cdef readonly int num_squares

    def __init__(self, int size):
        if not 3 <= size <= 8:
            raise ValueError(f"Bitboards: size {size} does not fit a 64-bit board (3 to 8 squares a side)")
        othello_geometry(&self.geometry, size)
        self.size = size
        self.num_squares = size * size

    cdef uint64_t _moves(self, uint64_t own, uint64_t opponent) noexcept nogil:
        return othello_moves(&self.geometry, own, opponent)

    cdef uint64_t _flips(self, uint64_t square_bit, uint64_t own, uint64_t opponent) noexcept nogil:
        return othello_flips(&self.geometry, square_bit, own, opponent)

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
