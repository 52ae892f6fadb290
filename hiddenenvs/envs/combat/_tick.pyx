# cython: boundscheck=False, wraparound=False, cdivision=True, language_level=3
"""The compiled tick of the combat sim: shots and steps (``advance``), then who sees whom,
targets and beliefs (``update_sight``); rules in :mod:`hiddenenvs.envs.combat.simulation`.

Fighter mode runs its whole tick in one call, :class:`FighterTick` (the joint action's
intents, the hit rolls, shots, steps and doors, sight and beliefs, the result, rewards,
every fighter's view, action mask and step digest), through the same C functions the
separate kernels below wrap; the hit rolls come from the battle's numpy bit generator
(``next_double``, what ``Generator.random`` draws), in the same order, so the fused tick
is bit-identical to the separate calls.

Line of sight follows the same rule as the numpy ``Battle.line_of_sight`` (which the
tests compare against): the Bresenham line from the lower-numbered cell to the
higher-numbered one is clear when no cell strictly between blocks sight, within
``sight_range`` (Euclidean).
"""

cimport numpy as cnp
import numpy as np
from cpython.pycapsule cimport PyCapsule_GetPointer
from cpython.ref cimport Py_INCREF
from libc.math cimport sqrt
from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy
from numpy.random cimport bitgen_t

cnp.import_array()

cdef extern from "numpy/arrayobject.h":
    # NumPy's C view (``arr.view(dtype)`` without a Python call); steals ``dtype``.
    object _c_view "PyArray_View" (cnp.ndarray array, cnp.dtype dtype, void *subtype)

cdef cnp.dtype _UINT8 = cnp.PyArray_DescrFromType(cnp.NPY_UINT8)


cdef inline object _bytes_of(cnp.ndarray array):
    """``array.view(np.uint8)`` (bool or int8 memory as the uint8 the kernels take)."""
    Py_INCREF(_UINT8)
    return _c_view(array, _UINT8, NULL)


cdef uint64_t _ONE_WORD = 0x3F800000  # the bits of 1.0f, the terrain channels' only non-zero value


cdef inline uint64_t _float_word(float value) noexcept nogil:
    """The 32 bits of ``value``, as ``chain_hashes`` reads a view."""
    return (<uint32_t *> &value)[0]


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
    with nogil:
        _update_sight(positions, alive, cell_rows, cell_cols, blocks_sight, line_offsets, sight_range,
                      fire_range, team_size, belief_cells, sees, distance, seen, target_of)


cdef void _update_sight(const int32_t[::1] positions, const uint8_t[::1] alive,
                        const int64_t[::1] cell_rows, const int64_t[::1] cell_cols,
                        const uint8_t[::1] blocks_sight, const int64_t[:, :, ::1] line_offsets,
                        int sight_range, double fire_range, int team_size,
                        int32_t[:, ::1] belief_cells, uint8_t[:, ::1] sees, double[:, ::1] distance,
                        uint8_t[:, ::1] seen, int64_t[::1] target_of) noexcept nogil:
    cdef Py_ssize_t i, j, team, enemy, friend, offset_enemy, offset_friend
    cdef int64_t d_row, d_col, cell
    cdef double best
    cdef bint stale_seen
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



def advance(int32_t[::1] positions, int32_t[::1] health, uint8_t[::1] alive,
            const uint8_t[::1] fires, const int32_t[::1] wanted_cells, bint engage,
            const double[::1] rolls, const int64_t[::1] target_of, const double[:, ::1] distance,
            const int8_t[::1] door_of_cell, int num_doors, int door_capacity, int64_t tick,
            int team_size, double hit_probability, double fire_range, int damage,
            int64_t[::1] damage_dealt):
    """One tick's shots and steps, in place on positions/health/alive (the rules of the
    simulation module): every firing fighter with a target rolls once, damage lands at
    once, survivors that do not stand (dead, or engaging a target) step to
    ``wanted_cells``, and a door admits entrants, in an order rotating with ``tick``, only
    while it holds fewer than ``door_capacity`` live fighters."""
    cdef bint done
    with nogil:
        done = _advance(positions, health, alive, &fires[0], &wanted_cells[0], engage, &rolls[0],
                        target_of, distance, door_of_cell, num_doors, door_capacity, tick, team_size,
                        hit_probability, fire_range, damage, damage_dealt)
    if not done:
        raise MemoryError("combat: no memory for a tick")


