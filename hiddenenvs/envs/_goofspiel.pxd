# cython: language_level=3
"""Goofspiel's rules in C (rules, keys and tensors documented in
:mod:`hiddenenvs.envs.goofspiel`), written once for compiled code: the game model's state
(:class:`hiddenenvs.envs._goofspiel.GoofspielCore`) and the vector kernel
(:class:`hiddenenvs.vector._kernels.GoofspielKernel`) both play a :c:type:`GoofspielState`
through these functions, and ``tests/test_vector.py`` checks every tensor, mask and return
of the kernel against the game model.

A state's arrays live in a buffer its owner allocates (``goofspiel_buffer_length``
``int16_t`` values, ranks up to ``MAX_NUM_CARDS``) and binds with ``goofspiel_bind``:
the revealed point cards and both players' bids by round, then per rank 1..N (index 0
unused) whether each player still holds the card and whether the deck does. Chance is
the owner's: at a ``GOOFSPIEL_CHANCE`` node it reveals a point card with
``goofspiel_reveal`` (the scalar game when asked, the kernel from the order it drew at
the deal). A header only: every function is inline, so no module of this name is built
or imported (the scalar state is ``_goofspiel.pyx``).
"""

from libc.stdint cimport int8_t, int16_t
from libc.string cimport memset

cdef enum:
    # The game model's node kinds (hiddenenvs.game), repeated for C comparisons.
    GOOFSPIEL_CHANCE = -1
    GOOFSPIEL_SIMULTANEOUS = -2
    GOOFSPIEL_TERMINAL = -4


ctypedef struct GoofspielRules:
    int num_cards  # N: cards per hand, point cards and rounds
    bint imp_info  # only who won each round is public (II-Goofspiel)
    bint random_deck  # chance reveals the point cards; else ``fixed`` gives their order
    int total_points  # 1 + 2 + ... + N
    int round_block  # information-state tensor values per round
    const int16_t* fixed  # the point cards in order (N values), when not random_deck


ctypedef struct GoofspielState:
    int phase  # GOOFSPIEL_CHANCE, GOOFSPIEL_SIMULTANEOUS or GOOFSPIEL_TERMINAL
    int revealed  # point cards revealed (rounds begun)
    int played  # rounds scored
    int scores[2]
    int16_t* points  # N: the point cards, in the order revealed
    int16_t* bids[2]  # N each: the ranks bid, by round
    int16_t* held[2]  # N + 1 each: 1 where the player still holds the rank
    int16_t* undrawn  # N + 1: 1 where the deck still holds the point card


cdef inline void goofspiel_rules(GoofspielRules* rules, int num_cards, bint imp_info,
                                 const int16_t* fixed) noexcept nogil:
    """``fixed``: the point cards in order, or NULL for a random deck (kept, not copied)."""
    rules.num_cards = num_cards
    rules.imp_info = imp_info
    rules.random_deck = fixed == NULL
    rules.total_points = num_cards * (num_cards + 1) // 2
    rules.round_block = 2 * num_cards + (3 if imp_info else num_cards)
    rules.fixed = fixed


cdef inline int goofspiel_information_state_size(const GoofspielRules* rules) noexcept nogil:
    return 2 + 2 * rules.num_cards + rules.num_cards * rules.round_block


cdef inline int goofspiel_observation_size(const GoofspielRules* rules) noexcept nogil:
    return 2 + 4 * rules.num_cards + 2


cdef inline int goofspiel_buffer_length(int num_cards) noexcept nogil:
    """The ``int16_t`` values a state's arrays take."""
    return 3 * num_cards + 3 * (num_cards + 1)


cdef inline void goofspiel_bind(GoofspielState* state, int num_cards, int16_t* buffer) noexcept nogil:
    """Point ``state``'s arrays into ``buffer`` (``goofspiel_buffer_length`` values)."""
    cdef int n = num_cards
    state.points = buffer
    state.bids[0] = buffer + n
    state.bids[1] = buffer + 2 * n
    state.held[0] = buffer + 3 * n
    state.held[1] = buffer + 4 * n + 1
    state.undrawn = buffer + 5 * n + 2


# ---- moves -------------------------------------------------------------------------------
cdef inline void goofspiel_reveal(GoofspielState* state, int point) noexcept nogil:
    """Reveal point card ``point`` (1..N, assumed undrawn): the players bid next."""
    state.points[state.revealed] = point
    state.revealed += 1
    state.undrawn[point] = 0
    state.phase = GOOFSPIEL_SIMULTANEOUS


cdef inline int goofspiel_only(const GoofspielRules* rules, const int16_t* flags) noexcept nogil:
    """The lowest rank set in ``flags`` (the only one, in the forced last round)."""
    cdef int rank
    for rank in range(1, rules.num_cards + 1):
        if flags[rank]:
            return rank
    return 0


cdef inline void goofspiel_score_round(const GoofspielRules* rules, GoofspielState* state,
                                       int bid_0, int bid_1) noexcept nogil:
    """Both players bid ranks ``bid_0`` and ``bid_1``: the higher takes the point card (a
    tie: nobody)."""
    state.bids[0][state.played] = bid_0
    state.bids[1][state.played] = bid_1
    state.held[0][bid_0] = 0
    state.held[1][bid_1] = 0
    state.played += 1
    if bid_0 != bid_1:
        state.scores[0 if bid_0 > bid_1 else 1] += state.points[state.revealed - 1]
    state.phase = GOOFSPIEL_TERMINAL if state.played == rules.num_cards else GOOFSPIEL_CHANCE


