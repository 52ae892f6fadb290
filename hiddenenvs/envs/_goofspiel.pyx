# cython: boundscheck=False, wraparound=False, cdivision=True, language_level=3
"""Compiled Goofspiel state (rules, keys and tensors in :mod:`hiddenenvs.envs.goofspiel`).

One C buffer per state holds everything a history determines: the point cards revealed,
both players' bids, which cards each player and the deck still hold (a flag per rank),
and the scores. ``clone`` copies it; moves, legal actions, returns and the tensors are C
loops over at most N entries, and the tensors are written straight into float32 arrays.
The tuple keys and ``history()`` are built only when asked, from the same buffer.
"""

from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.string cimport memcpy, memset

cimport cython
cimport numpy as cnp

cnp.import_array()

# The game model's node kinds (hiddenenvs.game), repeated here for C comparisons.
cdef enum:
    CHANCE = -1
    SIMULTANEOUS = -2
    TERMINAL = -4


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

    cdef readonly int num_cards
    cdef readonly int imp_info
    cdef readonly int phase  # CHANCE, SIMULTANEOUS or TERMINAL
    cdef readonly int revealed  # point cards revealed (rounds begun)
    cdef readonly int played  # rounds scored
    cdef int random_deck
    cdef int total_points
    cdef int round_block  # information-state tensor values per round
    cdef int scores[2]
    # One buffer, sections of N or N + 1 ints (see _sections): the fixed order, the
    # revealed point cards and both players' bids by round, then per rank 1..N (index 0
    # unused) whether each player still holds the card and whether the deck does.
    cdef int *data
    cdef int data_length
    cdef int *fixed
    cdef int *points
    cdef int *bids[2]
    cdef int *held[2]
    cdef int *undrawn

    def __cinit__(self, int num_cards, fixed_points, bint imp_info, bint _empty=False):
        if num_cards < 2:
            raise ValueError(f"GoofspielCore: num_cards must be 2 or more, got {num_cards}")
        self.num_cards = num_cards
        self.imp_info = imp_info
        self.random_deck = fixed_points is None
        self.total_points = num_cards * (num_cards + 1) // 2
        self.round_block = 2 * num_cards + (3 if imp_info else num_cards)
        self.data_length = 4 * num_cards + 3 * (num_cards + 1)
        self.data = <int *> PyMem_Malloc(self.data_length * sizeof(int))
        if self.data == NULL:
            raise MemoryError()
        self._sections()
        if _empty:  # clone() fills the buffer
            return
        memset(self.data, 0, self.data_length * sizeof(int))
        cdef int rank, index
        if not self.random_deck:
            if len(fixed_points) != num_cards:
                raise ValueError(f"GoofspielCore: {num_cards} fixed point cards needed, got {len(fixed_points)}")
            for index in range(num_cards):
                self.fixed[index] = fixed_points[index]
        for rank in range(1, num_cards + 1):
            self.held[0][rank] = self.held[1][rank] = self.undrawn[rank] = 1
        self.scores[0] = self.scores[1] = 0
        self.revealed = self.played = 0
        self.phase = CHANCE
        self._begin_round()

    cdef void _sections(self) noexcept:
        cdef int n = self.num_cards
        self.fixed = self.data
        self.points = self.data + n
        self.bids[0] = self.data + 2 * n
        self.bids[1] = self.data + 3 * n
        self.held[0] = self.data + 4 * n
        self.held[1] = self.data + 5 * n + 1
        self.undrawn = self.data + 6 * n + 2

    def __dealloc__(self):
        PyMem_Free(self.data)

    def clone(self):
        cdef GoofspielCore other = GoofspielCore.__new__(GoofspielCore, self.num_cards, None, self.imp_info, True)
        other.random_deck = self.random_deck
        memcpy(other.data, self.data, self.data_length * sizeof(int))
        other.scores[0], other.scores[1] = self.scores[0], self.scores[1]
        other.phase, other.revealed, other.played = self.phase, self.revealed, self.played
        return other

    # ---- moves -------------------------------------------------------------------------
    cdef void _reveal(self, int point) noexcept:
        self.points[self.revealed] = point
        self.revealed += 1
        self.undrawn[point] = 0
        self.phase = SIMULTANEOUS

    cdef void _score_round(self, int bid_0, int bid_1) noexcept:
        self.bids[0][self.played] = bid_0
        self.bids[1][self.played] = bid_1
        self.held[0][bid_0] = 0
        self.held[1][bid_1] = 0
        self.played += 1
        if bid_0 != bid_1:
            self.scores[0 if bid_0 > bid_1 else 1] += self.points[self.revealed - 1]
        self.phase = TERMINAL if self.played == self.num_cards else CHANCE

    cdef int _only(self, int *flags) noexcept:
        """The lowest rank set in ``flags`` (the only one, in the forced last round)."""
        cdef int rank
        for rank in range(1, self.num_cards + 1):
            if flags[rank]:
                return rank
        return 0

    cdef void _begin_round(self) noexcept:
        """Reveal a fixed-order point card, or play the forced last round."""
        if self.played == self.num_cards - 1:
            self._reveal(self._only(self.undrawn))
            self._score_round(self._only(self.held[0]), self._only(self.held[1]))
        elif not self.random_deck:
            self._reveal(self.fixed[self.played])

    def reveal(self, int action):
        """Chance reveals point card ``action + 1`` (assumed undrawn, at a chance node)."""
        if not 0 <= action < self.num_cards:
            raise ValueError(f"goofspiel: no point card for action {action} (0..{self.num_cards - 1})")
        self._reveal(action + 1)

    cpdef play(self, int action_0, int action_1):
        """Both players bid (assumed legal, at a simultaneous node)."""
        if not (0 <= action_0 < self.num_cards and 0 <= action_1 < self.num_cards):
            raise ValueError(f"goofspiel: no card for bids ({action_0}, {action_1}) (0..{self.num_cards - 1})")
        self._score_round(action_0 + 1, action_1 + 1)
        if self.phase != TERMINAL:
            self._begin_round()

    def play_if_legal(self, action_0, action_1):
        """Play the bids and return True if both are ints naming a card in hand at a
        simultaneous node; else change nothing and return False (the caller's validated
        path then names the culprit)."""
        if self.phase != SIMULTANEOUS or type(action_0) is not int or type(action_1) is not int:
            return False
        cdef long a0 = action_0, a1 = action_1
        if not (0 <= a0 < self.num_cards and 0 <= a1 < self.num_cards
                and self.held[0][a0 + 1] and self.held[1][a1 + 1]):
            return False
        self.play(a0, a1)
        return True

    # ---- actions and outcome ----------------------------------------------------------
    cdef list _ranks_minus_one(self, int *flags):
        cdef list ranks = []
        cdef int rank
        for rank in range(1, self.num_cards + 1):
            if flags[rank]:
                ranks.append(rank - 1)
        return ranks

    def hand_actions(self, int player):
        """The actions (rank - 1) of the cards ``player`` holds, ascending."""
        _player(player)
        return self._ranks_minus_one(self.held[player])

    def deck_actions(self):
        """The chance actions (value - 1) of the point cards not yet revealed, ascending."""
        return self._ranks_minus_one(self.undrawn)

    cpdef hand_mask(self, int player, bint writeable=True):
        """``(N,)`` int8: 1 for every card ``player`` holds (a fresh array, read-only
        unless ``writeable``: numpy's ``flags.writeable = False`` costs more than the array)."""
        _player(player)
        cdef cnp.npy_intp size = self.num_cards
        mask = cnp.PyArray_EMPTY(1, &size, cnp.NPY_INT8, 0)
        cdef signed char *out = <signed char *> cnp.PyArray_DATA(mask)
        cdef int rank
        for rank in range(1, self.num_cards + 1):
            out[rank - 1] = self.held[player][rank]
        if not writeable:
            cnp.PyArray_CLEARFLAGS(<cnp.ndarray> mask, cnp.NPY_ARRAY_WRITEABLE)
        return mask

    cpdef hand_masks(self, bint writeable=True):
        """``(2, N)`` int8: both players' hand masks (read-only unless ``writeable``)."""
        cdef cnp.npy_intp dims[2]
        dims[0], dims[1] = 2, self.num_cards
        masks = cnp.PyArray_EMPTY(2, dims, cnp.NPY_INT8, 0)
        cdef signed char *out = <signed char *> cnp.PyArray_DATA(masks)
        cdef int player, rank
        for player in range(2):
            for rank in range(1, self.num_cards + 1):
                out[player * self.num_cards + rank - 1] = self.held[player][rank]
        if not writeable:
            cnp.PyArray_CLEARFLAGS(<cnp.ndarray> masks, cnp.NPY_ARRAY_WRITEABLE)
        return masks

    def point_difference(self):
        return self.scores[0] - self.scores[1]

    # ---- the state's lists (for __str__ and callers reading them) ----------------------
    def point_cards(self):
        return [self.points[index] for index in range(self.revealed)]

    def bid_ranks(self, int player):
        _player(player)
        return [self.bids[player][index] for index in range(self.played)]

    def hand_ranks(self, int player):
        _player(player)
        return [rank for rank in range(1, self.num_cards + 1) if self.held[player][rank]]

    def deck_ranks(self):
        return [rank for rank in range(1, self.num_cards + 1) if self.undrawn[rank]]

    def score_list(self):
        return [self.scores[0], self.scores[1]]

    # ---- keys, built on demand ----------------------------------------------------------
    cdef object _round_public(self, int index):
        if self.imp_info:
            return _sign(self.bids[0][index] - self.bids[1][index])
        return (self.bids[0][index], self.bids[1][index])

    def public_state_key(self):
        cdef list entries = []
        cdef int index
        for index in range(self.revealed):
            entries.append(self.points[index])
            if index < self.played:
                entries.append(self._round_public(index))
        return tuple(entries)

    def information_state_key(self, int player):
        _player(player)
        cdef list entries = []
        cdef int index
        for index in range(self.revealed):
            entries.append((self.points[index], None))
            if index < self.played:
                entries.append((self._round_public(index), self.bids[player][index] if self.imp_info else None))
        return tuple(entries)

    def history(self):
        cdef list entries = []
        cdef int index
        for index in range(min(self.revealed, self.num_cards - 1)):  # the last round plays itself
            if self.random_deck:
                entries.append(self.points[index] - 1)
            if index < self.played:
                entries.append((self.bids[0][index] - 1, self.bids[1][index] - 1))
        return tuple(entries)

    # ---- tensors ------------------------------------------------------------------------
    cdef int _result_index(self, int player, int index) noexcept:
        """0, 1, 2: ``player`` won, lost or tied round ``index``."""
        cdef int mine = self.bids[player][index], theirs = self.bids[1 - player][index]
        return 0 if mine > theirs else 1 if mine < theirs else 2

    cdef void _write_head(self, int player, float *out) noexcept:
        """What both tensors start with: the player, the point card on the table, the hand."""
        cdef int n = self.num_cards, rank
        out[player] = 1
        if self.revealed > self.played:
            out[1 + self.points[self.revealed - 1]] = 1
        for rank in range(1, n + 1):
            if self.held[player][rank]:
                out[1 + n + rank] = 1

    cdef void _write_information_state(self, int player, float *out) noexcept:
        cdef int n = self.num_cards, index, base
        memset(out, 0, (2 + 2 * n + n * self.round_block) * sizeof(float))
        self._write_head(player, out)
        for index in range(self.played):
            base = 2 + 2 * n + index * self.round_block
            out[base + self.points[index] - 1] = 1
            out[base + n + self.bids[player][index] - 1] = 1
            if self.imp_info:
                out[base + 2 * n + self._result_index(player, index)] = 1
            else:
                out[base + 2 * n + self.bids[1 - player][index] - 1] = 1

    cpdef information_state_tensor(self, int player):
        _player(player)
        cdef cnp.npy_intp size = 2 + 2 * self.num_cards + self.num_cards * self.round_block
        tensor = cnp.PyArray_EMPTY(1, &size, cnp.NPY_FLOAT32, 0)
        self._write_information_state(player, <float *> cnp.PyArray_DATA(tensor))
        return tensor

    cpdef information_state_tensors(self):
        """``(2, size)``: both players' information-state tensors, one array."""
        cdef cnp.npy_intp dims[2]
        dims[0], dims[1] = 2, 2 + 2 * self.num_cards + self.num_cards * self.round_block
        tensors = cnp.PyArray_EMPTY(2, dims, cnp.NPY_FLOAT32, 0)
        cdef float *out = <float *> cnp.PyArray_DATA(tensors)
        self._write_information_state(0, out)
        self._write_information_state(1, out + dims[1])
        return tensors

    def write_information_state_tensor(self, int player, float[::1] out):
        """Write ``player``'s information-state tensor into ``out`` (a preallocated float32
        buffer of the tensor's size)."""
        _player(player)
        cdef Py_ssize_t size = 2 + 2 * self.num_cards + self.num_cards * self.round_block
        if out.shape[0] != size:
            raise ValueError(f"GoofspielCore: the information-state tensor has {size} values, the buffer {out.shape[0]}")
        self._write_information_state(player, &out[0])

    cdef void _write_observation(self, int player, float *out) noexcept:
        cdef int n = self.num_cards, rank
        memset(out, 0, (2 + 4 * n + 2) * sizeof(float))
        self._write_head(player, out)
        for rank in range(1, n + 1):
            if not self.imp_info and self.held[1 - player][rank]:
                out[1 + 2 * n + rank] = 1
            if self.undrawn[rank]:
                out[1 + 3 * n + rank] = 1
        # As numpy stores a Python float into a float32 array: the double quotient, rounded.
        out[2 + 4 * n] = <float> (<double> self.scores[player] / self.total_points)
        out[3 + 4 * n] = <float> (<double> self.scores[1 - player] / self.total_points)

    cpdef observation_tensor(self, int player):
        _player(player)
        cdef cnp.npy_intp size = 2 + 4 * self.num_cards + 2
        tensor = cnp.PyArray_EMPTY(1, &size, cnp.NPY_FLOAT32, 0)
        self._write_observation(player, <float *> cnp.PyArray_DATA(tensor))
        return tensor

    cpdef observation_tensors(self):
        """``(2, size)``: both players' observation tensors, one array."""
        cdef cnp.npy_intp dims[2]
        dims[0], dims[1] = 2, 2 + 4 * self.num_cards + 2
        tensors = cnp.PyArray_EMPTY(2, dims, cnp.NPY_FLOAT32, 0)
        cdef float *out = <float *> cnp.PyArray_DATA(tensors)
        self._write_observation(0, out)
        self._write_observation(1, out + dims[1])
        return tensors

    def public_observation_tensor(self):
        cdef int n = self.num_cards, index, base
        cdef int block = n + (3 if self.imp_info else 2 * n)
        cdef cnp.npy_intp size = n * block
        tensor = cnp.PyArray_ZEROS(1, &size, cnp.NPY_FLOAT32, 0)
        cdef float *out = <float *> cnp.PyArray_DATA(tensor)
        for index in range(self.revealed):
            base = index * block
            out[base + self.points[index] - 1] = 1
            if index < self.played:
                if self.imp_info:
                    out[base + n + self._result_index(0, index)] = 1
                else:
                    out[base + n + self.bids[0][index] - 1] = 1
                    out[base + 2 * n + self.bids[1][index] - 1] = 1
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
    return [0, 1] if state.phase == SIMULTANEOUS else []


def state_apply_actions(state, joint):
    """``GoofspielState._apply_actions``: both bids, validated by the caller."""
    cdef GoofspielCore core = state.core
    core.play(joint[0], joint[1])
    state.phase = core.phase


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