cdef bint _advance(int32_t[::1] positions, int32_t[::1] health, uint8_t[::1] alive,
                   const uint8_t *fires, const int32_t *wanted_cells, bint engage,
                   const double *rolls, const int64_t[::1] target_of, const double[:, ::1] distance,
                   const int8_t[::1] door_of_cell, int num_doors, int door_capacity, int64_t tick,
                   int team_size, double hit_probability, double fire_range, int damage,
                   int64_t[::1] damage_dealt) noexcept nogil:
    """``advance``'s work; False when out of memory (nothing changed then)."""
    cdef Py_ssize_t count = 2 * team_size
    cdef Py_ssize_t k, j, door, target
    cdef int64_t lost, staying, admitted, free_places
    cdef double gap
    cdef int64_t *taken = <int64_t *> calloc(count, sizeof(int64_t))
    cdef int32_t *goal = <int32_t *> calloc(count, sizeof(int32_t))
    cdef int8_t *door_now = <int8_t *> calloc(count, sizeof(int8_t))
    cdef int8_t *door_next = <int8_t *> calloc(count, sizeof(int8_t))
    if taken == NULL or goal == NULL or door_now == NULL or door_next == NULL:
        free(taken); free(goal); free(door_now); free(door_next)
        return False
    for k in range(count):  # shots, all at once
        target = target_of[k]
        if fires[k] and alive[k] and target >= 0:
            gap = distance[k, target - team_size] if k < team_size else distance[target, k - team_size]
            if rolls[k] < hit_probability * (1.0 - gap / (fire_range + 1.0)):
                taken[target] += damage
    damage_dealt[0] = 0
    damage_dealt[1] = 0
    for k in range(count):
        lost = taken[k] if taken[k] < health[k] else health[k]
        health[k] -= lost
        alive[k] = health[k] > 0
        damage_dealt[1 if k < team_size else 0] += lost
    for k in range(count):  # who steps where
        goal[k] = wanted_cells[k]
        if not alive[k] or (engage and target_of[k] >= 0):
            goal[k] = positions[k]
        door_now[k] = door_of_cell[positions[k]]
        door_next[k] = door_of_cell[goal[k]]
    for door in range(num_doors):
        staying = 0
        for k in range(count):
            if alive[k] and door_now[k] == door and not (goal[k] != positions[k] and door_next[k] != door):
                staying += 1
        free_places = door_capacity - staying
        admitted = 0
        for j in range(count):
            k = (tick + j) % count
            if goal[k] != positions[k] and door_next[k] == door and door_now[k] != door:
                if admitted < free_places:
                    admitted += 1
                else:
                    goal[k] = positions[k]
    for k in range(count):
        positions[k] = goal[k]
    free(taken); free(goal); free(door_now); free(door_next)
    return True


def fill_views(float[:, :, :, ::1] views, const int32_t[::1] positions, const int32_t[::1] health,
               const uint8_t[::1] alive, const uint8_t[:, ::1] seen, const int8_t[:, ::1] padded_codes,
               const int64_t[::1] cell_rows, const int64_t[::1] cell_cols, int radius, int team_size):
    """Write every fighter's egocentric view into ``views`` (fighters, side, side, 5;
    every value is written, so it may come from ``np.empty``): blocked, door, friends' health, seen enemies' health, own health (the
    channels of the package docstring). ``padded_codes`` is the map padded by ``radius``
    with walls; ``seen[team, k]``: team sees its enemy number k now."""
    cdef Py_ssize_t count = 2 * team_size
    cdef Py_ssize_t side = 2 * radius + 1
    cdef bint done
    if views.shape[0] != count or views.shape[1] != side or views.shape[2] != side or views.shape[3] != 5:
        raise ValueError(f"fill_views: {count} fighters with view radius {radius} need a "
                         f"({count}, {side}, {side}, 5) array, got {tuple(views.shape)[:4]}")
    with nogil:
        done = _fill_views(views, positions, health, alive, seen, padded_codes, cell_rows, cell_cols,
                           radius, team_size, NULL, NULL, NULL)
    if not done:
        raise MemoryError("fill_views: no memory for the fighters' coordinates")


