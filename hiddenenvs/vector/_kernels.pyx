# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False, language_level=3
"""Compiled batch kernels for :mod:`hiddenenvs.vector`: one object per env batch.

A kernel holds the state of ``num_envs`` games in flat arrays and steps all of them in
one ``nogil`` loop. It owns its output buffers (numpy arrays, exposed as attributes) and
rewrites them in place on every :meth:`VectorKernel.reset` and :meth:`VectorKernel.step`:

- ``observations``: ``[B, *shape]`` float32, the tensor of the player to move, or
  ``[B, P, *shape]`` for simultaneous games (every player's);
- ``legal_action_masks``: ``[B, A]`` int8 (``[B, P, A]`` for simultaneous games);
- ``current_players``: ``[B]`` int64, a player index or ``SIMULTANEOUS`` (-2);
- ``rewards``: ``[B, P]`` float32, the reward of the step's transition;
- ``terminated`` / ``truncated``: ``[B]`` bool;
- ``final_observations``: ``[B, P, *shape]`` float32, every player's tensor at the
  terminal state, valid in the rows where ``terminated`` is set;
- ``deals``: ``[B, K]`` int64, the chance outcomes of each env's current game, in the
  order the scalar game model asks for them (``K = 0`` for games without chance).

Chance uses one generator per env: splitmix64 (Steele, Lea and Flood 2014), a 64-bit
counter advanced by a constant and hashed, seeded from ``(seed, env index)``; a draw
below ``n`` takes the top 32 bits times ``n`` shifted down by 32 (Lemire's method without
rejection; its bias is below ``n / 2**32``, under 2e-9 for these games' ``n <= 6``).
So every env's games are a deterministic function of the seed and its index.

The rules are those of the scalar modules in :mod:`hiddenenvs.envs` (Kuhn poker, Leduc
hold'em, the matrix games, Othello, Liar's Dice, Goofspiel); ``tests/test_vector.py``
checks every tensor, mask, reward and termination against them. Kuhn's, Leduc's, Liar's
Dice's, Goofspiel's and Othello's are written in C once, beside each game
(``hiddenenvs/envs/_<game>.pxd``: a state struct, or Othello's bitboards, and inline
functions); a kernel class here holds an array of those states and passes its hooks
through. The matrix games' payoff lookup is written here (their scalar module reads the
same table in Python).
"""

cimport cython
from libc.stdint cimport int8_t, int16_t, int64_t, uint8_t, uint64_t
from libc.string cimport memcpy, memset
from hiddenenvs.envs._kuhn_poker cimport *
from hiddenenvs.envs._leduc_holdem cimport *
from hiddenenvs.envs._liars_dice cimport *
from hiddenenvs.envs._goofspiel cimport *
from hiddenenvs.envs._othello cimport OthelloGeometry, othello_flips, othello_geometry, othello_moves

import numpy as np

cimport numpy as cnp

cnp.import_array()

cdef extern from *:
    int __builtin_popcountll(unsigned long long) nogil
    int __builtin_ctzll(unsigned long long) nogil

cdef int SIMULTANEOUS = -2
cdef int TERMINAL = -4

cdef uint64_t GOLDEN = 0x9E3779B97F4A7C15ULL


cdef inline uint64_t _mix(uint64_t z) noexcept nogil:
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline uint64_t _next(uint64_t* state) noexcept nogil:
    state[0] += GOLDEN
    return _mix(state[0])


cdef inline int _below(uint64_t* state, int n) noexcept nogil:
    """A draw from ``0 .. n-1`` (see the module docstring)."""
    return <int>(((_next(state) >> 32) * <uint64_t>n) >> 32)


cdef inline void* _buffer_address(object buffer):
    """The address of a C-contiguous uint8 numpy array's first byte (a kernel's array of
    per-game state structs, which the kernel keeps alive)."""
    cdef uint8_t[::1] view = buffer
    return <void*>&view[0]


# Each byte's eight bits, lowest first, as floats and as int8 (Othello's planes and masks).
cdef float _BIT_FLOATS[256][8]
cdef int8_t _BIT_BYTES[256][8]


cdef void _fill_bit_tables() noexcept:
    cdef int byte, bit
    for byte in range(256):
        for bit in range(8):
            _BIT_FLOATS[byte][bit] = (byte >> bit) & 1
            _BIT_BYTES[byte][bit] = (byte >> bit) & 1


_fill_bit_tables()


