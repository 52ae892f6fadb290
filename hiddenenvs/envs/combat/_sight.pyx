# cython: boundscheck=False, wraparound=False, cdivision=True, language_level=3
"""Compiled end-of-tick update of the combat sim: who sees whom, targets, beliefs.

The same rules as the numpy ``Battle.line_of_sight`` (which the tests compare against):
Bresenham line from the lower-numbered cell to the higher-numbered one, clear when no cell
strictly between blocks sight, within ``sight_range`` (Euclidean).
"""

from libc.math cimport sqrt
from libc.stdint cimport int32_t, int64_t, uint8_t


cdef inline bint _clear(int64_t cell_a, int64_t cell_b, const int64_t[::1] cell_rows,
                        const int64_t[::1] cell_cols, const uint8_t[::1] blocks_sight,
                        const int64_t[:, :, ::1] line_offsets, int radius) noexcept nogil:
    cdef int64_t low = cell_a if cell_a < cell_b else cell_b
    cdef int64_t high = cell_b if cell_a < cell_b else cell_a
    cdef int64_t d_row = cell_rows[high] - cell_rows[low]
    cdef int64_t d_col = cell_cols[high] - cell_cols[low]
    cdef Py_ssize_t k
    if d_row * d_row + d_col * d_col > radius * radius:
        return False
    for k in range(line_offsets.shape[2]):
        if blocks_sight[low + line_offsets[d_row + radius, d_col + radius, k]]:
            return False
    return True


def update_sight(const int32_t[::1] positions, const uint8_t[::1] alive,
                 const int64_t[::1] cell_rows, const int64_t[::1] cell_cols,
                 const uint8_t[::1] blocks_sight, const int64_t[:, :, ::1] line_offsets,
                 int sight_range, double fire_range, int team_size,
                 int32_t[:, ::1] belief_cells, uint8_t[:, ::1] sees, double[:, ::1] distance,
                 uint8_t[:, ::1] seen, int64_t[::1] target_of):
    """Fill ``sees``/``distance`` (attacker x defender), ``seen`` (per team, its enemies
    seen now) and ``target_of`` (nearest enemy seen within fire range, -1 if none), then
    update ``belief_cells`` in place (the belief rule of the simulation module)."""
    cdef Py_ssize_t i, j, team, enemy, friend, offset_enemy, offset_friend
    cdef int64_t d_row, d_col, cell
    cdef double best
    cdef bint stale_seen
    with nogil:
        for i in range(team_size):
            seen[0, i] = 0
            seen[1, i] = 0
        for i in range(team_size):
            for j in range(team_size):
                d_row = cell_rows[positions[i]] - cell_rows[positions[team_size + j]]
                d_col = cell_cols[positions[i]] - cell_cols[positions[team_size + j]]
                distance[i, j] = sqrt(<double>(d_row * d_row + d_col * d_col))
                sees[i, j] = (
                    alive[i] and alive[team_size + j] and distance[i, j] <= sight_range
                    and _clear(positions[i], positions[team_size + j], cell_rows, cell_cols,
                               blocks_sight, line_offsets, sight_range)
                )
                if sees[i, j]:
                    seen[0, j] = 1
                    seen[1, i] = 1
        for i in range(team_size):  # attackers: nearest defender (ties: lowest index)
            target_of[i] = -1
            best = 0.0
            for j in range(team_size):
                if sees[i, j] and distance[i, j] <= fire_range and (target_of[i] < 0 or distance[i, j] < best):
                    target_of[i] = team_size + j
                    best = distance[i, j]
        for j in range(team_size):  # defenders: nearest attacker
            target_of[team_size + j] = -1
            best = 0.0
            for i in range(team_size):
                if sees[i, j] and distance[i, j] <= fire_range and (target_of[team_size + j] < 0 or distance[i, j] < best):
                    target_of[team_size + j] = i
                    best = distance[i, j]
        for team in range(2):
            offset_enemy = (1 - team) * team_size
            offset_friend = team * team_size
            for enemy in range(team_size):
                if seen[team, enemy]:
                    belief_cells[team, enemy] = positions[offset_enemy + enemy]
                if not alive[offset_enemy + enemy]:
                    belief_cells[team, enemy] = -1
                cell = belief_cells[team, enemy]
                if cell < 0 or seen[team, enemy]:
                    continue
                stale_seen = False
                for friend in range(team_size):
                    if alive[offset_friend + friend] and _clear(
                        positions[offset_friend + friend], cell, cell_rows, cell_cols,
                        blocks_sight, line_offsets, sight_range,
                    ):
                        stale_seen = True
                        break
                if stale_seen:
                    belief_cells[team, enemy] = -1
