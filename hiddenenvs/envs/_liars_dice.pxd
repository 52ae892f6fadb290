# cython: language_level=3
"""Liar's Dice's rules in C (rules, tensors and returns documented in
:mod:`hiddenenvs.envs.liars_dice`), written once for compiled code: the vector kernel
(:class:`hiddenenvs.vector._kernels.LiarsDiceKernel`) steps an array of
:c:type:`LiarsDiceState` through these functions, and so does the game model's state
(:class:`hiddenenvs.envs._liars_dice.LiarsDiceCore`); ``tests/test_vector.py`` checks
every tensor, mask and return of the kernel against the game model.

Bid ``b`` claims at least ``b // F + 1`` dice showing face ``b % F + 1`` (the top face
``F`` is wild); action ``2 D F`` calls "liar". Every function is inline (the scalar
state's core is ``_liars_dice.pyx``).
"""

from libc.stdint cimport int8_t

cdef enum:
    LIARS_DICE_MAX_DICE = 5  # per player
    LIARS_DICE_MAX_FACES = 6
    LIARS_DICE_MAX_ACTIONS = 2 * LIARS_DICE_MAX_DICE * LIARS_DICE_MAX_FACES + 1


ctypedef struct LiarsDiceRules:
    int num_dice  # D, per player
    int faces  # F
    int num_bids  # 2 D F; also the "liar" action
    bint information_state  # which tensor write_tensor writes


ctypedef struct LiarsDiceState:
    int8_t sorted_dice[2][LIARS_DICE_MAX_DICE]  # faces 1..F per player, ascending
    int8_t rolled[2]  # dice rolled so far per player (the game model rolls one per chance node)
    int8_t counts_by_face[LIARS_DICE_MAX_FACES]  # dice showing each face (index face - 1), both hands
    int8_t actions[LIARS_DICE_MAX_ACTIONS]
    int8_t num_actions_played


cdef inline void liars_dice_rules(LiarsDiceRules* rules, int num_dice, int faces,
                                  bint information_state) noexcept nogil:
    rules.num_dice = num_dice
    rules.faces = faces
    rules.num_bids = 2 * num_dice * faces
    rules.information_state = information_state


cdef inline int liars_dice_tensor_size(const LiarsDiceRules* rules) noexcept nogil:
    """The information-state tensor's size, or the observation tensor's."""
    return 2 + rules.num_dice * rules.faces + rules.num_bids + (1 if rules.information_state else 3)


cdef inline void liars_dice_clear(const LiarsDiceRules* rules, LiarsDiceState* state) noexcept nogil:
    """Before the rolls: no dice, no bids."""
    cdef int face
    for face in range(rules.faces):
        state.counts_by_face[face] = 0
    state.rolled[0] = 0
    state.rolled[1] = 0
    state.num_actions_played = 0


cdef inline void liars_dice_roll(const LiarsDiceRules* rules, LiarsDiceState* state, int player,
                                 int die, int face) noexcept nogil:
    """Roll ``player``'s ``die``-th die (in roll order, from 0) to ``face`` (1..F); the
    hand stays sorted."""
    cdef int slot = die  # insertion into the sorted hand
    state.counts_by_face[face - 1] += 1
    while slot > 0 and state.sorted_dice[player][slot - 1] > face:
        state.sorted_dice[player][slot] = state.sorted_dice[player][slot - 1]
        slot -= 1
    state.sorted_dice[player][slot] = <int8_t>face
    state.rolled[player] = <int8_t>(die + 1)


cdef inline void liars_dice_apply(LiarsDiceState* state, int action) noexcept nogil:
    state.actions[state.num_actions_played] = <int8_t>action
    state.num_actions_played += 1


cdef inline bint liars_dice_over(const LiarsDiceRules* rules, const LiarsDiceState* state) noexcept nogil:
    """A call of "liar" ends the game."""
    cdef int count = state.num_actions_played
    return count > 0 and state.actions[count - 1] == rules.num_bids


cdef inline int liars_dice_player(const LiarsDiceState* state) noexcept nogil:
    """The player to move (before :func:`liars_dice_over`)."""
    return state.num_actions_played % 2


cdef inline void liars_dice_tensor(const LiarsDiceRules* rules, const LiarsDiceState* state,
                                   int player, float* out) noexcept nogil:
    """Write ``player``'s information-state or observation tensor (``rules``) into
    ``out`` (zeroed by the caller)."""
    liars_dice_write_tensor(rules, state, player, rules.information_state, out)


cdef inline void liars_dice_write_tensor(const LiarsDiceRules* rules, const LiarsDiceState* state,
                                         int player, bint information_state, float* out) noexcept nogil:
    """Write ``player``'s information-state tensor, or observation tensor, into ``out``
    (zeroed by the caller): the player, each die rolled (sorted, one-hot face), then the
    bids (information state) or the last bid, who made it and whether "liar" was called."""
    cdef int die, turn, bids, bidder
    cdef int count = state.num_actions_played
    cdef int base = 2 + rules.num_dice * rules.faces
    cdef bint called = liars_dice_over(rules, state)
    out[player] = 1
    for die in range(state.rolled[player]):
        out[2 + die * rules.faces + state.sorted_dice[player][die] - 1] = 1
    if information_state:
        for turn in range(count):
            out[base + state.actions[turn]] = 1
    else:
        bids = count - 1 if called else count
        if bids > 0:
            out[base + state.actions[bids - 1]] = 1
            bidder = (bids - 1) % 2
            out[base + rules.num_bids + (0 if bidder == player else 1)] = 1
        if called:
            out[base + rules.num_bids + 2] = 1


cdef inline void liars_dice_legal_mask(const LiarsDiceRules* rules, const LiarsDiceState* state,
                                       int8_t* out) noexcept nogil:
    """Write 1 at the legal actions (``out`` zeroed by the caller): any bid above the
    last one, and "liar" once there is a bid."""
    cdef int action
    cdef int count = state.num_actions_played
    if count == 0:
        for action in range(rules.num_bids):
            out[action] = 1
    else:
        for action in range(state.actions[count - 1] + 1, rules.num_bids + 1):
            out[action] = 1


cdef inline void liars_dice_returns(const LiarsDiceRules* rules, const LiarsDiceState* state,
                                    float* out) noexcept nogil:
    """Both players' returns after "liar": the caller loses if the last bid holds."""
    cdef int count = state.num_actions_played
    cdef int bid = state.actions[count - 2]
    cdef int quantity = bid // rules.faces + 1, face = bid % rules.faces + 1
    cdef int matching = state.counts_by_face[face - 1]
    cdef int caller = (count - 1) % 2
    cdef int loser
    if face != rules.faces:
        matching += state.counts_by_face[rules.faces - 1]
    loser = caller if matching >= quantity else 1 - caller
    out[loser] = -1
    out[1 - loser] = 1
