# cython: language_level=3
"""Leduc hold'em's rules in C (rules, tensors and returns documented in
:mod:`hiddenenvs.envs.leduc_holdem`), written once for compiled code: the vector kernel
(:class:`hiddenenvs.vector._kernels.LeducKernel`) steps an array of :c:type:`LeducState`
through these functions, and ``tests/test_vector.py`` checks every tensor, mask and
return against the game model.

Cards are ranks 0 = J, 1 = Q, 2 = K (two of each); actions 0 = fold, 1 = call, 2 = raise.
A header only: every function is inline, so no module of this name is built or imported.
"""

from libc.stdint cimport int8_t

cdef enum:
    LEDUC_FOLD = 0
    LEDUC_CALL = 1
    LEDUC_RAISE = 2
    LEDUC_MAX_TURNS = 6  # betting turns per round: 2 + max_raises, max_raises <= 4


ctypedef struct LeducRules:
    int max_raises
    int turns_per_round  # 2 + max_raises
    int max_contribution  # the observation tensor's scale: 1 + max_raises * (2 + 4)


ctypedef struct LeducState:
    int8_t ranks[3]  # player 0's, player 1's, the public card
    int8_t round_actions[2][LEDUC_MAX_TURNS]
    int8_t round_lengths[2]
    int8_t round_index  # 0 until the public card is revealed, then 1
    int8_t raises  # in this round
    int8_t folded  # the player who folded, or -1
    int contributions[2]


cdef inline void leduc_rules(LeducRules* rules, int max_raises) noexcept nogil:
    rules.max_raises = max_raises
    rules.turns_per_round = 2 + max_raises
    rules.max_contribution = 1 + max_raises * (2 + 4)


cdef inline void leduc_deal(LeducState* state, int first, int second, int third) noexcept nogil:
    """Deal three of the six cards: ``first`` below 6, ``second`` below 5 and ``third``
    below 4 index the cards left in order (pairs of ranks J J Q Q K K); player 0's,
    player 1's, then the public card. Both ante 1."""
    if second >= first:
        second += 1
    if third >= (first if first < second else second):
        third += 1
    if third >= (second if first < second else first):
        third += 1
    state.ranks[0] = <int8_t>(first // 2)
    state.ranks[1] = <int8_t>(second // 2)
    state.ranks[2] = <int8_t>(third // 2)
    state.round_lengths[0] = 0
    state.round_lengths[1] = 0
    state.round_index = 0
    state.raises = 0
    state.folded = -1
    state.contributions[0] = 1
    state.contributions[1] = 1


cdef inline void leduc_apply(LeducState* state, int action) noexcept nogil:
    cdef int round_index = state.round_index
    cdef int turn = state.round_lengths[round_index]
    cdef int player = turn % 2
    state.round_actions[round_index][turn] = <int8_t>action
    state.round_lengths[round_index] = <int8_t>(turn + 1)
    if action == LEDUC_FOLD:
        state.folded = <int8_t>player
    elif action == LEDUC_CALL:
        state.contributions[player] = state.contributions[1 - player]
        if turn + 1 >= 2 and round_index == 0:  # the public card is revealed; round 2
            state.round_index = 1
            state.raises = 0
    else:
        state.contributions[player] = state.contributions[1 - player] + (2 if round_index == 0 else 4)
        state.raises += 1


cdef inline bint leduc_over(const LeducState* state) noexcept nogil:
    """A fold, or a call closing the second round, ends the game."""
    cdef int length = state.round_lengths[1]
    return state.folded >= 0 or (state.round_index == 1 and length >= 2
                                 and state.round_actions[1][length - 1] == LEDUC_CALL)


cdef inline int leduc_player(const LeducState* state) noexcept nogil:
    """The player to move (before :func:`leduc_over`)."""
    return state.round_lengths[state.round_index] % 2


cdef inline void leduc_information_state_tensor(const LeducRules* rules, const LeducState* state,
                                                int player, float* out) noexcept nogil:
    """Write the ``8 + 6 * turns_per_round`` values into ``out`` (zeroed by the caller)."""
    cdef int round_index, turn, offset = 8
    out[player] = 1
    out[2 + state.ranks[player]] = 1
    if state.round_index == 1:
        out[5 + state.ranks[2]] = 1
    for round_index in range(state.round_index + 1):
        for turn in range(state.round_lengths[round_index]):
            out[offset + 3 * turn + state.round_actions[round_index][turn]] = 1
        offset += 3 * rules.turns_per_round


cdef inline void leduc_observation_tensor(const LeducRules* rules, const LeducState* state,
                                          int player, float* out) noexcept nogil:
    """Write the 10 values into ``out`` (zeroed by the caller)."""
    out[player] = 1
    out[2 + state.ranks[player]] = 1
    if state.round_index == 1:
        out[5 + state.ranks[2]] = 1
    out[8] = state.contributions[0] / <float>rules.max_contribution
    out[9] = state.contributions[1] / <float>rules.max_contribution


cdef inline void leduc_legal_mask(const LeducRules* rules, const LeducState* state, int player,
                                  int8_t* out) noexcept nogil:
    """Write 1 at the legal actions (``out`` zeroed by the caller): fold only when behind,
    raise only below ``max_raises`` this round."""
    if state.contributions[player] < state.contributions[1 - player]:
        out[LEDUC_FOLD] = 1
    out[LEDUC_CALL] = 1
    if state.raises < rules.max_raises:
        out[LEDUC_RAISE] = 1


cdef inline void leduc_returns(const LeducState* state, float* out) noexcept nogil:
    """Both players' returns at a finished game: the folder's or the weaker hand's
    contribution changes hands (a pair with the public card beats any single card)."""
    cdef int loser, strength_0, strength_1
    if state.folded >= 0:
        loser = state.folded
    else:
        strength_0 = state.ranks[0] + (3 if state.ranks[0] == state.ranks[2] else 0)
        strength_1 = state.ranks[1] + (3 if state.ranks[1] == state.ranks[2] else 0)
        if strength_0 == strength_1:
            out[0] = 0
            out[1] = 0
            return
        loser = 1 if strength_0 > strength_1 else 0
    out[loser] = -state.contributions[loser]
    out[1 - loser] = state.contributions[loser]
