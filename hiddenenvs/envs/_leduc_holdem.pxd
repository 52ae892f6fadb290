# cython: language_level=3
"""Leduc hold'em's rules in C (rules, tensors and returns documented in
:mod:`hiddenenvs.envs.leduc_holdem`), written once for compiled code: the vector kernel
(:class:`hiddenenvs.vector._kernels.LeducKernel`) steps an array of :c:type:`LeducState`
through these functions, and so does the game model's state
(:class:`hiddenenvs.envs._leduc_holdem.LeducCore`); ``tests/test_vector.py`` checks every
tensor, mask and return of the kernel against the game model.

Cards are ranks 0 = J, 1 = Q, 2 = K (two of each); actions 0 = fold, 1 = call, 2 = raise.
The kernel deals all three cards at once (:func:`leduc_deal`); the game model deals them
one chance node at a time (:func:`leduc_reset`, then :func:`leduc_deal_card` whenever
:func:`leduc_awaits_card`). A header only: every function is inline (the scalar state's
core is ``_leduc_holdem.pyx``).
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
    int8_t round_index  # 0 until the first round's betting closes, then 1
    int8_t raises  # in this round
    int8_t folded  # the player who folded, or -1
    int8_t num_dealt  # cards dealt so far: 3 once the public card is out
    int contributions[2]


cdef inline void leduc_rules(LeducRules* rules, int max_raises) noexcept nogil:
    rules.max_raises = max_raises
    rules.turns_per_round = 2 + max_raises
    rules.max_contribution = 1 + max_raises * (2 + 4)


cdef inline void leduc_reset(LeducState* state) noexcept nogil:
    """A new game before the deal: no cards, no bets, both ante 1."""
    state.num_dealt = 0
    state.round_lengths[0] = 0
    state.round_lengths[1] = 0
    state.round_index = 0
    state.raises = 0
    state.folded = -1
    state.contributions[0] = 1
    state.contributions[1] = 1


cdef inline void leduc_deal_card(LeducState* state, int rank) noexcept nogil:
    """Deal a card of ``rank`` (one with :func:`leduc_cards_left`): player 0's, player 1's,
    then, once the first round's betting is over, the public card."""
    state.ranks[state.num_dealt] = <int8_t>rank
    state.num_dealt += 1


cdef inline int leduc_cards_left(const LeducState* state, int rank) noexcept nogil:
    """How many cards of ``rank`` are still in the deck (two of each rank to begin)."""
    cdef int index, left = 2
    for index in range(state.num_dealt):
        if state.ranks[index] == rank:
            left -= 1
    return left


cdef inline bint leduc_awaits_card(const LeducState* state) noexcept nogil:
    """Whether chance deals next: a private card, or the public card once the first round's
    betting closed with a call."""
    return state.num_dealt < 2 or (state.round_index == 1 and state.num_dealt < 3)


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
    leduc_reset(state)
    leduc_deal_card(state, first // 2)
    leduc_deal_card(state, second // 2)
    leduc_deal_card(state, third // 2)


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


cdef inline void leduc_betting_tensor(const LeducRules* rules, const LeducState* state,
                                      float* out) noexcept nogil:
    """Write the betting so far into ``out`` (zeroed by the caller): round 1 then round 2,
    ``turns_per_round`` one-hot fold/call/raise slots each."""
    cdef int round_index, turn, offset = 0
    for round_index in range(state.round_index + 1):
        for turn in range(state.round_lengths[round_index]):
            out[offset + 3 * turn + state.round_actions[round_index][turn]] = 1
        offset += 3 * rules.turns_per_round


cdef inline bint leduc_public_card_shown(const LeducState* state) noexcept nogil:
    """Whether the public card is face up: dealt, and the first round's betting is over
    (the kernel deals it with the private cards, face down)."""
    return state.round_index == 1 and state.num_dealt > 2


cdef inline void leduc_cards_tensor(const LeducState* state, int player, float* out) noexcept nogil:
    """Write the 8 values every player's tensors start with: player one-hot, my card, the
    public card (each once dealt)."""
    out[player] = 1
    if state.num_dealt > player:
        out[2 + state.ranks[player]] = 1
    if leduc_public_card_shown(state):
        out[5 + state.ranks[2]] = 1


cdef inline void leduc_information_state_tensor(const LeducRules* rules, const LeducState* state,
                                                int player, float* out) noexcept nogil:
    """Write the ``8 + 6 * turns_per_round`` values into ``out`` (zeroed by the caller)."""
    leduc_cards_tensor(state, player, out)
    leduc_betting_tensor(rules, state, out + 8)


cdef inline void leduc_public_observation_tensor(const LeducRules* rules, const LeducState* state,
                                                 float* out) noexcept nogil:
    """Write the ``5 + 6 * turns_per_round`` values into ``out`` (zeroed by the caller):
    private cards dealt, the public card, the betting."""
    cdef int index
    for index in range(state.num_dealt if state.num_dealt < 2 else 2):
        out[index] = 1
    if leduc_public_card_shown(state):
        out[2 + state.ranks[2]] = 1
    leduc_betting_tensor(rules, state, out + 5)


cdef inline void leduc_observation_tensor(const LeducRules* rules, const LeducState* state,
                                          int player, float* out) noexcept nogil:
    """Write the 10 values into ``out`` (zeroed by the caller)."""
    leduc_cards_tensor(state, player, out)
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
