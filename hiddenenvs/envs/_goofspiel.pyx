# cython: boundscheck=False, wraparound=False, cdivision=True, language_level=3
"""Compiled Goofspiel state (rules, keys and tensors in :mod:`hiddenenvs.envs.goofspiel`).

The moves and tensors are the C functions of ``_goofspiel.pxd``, which the vector kernel
shares. One C buffer per state holds everything a history determines: the point cards
revealed, both players' bids, which cards each player and the deck still hold (a flag per
rank), and the fixed order of the point cards; ``clone`` copies it. The tuple keys and
``history()`` are built only when asked, from the same buffer.
"""

from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.stdint cimport int8_t, int16_t
from libc.string cimport memcpy, memset

cimport cython
cimport numpy as cnp

cnp.import_array()


cdef inline int _sign(int value) noexcept nogil:
    return (value > 0) - (value < 0)


cdef inline int _player(int player) except -1:
    """``player`` itself if it is 0 or 1 (it indexes C arrays); else a ValueError."""
    if player != 0 and player != 1:
        raise ValueError(f"goofspiel: player must be 0 or 1, got {player}")
    return player


@cython.final  # its cpdef methods are then plain C calls from the state's methods below
cdef class GoofspielCore:
    """A Goofspiel history: ``GoofspielCore(num_cards, fixed_points, imp_info)``, with
    ``fixed_points`` the point cards in order (ranks 1..N), or None for a random deck."""

    cdef GoofspielRules rules
    cdef GoofspielState state
    # One buffer: the state's arrays (goofspiel_bind), then the fixed order (N values).
    cdef int16_t *data
    cdef int data_length

    def __cinit__(self, int num_cards, fixed_points, bint imp_info, bint _empty=False):
        if not 2 <= num_cards <= 10_000:  # ranks are int16_t
            raise ValueError(f"GoofspielCore: num_cards must be 2 to 10000, got {num_cards}")
        self.data_length = goofspiel_buffer_length(num_cards) + num_cards
        self.data = <int16_t *> PyMem_Malloc(self.data_length * sizeof(int16_t))
        if self.data == NULL:
            raise MemoryError()
        goofspiel_bind(&self.state, num_cards, self.data)
        cdef int16_t *fixed = self.data + goofspiel_buffer_length(num_cards)
        goofspiel_rules(&self.rules, num_cards, imp_info, NULL if fixed_points is None else fixed)
        if _empty:  # clone() fills the buffer and the state
            return
        cdef int index
        if fixed_points is not None:
            if len(fixed_points) != num_cards:
                raise ValueError(f"GoofspielCore: {num_cards} fixed point cards needed, got {len(fixed_points)}")
            for index in range(num_cards):
                fixed[index] = fixed_points[index]
        goofspiel_start(&self.rules, &self.state)

    def __dealloc__(self):
        PyMem_Free(self.data)

    @property
    def num_cards(self):
        return self.rules.num_cards

    @property
    def imp_info(self):
        return self.rules.imp_info

    @property
    def phase(self):
        """CHANCE, SIMULTANEOUS or TERMINAL."""
        return self.state.phase

    def clone(self):
        cdef GoofspielCore other = GoofspielCore.__new__(
            GoofspielCore, self.rules.num_cards, None if self.rules.random_deck else (), self.rules.imp_info, True
        )
        memcpy(other.data, self.data, self.data_length * sizeof(int16_t))
        cdef GoofspielState *state = &other.state
        state.phase, state.revealed, state.played = self.state.phase, self.state.revealed, self.state.played
        state.scores[0], state.scores[1] = self.state.scores[0], self.state.scores[1]
        return other

    # ---- moves -------------------------------------------------------------------------
    def reveal(self, int action):
        """Chance reveals point card ``action + 1`` (assumed undrawn, at a chance node)."""
        if not 0 <= action < self.rules.num_cards:
            raise ValueError(f"goofspiel: no point card for action {action} (0..{self.rules.num_cards - 1})")
        goofspiel_reveal(&self.state, action + 1)

    cpdef play(self, int action_0, int action_1):
        """Both players bid (assumed legal, at a simultaneous node)."""
        if not (0 <= action_0 < self.rules.num_cards and 0 <= action_1 < self.rules.num_cards):
            raise ValueError(f"goofspiel: no card for bids ({action_0}, {action_1}) (0..{self.rules.num_cards - 1})")
        goofspiel_play(&self.rules, &self.state, action_0, action_1)

    def play_if_legal(self, action_0, action_1):
        """Play the bids and return True if both are ints naming a card in hand at a
        simultaneous node; else change nothing and return False (the caller's validated
        path then names the culprit)."""
        if self.state.phase != GOOFSPIEL_SIMULTANEOUS or type(action_0) is not int or type(action_1) is not int:
            return False
        cdef long a0 = action_0, a1 = action_1
        cdef int n = self.rules.num_cards
        if not (0 <= a0 < n and 0 <= a1 < n and self.state.held[0][a0 + 1] and self.state.held[1][a1 + 1]):
            return False
        goofspiel_play(&self.rules, &self.state, a0, a1)
        return True

    # ---- actions and outcome ----------------------------------------------------------
    cdef list _ranks_minus_one(self, const int16_t *flags):
        cdef list ranks = []
        cdef int rank
        for rank in range(1, self.rules.num_cards + 1):
            if flags[rank]:
                ranks.append(rank - 1)
        return ranks

    def hand_actions(self, int player):
        """The actions (rank - 1) of the cards ``player`` holds, ascending."""
        _player(player)
        return self._ranks_minus_one(self.state.held[player])

    def deck_actions(self):
        """The chance actions (value - 1) of the point cards not yet revealed, ascending."""
        return self._ranks_minus_one(self.state.undrawn)

    cpdef hand_mask(self, int player, bint writeable=True):
        """``(N,)`` int8: 1 for every card ``player`` holds (a fresh array, read-only
        unless ``writeable``: numpy's ``flags.writeable = False`` costs more than the array)."""
        _player(player)
        cdef cnp.npy_intp size = self.rules.num_cards
        mask = cnp.PyArray_EMPTY(1, &size, cnp.NPY_INT8, 0)
        goofspiel_hand_mask(&self.rules, &self.state, player, <int8_t *> cnp.PyArray_DATA(mask))
        if not writeable:
            cnp.PyArray_CLEARFLAGS(<cnp.ndarray> mask, cnp.NPY_ARRAY_WRITEABLE)
        return mask

    cpdef hand_masks(self, bint writeable=True):
        """``(2, N)`` int8: both players' hand masks (read-only unless ``writeable``)."""
        cdef cnp.npy_intp dims[2]
        dims[0], dims[1] = 2, self.rules.num_cards
        masks = cnp.PyArray_EMPTY(2, dims, cnp.NPY_INT8, 0)
        cdef int8_t *out = <int8_t *> cnp.PyArray_DATA(masks)
        goofspiel_hand_mask(&self.rules, &self.state, 0, out)
        goofspiel_hand_mask(&self.rules, &self.state, 1, out + dims[1])
        if not writeable:
            cnp.PyArray_CLEARFLAGS(<cnp.ndarray> masks, cnp.NPY_ARRAY_WRITEABLE)
        return masks

    def returns(self, bint point_difference):
        """``[r0, r1]``: the point difference, or its sign (meaningful at the end)."""
        cdef float out[2]
        goofspiel_returns(&self.state, point_difference, out)
        return [out[0], out[1]]

    # ---- the state's lists (for __str__ and callers reading them) ----------------------
    def point_cards(self):
        return [self.state.points[index] for index in range(self.state.revealed)]

    def bid_ranks(self, int player):
        _player(player)
        return [self.state.bids[player][index] for index in range(self.state.played)]

    def hand_ranks(self, int player):
        _player(player)
        return [rank for rank in range(1, self.rules.num_cards + 1) if self.state.held[player][rank]]

    def deck_ranks(self):
        return [rank for rank in range(1, self.rules.num_cards + 1) if self.state.undrawn[rank]]

    def score_list(self):
        return [self.state.scores[0], self.state.scores[1]]

    # ---- keys, built on demand ----------------------------------------------------------
    cdef object _round_public(self, int index):
        cdef int bid_0 = self.state.bids[0][index], bid_1 = self.state.bids[1][index]
        if self.rules.imp_info:
            return _sign(bid_0 - bid_1)
        return (bid_0, bid_1)

    def public_state_key(self):
        cdef list entries = []
        cdef int index
        for index in range(self.state.revealed):
            entries.append(self.state.points[index])
            if index < self.state.played:
                entries.append(self._round_public(index))
        return tuple(entries)

    def information_state_key(self, int player):
        _player(player)
        cdef list entries = []
        cdef int index
        for index in range(self.state.revealed):
            entries.append((self.state.points[index], None))
            if index < self.state.played:
                entries.append(
                    (self._round_public(index), self.state.bids[player][index] if self.rules.imp_info else None)
                )
        return tuple(entries)

    def history(self):
        cdef list entries = []
        cdef int index
        # the last round plays itself
        for index in range(min(self.state.revealed, self.rules.num_cards - 1)):
            if self.rules.random_deck:
                entries.append(self.state.points[index] - 1)
            if index < self.state.played:
                entries.append((self.state.bids[0][index] - 1, self.state.bids[1][index] - 1))
        return tuple(entries)

    # ---- tensors ------------------------------------------------------------------------
    cdef void _write_information_state(self, int player, float *out) noexcept:
        memset(out, 0, goofspiel_information_state_size(&self.rules) * sizeof(float))
        goofspiel_information_state_tensor(&self.rules, &self.state, player, out)

    cpdef information_state_tensor(self, int player):
        _player(player)
        cdef cnp.npy_intp size = goofspiel_information_state_size(&self.rules)
        tensor = cnp.PyArray_EMPTY(1, &size, cnp.NPY_FLOAT32, 0)
        self._write_information_state(player, <float *> cnp.PyArray_DATA(tensor))
        return tensor

    cpdef information_state_tensors(self):
        """``(2, size)``: both players' information-state tensors, one array."""
        cdef cnp.npy_intp dims[2]
        dims[0], dims[1] = 2, goofspiel_information_state_size(&self.rules)
        tensors = cnp.PyArray_EMPTY(2, dims, cnp.NPY_FLOAT32, 0)
        cdef float *out = <float *> cnp.PyArray_DATA(tensors)
        self._write_information_state(0, out)
        self._write_information_state(1, out + dims[1])
        return tensors

    def write_information_state_tensor(self, int player, float[::1] out):
        """Write ``player``'s information-state tensor into ``out`` (a preallocated float32
        buffer of the tensor's size)."""
        _player(player)
        cdef Py_ssize_t size = goofspiel_information_state_size(&self.rules)
        if out.shape[0] != size:
            raise ValueError(f"GoofspielCore: the information-state tensor has {size} values, the buffer {out.shape[0]}")
        self._write_information_state(player, &out[0])

    cdef void _write_observation(self, int player, float *out) noexcept:
        memset(out, 0, goofspiel_observation_size(&self.rules) * sizeof(float))
        goofspiel_observation_tensor(&self.rules, &self.state, player, out)

    cpdef observation_tensor(self, int player):
        _player(player)
        cdef cnp.npy_intp size = goofspiel_observation_size(&self.rules)
        tensor = cnp.PyArray_EMPTY(1, &size, cnp.NPY_FLOAT32, 0)
        self._write_observation(player, <float *> cnp.PyArray_DATA(tensor))
        return tensor

    cpdef observation_tensors(self):
        """``(2, size)``: both players' observation tensors, one array."""
        cdef cnp.npy_intp dims[2]
        dims[0], dims[1] = 2, goofspiel_observation_size(&self.rules)
        tensors = cnp.PyArray_EMPTY(2, dims, cnp.NPY_FLOAT32, 0)
        cdef float *out = <float *> cnp.PyArray_DATA(tensors)
        self._write_observation(0, out)
        self._write_observation(1, out + dims[1])
        return tensors

    def public_observation_tensor(self):
        cdef int n = self.rules.num_cards, index, base
        cdef int block = n + (3 if self.rules.imp_info else 2 * n)
        cdef cnp.npy_intp size = n * block
        tensor = cnp.PyArray_ZEROS(1, &size, cnp.NPY_FLOAT32, 0)
        cdef float *out = <float *> cnp.PyArray_DATA(tensor)
        for index in range(self.state.revealed):
            base = index * block
            out[base + self.state.points[index] - 1] = 1
            if index < self.state.played:
                if self.rules.imp_info:
                    out[base + n + goofspiel_result_index(&self.state, 0, index)] = 1
                else:
                    out[base + n + self.state.bids[0][index] - 1] = 1
                    out[base + 2 * n + self.state.bids[1][index] - 1] = 1
        return tensor


