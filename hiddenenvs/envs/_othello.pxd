# cython: language_level=3
"""Othello's move generation and flips on bitboards, written once: the game model's
:class:`hiddenenvs.envs._othello.Bitboards` and the vector kernel
(:class:`hiddenenvs.vector._kernels.OthelloKernel`) both cimport these.

A position is two bitboards, one bit per square (``row * size + column``), so a board up
to 8x8 fits one ``uint64``. A step in one of the eight directions is a shift by 1 (along a
row), ``size`` (along a column), ``size + 1`` or ``size - 1`` (diagonals), left for east
and south, right for west and north, then a mask that drops the squares a row step
wrapped onto from the opposite edge column.
"""

from libc.stdint cimport uint64_t


ctypedef struct OthelloGeometry:
    int size
    int num_squares
    int extend_steps  # a bracketed run has at most size - 2 discs
    uint64_t full
    int shifts[8]
    uint64_t masks[8]


cdef inline void othello_geometry(OthelloGeometry* geometry, int size) noexcept nogil:
    """Fill ``geometry`` for a ``size`` x ``size`` board (3 to 8 squares a side)."""
    cdef uint64_t column_0 = 0, not_first_column, not_last_column
    cdef int row
    for row in range(size):
        column_0 |= (<uint64_t>1) << (row * size)
    geometry.size = size
    geometry.num_squares = size * size
    geometry.extend_steps = size - 3
    geometry.full = (((<uint64_t>1) << geometry.num_squares) - 1
                     if geometry.num_squares < 64 else ~(<uint64_t>0))
    not_first_column = geometry.full & ~column_0
    not_last_column = geometry.full & ~(column_0 << (size - 1))
    # east, south, south-east, south-west; then west, north, north-west, north-east
    geometry.shifts[0] = 1
    geometry.shifts[1] = size
    geometry.shifts[2] = size + 1
    geometry.shifts[3] = size - 1
    geometry.shifts[4] = -1
    geometry.shifts[5] = -size
    geometry.shifts[6] = -(size + 1)
    geometry.shifts[7] = -(size - 1)
    geometry.masks[0] = not_first_column
    geometry.masks[1] = geometry.full
    geometry.masks[2] = not_first_column
    geometry.masks[3] = not_last_column
    geometry.masks[4] = not_last_column
    geometry.masks[5] = geometry.full
    geometry.masks[6] = not_last_column
    geometry.masks[7] = not_first_column


cdef inline uint64_t othello_step(uint64_t bits, int shift, uint64_t mask) noexcept nogil:
    """``bits`` moved one square along a direction: a positive ``shift`` shifts left."""
    if shift > 0:
        return (bits << shift) & mask
    return (bits >> -shift) & mask


cdef inline uint64_t othello_moves(const OthelloGeometry* geometry, uint64_t own,
                                   uint64_t opponent) noexcept nogil:
    """The squares where the owner of ``own`` may place a disc."""
    # Per direction, runs of opponent discs next to one's own discs grow one square per
    # step (at most size - 2 long), then one more step must land on an empty square.
    # Locals, not loads through the pointer: the compiler cannot tell that the loop's
    # stores leave ``geometry`` alone.
    cdef uint64_t empty = geometry.full & ~(own | opponent)
    cdef uint64_t moves = 0, stepping, line, mask
    cdef int direction, step, shift, extend_steps = geometry.extend_steps
    for direction in range(8):
        shift = geometry.shifts[direction]
        mask = geometry.masks[direction]
        stepping = opponent & mask
        line = othello_step(own, shift, stepping)
        for step in range(extend_steps):
            line |= othello_step(line, shift, stepping)
        moves |= othello_step(line, shift, mask) & empty
    return moves


cdef inline uint64_t othello_flips(const OthelloGeometry* geometry, uint64_t square_bit,
                                   uint64_t own, uint64_t opponent) noexcept nogil:
    """The opponent discs a disc placed on ``square_bit`` turns over."""
    cdef uint64_t flipped = 0, line, cursor, mask
    cdef int direction, shift
    for direction in range(8):
        shift = geometry.shifts[direction]
        mask = geometry.masks[direction]
        line = 0
        cursor = othello_step(square_bit, shift, mask)
        while cursor & opponent:
            line |= cursor
            cursor = othello_step(cursor, shift, mask)
        if cursor & own:
            flipped |= line
    return flipped