cdef inline void _write_bit_floats(uint64_t bits, int count, float* out) noexcept nogil:
    """``out[k] = bit k of bits`` for ``k < count`` (as 0.0 or 1.0)."""
    cdef int byte, k
    for byte in range(count // 8):
        memcpy(out + 8 * byte, _BIT_FLOATS[(bits >> (8 * byte)) & 0xFF], 8 * sizeof(float))
    for k in range(count - count % 8, count):
        out[k] = <float>((bits >> k) & 1)


cdef inline void _write_bit_bytes(uint64_t bits, int count, int8_t* out) noexcept nogil:
    """``out[k] = bit k of bits`` for ``k < count`` (as 0 or 1)."""
    cdef int byte, k
    for byte in range(count // 8):
        memcpy(out + 8 * byte, _BIT_BYTES[(bits >> (8 * byte)) & 0xFF], 8)
    for k in range(count - count % 8, count):
        out[k] = <int8_t>((bits >> k) & 1)


def seed_generators(uint64_t[::1] states, uint64_t seed):
    """Set each env's generator from ``(seed, env index)``."""
    cdef Py_ssize_t i
    cdef uint64_t base = _mix(seed + GOLDEN)
    for i in range(states.shape[0]):
        states[i] = _mix(base ^ _mix(<uint64_t>i * GOLDEN + 1))


cdef inline int _count_nonzero_bytes(uint64_t word) noexcept nogil:
    """How many of ``word``'s eight bytes are nonzero: the top bit of each nonzero byte,
    moved to its lowest bit and summed by one multiply (``__builtin_popcountll`` is a
    library call on x86-64 without ``-mpopcnt``)."""
    cdef uint64_t low_bits = 0x7F7F7F7F7F7F7F7FULL
    cdef uint64_t flags = ((((word & low_bits) + low_bits) | word) & ~low_bits) >> 7
    return <int>((flags * 0x0101010101010101ULL) >> 56)


cdef inline int64_t _draw_legal(const int8_t* mask, int num_actions, uint64_t* state) noexcept nogil:
    """A legal action of ``mask`` drawn uniformly with ``state`` (-1, and no draw, if
    none is legal): the ``pick``-th legal action, ascending, for ``pick`` drawn below the
    count. With a few actions it is found without a branch per action (a branch on which
    action is the pick is mispredicted about every other draw, and cost more than the
    rest of the draw); with many (Othello's 65), eight mask entries at a time."""
    cdef int a, count = 0, seen = 0, pick, word_index, words = num_actions // 8
    cdef int64_t chosen = 0
    cdef int legal
    cdef uint64_t word
    if words > 0:
        for word_index in range(words):
            memcpy(&word, mask + 8 * word_index, 8)
            count += _count_nonzero_bytes(word)
        for a in range(8 * words, num_actions):
            count += mask[a] != 0
        if count == 0:
            return -1
        pick = _below(state, count)
        # The word holding the pick, by counts (any byte order), then its entries.
        word_index = 0
        while word_index < words:
            memcpy(&word, mask + 8 * word_index, 8)
            legal = _count_nonzero_bytes(word)
            if pick < legal:
                break
            pick -= legal
            word_index += 1
        for a in range(8 * word_index, num_actions):
            if mask[a] != 0:
                if pick == 0:
                    return a
                pick -= 1
        return -1  # not reached: pick < count
    for a in range(num_actions):
        count += mask[a] != 0
    if count == 0:
        return -1
    pick = _below(state, count)
    for a in range(num_actions):
        legal = mask[a] != 0
        chosen += (legal & (seen == pick)) * a
        seen += legal
    return chosen


cdef void _draw_legal_actions(
    const int8_t[:, ::1] masks, uint64_t[::1] states, int64_t* out
) noexcept nogil:
    """For each row of ``masks``, a legal action drawn uniformly with the row's generator
    (-1 for a row without one)."""
    cdef Py_ssize_t i
    cdef int num_actions = <int>masks.shape[1]
    for i in range(masks.shape[0]):
        out[i] = _draw_legal(&masks[i, 0], num_actions, &states[i])


def random_legal_actions(const int8_t[:, ::1] masks, uint64_t[::1] states, int64_t[::1] out):
    """For each row of ``masks`` (``[N, A]``), a legal action drawn uniformly with the
    row's generator in ``states`` (``[N]``), written to ``out`` (``[N]``). A row without a
    legal action gets -1."""
    if states.shape[0] != masks.shape[0] or out.shape[0] != masks.shape[0]:
        raise ValueError(
            f"random_legal_actions: {masks.shape[0]} mask rows, {states.shape[0]} generators, "
            f"{out.shape[0]} outputs; they must be equal"
        )
    if masks.shape[0] == 0:
        return
    with nogil:
        _draw_legal_actions(masks, states, &out[0])


def draw_from_masks(object masks, cnp.ndarray states):
    """The fast path of :class:`hiddenenvs.vector.RandomLegalPolicy`: for C-contiguous int8
    ``masks`` ``[..., A]`` with as many rows as ``states`` (C-contiguous uint64), the
    actions ``random_legal_actions`` draws, as int64 ``[...]``, in one call without
    memoryviews (their set-up cost more than a small batch's draws); else None, drawing
    nothing (the policy's general path then converts the masks or names the mismatch)."""
    cdef cnp.ndarray array
    cdef int ndim, num_actions
    cdef Py_ssize_t rows, r
    if not cnp.PyArray_Check(masks):
        return None
    array = <cnp.ndarray>masks
    ndim = cnp.PyArray_NDIM(array)
    if (
        ndim < 1 or cnp.PyArray_TYPE(array) != cnp.NPY_INT8 or not cnp.PyArray_IS_C_CONTIGUOUS(array)
        or cnp.PyArray_TYPE(states) != cnp.NPY_UINT64 or cnp.PyArray_NDIM(states) != 1
        or not cnp.PyArray_IS_C_CONTIGUOUS(states)
    ):
        return None
    num_actions = <int>array.shape[ndim - 1]
    if num_actions == 0:
        return None
    rows = cnp.PyArray_SIZE(array) // num_actions
    if rows != states.shape[0]:
        return None
    cdef cnp.ndarray out = cnp.PyArray_EMPTY(ndim - 1, array.shape, cnp.NPY_INT64, 0)
    cdef const int8_t* mask_data = <const int8_t*>cnp.PyArray_DATA(array)
    cdef uint64_t* state_data = <uint64_t*>cnp.PyArray_DATA(states)
    cdef int64_t* out_data = <int64_t*>cnp.PyArray_DATA(out)
    with nogil:
        for r in range(rows):
            out_data[r] = _draw_legal(mask_data + r * num_actions, num_actions, &state_data[r])
    return out


# ---- tabular policies --------------------------------------------------------------------
cdef struct TabularTable:
    const float* keys  # [num_infosets, size]: each information set's tensor
    const int64_t* players  # [num_infosets]: whose information set
    const int64_t* slots  # [capacity]: an information set's row, or -1 (open addressing)
    uint64_t slot_mask  # capacity - 1 (capacity a power of two)
    const double* cumulative  # [num_infosets, num_actions]: cumulative probabilities
    int size, num_actions


cdef inline uint64_t _tensor_hash(int64_t player, const float* tensor, int size) noexcept nogil:
    """A hash of ``player`` and the bytes of ``tensor`` (``size`` floats): the sum of its
    8-byte words each times its own odd constant, then ``_mix``. The products are
    independent, so they overlap in the pipeline (a multiply chained through every word
    took a third of a Leduc step); the probes check for an exact match, so the hash only
    has to spread the rows, not to be unique."""
    cdef uint64_t h = <uint64_t>player, word
    cdef uint64_t factor = 0x517CC1B727220A95ULL
    cdef int k
    for k in range(size // 2):
        memcpy(&word, tensor + 2 * k, 8)
        h += word * factor
        factor += 2 * GOLDEN  # odd plus even: stays odd
    if size % 2:
        word = 0
        memcpy(&word, tensor + size - 1, 4)
        h += word * factor
    return _mix(h)


cdef inline bint _same_bytes(const float* a, const float* b, int size) noexcept nogil:
    """Whether two tensors of ``size`` floats have the same bytes (the hash reads bytes;
    compared 8 at a time, not float by float)."""
    cdef uint64_t x = 0, y = 0
    cdef int k
    for k in range(size // 2):
        memcpy(&x, a + 2 * k, 8)
        memcpy(&y, b + 2 * k, 8)
        if x != y:
            return False
    if size % 2:
        memcpy(&x, a + size - 1, 4)
        memcpy(&y, b + size - 1, 4)
        return (x & 0xFFFFFFFFULL) == (y & 0xFFFFFFFFULL)
    return True


cdef inline int64_t _tabular_row(const TabularTable* table, int64_t player, const float* tensor) noexcept nogil:
    """The row of ``player``'s information set whose tensor has these bytes, or -1."""
    cdef uint64_t slot = _tensor_hash(player, tensor, table.size) & table.slot_mask
    cdef int64_t row
    while True:
        row = table.slots[slot]
        if row < 0:
            return -1
        if table.players[row] == player and _same_bytes(table.keys + row * table.size, tensor, table.size):
            return row
        slot = (slot + 1) & table.slot_mask


cdef inline int64_t _tabular_draw(
    const TabularTable* table, int64_t player, const float* tensor, const int8_t* mask, uint64_t* state
) noexcept nogil:
    """``player``'s action at the decision whose tensor and mask these are: its only legal
    action (no lookup, no draw; a simultaneous game's tree has no information set there),
    else the first action whose cumulative probability exceeds a uniform double drawn with
    ``state`` (the top 53 bits of one generator output). -1: the information set is not in
    the table; -2: the table's action is illegal here (a table of another game)."""
    cdef int a, count = 0, only = -1
    cdef int64_t row
    cdef double u
    cdef const double* cumulative
    for a in range(table.num_actions):
        if mask[a]:
            count += 1
            only = a
    if count == 1:
        return only
    row = _tabular_row(table, player, tensor)
    if row < 0:
        return -1
    u = <double>(_next(state) >> 11) * (1.0 / 9007199254740992.0)
    cumulative = table.cumulative + row * table.num_actions
    for a in range(table.num_actions):
        if u < cumulative[a]:
            return a if mask[a] else -2
    return -2  # not reached: the last entries are 1.0


cdef class TabularIndex:
    """A tabular policy as the kernels play it (built once by
    :class:`hiddenenvs.vector.TabularPolicy`): ``keys`` ``[N, S]`` float32 (each
    information set's tensor), ``players`` ``[N]`` int64 and ``cumulative`` ``[N, A]``
    float64 (cumulative action probabilities, 1.0 from the last action with mass on),
    indexed by an open-addressing hash table over ``(player, tensor bytes)`` of at least
    twice ``N`` slots. Two information sets with the same player and tensor raise
    ``ValueError`` (the tensor would not say which one a state is in)."""

    cdef readonly object keys, players, cumulative, slots
    cdef readonly int size, num_actions
    cdef TabularTable table

    def __init__(self, keys, players, cumulative):
        keys = np.ascontiguousarray(keys, dtype=np.float32)
        players = np.ascontiguousarray(players, dtype=np.int64)
        cumulative = np.ascontiguousarray(cumulative, dtype=np.float64)
        if keys.ndim != 2 or players.shape != (keys.shape[0],) or cumulative.ndim != 2 or cumulative.shape[0] != keys.shape[0]:
            raise ValueError(
                f"TabularIndex: keys [N, S], players [N] and cumulative [N, A], got "
                f"{keys.shape}, {players.shape} and {cumulative.shape}"
            )
        self.keys, self.players, self.cumulative = keys, players, cumulative
        self.size = <int>keys.shape[1]
        self.num_actions = <int>cumulative.shape[1]
        cdef Py_ssize_t capacity = 1
        while capacity < 2 * max(1, keys.shape[0]):
            capacity *= 2
        self.slots = np.full(capacity, -1, dtype=np.int64)
        cdef float[:, ::1] key_view = keys
        cdef int64_t[::1] player_view = players
        cdef int64_t[::1] slot_view = self.slots
        cdef double[:, ::1] cumulative_view = cumulative
        cdef uint64_t slot
        cdef Py_ssize_t row, other
        self.table.keys = &key_view[0, 0] if keys.size else NULL
        self.table.players = &player_view[0] if players.size else NULL
        self.table.slots = &slot_view[0]
        self.table.slot_mask = capacity - 1
        self.table.cumulative = &cumulative_view[0, 0] if cumulative.size else NULL
        self.table.size = self.size
        self.table.num_actions = self.num_actions
        for row in range(keys.shape[0]):
            other = _tabular_row(&self.table, player_view[row], &key_view[row, 0])
            if other >= 0:
                raise ValueError(
                    f"TabularIndex: information sets {other} and {row} of player "
                    f"{player_view[row]} have the same tensor"
                )
            slot = _tensor_hash(player_view[row], &key_view[row, 0], self.size) & self.table.slot_mask
            while slot_view[slot] >= 0:
                slot = (slot + 1) & self.table.slot_mask
            slot_view[slot] = row

    def lookup(self, int64_t player, const float[::1] tensor):
        """The row of ``player``'s information set with this tensor, or -1."""
        if tensor.shape[0] != self.size:
            raise ValueError(f"TabularIndex.lookup: a tensor of {self.size} floats, got {tensor.shape[0]}")
        return _tabular_row(&self.table, player, &tensor[0])

    def draw(
        self, const float[:, ::1] tensors, const int8_t[:, ::1] masks, const int64_t[::1] players,
        uint64_t[::1] states, int64_t[::1] out,
    ):
        """For each row ``r`` (a decision of ``players[r]`` with that tensor and mask), the
        action :func:`_tabular_draw` draws with generator ``states[r]``, into ``out[r]``.
        Returns -1, or ``(row, code)`` for the first row whose draw failed (code -1: its
        information set is not in the table; -2: the table's action is illegal there);
        the rows after it are not drawn."""
        cdef Py_ssize_t r, rows = tensors.shape[0]
        cdef int64_t action = 0
        if (
            tensors.shape[1] != self.size or masks.shape[1] != self.num_actions
            or masks.shape[0] != rows or players.shape[0] != rows
            or states.shape[0] != rows or out.shape[0] != rows
        ):
            raise ValueError(
                f"TabularIndex.draw: {rows} tensors of {tensors.shape[1]} floats (table: "
                f"{self.size}), masks {masks.shape[0]} x {masks.shape[1]} (actions: "
                f"{self.num_actions}), {players.shape[0]} players, {states.shape[0]} "
                f"generators, {out.shape[0]} outputs"
            )
        with nogil:
            for r in range(rows):
                action = _tabular_draw(&self.table, players[r], &tensors[r, 0], &masks[r, 0], &states[r])
                out[r] = action
                if action < 0:
                    break
        if action < 0:
            return r, action
        return -1


cdef class VectorKernel:
    """The batch loop shared by every game; a game subclass implements the per-env hooks.

    Hooks (all ``nogil``): ``reset_one`` starts env ``i``'s next game and plays its chance
    outcomes up to the first decision; ``apply`` plays a decision (a sequential game's
    action, or a simultaneous game's joint action in ``joint``) and any chance that follows;
    ``player`` is the player to move, ``SIMULTANEOUS`` or ``TERMINAL``; ``write_tensor``,
    ``write_mask`` and ``write_returns`` fill one row of the outputs.
    """

    cdef readonly Py_ssize_t num_envs
    cdef readonly int num_players, num_actions, observation_size, num_chance_outcomes
    cdef readonly bint simultaneous, information_state
    cdef readonly object observations, legal_action_masks, current_players, rewards
    cdef readonly object terminated, truncated, final_observations, deals, generator_states
    cdef float[:, ::1] _observations
    cdef int8_t[:, ::1] _masks
    cdef int64_t[::1] _players
    cdef float[:, ::1] _rewards
    cdef int8_t[::1] _terminated
    cdef float[:, ::1] _final
    cdef int64_t[:, ::1] _deals
    cdef uint64_t[::1] _rng
    cdef int64_t[:, ::1] _joint

    def _allocate(self, Py_ssize_t num_envs, int num_players, int num_actions, tuple observation_shape,
                  int num_chance_outcomes, bint simultaneous, bint information_state):
        if num_players != 2:
            raise ValueError(f"VectorKernel: the batch loop serves two-player games, got {num_players} players")
        self.num_envs = num_envs
        self.num_players = num_players
        self.num_actions = num_actions
        self.observation_size = int(np.prod(observation_shape))
        self.num_chance_outcomes = num_chance_outcomes
        self.simultaneous = simultaneous
        self.information_state = information_state
        seats = (num_players,) if simultaneous else ()
        self.observations = np.zeros((num_envs, *seats, *observation_shape), dtype=np.float32)
        self.legal_action_masks = np.zeros((num_envs, *seats, num_actions), dtype=np.int8)
        self.current_players = np.zeros(num_envs, dtype=np.int64)
        self.rewards = np.zeros((num_envs, num_players), dtype=np.float32)
        self.terminated = np.zeros(num_envs, dtype=bool)
        self.truncated = np.zeros(num_envs, dtype=bool)
        self.final_observations = np.zeros((num_envs, num_players, *observation_shape), dtype=np.float32)
        self.deals = np.zeros((num_envs, num_chance_outcomes), dtype=np.int64)
        self.generator_states = np.zeros(num_envs, dtype=np.uint64)
        rows = num_envs * (num_players if simultaneous else 1)
        self._observations = self.observations.reshape(rows, self.observation_size)
        self._masks = self.legal_action_masks.reshape(rows, num_actions)
        self._players = self.current_players
        self._rewards = self.rewards
        self._terminated = self.terminated.view(np.int8)
        self._final = self.final_observations.reshape(num_envs * num_players, self.observation_size)
        self._deals = self.deals
        self._rng = self.generator_states
        self._joint = np.zeros((num_envs, num_players), dtype=np.int64)

    # ---- hooks ---------------------------------------------------------------------
    cdef void reset_one(self, Py_ssize_t i) noexcept nogil:
        pass

    cdef void apply(self, Py_ssize_t i, int64_t* joint) noexcept nogil:
        pass

    cdef int player(self, Py_ssize_t i) noexcept nogil:
        return TERMINAL

    cdef void write_tensor(self, Py_ssize_t i, int player, float* out) noexcept nogil:
        pass

    cdef void write_mask(self, Py_ssize_t i, int player, int8_t* out) noexcept nogil:
        pass

    cdef void write_returns(self, Py_ssize_t i, float* out) noexcept nogil:
        pass

    # ---- the batch loop ------------------------------------------------------------
    cdef void _write_decision(self, Py_ssize_t i) noexcept nogil:
        """Write env ``i``'s player to move, tensor and mask (each game's class
        specialises :func:`_write_decision_of`)."""
        pass

    def reset(self):
        """Start a new game in every env (the generators continue where they are)."""
        cdef Py_ssize_t i
        with nogil:
            for i in range(self.num_envs):
                self.reset_one(i)
                self._write_decision(i)
                self._terminated[i] = 0
                memset(&self._rewards[i, 0], 0, self.num_players * sizeof(float))

    def step(self, cnp.ndarray actions, cnp.ndarray active):
        """Play ``actions`` (``[B, 1]`` int64 for sequential games, ``[B, P]`` for
        simultaneous ones) in every env where ``active`` (``[B]`` int8) is set; a finished
        game records its final tensors and restarts. An inactive env keeps its state and
        outputs, with zero rewards and ``terminated`` unset. Both arrays C-contiguous (read
        through their pointers: a memoryview argument cost a microsecond a call).

        Returns -1, or the index of the first env whose action is illegal (then no env
        has moved). A simultaneous player with one legal action has it played for them.
        """
        cdef Py_ssize_t illegal
        cdef Py_ssize_t columns = self.num_players if self.simultaneous else 1
        if (
            cnp.PyArray_TYPE(actions) != cnp.NPY_INT64 or cnp.PyArray_NDIM(actions) != 2
            or not cnp.PyArray_IS_C_CONTIGUOUS(actions)
            or actions.shape[0] != self.num_envs or actions.shape[1] != columns
        ):
            raise ValueError(
                f"step: actions must be C-contiguous int64 of shape ({self.num_envs}, {columns}), "
                f"got {actions.dtype} {(<object>actions).shape}"
            )
        if (
            cnp.PyArray_ITEMSIZE(active) != 1 or cnp.PyArray_NDIM(active) != 1
            or not cnp.PyArray_IS_C_CONTIGUOUS(active) or active.shape[0] != self.num_envs
        ):
            raise ValueError(
                f"step: active must be C-contiguous int8 of shape ({self.num_envs},), got "
                f"{active.dtype} {(<object>active).shape}"
            )
        cdef const int64_t* action_data = <const int64_t*>cnp.PyArray_DATA(actions)
        cdef const int8_t* active_data = <const int8_t*>cnp.PyArray_DATA(active)
        with nogil:
            illegal = self._resolve(action_data, active_data, 0, self.num_envs)
            if illegal < 0:
                self._advance(active_data, 0, self.num_envs)
        return illegal

    def random_steps(
        self,
        Py_ssize_t num_steps,
        uint64_t[::1] policy_states,
        double[:, ::1] reward_sums,
        int64_t[::1] episodes,
        Py_ssize_t start=0,
        Py_ssize_t stop=-1,
    ):
        """``num_steps`` steps of the envs ``start .. stop - 1`` (default all) with
        uniform legal actions drawn as :func:`random_legal_actions` draws them from the
        masks (one generator per mask row in ``policy_states``), in one call: the same
        games as that many ``step`` calls with those draws. Adds each env's rewards to
        ``reward_sums`` (``[B, P]``) and its finished games to ``episodes`` (``[B]``).
        Calls on disjoint env ranges touch disjoint rows, and run in parallel from
        several threads (the loop holds no GIL)."""
        cdef Py_ssize_t rows = self._masks.shape[0]
        cdef Py_ssize_t per_env = rows // self.num_envs
        if stop < 0:
            stop = self.num_envs
        if not 0 <= start <= stop <= self.num_envs:
            raise ValueError(
                f"random_steps: env range {start}..{stop} outside 0..{self.num_envs}"
            )
        if policy_states.shape[0] != rows:
            raise ValueError(
                f"random_steps: {policy_states.shape[0]} policy generators for {rows} mask rows"
            )
        if reward_sums.shape[0] != self.num_envs or reward_sums.shape[1] != self.num_players:
            raise ValueError(
                f"random_steps: reward_sums must be ({self.num_envs}, {self.num_players}), got "
                f"({reward_sums.shape[0]}, {reward_sums.shape[1]})"
            )
        if episodes.shape[0] != self.num_envs:
            raise ValueError(f"random_steps: episodes must have {self.num_envs} entries")
        if start == stop or num_steps == 0:
            return
        with nogil:
            self._random_steps(num_steps, policy_states, reward_sums, episodes, start, stop)

    cdef void _random_steps(
        self, Py_ssize_t num_steps, uint64_t[::1] policy_states, double[:, ::1] reward_sums,
        int64_t[::1] episodes, Py_ssize_t start, Py_ssize_t stop,
    ) noexcept nogil:
        """:meth:`random_steps`' loop (each game's class specialises
        :func:`_random_steps_of`)."""
        pass

    cdef void _advance(self, const int8_t* active, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
        """Play the resolved joint actions in ``_joint`` in the active envs among
        ``start .. stop - 1`` (each game's
        class specialises :func:`_advance_of`)."""
        pass

    cdef Py_ssize_t _resolve(
        self, const int64_t* actions, const int8_t* active, Py_ssize_t start, Py_ssize_t stop
    ) noexcept nogil:
        """Check the active envs' ``actions`` (``[B, columns]``, among ``start .. stop - 1``)
        against the masks and copy them to ``_joint``
        (a simultaneous player's only legal action replaces their entry); the first
        illegal env, or -1."""
        cdef Py_ssize_t i, row
        cdef int p, a, count, forced
        cdef int64_t action
        for i in range(start, stop):
            if not active[i]:
                continue
            if self.simultaneous:
                for p in range(self.num_players):
                    row = i * self.num_players + p
                    count = 0
                    forced = -1
                    for a in range(self.num_actions):
                        if self._masks[row, a]:
                            count += 1
                            forced = a
                    action = actions[row]
                    if count > 1:
                        if action < 0 or action >= self.num_actions or not self._masks[row, action]:
                            return i
                        self._joint[i, p] = action
                    else:
                        self._joint[i, p] = forced
            else:
                action = actions[i]
                if action < 0 or action >= self.num_actions or not self._masks[i, action]:
                    return i
                self._joint[i, 0] = action
        return -1


# ---- Kuhn poker (rules: hiddenenvs/envs/_kuhn_poker.pxd) -------------------------------
@cython.final
cdef class KuhnKernel(VectorKernel):
    """Kuhn poker (rules: :mod:`hiddenenvs.envs.kuhn_poker`, in C in
    ``hiddenenvs/envs/_kuhn_poker.pxd``). Deals: player 0's card, player 1's card (0 = J,
    1 = Q, 2 = K)."""

    cdef object _state_buffer  # owns the games' states
    cdef KuhnState* games

    cdef void _write_decision(self, Py_ssize_t i) noexcept nogil:
        _write_decision_of(self, i)

    cdef void _advance(self, const int8_t* active, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
        _advance_of(self, active, start, stop)

    cdef void _random_steps(
        self, Py_ssize_t num_steps, uint64_t[::1] policy_states, double[:, ::1] reward_sums,
        int64_t[::1] episodes, Py_ssize_t start, Py_ssize_t stop,
    ) noexcept nogil:
        _random_steps_of(self, num_steps, policy_states, reward_sums, episodes, start, stop)

    def __init__(self, Py_ssize_t num_envs, bint information_state):
        shape = (KUHN_INFORMATION_STATE_SIZE,) if information_state else (KUHN_OBSERVATION_SIZE,)
        self._allocate(num_envs, 2, 2, shape, 2, False, information_state)
        self._state_buffer = np.zeros(num_envs * sizeof(KuhnState), dtype=np.uint8)
        self.games = <KuhnState*>_buffer_address(self._state_buffer)

    cdef void reset_one(self, Py_ssize_t i) noexcept nogil:
        cdef int first = _below(&self._rng[i], 3)
        kuhn_deal(&self.games[i], first, _below(&self._rng[i], 2))
        self._deals[i, 0] = self.games[i].cards[0]
        self._deals[i, 1] = self.games[i].cards[1]

    cdef void apply(self, Py_ssize_t i, int64_t* joint) noexcept nogil:
        kuhn_apply(&self.games[i], <int>joint[0])

    cdef int player(self, Py_ssize_t i) noexcept nogil:
        return TERMINAL if kuhn_over(&self.games[i]) else kuhn_player(&self.games[i])

    cdef void write_tensor(self, Py_ssize_t i, int player, float* out) noexcept nogil:
        if self.information_state:
            kuhn_information_state_tensor(&self.games[i], player, out)
        else:
            kuhn_observation_tensor(&self.games[i], player, out)

    cdef void write_mask(self, Py_ssize_t i, int player, int8_t* out) noexcept nogil:
        kuhn_legal_mask(&self.games[i], out)

    cdef void write_returns(self, Py_ssize_t i, float* out) noexcept nogil:
        kuhn_returns(&self.games[i], out)


# ---- Leduc hold'em (rules: hiddenenvs/envs/_leduc_holdem.pxd) ---------------------------
@cython.final
cdef class LeducKernel(VectorKernel):
    """Leduc hold'em (rules: :mod:`hiddenenvs.envs.leduc_holdem`, in C in
    ``hiddenenvs/envs/_leduc_holdem.pxd``). Three cards are drawn from the six at the
    deal (ranks 0 = J, 1 = Q, 2 = K): player 0's, player 1's, and the public card, which
    stays hidden until the first round ends. Deals: those three ranks (a game that ends
    in round 1 never reveals the third)."""

    cdef LeducRules rules
    cdef object _state_buffer  # owns the games' states
    cdef LeducState* games

    cdef void _write_decision(self, Py_ssize_t i) noexcept nogil:
        _write_decision_of(self, i)

    cdef void _advance(self, const int8_t* active, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
        _advance_of(self, active, start, stop)

    cdef void _random_steps(
        self, Py_ssize_t num_steps, uint64_t[::1] policy_states, double[:, ::1] reward_sums,
        int64_t[::1] episodes, Py_ssize_t start, Py_ssize_t stop,
    ) noexcept nogil:
        _random_steps_of(self, num_steps, policy_states, reward_sums, episodes, start, stop)

    def __init__(self, Py_ssize_t num_envs, bint information_state, int max_raises):
        if not 1 <= max_raises <= LEDUC_MAX_TURNS - 2:
            raise ValueError(f"LeducKernel: max_raises must be 1 to {LEDUC_MAX_TURNS - 2}, got {max_raises}")
        leduc_rules(&self.rules, max_raises)
        shape = (8 + 6 * self.rules.turns_per_round,) if information_state else (10,)
        self._allocate(num_envs, 2, 3, shape, 3, False, information_state)
        self._state_buffer = np.zeros(num_envs * sizeof(LeducState), dtype=np.uint8)
        self.games = <LeducState*>_buffer_address(self._state_buffer)

    cdef void reset_one(self, Py_ssize_t i) noexcept nogil:
        cdef int first = _below(&self._rng[i], 6)
        cdef int second = _below(&self._rng[i], 5)
        cdef int third = _below(&self._rng[i], 4)
        cdef LeducState* game = &self.games[i]
        leduc_deal(game, first, second, third)
        self._deals[i, 0] = game.ranks[0]
        self._deals[i, 1] = game.ranks[1]
        self._deals[i, 2] = game.ranks[2]

    cdef void apply(self, Py_ssize_t i, int64_t* joint) noexcept nogil:
        leduc_apply(&self.games[i], <int>joint[0])

    cdef int player(self, Py_ssize_t i) noexcept nogil:
        return TERMINAL if leduc_over(&self.games[i]) else leduc_player(&self.games[i])

    cdef void write_tensor(self, Py_ssize_t i, int player, float* out) noexcept nogil:
        if self.information_state:
            leduc_information_state_tensor(&self.rules, &self.games[i], player, out)
        else:
            leduc_observation_tensor(&self.rules, &self.games[i], player, out)

    cdef void write_mask(self, Py_ssize_t i, int player, int8_t* out) noexcept nogil:
        leduc_legal_mask(&self.rules, &self.games[i], player, out)

    cdef void write_returns(self, Py_ssize_t i, float* out) noexcept nogil:
        leduc_returns(&self.games[i], out)


# ---- matrix games ----------------------------------------------------------------------
@cython.final
cdef class MatrixKernel(VectorKernel):
    """A two-player matrix game (rules: :mod:`hiddenenvs.envs.matrix_games`): one
    simultaneous choice, then the payoff to player 0 and its negative to player 1."""

    cdef float[:, ::1] payoff
    cdef int64_t[:, ::1] joint_played
    cdef int8_t[::1] played

    cdef void _write_decision(self, Py_ssize_t i) noexcept nogil:
        _write_decision_of(self, i)

    cdef void _advance(self, const int8_t* active, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
        _advance_of(self, active, start, stop)

    cdef void _random_steps(
        self, Py_ssize_t num_steps, uint64_t[::1] policy_states, double[:, ::1] reward_sums,
        int64_t[::1] episodes, Py_ssize_t start, Py_ssize_t stop,
    ) noexcept nogil:
        _random_steps_of(self, num_steps, policy_states, reward_sums, episodes, start, stop)

    def __init__(self, Py_ssize_t num_envs, payoff):
        payoff = np.ascontiguousarray(payoff, dtype=np.float32)
        num_actions = payoff.shape[0]
        self._allocate(num_envs, 2, num_actions, (2 + 2 * num_actions,), 0, True, True)
        self.payoff = payoff
        self.joint_played = np.zeros((num_envs, 2), dtype=np.int64)
        self.played = np.zeros(num_envs, dtype=np.int8)

    cdef void reset_one(self, Py_ssize_t i) noexcept nogil:
        self.played[i] = 0

    cdef void apply(self, Py_ssize_t i, int64_t* joint) noexcept nogil:
        self.joint_played[i, 0] = joint[0]
        self.joint_played[i, 1] = joint[1]
        self.played[i] = 1

    cdef int player(self, Py_ssize_t i) noexcept nogil:
        return TERMINAL if self.played[i] else SIMULTANEOUS

    cdef void write_tensor(self, Py_ssize_t i, int player, float* out) noexcept nogil:
        out[player] = 1
        if self.played[i]:
            out[2 + self.joint_played[i, player]] = 1
            out[2 + self.num_actions + self.joint_played[i, 1 - player]] = 1

    cdef void write_mask(self, Py_ssize_t i, int player, int8_t* out) noexcept nogil:
        cdef int a
        for a in range(self.num_actions):
            out[a] = 1

    cdef void write_returns(self, Py_ssize_t i, float* out) noexcept nogil:
        cdef float value = self.payoff[self.joint_played[i, 0], self.joint_played[i, 1]]
        out[0] = value
        out[1] = -value


# ---- Othello ---------------------------------------------------------------------------
@cython.final
cdef class OthelloKernel(VectorKernel):
    """Othello on a 4x4, 6x6 or 8x8 board (rules: :mod:`hiddenenvs.envs.othello`), on
    the game model's bitboards (``hiddenenvs/envs/_othello.pxd``, one copy of the move
    generation and flips): two ``uint64`` per env, one bit per square ``row * size + column``."""

    cdef int size, num_squares
    cdef uint64_t full
    cdef uint64_t[:, ::1] discs  # black, white
    cdef int8_t[::1] to_move
    cdef uint64_t[::1] moves
    cdef int8_t[::1] over
    cdef uint64_t initial_black, initial_white
    cdef OthelloGeometry geometry

    cdef void _write_decision(self, Py_ssize_t i) noexcept nogil:
        _write_decision_of(self, i)

    cdef void _advance(self, const int8_t* active, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
        _advance_of(self, active, start, stop)

    cdef void _random_steps(
        self, Py_ssize_t num_steps, uint64_t[::1] policy_states, double[:, ::1] reward_sums,
        int64_t[::1] episodes, Py_ssize_t start, Py_ssize_t stop,
    ) noexcept nogil:
        _random_steps_of(self, num_steps, policy_states, reward_sums, episodes, start, stop)

    def __init__(self, Py_ssize_t num_envs, int size):
        cdef int half = size // 2
        othello_geometry(&self.geometry, size)
        self.size = size
        self.num_squares = size * size
        self.full = self.geometry.full
        self.initial_black = ((<uint64_t>1) << ((half - 1) * size + half)) | ((<uint64_t>1) << (half * size + half - 1))
        self.initial_white = ((<uint64_t>1) << ((half - 1) * size + half - 1)) | ((<uint64_t>1) << (half * size + half))
        self._allocate(num_envs, 2, self.num_squares + 1, (3, size, size), 0, False, True)
        self.discs = np.zeros((num_envs, 2), dtype=np.uint64)
        self.to_move = np.zeros(num_envs, dtype=np.int8)
        self.moves = np.zeros(num_envs, dtype=np.uint64)
        self.over = np.zeros(num_envs, dtype=np.int8)

    cdef uint64_t _moves(self, uint64_t own, uint64_t opponent) noexcept nogil:
        return othello_moves(&self.geometry, own, opponent)

    cdef uint64_t _flips(self, uint64_t square_bit, uint64_t own, uint64_t opponent) noexcept nogil:
        return othello_flips(&self.geometry, square_bit, own, opponent)

    cdef void reset_one(self, Py_ssize_t i) noexcept nogil:
        self.discs[i, 0] = self.initial_black
        self.discs[i, 1] = self.initial_white
        self.to_move[i] = 0
        self.moves[i] = self._moves(self.initial_black, self.initial_white)
        self.over[i] = 0

    cdef void apply(self, Py_ssize_t i, int64_t* joint) noexcept nogil:
        cdef int player = self.to_move[i]
        cdef uint64_t own = self.discs[i, player], opponent = self.discs[i, 1 - player]
        cdef uint64_t square_bit, flipped, next_moves
        if joint[0] != self.num_squares:
            square_bit = (<uint64_t>1) << joint[0]
            flipped = self._flips(square_bit, own, opponent)
            own |= square_bit | flipped
            opponent &= ~flipped
            self.discs[i, player] = own
            self.discs[i, 1 - player] = opponent
        next_moves = self._moves(opponent, own)
        self.moves[i] = next_moves
        self.over[i] = next_moves == 0 and self._moves(own, opponent) == 0
        self.to_move[i] = 1 - player

    cdef int player(self, Py_ssize_t i) noexcept nogil:
        return TERMINAL if self.over[i] else self.to_move[i]

    cdef void write_tensor(self, Py_ssize_t i, int player, float* out) noexcept nogil:
        # Every value is written (the batch loop skips the zeroing), eight squares at a
        # time from a table: a branch per square on an unpredictable board cost more than
        # the rest of the step, and a shift per square twice this.
        cdef uint64_t own = self.discs[i, player], opponent = self.discs[i, 1 - player]
        cdef int squares = self.num_squares
        _write_bit_floats(own, squares, out)
        _write_bit_floats(opponent, squares, out + squares)
        _write_bit_floats(self.full & ~(own | opponent), squares, out + 2 * squares)

    cdef void write_mask(self, Py_ssize_t i, int player, int8_t* out) noexcept nogil:
        # Every entry is written (the batch loop skips the zeroing): the move squares, or
        # the pass alone.
        cdef uint64_t bits = self.moves[i]
        _write_bit_bytes(bits, self.num_squares, out)
        out[self.num_squares] = bits == 0

    cdef void write_returns(self, Py_ssize_t i, float* out) noexcept nogil:
        cdef int black = __builtin_popcountll(self.discs[i, 0])
        cdef int white = __builtin_popcountll(self.discs[i, 1])
        cdef float result = 1 if black > white else (-1 if black < white else 0)
        out[0] = result
        out[1] = -result


# ---- Liar's Dice (rules: hiddenenvs/envs/_liars_dice.pxd) -------------------------------
@cython.final
cdef class LiarsDiceKernel(VectorKernel):
    """Liar's Dice (rules: :mod:`hiddenenvs.envs.liars_dice`, in C in
    ``hiddenenvs/envs/_liars_dice.pxd``). Deals: the ``2 D`` rolls, player 0's dice
    first, each ``face - 1``."""

    cdef LiarsDiceRules rules
    cdef object _state_buffer  # owns the games' states
    cdef LiarsDiceState* games

    cdef void _write_decision(self, Py_ssize_t i) noexcept nogil:
        _write_decision_of(self, i)

    cdef void _advance(self, const int8_t* active, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
        _advance_of(self, active, start, stop)

    cdef void _random_steps(
        self, Py_ssize_t num_steps, uint64_t[::1] policy_states, double[:, ::1] reward_sums,
        int64_t[::1] episodes, Py_ssize_t start, Py_ssize_t stop,
    ) noexcept nogil:
        _random_steps_of(self, num_steps, policy_states, reward_sums, episodes, start, stop)

    def __init__(self, Py_ssize_t num_envs, bint information_state, int num_dice, int faces):
        if not (1 <= num_dice <= LIARS_DICE_MAX_DICE and 2 <= faces <= LIARS_DICE_MAX_FACES):
            raise ValueError(
                f"LiarsDiceKernel: num_dice must be 1 to {LIARS_DICE_MAX_DICE} and faces 2 to "
                f"{LIARS_DICE_MAX_FACES}, got {num_dice} and {faces}"
            )
        liars_dice_rules(&self.rules, num_dice, faces, information_state)
        shape = (liars_dice_tensor_size(&self.rules),)
        self._allocate(num_envs, 2, self.rules.num_bids + 1, shape, 2 * num_dice, False, information_state)
        self._state_buffer = np.zeros(num_envs * sizeof(LiarsDiceState), dtype=np.uint8)
        self.games = <LiarsDiceState*>_buffer_address(self._state_buffer)

    cdef void reset_one(self, Py_ssize_t i) noexcept nogil:
        cdef int player, die, face
        cdef LiarsDiceState* game = &self.games[i]
        liars_dice_clear(&self.rules, game)
        for player in range(2):
            for die in range(self.rules.num_dice):
                face = _below(&self._rng[i], self.rules.faces) + 1
                self._deals[i, player * self.rules.num_dice + die] = face - 1
                liars_dice_roll(&self.rules, game, player, die, face)

    cdef void apply(self, Py_ssize_t i, int64_t* joint) noexcept nogil:
        liars_dice_apply(&self.games[i], <int>joint[0])

    cdef int player(self, Py_ssize_t i) noexcept nogil:
        if liars_dice_over(&self.rules, &self.games[i]):
            return TERMINAL
        return liars_dice_player(&self.games[i])

    cdef void write_tensor(self, Py_ssize_t i, int player, float* out) noexcept nogil:
        liars_dice_tensor(&self.rules, &self.games[i], player, out)

    cdef void write_mask(self, Py_ssize_t i, int player, int8_t* out) noexcept nogil:
        liars_dice_legal_mask(&self.rules, &self.games[i], out)

    cdef void write_returns(self, Py_ssize_t i, float* out) noexcept nogil:
        liars_dice_returns(&self.rules, &self.games[i], out)


# ---- Goofspiel (rules: hiddenenvs/envs/_goofspiel.pxd) ----------------------------------
@cython.final
cdef class GoofspielKernel(VectorKernel):
    """Goofspiel and II-Goofspiel (rules: :mod:`hiddenenvs.envs.goofspiel`, in C in
    ``hiddenenvs/envs/_goofspiel.pxd``). With a random deck the whole order of the point
    cards is drawn at the deal (each card uniform among those left, as the scalar game's
    chance nodes draw them) and revealed from that order at each chance node; deals: the
    first ``N - 1`` point cards, each ``value - 1`` (the last one is forced)."""

    cdef GoofspielRules rules
    cdef bint point_difference
    cdef int16_t[::1] fixed_order
    cdef int16_t[:, ::1] order  # each env's point cards, in the order they are revealed
    cdef int16_t[:, ::1] arrays  # each env's state arrays (goofspiel_bind)
    cdef object _state_buffer  # owns the games' states
    cdef GoofspielState* games

    cdef void _write_decision(self, Py_ssize_t i) noexcept nogil:
        _write_decision_of(self, i)

    cdef void _advance(self, const int8_t* active, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
        _advance_of(self, active, start, stop)

    cdef void _random_steps(
        self, Py_ssize_t num_steps, uint64_t[::1] policy_states, double[:, ::1] reward_sums,
        int64_t[::1] episodes, Py_ssize_t start, Py_ssize_t stop,
    ) noexcept nogil:
        _random_steps_of(self, num_steps, policy_states, reward_sums, episodes, start, stop)

    def __init__(self, Py_ssize_t num_envs, bint information_state, int num_cards, fixed_points,
                 bint imp_info, bint point_difference):
        if not 2 <= num_cards <= 10_000:  # ranks are int16_t
            raise ValueError(f"GoofspielKernel: num_cards must be 2 to 10000, got {num_cards}")
        n = num_cards
        self.point_difference = point_difference
        self.fixed_order = np.asarray(fixed_points if fixed_points is not None else range(1, n + 1), dtype=np.int16)
        goofspiel_rules(&self.rules, n, imp_info, NULL if fixed_points is None else &self.fixed_order[0])
        if information_state:
            shape = (goofspiel_information_state_size(&self.rules),)
        else:
            shape = (goofspiel_observation_size(&self.rules),)
        self._allocate(num_envs, 2, n, shape, n - 1 if self.rules.random_deck else 0, True, information_state)
        self.order = np.zeros((num_envs, n), dtype=np.int16)
        self.arrays = np.zeros((num_envs, goofspiel_buffer_length(n)), dtype=np.int16)
        self._state_buffer = np.zeros(num_envs * sizeof(GoofspielState), dtype=np.uint8)
        self.games = <GoofspielState*>_buffer_address(self._state_buffer)
        cdef Py_ssize_t i
        for i in range(num_envs):
            goofspiel_bind(&self.games[i], n, &self.arrays[i, 0])

    cdef void reset_one(self, Py_ssize_t i) noexcept nogil:
        cdef int n = self.rules.num_cards, rank = 0, index, pick
        cdef GoofspielState* game = &self.games[i]
        goofspiel_start(&self.rules, game)
        if self.rules.random_deck:
            # The whole order now, each card the pick-th of those not yet in it (the
            # fresh game's undrawn flags serve as the scratch, and are set back).
            for index in range(n):
                pick = _below(&self._rng[i], n - index)
                for rank in range(1, n + 1):
                    if game.undrawn[rank]:
                        if pick == 0:
                            break
                        pick -= 1
                self.order[i, index] = rank
                game.undrawn[rank] = 0
                if index < n - 1:
                    self._deals[i, index] = rank - 1
            for rank in range(1, n + 1):
                game.undrawn[rank] = 1
            goofspiel_reveal(game, self.order[i, 0])

    cdef void apply(self, Py_ssize_t i, int64_t* joint) noexcept nogil:
        cdef GoofspielState* game = &self.games[i]
        goofspiel_play(&self.rules, game, <int>joint[0], <int>joint[1])
        if game.phase == GOOFSPIEL_CHANCE:
            goofspiel_reveal(game, self.order[i, game.revealed])

    cdef int player(self, Py_ssize_t i) noexcept nogil:
        return TERMINAL if self.games[i].phase == GOOFSPIEL_TERMINAL else SIMULTANEOUS

    cdef void write_tensor(self, Py_ssize_t i, int player, float* out) noexcept nogil:
        if self.information_state:
            goofspiel_information_state_tensor(&self.rules, &self.games[i], player, out)
        else:
            goofspiel_observation_tensor(&self.rules, &self.games[i], player, out)

    cdef void write_mask(self, Py_ssize_t i, int player, int8_t* out) noexcept nogil:
        goofspiel_hand_mask(&self.rules, &self.games[i], player, out)

    cdef void write_returns(self, Py_ssize_t i, float* out) noexcept nogil:
        goofspiel_returns(&self.games[i], self.point_difference, out)


# ---- the batch loop, specialised per game --------------------------------------------------
# One copy of the loop per game class (a fused type): the classes are final, so the hooks
# are direct calls the C compiler inlines, instead of one virtual call per hook and env.
ctypedef fused GameKernel:
    KuhnKernel
    LeducKernel
    MatrixKernel
    OthelloKernel
    LiarsDiceKernel
    GoofspielKernel


cdef inline bint _writes_every_value(GameKernel self) noexcept nogil:
    """Whether the game's ``write_tensor`` and ``write_mask`` write every entry, so the
    batch loop need not zero the rows first (a call to ``memset`` per row; Kuhn's and
    Othello's sizes are fixed, and they write zeros and ones alike)."""
    return GameKernel is OthelloKernel or GameKernel is KuhnKernel


cdef inline void _zero_rewards(GameKernel self, Py_ssize_t i) noexcept nogil:
    # Two stores, not a memset call of a size known only at run time: every game of this
    # module has two players (VectorKernel._allocate checks).
    self._rewards[i, 0] = 0
    self._rewards[i, 1] = 0


cdef inline void _write_decision_of(GameKernel self, Py_ssize_t i) noexcept nogil:
    """Write env ``i``'s player to move, tensor and mask."""
    cdef int player = self.player(i)
    cdef int p
    cdef Py_ssize_t row
    self._players[i] = player
    if self.simultaneous:
        for p in range(self.num_players):
            row = i * self.num_players + p
            if not _writes_every_value(self):
                memset(&self._observations[row, 0], 0, self.observation_size * sizeof(float))
            self.write_tensor(i, p, &self._observations[row, 0])
            memset(&self._masks[row, 0], 0, self.num_actions)
            self.write_mask(i, p, &self._masks[row, 0])
    else:
        if not _writes_every_value(self):
            memset(&self._observations[i, 0], 0, self.observation_size * sizeof(float))
        self.write_tensor(i, player, &self._observations[i, 0])
        if not _writes_every_value(self):
            memset(&self._masks[i, 0], 0, self.num_actions)
        self.write_mask(i, player, &self._masks[i, 0])


cdef inline void _advance_of(
    GameKernel self, const int8_t* active, Py_ssize_t start, Py_ssize_t stop
) noexcept nogil:
    """Play the resolved joint actions in ``_joint`` in the active envs among
    ``start .. stop - 1``."""
    cdef Py_ssize_t i, row
    cdef int p
    for i in range(start, stop):
        if not active[i]:
            _zero_rewards(self, i)
            self._terminated[i] = 0
            continue
        self.apply(i, &self._joint[i, 0])
        if self.player(i) == TERMINAL:
            self.write_returns(i, &self._rewards[i, 0])
            for p in range(self.num_players):
                row = i * self.num_players + p
                if not _writes_every_value(self):
                    memset(&self._final[row, 0], 0, self.observation_size * sizeof(float))
                self.write_tensor(i, p, &self._final[row, 0])
            self._terminated[i] = 1
            self.reset_one(i)
        else:
            _zero_rewards(self, i)
            self._terminated[i] = 0
        _write_decision_of(self, i)


cdef inline void _write_masks_of(GameKernel self, Py_ssize_t i) noexcept nogil:
    """Write env ``i``'s masks alone (the random play's draws read nothing else)."""
    cdef int p
    cdef Py_ssize_t row
    if self.simultaneous:
        for p in range(self.num_players):
            row = i * self.num_players + p
            memset(&self._masks[row, 0], 0, self.num_actions)
            self.write_mask(i, p, &self._masks[row, 0])
    else:
        if not _writes_every_value(self):
            memset(&self._masks[i, 0], 0, self.num_actions)
        self.write_mask(i, self.player(i), &self._masks[i, 0])


cdef inline void _finish_play_step(
    GameKernel self, Py_ssize_t i, double[:, ::1] reward_sums, int64_t[::1] episodes
) noexcept nogil:
    """After env ``i``'s move in a fused loop (random or tabular): a finished game adds
    its returns to ``reward_sums``, writes its final tensors, counts in ``episodes`` and
    restarts; else the step's rewards are zero."""
    cdef Py_ssize_t row
    cdef int p
    if self.player(i) == TERMINAL:
        self.write_returns(i, &self._rewards[i, 0])
        for p in range(self.num_players):
            reward_sums[i, p] += self._rewards[i, p]
            row = i * self.num_players + p
            if not _writes_every_value(self):
                memset(&self._final[row, 0], 0, self.observation_size * sizeof(float))
            self.write_tensor(i, p, &self._final[row, 0])
        self._terminated[i] = 1
        episodes[i] += 1
        self.reset_one(i)
    else:
        _zero_rewards(self, i)
        self._terminated[i] = 0


cdef inline void _random_steps_of(
    GameKernel self, Py_ssize_t num_steps, uint64_t[::1] policy_states,
    double[:, ::1] reward_sums, int64_t[::1] episodes, Py_ssize_t start, Py_ssize_t stop,
) noexcept nogil:
    """``num_steps`` steps of uniform legal play in envs ``start .. stop - 1``, one env
    at a time: every env and every mask row has its own generator, so playing env by env
    gives the same games as step by step, with the env's state kept in cache. Between
    steps only the masks are written (the draws read them; Othello draws from its move
    bitboard and writes none); the tensor, mask and player of the last step are written
    at the end, the final tensors whenever a game ends, as ``step`` writes them."""
    cdef Py_ssize_t i, step, row
    cdef int p, count
    cdef uint64_t bits
    cdef int64_t* joint
    for i in range(start, stop):
        joint = &self._joint[i, 0]
        for step in range(num_steps):
            if GameKernel is OthelloKernel:
                # The mask is the move bitboard, or the pass alone: the same draw as
                # _draw_legal over the mask row, taken from the bits.
                bits = self.moves[i]
                if bits == 0:
                    _below(&policy_states[i], 1)
                    joint[0] = self.num_squares
                else:
                    count = _below(&policy_states[i], __builtin_popcountll(bits))
                    while count > 0:
                        bits &= bits - 1
                        count -= 1
                    joint[0] = __builtin_ctzll(bits)
            elif self.simultaneous:
                for p in range(self.num_players):
                    row = i * self.num_players + p
                    joint[p] = _draw_legal(&self._masks[row, 0], self.num_actions, &policy_states[row])
            else:
                joint[0] = _draw_legal(&self._masks[i, 0], self.num_actions, &policy_states[i])
            self.apply(i, joint)
            _finish_play_step(self, i, reward_sums, episodes)
            if GameKernel is not OthelloKernel:
                _write_masks_of(self, i)
        _write_decision_of(self, i)


cdef inline void _tabular_steps_of(
    GameKernel self, Py_ssize_t num_steps, const TabularTable* table, uint64_t[::1] policy_states,
    double[:, ::1] reward_sums, int64_t[::1] episodes, Py_ssize_t start, Py_ssize_t stop,
    int64_t* failure,
) noexcept nogil:
    """``num_steps`` steps of ``table``'s play in envs ``start .. stop - 1``, one env at a
    time, as :func:`_random_steps_of` plays (the draws read the tensor of the player to
    move, so every step writes the whole decision). A failed draw stores
    ``(env, player, code)`` in ``failure`` and stops: that env's outputs describe the
    decision it could not play, and the envs after it in the range have not moved."""
    cdef Py_ssize_t i, step, row
    cdef int p
    cdef int64_t action
    cdef int64_t* joint
    for i in range(start, stop):
        joint = &self._joint[i, 0]
        for step in range(num_steps):
            if self.simultaneous:
                for p in range(self.num_players):
                    row = i * self.num_players + p
                    action = _tabular_draw(
                        table, p, &self._observations[row, 0], &self._masks[row, 0], &policy_states[row]
                    )
                    if action < 0:
                        failure[0], failure[1], failure[2] = i, p, action
                        return
                    joint[p] = action
            else:
                action = _tabular_draw(
                    table, self._players[i], &self._observations[i, 0], &self._masks[i, 0], &policy_states[i]
                )
                if action < 0:
                    failure[0], failure[1], failure[2] = i, self._players[i], action
                    return
                joint[0] = action
            self.apply(i, joint)
            _finish_play_step(self, i, reward_sums, episodes)
            _write_decision_of(self, i)


def tabular_steps(
    VectorKernel kernel,
    TabularIndex index,
    Py_ssize_t num_steps,
    uint64_t[::1] policy_states,
    double[:, ::1] reward_sums,
    int64_t[::1] episodes,
    Py_ssize_t start=0,
    Py_ssize_t stop=-1,
):
    """``num_steps`` steps of ``kernel``'s envs ``start .. stop - 1`` (default all) with
    ``index``'s tabular policy, as :meth:`VectorKernel.random_steps` plays random ones
    (one generator per mask row in ``policy_states``; the same games as that many
    ``step`` calls with :meth:`TabularIndex.draw`'s actions). Returns None, or
    ``(env, player, code)`` for a draw that failed (see :func:`_tabular_steps_of`).
    Calls on disjoint env ranges run in parallel from several threads (no GIL held)."""
    cdef Py_ssize_t rows = kernel._masks.shape[0]
    cdef int64_t failure[3]
    failure[0] = -1
    if stop < 0:
        stop = kernel.num_envs
    if not 0 <= start <= stop <= kernel.num_envs:
        raise ValueError(f"tabular_steps: env range {start}..{stop} outside 0..{kernel.num_envs}")
    if not kernel.information_state or index.size != kernel.observation_size or index.num_actions != kernel.num_actions:
        raise ValueError(
            f"tabular_steps: a table of {index.size}-float tensors and {index.num_actions} actions; "
            f"the kernel has {kernel.observation_size}-float "
            f"{'information-state' if kernel.information_state else 'observation'} tensors and "
            f"{kernel.num_actions} actions"
        )
    if policy_states.shape[0] != rows:
        raise ValueError(f"tabular_steps: {policy_states.shape[0]} policy generators for {rows} mask rows")
    if reward_sums.shape[0] != kernel.num_envs or reward_sums.shape[1] != kernel.num_players:
        raise ValueError(
            f"tabular_steps: reward_sums must be ({kernel.num_envs}, {kernel.num_players}), got "
            f"({reward_sums.shape[0]}, {reward_sums.shape[1]})"
        )
    if episodes.shape[0] != kernel.num_envs:
        raise ValueError(f"tabular_steps: episodes must have {kernel.num_envs} entries")
    if start == stop or num_steps == 0:
        return None
    cdef const TabularTable* table = &index.table
    if isinstance(kernel, KuhnKernel):
        with nogil:
            _tabular_steps_of(<KuhnKernel>kernel, num_steps, table, policy_states, reward_sums, episodes, start, stop, failure)
    elif isinstance(kernel, LeducKernel):
        with nogil:
            _tabular_steps_of(<LeducKernel>kernel, num_steps, table, policy_states, reward_sums, episodes, start, stop, failure)
    elif isinstance(kernel, MatrixKernel):
        with nogil:
            _tabular_steps_of(<MatrixKernel>kernel, num_steps, table, policy_states, reward_sums, episodes, start, stop, failure)
    elif isinstance(kernel, OthelloKernel):
        with nogil:
            _tabular_steps_of(<OthelloKernel>kernel, num_steps, table, policy_states, reward_sums, episodes, start, stop, failure)
    elif isinstance(kernel, LiarsDiceKernel):
        with nogil:
            _tabular_steps_of(<LiarsDiceKernel>kernel, num_steps, table, policy_states, reward_sums, episodes, start, stop, failure)
    elif isinstance(kernel, GoofspielKernel):
        with nogil:
            _tabular_steps_of(<GoofspielKernel>kernel, num_steps, table, policy_states, reward_sums, episodes, start, stop, failure)
    else:
        raise TypeError(f"tabular_steps: no tabular loop for {type(kernel).__name__}")
    if failure[0] >= 0:
        return failure[0], failure[1], failure[2]
    return None