cdef bint _fill_views(float[:, :, :, ::1] views, const int32_t[::1] positions, const int32_t[::1] health,
                      const uint8_t[::1] alive, const uint8_t[:, ::1] seen, const int8_t[:, ::1] padded_codes,
                      const int64_t[::1] cell_rows, const int64_t[::1] cell_cols, int radius,
                      int team_size, const uint64_t *coefficients, uint64_t *fighter_sums,
                      const float *terrain_views) noexcept nogil:
    """``fill_views``'s work on a checked ``views``; False when out of memory. With
    ``fighter_sums``, also each view's hash sum (``chain_hashes``: word times coefficient,
    modulo 2**64) over the friend and enemy channels, kept up to date as entries are
    raised, so the digest need not read the whole view again. With ``terrain_views``
    (the padded map's cells as view entries: terrain channels set, the others 0), each
    row of a view starts as a copy of its stretch of it."""
    cdef Py_ssize_t count = 2 * team_size
    cdef Py_ssize_t side = 2 * radius + 1
    cdef Py_ssize_t viewer, other, a, b, channel, team
    cdef int64_t row, col, d_row, d_col
    cdef int8_t code
    cdef const int8_t *codes
    cdef float own, value
    cdef float *cell
    cdef bint same_team
    cdef Py_ssize_t entry
    cdef uint64_t fighter_sum
    # Every fighter's row and column, looked up once: the viewer x other loop below is
    # the quadratic part (25,600 pairs at 160 fighters), so it tests the cheap window
    # bounds first and the team and sight rules only for fighters inside the window.
    cdef int64_t *rows = <int64_t *> calloc(count, sizeof(int64_t))
    cdef int64_t *cols = <int64_t *> calloc(count, sizeof(int64_t))
    if rows == NULL or cols == NULL:
        free(rows)
        free(cols)
        return False
    for other in range(count):
        rows[other] = cell_rows[positions[other]]
        cols[other] = cell_cols[positions[other]]
    for viewer in range(count):
        row = rows[viewer]
        col = cols[viewer]
        team = 0 if viewer < team_size else 1
        own = <float> (health[viewer] / 100.0)
        cell = &views[viewer, 0, 0, 0]  # the window's cells in order, 5 channels each
        for a in range(side if terrain_views != NULL else 0):
            memcpy(cell, &terrain_views[((row + a) * padded_codes.shape[1] + col) * 5], side * 5 * sizeof(float))
            for b in range(side):
                cell[4] = own
                cell += 5
        for a in range(side if terrain_views == NULL else 0):
            codes = &padded_codes[row + a, col]
            for b in range(side):
                code = codes[b]
                cell[0] = 1.0 if (code == 1 or code == 2) else 0.0
                cell[1] = 1.0 if code == 3 else 0.0
                cell[2] = 0.0
                cell[3] = 0.0
                cell[4] = own
                cell += 5
        fighter_sum = 0
        for other in range(count):
            d_row = rows[other] - row + radius
            if d_row < 0 or d_row >= side:
                continue
            d_col = cols[other] - col + radius
            if d_col < 0 or d_col >= side:
                continue
            if other == viewer or not alive[other]:
                continue
            same_team = (other < team_size) == (team == 0)
            if not same_team and not seen[team, other - team_size if other >= team_size else other]:
                continue
            channel = 2 if same_team else 3
            value = <float> (health[other] / 100.0)
            if value > views[viewer, d_row, d_col, channel]:
                if fighter_sums != NULL:  # the old word out, the new one in (wrapping is exact)
                    entry = 5 * (d_row * side + d_col) + channel
                    fighter_sum += (_float_word(value) - _float_word(views[viewer, d_row, d_col, channel])
                                    ) * coefficients[entry]
                views[viewer, d_row, d_col, channel] = value
        if fighter_sums != NULL:
            fighter_sums[viewer] = fighter_sum
    free(rows)
    free(cols)
    return True


def terrain_view_table(const int8_t[:, ::1] padded_codes):
    """Every cell of ``padded_codes`` as the view entry it makes (blocked, door, then 0, 0,
    0), a ``(rows, cols, 5)`` float32 array: ``_fill_views`` starts each row of a view as a
    copy of its stretch of it."""
    table = np.zeros((padded_codes.shape[0], padded_codes.shape[1], 5), dtype=np.float32)
    cdef float[:, :, ::1] entries = table
    cdef Py_ssize_t row, col
    cdef int8_t code
    for row in range(padded_codes.shape[0]):
        for col in range(padded_codes.shape[1]):
            code = padded_codes[row, col]
            entries[row, col, 0] = 1.0 if (code == 1 or code == 2) else 0.0
            entries[row, col, 1] = 1.0 if code == 3 else 0.0
    return table


