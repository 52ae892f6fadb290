# cython: boundscheck=False, wraparound=False, language_level=3
"""Compiled Leduc hold'em state (rules, keys and tensors in :mod:`hiddenenvs.envs.leduc_holdem`):
the deal, moves, returns and tensors are the C functions of ``_leduc_holdem.pxd``, which the
vector kernel shares, over one :c:type:`LeducState` per state; the information-state and
public keys grow here, one shared tuple step per move.

:class:`hiddenenvs.envs.leduc_holdem.LeducHoldemState` binds the ``state_*`` functions below
as its methods, so a step is one C call into the core instead of a Python frame around one.
"""

cimport cython
cimport numpy as cnp
from libc.stdint cimport int8_t

import numpy as np

cnp.import_array()

# The game model's node kinds (hiddenenvs.game), repeated here for C comparisons.
cdef enum:
    CHANCE = -1
    TERMINAL = -4
    NUM_RANKS = 3

ACTION_NAMES = ("fold", "call", "raise")
RANK_NAMES = "JQK"
# Key steps shared by every state (keys grow by tuple concatenation): a public step by
# its name; a private deal by receiver and rank, as (player 0's step, player 1's step).
_PUBLIC_STEPS = {name: ((name, None),) for name in (*ACTION_NAMES, *RANK_NAMES)}
_ACTION_STEPS = tuple(_PUBLIC_STEPS[name] for name in ACTION_NAMES)
_RANK_STEPS = tuple(_PUBLIC_STEPS[name] for name in RANK_NAMES)
_PUBLIC_DEAL_STEP = ("deal",)
_DEAL_STEPS = tuple(
    tuple(
        tuple((("deal", RANK_NAMES[rank] if player == receiver else None),) for player in range(2))
        for rank in range(NUM_RANKS)
    )
    for receiver in range(2)
)


cdef inline int _player(int player) except -1:
    """``player`` itself if it is 0 or 1 (it indexes C arrays); else a ValueError."""
    if player != 0 and player != 1:
        raise ValueError(f"leduc_holdem: player must be 0 or 1, got {player}")
    return player


@cython.final
cdef class LeducCore:
    """A Leduc hold'em history: the C state of the rules and the keys it has grown."""

    cdef LeducRules rules
    cdef LeducState state
    cdef tuple public_key
    cdef tuple key_0
    cdef tuple key_1

    def __cinit__(self, int max_raises=2):
        leduc_rules(&self.rules, max_raises)
        leduc_reset(&self.state)
        self.public_key = ()
        self.key_0 = ()
        self.key_1 = ()

    def clone(self):
        cdef LeducCore other = LeducCore.__new__(LeducCore)
        other.rules = self.rules
        other.state = self.state
        other.public_key = self.public_key
        other.key_0 = self.key_0
        other.key_1 = self.key_1
        return other

    @property
    def private_cards(self):
        """The private cards dealt (ranks 0 = J, 1 = Q, 2 = K), player 0's first."""
        return [self.state.ranks[index] for index in range(min(self.state.num_dealt, 2))]

    @property
    def public_card(self):
        """The public card's rank, or -1 before it is dealt."""
        return self.state.ranks[2] if self.state.num_dealt > 2 else -1

    @property
    def round_actions(self):
        """The bets of each round begun: round 2's list once the public card is out."""
        cdef int round_index
        return [
            [self.state.round_actions[round_index][turn] for turn in range(self.state.round_lengths[round_index])]
            for round_index in range(2 if self.state.num_dealt > 2 else 1)
        ]

    @property
    def contributions(self):
        """The chips each player has put in the pot (the ante included)."""
        return [self.state.contributions[0], self.state.contributions[1]]

    @property
    def max_contribution(self):
        """The most chips a player can put in (the ante and every raise of both rounds)."""
        return self.rules.max_contribution

    @property
    def folded_player(self):
        """The player who folded, or -1."""
        return self.state.folded

    cdef int current_player(self) noexcept:
        if self.state.folded >= 0:
            return TERMINAL
        if leduc_awaits_card(&self.state):
            return CHANCE
        if leduc_over(&self.state):
            return TERMINAL
        return leduc_player(&self.state)

    cdef list ranks_left(self):
        cdef int rank
        return [rank for rank in range(NUM_RANKS) if leduc_cards_left(&self.state, rank) > 0]


# ---- LeducHoldemState's methods ----------------------------------------------------------
def state_current_player(state):
    """``LeducHoldemState.current_player``: CHANCE while a card is due, the player to bet,
    or TERMINAL after a fold or the second round's closing call."""
    return (<LeducCore> state.core).current_player()


