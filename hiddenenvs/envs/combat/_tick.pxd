# The tick's C functions, shared with the vector env (hiddenenvs/vector/_combat.pyx) so
# both step fighter mode through the same code; each is documented in _tick.pyx.
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint64_t

cdef void _update_sight(const int32_t[::1] positions, const uint8_t[::1] alive,
                        const int64_t[::1] cell_rows, const int64_t[::1] cell_cols,
                        const uint8_t[::1] blocks_sight, const int64_t[:, :, ::1] line_offsets,
                        int sight_range, double fire_range, int team_size,
                        int32_t[:, ::1] belief_cells, uint8_t[:, ::1] sees, double[:, ::1] distance,
                        uint8_t[:, ::1] seen, int64_t[::1] target_of) noexcept nogil

cdef bint _advance(int32_t[::1] positions, int32_t[::1] health, uint8_t[::1] alive,
                   const uint8_t *fires, const int32_t *wanted_cells, bint engage,
                   const double *rolls, const int64_t[::1] target_of, const double[:, ::1] distance,
                   const int8_t[::1] door_of_cell, int num_doors, int door_capacity, int64_t tick,
                   int team_size, double hit_probability, double fire_range, int damage,
                   int64_t[::1] damage_dealt) noexcept nogil

cdef bint _fill_views(float[:, :, :, ::1] views, const int32_t[::1] positions, const int32_t[::1] health,
                      const uint8_t[::1] alive, const uint8_t[:, ::1] seen, const int8_t[:, ::1] padded_codes,
                      const int64_t[::1] cell_rows, const int64_t[::1] cell_cols, int radius,
                      int team_size, const uint64_t *coefficients, uint64_t *fighter_sums,
                      const float *terrain_views) noexcept nogil

cdef void _fighter_intents(const int64_t *actions, const int32_t[::1] positions,
                           const int32_t[:, ::1] move_target, int32_t *wanted_cells,
                           uint8_t *fires) noexcept nogil

cdef bint _fighter_masks(uint8_t[:, ::1] masks, const int32_t[::1] positions, const uint8_t[::1] alive,
                         const int32_t[:, ::1] move_target, const int8_t[::1] door_of_cell,
                         int num_doors, int door_capacity, const int64_t[::1] target_of) noexcept nogil

cdef int _fighter_outcome(const uint8_t[::1] alive, int team_size, int64_t ticks_played,
                          int64_t max_ticks, int64_t balance, double reward_scale,
                          double *team_reward) noexcept nogil