def chain_hashes(const uint64_t[::1] keys, const uint32_t[:, ::1] words,
                 const uint64_t[::1] coefficients, const int64_t[::1] actions,
                 uint64_t mix_a, uint64_t mix_b, uint64_t[::1] out):
    """``out[p]``: player ``p``'s history hash ``keys[p]`` extended by one step, the
    observation's 32-bit ``words[p]`` and the action ``actions[p]``; the formula (all
    arithmetic modulo 2**64) is ``env._chain_hashes``'s, in one pass without temporaries."""
    if words.shape[1] > coefficients.shape[0] or not (
        keys.shape[0] == actions.shape[0] == out.shape[0] == words.shape[0]
    ):
        raise ValueError(
            f"chain_hashes: {words.shape[0]} observations of {words.shape[1]} words need as many "
            f"keys, actions and outputs ({keys.shape[0]}, {actions.shape[0]}, {out.shape[0]}) "
            f"and at most {coefficients.shape[0]} words"
        )
    cdef Py_ssize_t player, k
    cdef uint64_t observation_hash, mixed
    with nogil:
        for player in range(words.shape[0]):
            observation_hash = 0
            for k in range(words.shape[1]):
                observation_hash += words[player, k] * coefficients[k]
            mixed = (keys[player] ^ observation_hash) * mix_a
            mixed ^= mixed >> 31
            out[player] = (mixed + <uint64_t> actions[player] + 1) * mix_b


def fighter_intents(const int64_t[::1] actions, const int32_t[::1] positions,
                    const int32_t[:, ::1] move_target, int32_t[::1] wanted_cells, uint8_t[::1] fires):
    """Fighter mode's joint action as the tick's inputs: ``fires[k]`` for "shoot" (the
    last action), ``wanted_cells[k]`` the cell a move (actions 1..8, ``move_target[action
    - 1]``) reaches, or the fighter's own cell for anything else or a blocked move."""
    cdef Py_ssize_t count = positions.shape[0]
    if not (actions.shape[0] == wanted_cells.shape[0] == fires.shape[0] == count):
        raise ValueError(
            f"fighter_intents: {count} fighters need as many actions, wanted cells and fire "
            f"flags ({actions.shape[0]}, {wanted_cells.shape[0]}, {fires.shape[0]})"
        )
    if count == 0:
        return
    with nogil:
        _fighter_intents(&actions[0], positions, move_target, &wanted_cells[0], &fires[0])


cdef void _fighter_intents(const int64_t *actions, const int32_t[::1] positions,
                           const int32_t[:, ::1] move_target, int32_t *wanted_cells,
                           uint8_t *fires) noexcept nogil:
    cdef Py_ssize_t shoot = move_target.shape[0] + 1
    cdef Py_ssize_t k
    cdef int64_t action
    cdef int32_t target
    for k in range(positions.shape[0]):
        action = actions[k]
        fires[k] = action == shoot
        wanted_cells[k] = positions[k]
        if 0 < action < shoot:
            target = move_target[action - 1, positions[k]]
            if target >= 0:
                wanted_cells[k] = target


def fighter_masks(uint8_t[:, ::1] masks, const int32_t[::1] positions, const uint8_t[::1] alive,
                  const int32_t[:, ::1] move_target, const int8_t[::1] door_of_cell, int num_doors,
                  int door_capacity, const int64_t[::1] target_of):
    """Every fighter's action mask, written into ``masks`` (fighters, 1 + directions + 1):
    a live fighter may hold; move where ``move_target`` allows, unless that enters a door
    other than its own that already holds ``door_capacity`` live fighters; shoot when it
    has a target. A dead fighter's row is all zero. Returns the movers: the fighters with
    two legal actions or more (live ones that may do more than hold), ascending."""
    cdef Py_ssize_t count = positions.shape[0]
    cdef Py_ssize_t directions = move_target.shape[0]
    cdef bint done
    if masks.shape[0] != count or masks.shape[1] != directions + 2 or target_of.shape[0] != count:
        raise ValueError(
            f"fighter_masks: {count} fighters need a ({count}, {directions + 2}) mask array and "
            f"{count} targets, got ({masks.shape[0]}, {masks.shape[1]}) and {target_of.shape[0]}"
        )
    with nogil:
        done = _fighter_masks(masks, positions, alive, move_target, door_of_cell, num_doors,
                              door_capacity, target_of)
    if not done:
        raise MemoryError("fighter_masks: no memory for the door counts")
    return _movers(masks)