def state_legal_actions(state, player=None):
    """``LeducHoldemState.legal_actions``: the ranks left at a chance node; fold (facing a
    raise), call and raise (below ``max_raises`` this round) for the player to move;
    nothing for anyone else."""
    cdef LeducCore core = state.core
    cdef int current = core.current_player()
    cdef int8_t mask[3]
    if player is not None and player != current:
        return []
    if current == CHANCE:
        return core.ranks_left()
    if current == TERMINAL:
        return []
    mask[0] = mask[1] = mask[2] = 0
    leduc_legal_mask(&core.rules, &core.state, current, mask)
    return [action for action in range(3) if mask[action]]


def state_chance_outcomes(state):
    """``LeducHoldemState.chance_outcomes`` at a chance node: each rank left with its share
    of the cards left."""
    cdef LeducCore core = state.core
    cdef int rank
    counts = [leduc_cards_left(&core.state, rank) for rank in range(NUM_RANKS)]
    total = sum(counts)
    return [(rank, count / total) for rank, count in enumerate(counts) if count]


def state_apply_action(state, int action):
    """``LeducHoldemState._apply_action``: a card while one is due, else a bet (validated
    by the caller); the keys grow by the step's shared tuples."""
    cdef LeducCore core = state.core
    cdef int dealt = core.state.num_dealt
    if dealt < 2:  # a private deal: the receiver alone sees the rank
        steps = _DEAL_STEPS[dealt][action]
        core.key_0 = core.key_0 + steps[0]
        core.key_1 = core.key_1 + steps[1]
        core.public_key = core.public_key + _PUBLIC_DEAL_STEP
        leduc_deal_card(&core.state, action)
    elif leduc_awaits_card(&core.state):  # the public card: public
        step = _RANK_STEPS[action]
        core.key_0 = core.key_0 + step
        core.key_1 = core.key_1 + step
        core.public_key = core.public_key + (RANK_NAMES[action],)
        leduc_deal_card(&core.state, action)
    else:  # a bet: public
        step = _ACTION_STEPS[action]
        core.key_0 = core.key_0 + step
        core.key_1 = core.key_1 + step
        core.public_key = core.public_key + (ACTION_NAMES[action],)
        leduc_apply(&core.state, action)


def state_returns(state):
    """``LeducHoldemState.returns``: chips won at the end, zeros before."""
    cdef LeducCore core = state.core
    cdef float out[2]
    if core.current_player() != TERMINAL:
        return np.zeros(2)
    leduc_returns(&core.state, out)
    return np.array([out[0], out[1]], dtype=np.float64)


def state_history(state):
    """``LeducHoldemState.history``: private cards, round 1's bets, the public card, round 2's."""
    cdef LeducCore core = state.core
    cdef int turn
    cdef int dealt = core.state.num_dealt
    history = [core.state.ranks[index] for index in range(min(dealt, 2))]
    history += [core.state.round_actions[0][turn] for turn in range(core.state.round_lengths[0])]
    if dealt > 2:
        history.append(core.state.ranks[2])
        history += [core.state.round_actions[1][turn] for turn in range(core.state.round_lengths[1])]
    return tuple(history)


def state_information_state_key(state, int player):
    """``LeducHoldemState.information_state_key``: one ``(public, private)`` entry per step."""
    cdef LeducCore core = state.core
    return core.key_0 if _player(player) == 0 else core.key_1


def state_public_state_key(state):
    """``LeducHoldemState.public_state_key``: the public half of each step."""
    return (<LeducCore> state.core).public_key


cdef inline object _zeros(cnp.npy_intp size):
    return cnp.PyArray_ZEROS(1, &size, cnp.NPY_FLOAT32, 0)


def state_information_state_tensor(state, int player):
    """``LeducHoldemState.information_state_tensor``: ``8 + 6 * (2 + max_raises)`` values."""
    cdef LeducCore core = state.core
    _player(player)
    tensor = _zeros(8 + 6 * core.rules.turns_per_round)
    leduc_information_state_tensor(&core.rules, &core.state, player, <float *> cnp.PyArray_DATA(tensor))
    return tensor


def state_observation_tensor(state, int player):
    """``LeducHoldemState.observation_tensor``: 10 values."""
    cdef LeducCore core = state.core
    _player(player)
    tensor = _zeros(10)
    leduc_observation_tensor(&core.rules, &core.state, player, <float *> cnp.PyArray_DATA(tensor))
    return tensor


def state_public_observation_tensor(state):
    """``LeducHoldemState.public_observation_tensor``: ``5 + 6 * (2 + max_raises)`` values."""
    cdef LeducCore core = state.core
    tensor = _zeros(5 + 6 * core.rules.turns_per_round)
    leduc_public_observation_tensor(&core.rules, &core.state, <float *> cnp.PyArray_DATA(tensor))
    return tensor
