# cython: boundscheck=False, wraparound=False, language_level=3
"""Compiled Liar's Dice state (rules, keys and tensors in :mod:`hiddenenvs.envs.liars_dice`):
the player to move, legal bids, returns and tensors are the C functions of
``_liars_dice.pxd``, which the vector kernel shares, over one :c:type:`LiarsDiceState`.

:class:`hiddenenvs.envs.liars_dice.LiarsDiceState` keeps the dice in roll order and the
keys in Python (they grow step by step), tells the core each roll and bid, and binds the
``state_*`` functions below as its methods: one C call each instead of a Python frame.
"""

cimport cython
cimport numpy as cnp

import numpy as np

cnp.import_array()

# The game model's node kinds (hiddenenvs.game), repeated here for C comparisons.
cdef enum:
    CHANCE = -1
    TERMINAL = -4


cdef inline int _player(int player) except -1:
    """``player`` itself if it is 0 or 1 (it indexes C arrays); else a ValueError."""
    if player != 0 and player != 1:
        raise ValueError(f"liars_dice: player must be 0 or 1, got {player}")
    return player


@cython.final
cdef class LiarsDiceCore:
    """A Liar's Dice history: ``LiarsDiceCore(num_dice, faces)``, no dice rolled yet."""

    cdef LiarsDiceRules rules
    cdef LiarsDiceState state

    def __cinit__(self, int num_dice, int faces, bint _empty=False):
        if not (1 <= num_dice <= LIARS_DICE_MAX_DICE and 2 <= faces <= LIARS_DICE_MAX_FACES):
            raise ValueError(
                f"LiarsDiceCore: num_dice must be 1 to {LIARS_DICE_MAX_DICE} and faces 2 to "
                f"{LIARS_DICE_MAX_FACES}, got {num_dice} and {faces}"
            )
        liars_dice_rules(&self.rules, num_dice, faces, True)
        if not _empty:
            liars_dice_clear(&self.rules, &self.state)

    def clone(self):
        cdef LiarsDiceCore other = LiarsDiceCore.__new__(LiarsDiceCore, self.rules.num_dice, self.rules.faces, True)
        other.state = self.state
        return other

    def roll(self, int face):
        """The next die (player 0's first) shows ``face`` (1..F)."""
        cdef int player = 0 if self.state.rolled[0] < self.rules.num_dice else 1
        liars_dice_roll(&self.rules, &self.state, player, self.state.rolled[player], face)

    def act(self, int action):
        """A bid, or "liar" (validated by the caller)."""
        liars_dice_apply(&self.state, action)

    cdef int current_player(self) noexcept:
        if self.state.rolled[1] < self.rules.num_dice:
            return CHANCE
        if liars_dice_over(&self.rules, &self.state):
            return TERMINAL
        return liars_dice_player(&self.state)

    cdef object tensor(self, int player, bint information_state):
        _player(player)
        cdef cnp.npy_intp size = 2 + self.rules.num_dice * self.rules.faces + self.rules.num_bids
        size += 1 if information_state else 3
        tensor = cnp.PyArray_ZEROS(1, &size, cnp.NPY_FLOAT32, 0)
        liars_dice_write_tensor(&self.rules, &self.state, player, information_state,
                                <float *> cnp.PyArray_DATA(tensor))
        return tensor


# ---- LiarsDiceState's methods ------------------------------------------------------------
def state_current_player(state):
    """``LiarsDiceState.current_player``: CHANCE until every die is rolled, then the player
    to bid, or TERMINAL once "liar" is called."""
    return (<LiarsDiceCore> state.core).current_player()


def state_legal_actions(state, player=None):
    """``LiarsDiceState.legal_actions``: every face at a chance node; any bid above the
    last one, and "liar" once there is a bid, for the player to move; nothing for anyone
    else."""
    cdef LiarsDiceCore core = state.core
    cdef int current = core.current_player()
    cdef int8_t mask[LIARS_DICE_MAX_ACTIONS]
    cdef int action
    if player is not None and player != current:
        return []
    if current == CHANCE:
        return list(range(core.rules.faces))
    if current == TERMINAL:
        return []
    for action in range(core.rules.num_bids + 1):
        mask[action] = 0
    liars_dice_legal_mask(&core.rules, &core.state, mask)
    return [action for action in range(core.rules.num_bids + 1) if mask[action]]


def state_returns(state):
    """``LiarsDiceState.returns``: +1 / -1 once "liar" is called, zeros before."""
    cdef LiarsDiceCore core = state.core
    cdef float out[2]
    if core.current_player() != TERMINAL:
        return np.zeros(2)
    liars_dice_returns(&core.rules, &core.state, out)
    return np.array([out[0], out[1]], dtype=np.float64)


def state_information_state_tensor(state, int player):
    """``LiarsDiceState.information_state_tensor``."""
    return (<LiarsDiceCore> state.core).tensor(player, True)


def state_observation_tensor(state, int player):
    """``LiarsDiceState.observation_tensor``."""
    return (<LiarsDiceCore> state.core).tensor(player, False)