cdef bint _fighter_masks(uint8_t[:, ::1] masks, const int32_t[::1] positions, const uint8_t[::1] alive,
                         const int32_t[:, ::1] move_target, const int8_t[::1] door_of_cell,
                         int num_doors, int door_capacity, const int64_t[::1] target_of) noexcept nogil:
    """``fighter_masks``'s work on checked arrays; False when out of memory."""
    cdef Py_ssize_t count = positions.shape[0]
    cdef Py_ssize_t directions = move_target.shape[0]
    cdef Py_ssize_t k, d
    cdef int32_t target
    cdef int8_t door, own_door
    cdef int64_t *occupancy = <int64_t *> calloc(num_doors if num_doors > 0 else 1, sizeof(int64_t))
    if occupancy == NULL:
        return False
    for k in range(count):
        door = door_of_cell[positions[k]]
        if alive[k] and door >= 0:
            occupancy[door] += 1
    for k in range(count):
        if not alive[k]:
            for d in range(directions + 2):
                masks[k, d] = 0
            continue
        masks[k, 0] = 1
        own_door = door_of_cell[positions[k]]
        for d in range(directions):
            target = move_target[d, positions[k]]
            if target < 0:
                masks[k, 1 + d] = 0
                continue
            door = door_of_cell[target]
            masks[k, 1 + d] = not (door >= 0 and door != own_door and occupancy[door] >= door_capacity)
        masks[k, directions + 1] = target_of[k] >= 0
    free(occupancy)
    return True


cdef list _movers(const uint8_t[:, ::1] masks):
    """The rows of ``masks`` with two legal actions or more, ascending."""
    cdef Py_ssize_t k, d
    cdef uint8_t legal_count
    cdef list movers = []
    for k in range(masks.shape[0]):
        legal_count = 0
        for d in range(masks.shape[1]):
            legal_count += masks[k, d]
        if legal_count > 1:
            movers.append(k)
    return movers


cdef int _fighter_outcome(const uint8_t[::1] alive, int team_size, int64_t ticks_played,
                          int64_t max_ticks, int64_t balance, double reward_scale,
                          double *team_reward) noexcept nogil:
    """The result after a tick, as ``Battle.winner()``: ATTACKERS (0), DEFENDERS (1), -1
    when both teams are wiped out, -2 while the battle goes on; and each team's reward
    for the tick in ``team_reward`` (2), as ``_CombatState._team_rewards``: the
    attackers' health ``balance`` over ``reward_scale`` (0: unshaped, no such part), then
    +-1 when a team won."""
    cdef int64_t attackers = 0, defenders = 0
    cdef Py_ssize_t k
    cdef int winner
    for k in range(team_size):
        attackers += alive[k]
        defenders += alive[team_size + k]
    if attackers == 0 and defenders == 0:
        winner = -1
    elif defenders == 0:
        winner = 0
    elif attackers == 0 or ticks_played >= max_ticks:
        winner = 1
    else:
        winner = -2
    team_reward[0] = 0.0
    team_reward[1] = 0.0
    if reward_scale > 0.0:
        team_reward[0] += balance / reward_scale
        team_reward[1] += -balance / reward_scale
    if winner >= 0:
        team_reward[winner] += 1.0
        team_reward[1 - winner] -= 1.0
    return winner


