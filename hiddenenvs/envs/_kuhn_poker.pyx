# cython: boundscheck=False, wraparound=False, language_level=3
"""Compiled Kuhn poker state (rules, keys and tensors in :mod:`hiddenenvs.envs.kuhn_poker`):
the moves, returns and tensors are the C functions of ``_kuhn_poker.pxd``, which the
vector kernel shares, over one :c:type:`KuhnState` per state.

:class:`hiddenenvs.envs.kuhn_poker.KuhnPokerState` binds the ``state_*`` functions below
as its methods, so a step is one C call into the core instead of a Python frame around one.
"""

cimport cython
cimport numpy as cnp

import numpy as np

cnp.import_array()

# The game model's node kinds (hiddenenvs.game), repeated here for C comparisons.
cdef enum:
    CHANCE = -1
    TERMINAL = -4
    NUM_CARDS = 3


cdef inline int _player(int player) except -1:
    """``player`` itself if it is 0 or 1 (it indexes C arrays); else a ValueError."""
    if player != 0 and player != 1:
        raise ValueError(f"kuhn_poker: player must be 0 or 1, got {player}")
    return player


@cython.final
cdef class KuhnCore:
    """A Kuhn poker history: the cards dealt so far and the bets."""

    cdef KuhnState state

    def clone(self):
        cdef KuhnCore other = KuhnCore.__new__(KuhnCore)
        other.state = self.state
        return other

    @property
    def cards(self):
        """The cards dealt (0 = J, 1 = Q, 2 = K), player 0's first."""
        return [self.state.cards[index] for index in range(self.state.num_dealt)]

    @property
    def bets(self):
        """The betting actions (0 = pass, 1 = bet), in order."""
        return [self.state.bets[index] for index in range(self.state.num_bets)]

    cdef int current_player(self) noexcept:
        if self.state.num_dealt < 2:
            return CHANCE
        if kuhn_over(&self.state):
            return TERMINAL
        return kuhn_player(&self.state)

    cdef list undealt(self):
        cdef int card
        return [
            card for card in range(NUM_CARDS)
            if not (self.state.num_dealt > 0 and self.state.cards[0] == card)
            and not (self.state.num_dealt > 1 and self.state.cards[1] == card)
        ]


# ---- KuhnPokerState's methods ------------------------------------------------------------
def state_current_player(state):
    """``KuhnPokerState.current_player``: CHANCE until both cards are dealt, then the
    player to bet, or TERMINAL."""
    return (<KuhnCore> state.core).current_player()


def state_legal_actions(state, player=None):
    """``KuhnPokerState.legal_actions``: the cards left at a chance node, pass and bet for
    the player to move, nothing for anyone else."""
    cdef KuhnCore core = state.core
    cdef int current = core.current_player()
    if player is not None and player != current:
        return []
    if current == CHANCE:
        return core.undealt()
    if current == TERMINAL:
        return []
    return [KUHN_PASS, KUHN_BET]


def state_chance_outcomes_left(state):
    """The cards not yet dealt (for ``chance_outcomes``)."""
    return (<KuhnCore> state.core).undealt()


def state_apply_action(state, int action):
    """``KuhnPokerState._apply_action``: a card while the deal lasts, then a bet (validated
    by the caller)."""
    cdef KuhnCore core = state.core
    if core.state.num_dealt < 2:
        kuhn_deal_card(&core.state, action)
    else:
        kuhn_apply(&core.state, action)


def state_returns(state):
    """``KuhnPokerState.returns``: chips won at the end, zeros before."""
    cdef KuhnCore core = state.core
    cdef float out[2]
    if core.current_player() != TERMINAL:
        return np.zeros(2)
    kuhn_returns(&core.state, out)
    return np.array([out[0], out[1]], dtype=np.float64)


def state_information_state_tensor(state, int player):
    """``KuhnPokerState.information_state_tensor``: 11 float32 values."""
    _player(player)
    cdef cnp.npy_intp size = KUHN_INFORMATION_STATE_SIZE
    tensor = cnp.PyArray_EMPTY(1, &size, cnp.NPY_FLOAT32, 0)
    kuhn_information_state_tensor(&(<KuhnCore> state.core).state, player, <float *> cnp.PyArray_DATA(tensor))
    return tensor


def state_observation_tensor(state, int player):
    """``KuhnPokerState.observation_tensor``: 7 float32 values."""
    _player(player)
    cdef cnp.npy_intp size = KUHN_OBSERVATION_SIZE
    tensor = cnp.PyArray_EMPTY(1, &size, cnp.NPY_FLOAT32, 0)
    kuhn_observation_tensor(&(<KuhnCore> state.core).state, player, <float *> cnp.PyArray_DATA(tensor))
    return tensor
