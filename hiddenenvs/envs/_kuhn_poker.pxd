# cython: language_level=3
"""Kuhn poker's rules in C (rules, tensors and returns documented in
:mod:`hiddenenvs.envs.kuhn_poker`), written once for compiled code: the vector kernel
(:class:`hiddenenvs.vector._kernels.KuhnKernel`) steps an array of :c:type:`KuhnState`
through these functions, and so does the game model's state
(:class:`hiddenenvs.envs._kuhn_poker.KuhnCore`); ``tests/test_vector.py`` checks every
tensor, mask and return of the kernel against the game model.

Cards are ranks 0 = J, 1 = Q, 2 = K; actions 0 = pass, 1 = bet. A header only: every
function is inline (the scalar state's core is ``_kuhn_poker.pyx``).
"""

from libc.stdint cimport int8_t
from libc.string cimport memset

cdef enum:
    KUHN_PASS = 0
    KUHN_BET = 1
    KUHN_INFORMATION_STATE_SIZE = 11
    KUHN_OBSERVATION_SIZE = 7


ctypedef struct KuhnState:
    int8_t cards[2]  # player 0's, player 1's
    int8_t num_dealt  # cards dealt so far (the game model deals one per chance node)
    int8_t bets[3]
    int8_t num_bets


cdef inline void kuhn_deal_card(KuhnState* state, int card) noexcept nogil:
    """Deal ``card`` to the next player without one (player 0 first)."""
    state.cards[state.num_dealt] = <int8_t>card
    state.num_dealt += 1


cdef inline void kuhn_deal(KuhnState* state, int first, int second) noexcept nogil:
    """Deal ``first`` (0..2) to player 0 and ``second``, the draw below 2 among the two
    cards left (ascending), to player 1; no bets yet."""
    if second >= first:
        second += 1
    state.num_dealt = 0
    state.num_bets = 0
    kuhn_deal_card(state, first)
    kuhn_deal_card(state, second)


cdef inline void kuhn_apply(KuhnState* state, int action) noexcept nogil:
    state.bets[state.num_bets] = <int8_t>action
    state.num_bets += 1


cdef inline bint kuhn_over(const KuhnState* state) noexcept nogil:
    """A fold (a pass after a bet), a call, or two passes end the game."""
    cdef int count = state.num_bets
    return count >= 2 and (count == 3 or state.bets[count - 2] == KUHN_BET
                           or (state.bets[0] == KUHN_PASS and state.bets[1] == KUHN_PASS))


cdef inline int kuhn_player(const KuhnState* state) noexcept nogil:
    """The player to move (before :func:`kuhn_over`)."""
    return state.num_bets % 2


cdef inline void kuhn_contributions(const KuhnState* state, int* contributions) noexcept nogil:
    """Chips each player has put in: the ante, plus one per bet."""
    cdef int turn
    contributions[0] = 1
    contributions[1] = 1
    for turn in range(state.num_bets):
        contributions[turn % 2] += state.bets[turn]


cdef inline void kuhn_information_state_tensor(const KuhnState* state, int player,
                                               float* out) noexcept nogil:
    """Write the 11 values into ``out``."""
    cdef int turn
    memset(out, 0, KUHN_INFORMATION_STATE_SIZE * sizeof(float))  # a fixed size: inlined
    out[player] = 1
    if player < state.num_dealt:
        out[2 + state.cards[player]] = 1
    for turn in range(state.num_bets):
        out[5 + 2 * turn + state.bets[turn]] = 1


cdef inline void kuhn_observation_tensor(const KuhnState* state, int player,
                                         float* out) noexcept nogil:
    """Write the 7 values into ``out``."""
    cdef int contributions[2]
    memset(out, 0, KUHN_OBSERVATION_SIZE * sizeof(float))  # a fixed size: inlined
    kuhn_contributions(state, contributions)
    out[player] = 1
    if player < state.num_dealt:
        out[2 + state.cards[player]] = 1
    out[5] = contributions[0] / 2.0
    out[6] = contributions[1] / 2.0


cdef inline void kuhn_legal_mask(const KuhnState* state, int8_t* out) noexcept nogil:
    """Both actions are always legal."""
    out[KUHN_PASS] = 1
    out[KUHN_BET] = 1


cdef inline void kuhn_returns(const KuhnState* state, float* out) noexcept nogil:
    """Both players' returns at a finished game: the loser's contribution changes hands."""
    cdef int contributions[2]
    cdef int count = state.num_bets, winner, turn
    cdef bint any_bet = False
    kuhn_contributions(state, contributions)
    for turn in range(count):
        any_bet = any_bet or state.bets[turn] == KUHN_BET
    if state.bets[count - 1] == KUHN_PASS and any_bet:
        winner = 1 - (count - 1) % 2  # passing after a bet folds
    else:
        winner = 1 if state.cards[1] > state.cards[0] else 0
    out[winner] = contributions[1 - winner]
    out[1 - winner] = -contributions[1 - winner]