cdef inline void goofspiel_begin_round(const GoofspielRules* rules, GoofspielState* state) noexcept nogil:
    """The forced last round plays itself; else a fixed deck reveals its next card, and a
    random deck stays at the chance node for its owner to reveal one."""
    if state.played == rules.num_cards - 1:
        goofspiel_reveal(state, goofspiel_only(rules, state.undrawn))
        goofspiel_score_round(rules, state, goofspiel_only(rules, state.held[0]),
                              goofspiel_only(rules, state.held[1]))
    elif not rules.random_deck:
        goofspiel_reveal(state, rules.fixed[state.played])
    else:
        state.phase = GOOFSPIEL_CHANCE


cdef inline void goofspiel_start(const GoofspielRules* rules, GoofspielState* state) noexcept nogil:
    """A new game: full hands and deck, no scores, the first round begun."""
    cdef int rank
    memset(state.points, 0, goofspiel_buffer_length(rules.num_cards) * sizeof(int16_t))
    for rank in range(1, rules.num_cards + 1):
        state.held[0][rank] = 1
        state.held[1][rank] = 1
        state.undrawn[rank] = 1
    state.scores[0] = 0
    state.scores[1] = 0
    state.revealed = 0
    state.played = 0
    goofspiel_begin_round(rules, state)


cdef inline void goofspiel_play(const GoofspielRules* rules, GoofspielState* state,
                                int action_0, int action_1) noexcept nogil:
    """Both players bid (actions: rank - 1; assumed legal, at a simultaneous node)."""
    goofspiel_score_round(rules, state, action_0 + 1, action_1 + 1)
    if state.phase != GOOFSPIEL_TERMINAL:
        goofspiel_begin_round(rules, state)


# ---- masks, outcome and tensors ----------------------------------------------------------
cdef inline void goofspiel_hand_mask(const GoofspielRules* rules, const GoofspielState* state,
                                     int player, int8_t* out) noexcept nogil:
    """``out[rank - 1]``: 1 for every card ``player`` holds."""
    cdef int rank
    for rank in range(1, rules.num_cards + 1):
        out[rank - 1] = <int8_t> state.held[player][rank]


cdef inline void goofspiel_returns(const GoofspielState* state, bint point_difference,
                                   float* out) noexcept nogil:
    """The terminal returns: the point difference, or its sign (win/loss)."""
    cdef int difference = state.scores[0] - state.scores[1]
    if not point_difference:
        difference = (difference > 0) - (difference < 0)
    out[0] = difference
    out[1] = -difference


cdef inline int goofspiel_result_index(const GoofspielState* state, int player, int index) noexcept nogil:
    """0, 1, 2: ``player`` won, lost or tied round ``index``."""
    cdef int mine = state.bids[player][index], theirs = state.bids[1 - player][index]
    return 0 if mine > theirs else 1 if mine < theirs else 2


cdef inline void goofspiel_write_head(const GoofspielRules* rules, const GoofspielState* state,
                                       int player, float* out) noexcept nogil:
    """What both tensors start with: the player, the point card on the table, the hand."""
    cdef int n = rules.num_cards, rank
    out[player] = 1
    if state.revealed > state.played:
        out[1 + state.points[state.revealed - 1]] = 1
    for rank in range(1, n + 1):
        if state.held[player][rank]:
            out[1 + n + rank] = 1


cdef inline void goofspiel_information_state_tensor(const GoofspielRules* rules,
                                                    const GoofspielState* state, int player,
                                                    float* out) noexcept nogil:
    """``player``'s information-state tensor into ``out``, zeroed by the caller."""
    cdef int n = rules.num_cards, index, base
    goofspiel_write_head(rules, state, player, out)
    for index in range(state.played):
        base = 2 + 2 * n + index * rules.round_block
        out[base + state.points[index] - 1] = 1
        out[base + n + state.bids[player][index] - 1] = 1
        if rules.imp_info:
            out[base + 2 * n + goofspiel_result_index(state, player, index)] = 1
        else:
            out[base + 2 * n + state.bids[1 - player][index] - 1] = 1


cdef inline void goofspiel_observation_tensor(const GoofspielRules* rules,
                                              const GoofspielState* state, int player,
                                              float* out) noexcept nogil:
    """``player``'s observation tensor into ``out``, zeroed by the caller."""
    cdef int n = rules.num_cards, rank
    goofspiel_write_head(rules, state, player, out)
    for rank in range(1, n + 1):
        if not rules.imp_info and state.held[1 - player][rank]:
            out[1 + 2 * n + rank] = 1
        if state.undrawn[rank]:
            out[1 + 3 * n + rank] = 1
    # As numpy stores a Python float into a float32 array: the double quotient, rounded.
    out[2 + 4 * n] = <float> (<double> state.scores[player] / rules.total_points)
    out[3 + 4 * n] = <float> (<double> state.scores[1 - player] / rules.total_points)