cdef class FighterTick:
    """Fighter mode's whole tick in one compiled call, for one game's map and rules.

    ``tick`` plays a joint action on the battle's arrays: the intents, one hit roll per
    fighter from the battle's bit generator (``next_double``, exactly what
    ``Generator.random(2T)`` draws), shots, steps and doors (``advance``), sight, targets
    and beliefs (``update_sight``), the result, the step's rewards (shaped part, then
    +-1 at the end, as ``_CombatState._team_rewards``), every fighter's view, action mask
    and step digest (``chain_hashes`` from zero keys). The outputs are fresh arrays it
    allocates in C (clones share the previous ones); the arithmetic is the separate
    kernels', so the results are bit-identical to calling them one by one
    (``tests/test_combat_digests.py`` checks both). It holds the GIL throughout: the
    digest's scratch sums belong to the game, shared by its states.
    """

    cdef const int64_t[::1] cell_rows
    cdef const int64_t[::1] cell_cols
    cdef const uint8_t[::1] blocks_sight
    cdef const int64_t[:, :, ::1] line_offsets
    cdef const int8_t[:, ::1] padded_codes
    cdef const int32_t[:, ::1] move_target
    cdef const int8_t[::1] door_of_cell
    cdef const uint64_t[::1] coefficients
    cdef int num_doors, door_capacity, team_size, sight_range, view_radius, damage
    cdef int64_t max_ticks
    cdef double fire_range, hit_probability, reward_scale
    cdef uint64_t mix_a, mix_b
    # The view digest's sum, word[k] * C[k] over the view, split by channel: the terrain
    # channels' part depends only on the fighter's cell (``terrain_sum``, per cell, made
    # once), the own-health channel's is its word times ``own_sum``, and the friend and
    # enemy channels' is kept by ``_fill_views`` as it writes them.
    cdef uint64_t *terrain_sum
    cdef uint64_t own_sum
    cdef uint64_t *fighter_sums
    cdef const float[:, :, ::1] terrain_views  # terrain_view_table(padded_codes)

    def __cinit__(self):
        self.terrain_sum = NULL
        self.fighter_sums = NULL

    def __dealloc__(self):
        free(self.terrain_sum)
        free(self.fighter_sums)

    def __init__(self, combat_map, rules, const int8_t[:, ::1] padded_codes, int view_radius,
                 bint shaped_rewards, const uint64_t[::1] coefficients, uint64_t mix_a, uint64_t mix_b):
        side = 2 * view_radius + 1
        if side * side * 5 > coefficients.shape[0]:
            raise ValueError(f"FighterTick: a view of {side * side * 5} words needs as many hash "
                             f"coefficients, got {coefficients.shape[0]}")
        self.cell_rows = combat_map.cell_rows
        self.cell_cols = combat_map.cell_cols
        self.blocks_sight = combat_map.blocks_sight.view("uint8")
        self.line_offsets = combat_map.line_of_sight_offsets(rules.sight_range)
        self.move_target = combat_map.move_target
        self.door_of_cell = combat_map.door_of_cell
        self.num_doors = combat_map.num_doors
        self.padded_codes = padded_codes
        self.coefficients = coefficients
        self.door_capacity = rules.door_capacity
        self.team_size = rules.team_size
        self.sight_range = rules.sight_range
        self.fire_range = rules.fire_range
        self.hit_probability = rules.hit_probability
        self.damage = rules.damage
        self.max_ticks = rules.max_ticks
        self.view_radius = view_radius
        # the shaped part divides the health balance by a whole team's health (0: unshaped)
        self.reward_scale = 100.0 * rules.team_size if shaped_rewards else 0.0
        self.mix_a = mix_a
        self.mix_b = mix_b
        cells = self.cell_rows.shape[0]
        self.terrain_sum = <uint64_t *> calloc(cells, sizeof(uint64_t))
        self.fighter_sums = <uint64_t *> calloc(2 * rules.team_size, sizeof(uint64_t))
        self.terrain_views = terrain_view_table(padded_codes)
        if self.terrain_sum == NULL or self.fighter_sums == NULL:
            raise MemoryError("FighterTick: no memory for the view tables")
        self.own_sum = 0
        for k in range(side * side):
            self.own_sum += coefficients[5 * k + 4]
        self._fill_terrain_sums(combat_map.width)

    cdef void _fill_terrain_sums(self, Py_ssize_t width) noexcept:
        """``terrain_sum[cell]`` for every cell: each blocked or door cell of the padded map
        adds its word times its coefficient to the cells whose view it falls in (an
        eighth of the cells are not ground, so this beats summing every window)."""
        cdef Py_ssize_t side = 2 * self.view_radius + 1
        cdef Py_ssize_t padded_row, padded_col, a, b, channel
        cdef int64_t row, col
        cdef int8_t code
        for padded_row in range(self.padded_codes.shape[0]):
            for padded_col in range(self.padded_codes.shape[1]):
                code = self.padded_codes[padded_row, padded_col]
                if code == 1 or code == 2:
                    channel = 0
                elif code == 3:
                    channel = 1
                else:
                    continue
                for a in range(side):  # it is entry (a, b) of the view from (row, col)
                    row = padded_row - a
                    if row < 0 or row >= self.padded_codes.shape[0] - 2 * self.view_radius:
                        continue
                    for b in range(side):
                        col = padded_col - b
                        if col < 0 or col >= width:
                            continue
                        self.terrain_sum[row * width + col] += (
                            _ONE_WORD * self.coefficients[5 * (a * side + b) + channel])

    cdef void _view_digests(self, const float[:, :, :, ::1] views, const int32_t[::1] positions,
                            const uint64_t *fighter_sums, const int64_t *actions,
                            uint64_t[::1] digests) noexcept nogil:
        """``chain_hashes`` from zero keys over the views, from their parts (see
        ``terrain_sum``): the same sum modulo 2**64, so the same digests."""
        cdef Py_ssize_t viewer
        cdef uint64_t observation_hash, mixed
        for viewer in range(views.shape[0]):
            observation_hash = (self.terrain_sum[positions[viewer]] + fighter_sums[viewer]
                                + _float_word(views[viewer, 0, 0, 4]) * self.own_sum)
            mixed = observation_hash * self.mix_a
            mixed ^= mixed >> 31
            digests[viewer] = (mixed + <uint64_t> actions[viewer] + 1) * self.mix_b

    def tick(self, joint, battle, double[::1] returns):
        """Play ``joint`` (one int per fighter, -1 or anything not a move or shoot holds) on
        ``battle`` (its ``Battle``). The battle's positions, health, alive, sight pairs,
        targets, seen enemies and damage dealt become fresh arrays (clones and callers may
        hold the previous ones), allocated here in C; its beliefs and ``returns`` are
        updated in place and its tick advances. Returns ``(winner, movers, views, masks,
        digests, rewards, balance)``: ATTACKERS (0), DEFENDERS (1), -1 when both teams are
        wiped out or None while the battle goes on; the fighters with two legal actions or
        more; every fighter's view, action mask (read-only int8), step digest and reward,
        fresh; the attackers' health inflicted minus lost this tick."""
        cdef Py_ssize_t size = self.team_size
        cdef Py_ssize_t count = 2 * size
        cdef cnp.npy_intp fighters[1]
        cdef cnp.npy_intp pairs[2]
        cdef cnp.npy_intp teams[2]
        cdef cnp.npy_intp view_shape[4]
        cdef cnp.npy_intp mask_shape[2]
        cdef cnp.npy_intp two[1]
        fighters[0] = count
        pairs[0] = pairs[1] = size
        teams[0], teams[1] = 2, size
        view_shape[0], view_shape[1], view_shape[2], view_shape[3] = (
            count, 2 * self.view_radius + 1, 2 * self.view_radius + 1, 5)
        mask_shape[0], mask_shape[1] = count, self.move_target.shape[0] + 2
        two[0] = 2
        target_before, distance_before = battle.target_of, battle.distance_pair
        cdef cnp.ndarray positions = cnp.PyArray_NewCopy(battle.positions, cnp.NPY_CORDER)
        cdef cnp.ndarray health = cnp.PyArray_NewCopy(battle.health, cnp.NPY_CORDER)
        cdef cnp.ndarray alive = cnp.PyArray_NewCopy(battle.alive, cnp.NPY_CORDER)
        cdef cnp.ndarray sees = cnp.PyArray_EMPTY(2, pairs, cnp.NPY_BOOL, 0)
        cdef cnp.ndarray distance = cnp.PyArray_EMPTY(2, pairs, cnp.NPY_DOUBLE, 0)
        cdef cnp.ndarray seen = cnp.PyArray_EMPTY(2, teams, cnp.NPY_BOOL, 0)
        cdef cnp.ndarray target_of = cnp.PyArray_EMPTY(1, fighters, cnp.NPY_INT64, 0)
        cdef cnp.ndarray damage_dealt = cnp.PyArray_EMPTY(1, two, cnp.NPY_INT64, 0)
        cdef cnp.ndarray views = cnp.PyArray_EMPTY(4, view_shape, cnp.NPY_FLOAT32, 0)
        cdef cnp.ndarray masks = cnp.PyArray_EMPTY(2, mask_shape, cnp.NPY_INT8, 0)
        cdef cnp.ndarray digests = cnp.PyArray_EMPTY(1, fighters, cnp.NPY_UINT64, 0)
        cdef cnp.ndarray rewards = cnp.PyArray_EMPTY(1, fighters, cnp.NPY_DOUBLE, 0)
        cdef int64_t tick = battle.tick
        winner, movers = self._play(
            joint, tick, battle.rng.bit_generator, positions, health, _bytes_of(alive), target_before,
            distance_before, battle.belief_cells, _bytes_of(sees), distance, _bytes_of(seen), target_of,
            damage_dealt, views, _bytes_of(masks), digests, rewards, returns)
        cnp.PyArray_CLEARFLAGS(masks, cnp.NPY_ARRAY_WRITEABLE)  # shared with clones and the envs
        battle.positions, battle.health, battle.alive = positions, health, alive
        battle.sees_pair, battle.distance_pair, battle.target_of = sees, distance, target_of
        battle.seen = (seen[0], seen[1])
        battle.damage_dealt = damage_dealt
        battle.tick = tick + 1
        cdef const int64_t[::1] dealt = damage_dealt
        return winner, movers, views, masks, digests, rewards, dealt[0] - dealt[1]

    cdef tuple _play(self, joint, int64_t tick, bit_generator,
                     int32_t[::1] positions, int32_t[::1] health, uint8_t[::1] alive,
                     const int64_t[::1] target_before, const double[:, ::1] distance_before,
                     int32_t[:, ::1] belief_cells, uint8_t[:, ::1] sees, double[:, ::1] distance,
                     uint8_t[:, ::1] seen, int64_t[::1] target_of, int64_t[::1] damage_dealt,
                     float[:, :, :, ::1] views, uint8_t[:, ::1] masks, uint64_t[::1] digests,
                     double[::1] rewards, double[::1] returns):
        """``tick``'s work on the battle's arrays: ``positions``, ``health``, ``alive``
        (copies of the battle's), ``belief_cells`` and ``returns`` are updated in place;
        ``target_before`` and ``distance_before`` are the battle's targets and distances
        before the tick; the other arrays are written whole. Returns ``(winner, movers)``."""
        cdef Py_ssize_t size = self.team_size
        cdef Py_ssize_t count = 2 * size
        cdef Py_ssize_t side = 2 * self.view_radius + 1
        cdef Py_ssize_t k
        cdef int winner
        cdef double team_reward[2]
        cdef bint done = True
        cdef bitgen_t *bitgen
        if not (len(joint) == positions.shape[0] == health.shape[0] == alive.shape[0]
                == target_before.shape[0] == target_of.shape[0] == views.shape[0] == masks.shape[0]
                == digests.shape[0] == rewards.shape[0] == returns.shape[0] == count
                and views.shape[1] == side and views.shape[2] == side and views.shape[3] == 5
                and masks.shape[1] == self.move_target.shape[0] + 2 and damage_dealt.shape[0] == 2
                and sees.shape[0] == sees.shape[1] == distance.shape[0] == distance.shape[1]
                == distance_before.shape[0] == distance_before.shape[1] == seen.shape[1] == size
                and seen.shape[0] == belief_cells.shape[0] == 2 and belief_cells.shape[1] == size):
            raise ValueError(f"FighterTick.tick: arrays of the wrong shape for {count} fighters "
                             f"with view radius {self.view_radius} (see the docstring)")
        cdef int64_t *actions = <int64_t *> malloc(count * sizeof(int64_t))
        cdef double *rolls = <double *> malloc(count * sizeof(double))
        cdef int32_t *wanted = <int32_t *> malloc(count * sizeof(int32_t))
        cdef uint8_t *fires = <uint8_t *> malloc(count * sizeof(uint8_t))
        if actions == NULL or rolls == NULL or wanted == NULL or fires == NULL:
            free(actions); free(rolls); free(wanted); free(fires)
            raise MemoryError("FighterTick: no memory for a tick")
        try:
            for k in range(count):
                actions[k] = joint[k]
            # the rolls Battle.step draws with Generator.random(2T), under the same lock
            bitgen = <bitgen_t *> PyCapsule_GetPointer(bit_generator.capsule, "BitGenerator")
            with bit_generator.lock:
                for k in range(count):
                    rolls[k] = bitgen.next_double(bitgen.state)
            _fighter_intents(actions, positions, self.move_target, wanted, fires)
            done = _advance(positions, health, alive, fires, wanted, False, rolls, target_before,
                            distance_before, self.door_of_cell, self.num_doors, self.door_capacity,
                            tick, self.team_size, self.hit_probability, self.fire_range,
                            self.damage, damage_dealt)
            if done:
                _update_sight(positions, alive, self.cell_rows, self.cell_cols, self.blocks_sight,
                              self.line_offsets, self.sight_range, self.fire_range,
                              self.team_size, belief_cells, sees, distance, seen, target_of)
                winner = _fighter_outcome(alive, self.team_size, tick + 1, self.max_ticks,
                                          damage_dealt[0] - damage_dealt[1], self.reward_scale,
                                          team_reward)
                for k in range(count):
                    rewards[k] = team_reward[0 if k < size else 1]
                    returns[k] += rewards[k]
                done = _fill_views(views, positions, health, alive, seen, self.padded_codes,
                                   self.cell_rows, self.cell_cols, self.view_radius, self.team_size,
                                   &self.coefficients[0], self.fighter_sums, &self.terrain_views[0, 0, 0])
            if done:
                done = _fighter_masks(masks, positions, alive, self.move_target, self.door_of_cell,
                                      self.num_doors, self.door_capacity, target_of)
            if done:
                self._view_digests(views, positions, self.fighter_sums, actions, digests)
        finally:
            free(actions); free(rolls); free(wanted); free(fires)
        if not done:
            raise MemoryError("FighterTick: no memory for a tick")
        return (None if winner == -2 else winner), _movers(masks)