# ---- GoofspielState's per-step methods ---------------------------------------------------
# hiddenenvs.envs.goofspiel.GoofspielState binds these as its methods: an env step calls
# about six of them, and each is then one C call into the core instead of a Python frame
# around one (a fifth of an AEC agent step on II-Goofspiel(13)).

def state_current_player(state):
    """``GoofspielState.current_player``: CHANCE, SIMULTANEOUS or TERMINAL."""
    return state.phase


def state_movers(state):
    """``GoofspielState.movers``: both players bid at every simultaneous node (the
    one-card last round plays itself, so each hand holds two cards or more there)."""
    return [0, 1] if state.phase == GOOFSPIEL_SIMULTANEOUS else []


def state_apply_actions(state, joint):
    """``GoofspielState._apply_actions``: both bids, validated by the caller."""
    cdef GoofspielCore core = state.core
    core.play(joint[0], joint[1])
    state.phase = core.state.phase


def state_information_state_tensor(state, int player):
    """``GoofspielState.information_state_tensor``."""
    return (<GoofspielCore> state.core).information_state_tensor(player)


def state_information_state_tensors(state):
    """``GoofspielState.information_state_tensors``: ``(2, size)``, both players'."""
    return (<GoofspielCore> state.core).information_state_tensors()


def state_observation_tensor(state, int player):
    """``GoofspielState.observation_tensor``."""
    return (<GoofspielCore> state.core).observation_tensor(player)


def state_observation_tensors(state):
    """``GoofspielState.observation_tensors``: ``(2, size)``, both players'."""
    return (<GoofspielCore> state.core).observation_tensors()


def state_read_only_legal_actions_mask(state, int player):
    """``GoofspielState.read_only_legal_actions_mask``: ``player``'s hand at a
    simultaneous node as a fresh read-only mask, made so in C (the AEC env hands it out
    as is)."""
    return (<GoofspielCore> state.core).hand_mask(player, False)


def state_legal_actions_masks(state):
    """``GoofspielState.legal_actions_masks``: ``(2, N)`` int8, both players' masks at a
    simultaneous node, a fresh read-only array made so in C (for the parallel env)."""
    return (<GoofspielCore> state.core).hand_masks(False)
