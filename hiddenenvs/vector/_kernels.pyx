# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False, language_level=3
"""Compiled batch kernels for :mod:`hiddenenvs.vector`: one object per env batch.

A kernel holds the state of ``num_envs`` games in flat arrays and steps all of them in
one ``nogil`` loop. It owns its output buffers (numpy arrays, exposed as attributes) and
rewrites them in place on every :meth:`VectorKernel.reset` and :meth:`VectorKernel.step`:

- ``observations``: ``[B, *shape]`` float32, the tensor of the player to move, or
  ``[B, P, *shape]`` for simultaneous games (every player's);
- ``legal_action_masks``: ``[B, A]`` int8 (``[B, P, A]`` for simultaneous games);
- ``current_players``: ``[B]`` int64, a player index or ``SIMULTANEOUS`` (-2);
- ``rewards``: ``[B, P]`` float32, the reward of the step's transition;
- ``terminated`` / ``truncated``: ``[B]`` bool;
- ``final_observations``: ``[B, P, *shape]`` float32, every player's tensor at the
  terminal state, valid in the rows where ``terminated`` is set;
- ``deals``: ``[B, K]`` int64, the chance outcomes of each env's current game, in the
  order the scalar game model asks for them (``K = 0`` for games without chance).

Chance uses one generator per env: splitmix64 (Steele, Lea and Flood 2014), a 64-bit
counter advanced by a constant and hashed, seeded from ``(seed, env index)``; a draw
below ``n`` takes the top 32 bits times ``n`` shifted down by 32 (Lemire's method without
rejection; its bias is below ``n / 2**32``, under 2e-9 for these games' ``n <= 6``).
So every env's games are a deterministic function of the seed and its index.

The rules are those of the scalar modules in :mod:`hiddenenvs.envs` (Kuhn poker, Leduc
hold'em, the matrix games, Othello, Liar's Dice, Goofspiel); ``tests/test_vector.py`` checks every tensor, mask,
reward and termination against them.
"""

cimport cython
from libc.stdint cimport int8_t, int16_t, int64_t, uint64_t
from libc.string cimport memset
from hiddenenvs.envs._othello cimport OthelloGeometry, othello_flips, othello_geometry, othello_moves

import numpy as np

cdef extern from *:
    int __builtin_popcountll(unsigned long long) nogil

cdef int SIMULTANEOUS = -2
cdef int TERMINAL = -4

cdef uint64_t GOLDEN = 0x9E3779B97F4A7C15ULL


cdef inline uint64_t _mix(uint64_t z) noexcept nogil:
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline uint64_t _next(uint64_t* state) noexcept nogil:
    state[0] += GOLDEN
    return _mix(state[0])


cdef inline int _below(uint64_t* state, int n) noexcept nogil:
    """A draw from ``0 .. n-1`` (see the module docstring)."""
    return <int>(((_next(state) >> 32) * <uint64_t>n) >> 32)


def seed_generators(uint64_t[::1] states, uint64_t seed):
    """Set each env's generator from ``(seed, env index)``."""
    cdef Py_ssize_t i
    cdef uint64_t base = _mix(seed + GOLDEN)
    for i in range(states.shape[0]):
        states[i] = _mix(base ^ _mix(<uint64_t>i * GOLDEN + 1))


cdef void _draw_legal_actions(
    const int8_t[:, ::1] masks, uint64_t[::1] states, int64_t* out
) noexcept nogil:
    """For each row of ``masks``, a legal action drawn uniformly with the row's generator
    (-1 for a row without one)."""
    cdef Py_ssize_t i, a, count, pick
    cdef Py_ssize_t num_actions = masks.shape[1]
    for i in range(masks.shape[0]):
        count = 0
        for a in range(num_actions):
            count += masks[i, a] != 0
        if count == 0:
            out[i] = -1
            continue
        pick = _below(&states[i], <int>count)
        for a in range(num_actions):
            if masks[i, a] != 0:
                if pick == 0:
                    out[i] = a
                    break
                pick -= 1


def random_legal_actions(const int8_t[:, ::1] masks, uint64_t[::1] states, int64_t[::1] out):
    """For each row of ``masks`` (``[N, A]``), a legal action drawn uniformly with the
    row's generator in ``states`` (``[N]``), written to ``out`` (``[N]``). A row without a
    legal action gets -1."""
    if states.shape[0] != masks.shape[0] or out.shape[0] != masks.shape[0]:
        raise ValueError(
            f"random_legal_actions: {masks.shape[0]} mask rows, {states.shape[0]} generators, "
            f"{out.shape[0]} outputs; they must be equal"
        )
    if masks.shape[0] == 0:
        return
    with nogil:
        _draw_legal_actions(masks, states, &out[0])


cdef class VectorKernel:
    """The batch loop shared by every game; a game subclass implements the per-env hooks.

    Hooks (all ``nogil``): ``reset_one`` starts env ``i``'s next game and plays its chance
    outcomes up to the first decision; ``apply`` plays a decision (a sequential game's
    action, or a simultaneous game's joint action in ``joint``) and any chance that follows;
    ``player`` is the player to move, ``SIMULTANEOUS`` or ``TERMINAL``; ``write_tensor``,
    ``write_mask`` and ``write_returns`` fill one row of the outputs.
    """

    cdef readonly Py_ssize_t num_envs
    cdef readonly int num_players, num_actions, observation_size, num_chance_outcomes
    cdef readonly bint simultaneous, information_state
    cdef readonly object observations, legal_action_masks, current_players, rewards
    cdef readonly object terminated, truncated, final_observations, deals, generator_states
    cdef float[:, ::1] _observations
    cdef int8_t[:, ::1] _masks
    cdef int64_t[::1] _players
    cdef float[:, ::1] _rewards
    cdef int8_t[::1] _terminated
    cdef float[:, ::1] _final
    cdef int64_t[:, ::1] _deals
    cdef uint64_t[::1] _rng
    cdef int64_t[:, ::1] _joint

    def _allocate(self, Py_ssize_t num_envs, int num_players, int num_actions, tuple observation_shape,
                  int num_chance_outcomes, bint simultaneous, bint information_state):
        self.num_envs = num_envs
        self.num_players = num_players
        self.num_actions = num_actions
        self.observation_size = int(np.prod(observation_shape))
        self.num_chance_outcomes = num_chance_outcomes
        self.simultaneous = simultaneous
        self.information_state = information_state
        seats = (num_players,) if simultaneous else ()
        self.observations = np.zeros((num_envs, *seats, *observation_shape), dtype=np.float32)
        self.legal_action_masks = np.zeros((num_envs, *seats, num_actions), dtype=np.int8)
        self.current_players = np.zeros(num_envs, dtype=np.int64)
        self.rewards = np.zeros((num_envs, num_players), dtype=np.float32)
        self.terminated = np.zeros(num_envs, dtype=bool)
        self.truncated = np.zeros(num_envs, dtype=bool)
        self.final_observations = np.zeros((num_envs, num_players, *observation_shape), dtype=np.float32)
        self.deals = np.zeros((num_envs, num_chance_outcomes), dtype=np.int64)
        self.generator_states = np.zeros(num_envs, dtype=np.uint64)
        rows = num_envs * (num_players if simultaneous else 1)
        self._observations = self.observations.reshape(rows, self.observation_size)
        self._masks = self.legal_action_masks.reshape(rows, num_actions)
        self._players = self.current_players
        self._rewards = self.rewards
        self._terminated = self.terminated.view(np.int8)
        self._final = self.final_observations.reshape(num_envs * num_players, self.observation_size)
        self._deals = self.deals
        self._rng = self.generator_states
        self._joint = np.zeros((num_envs, num_players), dtype=np.int64)

    # ---- hooks ---------------------------------------------------------------------
    cdef void reset_one(self, Py_ssize_t i) noexcept nogil:
        pass

    cdef void apply(self, Py_ssize_t i, int64_t* joint) noexcept nogil:
        pass

    cdef int player(self, Py_ssize_t i) noexcept nogil:
        return TERMINAL

    cdef void write_tensor(self, Py_ssize_t i, int player, float* out) noexcept nogil:
        pass

    cdef void write_mask(self, Py_ssize_t i, int player, int8_t* out) noexcept nogil:
        pass

    cdef void write_returns(self, Py_ssize_t i, float* out) noexcept nogil:
        pass

    # ---- the batch loop ------------------------------------------------------------
    cdef void _write_decision(self, Py_ssize_t i) noexcept nogil:
        """Write env ``i``'s player to move, tensor and mask (each game's class
        specialises :func:`_write_decision_of`)."""
        pass

    def reset(self):
        """Start a new game in every env (the generators continue where they are)."""
        cdef Py_ssize_t i
        with nogil:
            for i in range(self.num_envs):
                self.reset_one(i)
                self._write_decision(i)
                self._terminated[i] = 0
                memset(&self._rewards[i, 0], 0, self.num_players * sizeof(float))

    def step(self, const int64_t[:, ::1] actions, const int8_t[::1] active):
        """Play ``actions`` (``[B, 1]`` for sequential games, ``[B, P]`` for simultaneous
        ones) in every env where ``active`` (``[B]``) is set; a finished game records its
        final tensors and restarts. An inactive env keeps its state and outputs, with
        zero rewards and ``terminated`` unset.

        Returns -1, or the index of the first env whose action is illegal (then no env
        has moved). A simultaneous player with one legal action has it played for them.
        """
        cdef Py_ssize_t illegal
        if actions.shape[0] != self.num_envs or active.shape[0] != self.num_envs:
            raise ValueError(
                f"step: {actions.shape[0]} rows of actions and {active.shape[0]} active flags "
                f"for {self.num_envs} envs"
            )
        with nogil:
            illegal = self._resolve(actions, active, 0, self.num_envs)
            if illegal < 0:
                self._advance(active, 0, self.num_envs)
        return illegal

    def random_steps(
        self,
        Py_ssize_t num_steps,
        uint64_t[::1] policy_states,
        double[:, ::1] reward_sums,
        int64_t[::1] episodes,
        Py_ssize_t start=0,
        Py_ssize_t stop=-1,
    ):
        """``num_steps`` steps of the envs ``start .. stop - 1`` (default all) with
        uniform legal actions drawn as :func:`random_legal_actions` draws them from the
        masks (one generator per mask row in ``policy_states``), in one call: the same
        games as that many ``step`` calls with those draws. Adds each env's rewards to
        ``reward_sums`` (``[B, P]``) and its finished games to ``episodes`` (``[B]``).
        Calls on disjoint env ranges touch disjoint rows, and run in parallel from
        several threads (the loop holds no GIL)."""
        cdef Py_ssize_t rows = self._masks.shape[0]
        cdef Py_ssize_t per_env = rows // self.num_envs
        cdef Py_ssize_t step, i, p
        if stop < 0:
            stop = self.num_envs
        if not 0 <= start <= stop <= self.num_envs:
            raise ValueError(
                f"random_steps: env range {start}..{stop} outside 0..{self.num_envs}"
            )
        if policy_states.shape[0] != rows:
            raise ValueError(
                f"random_steps: {policy_states.shape[0]} policy generators for {rows} mask rows"
            )
        if reward_sums.shape[0] != self.num_envs or reward_sums.shape[1] != self.num_players:
            raise ValueError(
                f"random_steps: reward_sums must be ({self.num_envs}, {self.num_players}), got "
                f"({reward_sums.shape[0]}, {reward_sums.shape[1]})"
            )
        if episodes.shape[0] != self.num_envs:
            raise ValueError(f"random_steps: episodes must have {self.num_envs} entries")
        if start == stop:
            return
        # One drawn action per mask row: [B, 1] in sequential games, [B, P] in simultaneous ones.
        cdef int64_t[:, ::1] drawn = np.zeros((self.num_envs, per_env), dtype=np.int64)
        cdef int8_t[::1] active = np.ones(self.num_envs, dtype=np.int8)
        cdef const int8_t[:, ::1] masks = self._masks[start * per_env : stop * per_env]
        cdef uint64_t[::1] states = policy_states[start * per_env : stop * per_env]
        with nogil:
            for step in range(num_steps):
                _draw_legal_actions(masks, states, &drawn[start, 0])
                # Drawn actions are legal: _resolve only copies them into _joint (and plays
                # a simultaneous player's only action).
                self._resolve(drawn, active, start, stop)
                self._advance(active, start, stop)
                for i in range(start, stop):
                    episodes[i] += self._terminated[i]
                    for p in range(self.num_players):
                        reward_sums[i, p] += self._rewards[i, p]

    cdef void _advance(self, const int8_t[::1] active, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
        """Play the resolved joint actions in ``_joint`` in the active envs among
        ``start .. stop - 1`` (each game's
        class specialises :func:`_advance_of`)."""
        pass

    cdef Py_ssize_t _resolve(
        self, const int64_t[:, ::1] actions, const int8_t[::1] active, Py_ssize_t start, Py_ssize_t stop
    ) noexcept nogil:
        """Check the active envs' ``actions`` (among ``start .. stop - 1``) against the masks and copy them to ``_joint``
        (a simultaneous player's only legal action replaces their entry); the first
        illegal env, or -1."""
        cdef Py_ssize_t i, row
        cdef int p, a, count, forced
        cdef int64_t action
        for i in range(start, stop):
            if not active[i]:
                continue
            if self.simultaneous:
                for p in range(self.num_players):
                    row = i * self.num_players + p
                    count = 0
                    forced = -1
                    for a in range(self.num_actions):
                        if self._masks[row, a]:
                            count += 1
                            forced = a
                    action = actions[i, p]
                    if count > 1:
                        if action < 0 or action >= self.num_actions or not self._masks[row, action]:
                            return i
                        self._joint[i, p] = action
                    else:
                        self._joint[i, p] = forced
            else:
                action = actions[i, 0]
                if action < 0 or action >= self.num_actions or not self._masks[i, action]:
                    return i
                self._joint[i, 0] = action
        return -1


# ---- Kuhn poker ------------------------------------------------------------------------
cdef int KUHN_PASS = 0
cdef int KUHN_BET = 1


@cython.final
cdef class KuhnKernel(VectorKernel):
    """Kuhn poker (rules: :mod:`hiddenenvs.envs.kuhn_poker`). Deals: player 0's card,
    player 1's card (0 = J, 1 = Q, 2 = K)."""

    cdef int8_t[:, ::1] cards
    cdef int8_t[:, ::1] bets
    cdef int8_t[::1] num_bets

    cdef void _write_decision(self, Py_ssize_t i) noexcept nogil:
        _write_decision_of(self, i)

    cdef void _advance(self, const int8_t[::1] active, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
        _advance_of(self, active, start, stop)

    def __init__(self, Py_ssize_t num_envs, bint information_state):
        shape = (11,) if information_state else (7,)
        self._allocate(num_envs, 2, 2, shape, 2, False, information_state)
        self.cards = np.zeros((num_envs, 2), dtype=np.int8)
        self.bets = np.zeros((num_envs, 3), dtype=np.int8)
        self.num_bets = np.zeros(num_envs, dtype=np.int8)

    cdef void reset_one(self, Py_ssize_t i) noexcept nogil:
        cdef int first = _below(&self._rng[i], 3)
        cdef int second = _below(&self._rng[i], 2)
        if second >= first:
            second += 1
        self.cards[i, 0] = first
        self.cards[i, 1] = second
        self._deals[i, 0] = first
        self._deals[i, 1] = second
        self.num_bets[i] = 0

    cdef void apply(self, Py_ssize_t i, int64_t* joint) noexcept nogil:
        self.bets[i, self.num_bets[i]] = <int8_t>joint[0]
        self.num_bets[i] += 1

    cdef int player(self, Py_ssize_t i) noexcept nogil:
        cdef int count = self.num_bets[i]
        if count >= 2 and (count == 3 or self.bets[i, count - 2] == KUHN_BET
                           or (self.bets[i, 0] == KUHN_PASS and self.bets[i, 1] == KUHN_PASS)):
            return TERMINAL
        return count % 2

    cdef void _contributions(self, Py_ssize_t i, int* contributions) noexcept nogil:
        cdef int turn
        contributions[0] = 1
        contributions[1] = 1
        for turn in range(self.num_bets[i]):
            if self.bets[i, turn] == KUHN_BET:
                contributions[turn % 2] += 1

    cdef void write_tensor(self, Py_ssize_t i, int player, float* out) noexcept nogil:
        cdef int turn
        cdef int contributions[2]
        out[player] = 1
        out[2 + self.cards[i, player]] = 1
        if self.information_state:
            for turn in range(self.num_bets[i]):
                out[5 + 2 * turn + self.bets[i, turn]] = 1
        else:
            self._contributions(i, contributions)
            out[5] = contributions[0] / 2.0
            out[6] = contributions[1] / 2.0

    cdef void write_mask(self, Py_ssize_t i, int player, int8_t* out) noexcept nogil:
        out[KUHN_PASS] = 1
        out[KUHN_BET] = 1

    cdef void write_returns(self, Py_ssize_t i, float* out) noexcept nogil:
        cdef int contributions[2]
        cdef int count = self.num_bets[i]
        cdef int winner, loser, turn
        cdef bint any_bet = False
        self._contributions(i, contributions)
        for turn in range(count):
            any_bet = any_bet or self.bets[i, turn] == KUHN_BET
        if self.bets[i, count - 1] == KUHN_PASS and any_bet:
            winner = 1 - (count - 1) % 2  # passing after a bet folds
        else:
            winner = 1 if self.cards[i, 1] > self.cards[i, 0] else 0
        loser = 1 - winner
        out[winner] = contributions[loser]
        out[loser] = -contributions[loser]


# ---- Leduc hold'em ---------------------------------------------------------------------
cdef int LEDUC_FOLD = 0
cdef int LEDUC_CALL = 1
cdef int LEDUC_RAISE = 2


@cython.final
cdef class LeducKernel(VectorKernel):
    """Leduc hold'em (rules: :mod:`hiddenenvs.envs.leduc_holdem`). Three cards are drawn
    from the six at the deal (ranks 0 = J, 1 = Q, 2 = K): player 0's, player 1's, and the
    public card, which stays hidden until the first round ends. Deals: those three ranks
    (a game that ends in round 1 never reveals the third)."""

    cdef int max_raises, turns_per_round, max_contribution
    cdef int8_t[:, ::1] ranks  # private 0, private 1, public
    cdef int8_t[:, :, ::1] round_actions
    cdef int8_t[:, ::1] round_lengths
    cdef int8_t[::1] round_index, raises, folded
    cdef int[:, ::1] contributions

    cdef void _write_decision(self, Py_ssize_t i) noexcept nogil:
        _write_decision_of(self, i)

    cdef void _advance(self, const int8_t[::1] active, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
        _advance_of(self, active, start, stop)

    def __init__(self, Py_ssize_t num_envs, bint information_state, int max_raises):
        self.max_raises = max_raises
        self.turns_per_round = 2 + max_raises
        self.max_contribution = 1 + max_raises * (2 + 4)
        shape = (8 + 6 * self.turns_per_round,) if information_state else (10,)
        self._allocate(num_envs, 2, 3, shape, 3, False, information_state)
        self.ranks = np.zeros((num_envs, 3), dtype=np.int8)
        self.round_actions = np.zeros((num_envs, 2, self.turns_per_round), dtype=np.int8)
        self.round_lengths = np.zeros((num_envs, 2), dtype=np.int8)
        self.round_index = np.zeros(num_envs, dtype=np.int8)
        self.raises = np.zeros(num_envs, dtype=np.int8)
        self.folded = np.zeros(num_envs, dtype=np.int8)
        self.contributions = np.zeros((num_envs, 2), dtype=np.intc)

    cdef void reset_one(self, Py_ssize_t i) noexcept nogil:
        cdef int first = _below(&self._rng[i], 6)
        cdef int second = _below(&self._rng[i], 5)
        cdef int third = _below(&self._rng[i], 4)
        # draws among the cards left, as indices into the six in order
        if second >= first:
            second += 1
        if third >= (first if first < second else second):
            third += 1
        if third >= (second if first < second else first):
            third += 1
        self.ranks[i, 0] = first // 2
        self.ranks[i, 1] = second // 2
        self.ranks[i, 2] = third // 2
        self._deals[i, 0] = first // 2
        self._deals[i, 1] = second // 2
        self._deals[i, 2] = third // 2
        self.round_lengths[i, 0] = 0
        self.round_lengths[i, 1] = 0
        self.round_index[i] = 0
        self.raises[i] = 0
        self.folded[i] = -1
        self.contributions[i, 0] = 1
        self.contributions[i, 1] = 1

    cdef void apply(self, Py_ssize_t i, int64_t* joint) noexcept nogil:
        cdef int action = <int>joint[0]
        cdef int round_index = self.round_index[i]
        cdef int turn = self.round_lengths[i, round_index]
        cdef int player = turn % 2
        self.round_actions[i, round_index, turn] = <int8_t>action
        self.round_lengths[i, round_index] = turn + 1
        if action == LEDUC_FOLD:
            self.folded[i] = player
        elif action == LEDUC_CALL:
            self.contributions[i, player] = self.contributions[i, 1 - player]
            if turn + 1 >= 2 and round_index == 0:  # the public card is revealed; round 2
                self.round_index[i] = 1
                self.raises[i] = 0
        else:
            self.contributions[i, player] = self.contributions[i, 1 - player] + (2 if round_index == 0 else 4)
            self.raises[i] += 1

    cdef int player(self, Py_ssize_t i) noexcept nogil:
        cdef int round_index = self.round_index[i]
        cdef int length = self.round_lengths[i, round_index]
        if self.folded[i] >= 0:
            return TERMINAL
        if round_index == 1 and length >= 2 and self.round_actions[i, 1, length - 1] == LEDUC_CALL:
            return TERMINAL
        return length % 2

    cdef void write_tensor(self, Py_ssize_t i, int player, float* out) noexcept nogil:
        cdef int round_index, turn, offset
        cdef bint revealed = self.round_index[i] == 1
        out[player] = 1
        out[2 + self.ranks[i, player]] = 1
        if revealed:
            out[5 + self.ranks[i, 2]] = 1
        if self.information_state:
            offset = 8
            for round_index in range(self.round_index[i] + 1):
                for turn in range(self.round_lengths[i, round_index]):
                    out[offset + 3 * turn + self.round_actions[i, round_index, turn]] = 1
                offset += 3 * self.turns_per_round
        else:
            out[8] = self.contributions[i, 0] / <float>self.max_contribution
            out[9] = self.contributions[i, 1] / <float>self.max_contribution

    cdef void write_mask(self, Py_ssize_t i, int player, int8_t* out) noexcept nogil:
        if self.contributions[i, player] < self.contributions[i, 1 - player]:
            out[LEDUC_FOLD] = 1
        out[LEDUC_CALL] = 1
        if self.raises[i] < self.max_raises:
            out[LEDUC_RAISE] = 1

    cdef void write_returns(self, Py_ssize_t i, float* out) noexcept nogil:
        cdef int loser, strength_0, strength_1
        if self.folded[i] >= 0:
            loser = self.folded[i]
        else:
            strength_0 = self.ranks[i, 0] + (3 if self.ranks[i, 0] == self.ranks[i, 2] else 0)
            strength_1 = self.ranks[i, 1] + (3 if self.ranks[i, 1] == self.ranks[i, 2] else 0)
            if strength_0 == strength_1:
                out[0] = 0
                out[1] = 0
                return
            loser = 1 if strength_0 > strength_1 else 0
        out[loser] = -self.contributions[i, loser]
        out[1 - loser] = self.contributions[i, loser]


# ---- matrix games ----------------------------------------------------------------------
@cython.final
cdef class MatrixKernel(VectorKernel):
    """A two-player matrix game (rules: :mod:`hiddenenvs.envs.matrix_games`): one
    simultaneous choice, then the payoff to player 0 and its negative to player 1."""

    cdef float[:, ::1] payoff
    cdef int64_t[:, ::1] joint_played
    cdef int8_t[::1] played

    cdef void _write_decision(self, Py_ssize_t i) noexcept nogil:
        _write_decision_of(self, i)

    cdef void _advance(self, const int8_t[::1] active, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
        _advance_of(self, active, start, stop)

    def __init__(self, Py_ssize_t num_envs, payoff):
        payoff = np.ascontiguousarray(payoff, dtype=np.float32)
        num_actions = payoff.shape[0]
        self._allocate(num_envs, 2, num_actions, (2 + 2 * num_actions,), 0, True, True)
        self.payoff = payoff
        self.joint_played = np.zeros((num_envs, 2), dtype=np.int64)
        self.played = np.zeros(num_envs, dtype=np.int8)

    cdef void reset_one(self, Py_ssize_t i) noexcept nogil:
        self.played[i] = 0

    cdef void apply(self, Py_ssize_t i, int64_t* joint) noexcept nogil:
        self.joint_played[i, 0] = joint[0]
        self.joint_played[i, 1] = joint[1]
        self.played[i] = 1

    cdef int player(self, Py_ssize_t i) noexcept nogil:
        return TERMINAL if self.played[i] else SIMULTANEOUS

    cdef void write_tensor(self, Py_ssize_t i, int player, float* out) noexcept nogil:
        out[player] = 1
        if self.played[i]:
            out[2 + self.joint_played[i, player]] = 1
            out[2 + self.num_actions + self.joint_played[i, 1 - player]] = 1

    cdef void write_mask(self, Py_ssize_t i, int player, int8_t* out) noexcept nogil:
        cdef int a
        for a in range(self.num_actions):
            out[a] = 1

    cdef void write_returns(self, Py_ssize_t i, float* out) noexcept nogil:
        cdef float value = self.payoff[self.joint_played[i, 0], self.joint_played[i, 1]]
        out[0] = value
        out[1] = -value


# ---- Othello ---------------------------------------------------------------------------
@cython.final
cdef class OthelloKernel(VectorKernel):
    """Othello on a 4x4, 6x6 or 8x8 board (rules: :mod:`hiddenenvs.envs.othello`), on
    the game model's bitboards (``hiddenenvs/envs/_othello.pxd``, one copy of the move
    generation and flips): two ``uint64`` per env, one bit per square ``row * size + column``."""

    cdef int size, num_squares
    cdef uint64_t full
    cdef uint64_t[:, ::1] discs  # black, white
    cdef int8_t[::1] to_move
    cdef uint64_t[::1] moves
    cdef int8_t[::1] over
    cdef uint64_t initial_black, initial_white
    cdef OthelloGeometry geometry

    cdef void _write_decision(self, Py_ssize_t i) noexcept nogil:
        _write_decision_of(self, i)

    cdef void _advance(self, const int8_t[::1] active, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
        _advance_of(self, active, start, stop)

    def __init__(self, Py_ssize_t num_envs, int size):
        cdef int half = size // 2
        othello_geometry(&self.geometry, size)
        self.size = size
        self.num_squares = size * size
        self.full = self.geometry.full
        self.initial_black = ((<uint64_t>1) << ((half - 1) * size + half)) | ((<uint64_t>1) << (half * size + half - 1))
        self.initial_white = ((<uint64_t>1) << ((half - 1) * size + half - 1)) | ((<uint64_t>1) << (half * size + half))
        self._allocate(num_envs, 2, self.num_squares + 1, (3, size, size), 0, False, True)
        self.discs = np.zeros((num_envs, 2), dtype=np.uint64)
        self.to_move = np.zeros(num_envs, dtype=np.int8)
        self.moves = np.zeros(num_envs, dtype=np.uint64)
        self.over = np.zeros(num_envs, dtype=np.int8)

    cdef uint64_t _moves(self, uint64_t own, uint64_t opponent) noexcept nogil:
        return othello_moves(&self.geometry, own, opponent)

    cdef uint64_t _flips(self, uint64_t square_bit, uint64_t own, uint64_t opponent) noexcept nogil:
        return othello_flips(&self.geometry, square_bit, own, opponent)

    cdef void reset_one(self, Py_ssize_t i) noexcept nogil:
        self.discs[i, 0] = self.initial_black
        self.discs[i, 1] = self.initial_white
        self.to_move[i] = 0
        self.moves[i] = self._moves(self.initial_black, self.initial_white)
        self.over[i] = 0

    cdef void apply(self, Py_ssize_t i, int64_t* joint) noexcept nogil:
        cdef int player = self.to_move[i]
        cdef uint64_t own = self.discs[i, player], opponent = self.discs[i, 1 - player]
        cdef uint64_t square_bit, flipped, next_moves
        if joint[0] != self.num_squares:
            square_bit = (<uint64_t>1) << joint[0]
            flipped = self._flips(square_bit, own, opponent)
            own |= square_bit | flipped
            opponent &= ~flipped
            self.discs[i, player] = own
            self.discs[i, 1 - player] = opponent
        next_moves = self._moves(opponent, own)
        self.moves[i] = next_moves
        self.over[i] = next_moves == 0 and self._moves(own, opponent) == 0
        self.to_move[i] = 1 - player

    cdef int player(self, Py_ssize_t i) noexcept nogil:
        return TERMINAL if self.over[i] else self.to_move[i]

    cdef void write_tensor(self, Py_ssize_t i, int player, float* out) noexcept nogil:
        # Branch-free: a board's squares are unpredictable, and a branch per square cost
        # more than the whole step's other work.
        cdef uint64_t own = self.discs[i, player], opponent = self.discs[i, 1 - player]
        cdef uint64_t empty = self.full & ~(own | opponent)
        cdef int square, squares = self.num_squares
        for square in range(squares):
            out[square] = <float>((own >> square) & 1)
            out[squares + square] = <float>((opponent >> square) & 1)
            out[2 * squares + square] = <float>((empty >> square) & 1)

    cdef void write_mask(self, Py_ssize_t i, int player, int8_t* out) noexcept nogil:
        cdef uint64_t bits = self.moves[i]
        cdef int square
        if bits == 0:
            out[self.num_squares] = 1
            return
        for square in range(self.num_squares):
            out[square] = (bits >> square) & 1

    cdef void write_returns(self, Py_ssize_t i, float* out) noexcept nogil:
        cdef int black = __builtin_popcountll(self.discs[i, 0])
        cdef int white = __builtin_popcountll(self.discs[i, 1])
        cdef float result = 1 if black > white else (-1 if black < white else 0)
        out[0] = result
        out[1] = -result


# ---- Liar's Dice -----------------------------------------------------------------------
@cython.final
cdef class LiarsDiceKernel(VectorKernel):
    """Liar's Dice (rules: :mod:`hiddenenvs.envs.liars_dice`). Deals: the ``2 D`` rolls,
    player 0's dice first, each ``face - 1``."""

    cdef int num_dice, faces, num_bids, liar
    cdef int8_t[:, :, ::1] sorted_dice  # faces 1..F per player, ascending
    cdef int8_t[:, ::1] counts_by_face  # dice showing each face (index face - 1), both hands
    cdef int16_t[:, ::1] actions
    cdef int16_t[::1] num_actions_played

    cdef void _write_decision(self, Py_ssize_t i) noexcept nogil:
        _write_decision_of(self, i)

    cdef void _advance(self, const int8_t[::1] active, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
        _advance_of(self, active, start, stop)

    def __init__(self, Py_ssize_t num_envs, bint information_state, int num_dice, int faces):
        self.num_dice = num_dice
        self.faces = faces
        self.num_bids = 2 * num_dice * faces
        self.liar = self.num_bids
        extra = 1 if information_state else 3
        shape = (2 + num_dice * faces + self.num_bids + extra,)
        self._allocate(num_envs, 2, self.num_bids + 1, shape, 2 * num_dice, False, information_state)
        self.sorted_dice = np.zeros((num_envs, 2, num_dice), dtype=np.int8)
        self.counts_by_face = np.zeros((num_envs, faces), dtype=np.int8)
        self.actions = np.zeros((num_envs, self.num_bids + 1), dtype=np.int16)
        self.num_actions_played = np.zeros(num_envs, dtype=np.int16)

    cdef void reset_one(self, Py_ssize_t i) noexcept nogil:
        cdef int player, die, face, slot
        for face in range(self.faces):
            self.counts_by_face[i, face] = 0
        for player in range(2):
            for die in range(self.num_dice):
                face = _below(&self._rng[i], self.faces) + 1
                self._deals[i, player * self.num_dice + die] = face - 1
                self.counts_by_face[i, face - 1] += 1
                slot = die  # insertion into the sorted hand
                while slot > 0 and self.sorted_dice[i, player, slot - 1] > face:
                    self.sorted_dice[i, player, slot] = self.sorted_dice[i, player, slot - 1]
                    slot -= 1
                self.sorted_dice[i, player, slot] = face
        self.num_actions_played[i] = 0

    cdef void apply(self, Py_ssize_t i, int64_t* joint) noexcept nogil:
        self.actions[i, self.num_actions_played[i]] = <int16_t>joint[0]
        self.num_actions_played[i] += 1

    cdef int player(self, Py_ssize_t i) noexcept nogil:
        cdef int count = self.num_actions_played[i]
        if count > 0 and self.actions[i, count - 1] == self.liar:
            return TERMINAL
        return count % 2

    cdef void write_tensor(self, Py_ssize_t i, int player, float* out) noexcept nogil:
        cdef int die, turn, bids, bidder
        cdef int count = self.num_actions_played[i]
        cdef int base = 2 + self.num_dice * self.faces
        cdef bint called = count > 0 and self.actions[i, count - 1] == self.liar
        out[player] = 1
        for die in range(self.num_dice):
            out[2 + die * self.faces + self.sorted_dice[i, player, die] - 1] = 1
        if self.information_state:
            for turn in range(count):
                out[base + self.actions[i, turn]] = 1
        else:
            bids = count - 1 if called else count
            if bids > 0:
                out[base + self.actions[i, bids - 1]] = 1
                bidder = (bids - 1) % 2
                out[base + self.num_bids + (0 if bidder == player else 1)] = 1
            if called:
                out[base + self.num_bids + 2] = 1

    cdef void write_mask(self, Py_ssize_t i, int player, int8_t* out) noexcept nogil:
        cdef int action
        cdef int count = self.num_actions_played[i]
        if count == 0:
            for action in range(self.num_bids):
                out[action] = 1
        else:
            for action in range(self.actions[i, count - 1] + 1, self.num_bids + 1):
                out[action] = 1

    cdef void write_returns(self, Py_ssize_t i, float* out) noexcept nogil:
        cdef int count = self.num_actions_played[i]
        cdef int bid = self.actions[i, count - 2]
        cdef int quantity = bid // self.faces + 1, face = bid % self.faces + 1
        cdef int matching = self.counts_by_face[i, face - 1]
        cdef int caller = (count - 1) % 2
        cdef int loser
        if face != self.faces:
            matching += self.counts_by_face[i, self.faces - 1]
        loser = caller if matching >= quantity else 1 - caller
        out[loser] = -1
        out[1 - loser] = 1


# ---- Goofspiel -------------------------------------------------------------------------
@cython.final
cdef class GoofspielKernel(VectorKernel):
    """Goofspiel and II-Goofspiel (rules: :mod:`hiddenenvs.envs.goofspiel`, state as in
    :mod:`hiddenenvs.envs._goofspiel`). With a random deck the whole order of the point
    cards is drawn at the deal (each card uniform among those left, as the scalar game's
    chance nodes draw them); deals: the first ``N - 1`` point cards, each ``value - 1``
    (the last one is forced). Cards and points are ranks 1..N."""

    cdef int num_cards, round_block, total_points
    cdef bint imp_info, random_deck, point_difference
    cdef int[::1] fixed_order
    cdef int8_t[:, ::1] order  # each env's point cards, in the order they are revealed
    cdef int8_t[:, :, ::1] bids
    cdef int8_t[:, :, ::1] held  # per player and rank 1..N (index 0 unused)
    cdef int8_t[:, ::1] undrawn  # per rank 1..N
    cdef int[:, ::1] scores
    cdef int8_t[::1] revealed, played

    cdef void _write_decision(self, Py_ssize_t i) noexcept nogil:
        _write_decision_of(self, i)

    cdef void _advance(self, const int8_t[::1] active, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
        _advance_of(self, active, start, stop)

    def __init__(self, Py_ssize_t num_envs, bint information_state, int num_cards, fixed_points,
                 bint imp_info, bint point_difference):
        n = num_cards
        self.num_cards = n
        self.imp_info = imp_info
        self.random_deck = fixed_points is None
        self.point_difference = point_difference
        self.round_block = 2 * n + (3 if imp_info else n)
        self.total_points = n * (n + 1) // 2
        self.fixed_order = np.asarray(fixed_points if fixed_points is not None else range(1, n + 1), dtype=np.intc)
        shape = (2 + 2 * n + n * self.round_block,) if information_state else (2 + 4 * n + 2,)
        self._allocate(num_envs, 2, n, shape, n - 1 if self.random_deck else 0, True, information_state)
        self.order = np.zeros((num_envs, n), dtype=np.int8)
        self.bids = np.zeros((num_envs, 2, n), dtype=np.int8)
        self.held = np.zeros((num_envs, 2, n + 1), dtype=np.int8)
        self.undrawn = np.zeros((num_envs, n + 1), dtype=np.int8)
        self.scores = np.zeros((num_envs, 2), dtype=np.intc)
        self.revealed = np.zeros(num_envs, dtype=np.int8)
        self.played = np.zeros(num_envs, dtype=np.int8)

    cdef void reset_one(self, Py_ssize_t i) noexcept nogil:
        cdef int n = self.num_cards, rank, index, pick
        for rank in range(1, n + 1):
            self.held[i, 0, rank] = 1
            self.held[i, 1, rank] = 1
            self.undrawn[i, rank] = 1
        if self.random_deck:
            for index in range(n):
                pick = _below(&self._rng[i], n - index)
                for rank in range(1, n + 1):  # the pick-th card not yet in the order
                    if self.undrawn[i, rank]:
                        if pick == 0:
                            break
                        pick -= 1
                self.order[i, index] = rank
                self.undrawn[i, rank] = 0
                if index < n - 1:
                    self._deals[i, index] = rank - 1
            for rank in range(1, n + 1):
                self.undrawn[i, rank] = 1
        else:
            for index in range(n):
                self.order[i, index] = self.fixed_order[index]
        self.scores[i, 0] = 0
        self.scores[i, 1] = 0
        self.revealed[i] = 0
        self.played[i] = 0
        self._begin_round(i)

    cdef void _reveal(self, Py_ssize_t i) noexcept nogil:
        self.undrawn[i, self.order[i, self.revealed[i]]] = 0
        self.revealed[i] += 1

    cdef void _score_round(self, Py_ssize_t i, int bid_0, int bid_1) noexcept nogil:
        cdef int played = self.played[i]
        self.bids[i, 0, played] = bid_0
        self.bids[i, 1, played] = bid_1
        self.held[i, 0, bid_0] = 0
        self.held[i, 1, bid_1] = 0
        self.played[i] = played + 1
        if bid_0 != bid_1:
            self.scores[i, 0 if bid_0 > bid_1 else 1] += self.order[i, self.revealed[i] - 1]

    cdef int _only_held(self, Py_ssize_t i, int player) noexcept nogil:
        cdef int rank
        for rank in range(1, self.num_cards + 1):
            if self.held[i, player, rank]:
                return rank
        return 0

    cdef void _begin_round(self, Py_ssize_t i) noexcept nogil:
        """Reveal the next point card; the forced last round plays itself."""
        self._reveal(i)
        if self.played[i] == self.num_cards - 1:
            self._score_round(i, self._only_held(i, 0), self._only_held(i, 1))

    cdef void apply(self, Py_ssize_t i, int64_t* joint) noexcept nogil:
        self._score_round(i, <int>joint[0] + 1, <int>joint[1] + 1)
        if self.played[i] < self.num_cards:
            self._begin_round(i)

    cdef int player(self, Py_ssize_t i) noexcept nogil:
        return TERMINAL if self.played[i] == self.num_cards else SIMULTANEOUS

    cdef void write_tensor(self, Py_ssize_t i, int player, float* out) noexcept nogil:
        cdef int n = self.num_cards, rank, index, base, mine, theirs
        out[player] = 1
        if self.revealed[i] > self.played[i]:
            out[1 + self.order[i, self.revealed[i] - 1]] = 1
        for rank in range(1, n + 1):
            if self.held[i, player, rank]:
                out[1 + n + rank] = 1
        if self.information_state:
            for index in range(self.played[i]):
                base = 2 + 2 * n + index * self.round_block
                mine = self.bids[i, player, index]
                theirs = self.bids[i, 1 - player, index]
                out[base + self.order[i, index] - 1] = 1
                out[base + n + mine - 1] = 1
                if self.imp_info:
                    out[base + 2 * n + (0 if mine > theirs else (1 if mine < theirs else 2))] = 1
                else:
                    out[base + 2 * n + theirs - 1] = 1
        else:
            for rank in range(1, n + 1):
                if not self.imp_info and self.held[i, 1 - player, rank]:
                    out[1 + 2 * n + rank] = 1
                if self.undrawn[i, rank]:
                    out[1 + 3 * n + rank] = 1
            out[2 + 4 * n] = <float>(<double>self.scores[i, player] / self.total_points)
            out[3 + 4 * n] = <float>(<double>self.scores[i, 1 - player] / self.total_points)

    cdef void write_mask(self, Py_ssize_t i, int player, int8_t* out) noexcept nogil:
        cdef int rank
        for rank in range(1, self.num_cards + 1):
            out[rank - 1] = self.held[i, player, rank]

    cdef void write_returns(self, Py_ssize_t i, float* out) noexcept nogil:
        cdef int difference = self.scores[i, 0] - self.scores[i, 1]
        if not self.point_difference:
            difference = (difference > 0) - (difference < 0)
        out[0] = difference
        out[1] = -difference


# ---- the batch loop, specialised per game --------------------------------------------------
# One copy of the loop per game class (a fused type): the classes are final, so the hooks
# are direct calls the C compiler inlines, instead of one virtual call per hook and env.
ctypedef fused GameKernel:
    KuhnKernel
    LeducKernel
    MatrixKernel
    OthelloKernel
    LiarsDiceKernel
    GoofspielKernel


cdef inline void _write_decision_of(GameKernel self, Py_ssize_t i) noexcept nogil:
    """Write env ``i``'s player to move, tensor and mask."""
    cdef int player = self.player(i)
    cdef int p
    cdef Py_ssize_t row
    self._players[i] = player
    if self.simultaneous:
        for p in range(self.num_players):
            row = i * self.num_players + p
            memset(&self._observations[row, 0], 0, self.observation_size * sizeof(float))
            self.write_tensor(i, p, &self._observations[row, 0])
            memset(&self._masks[row, 0], 0, self.num_actions)
            self.write_mask(i, p, &self._masks[row, 0])
    else:
        memset(&self._observations[i, 0], 0, self.observation_size * sizeof(float))
        self.write_tensor(i, player, &self._observations[i, 0])
        memset(&self._masks[i, 0], 0, self.num_actions)
        self.write_mask(i, player, &self._masks[i, 0])


cdef inline void _advance_of(
    GameKernel self, const int8_t[::1] active, Py_ssize_t start, Py_ssize_t stop
) noexcept nogil:
    """Play the resolved joint actions in ``_joint`` in the active envs among
    ``start .. stop - 1``."""
    cdef Py_ssize_t i, row
    cdef int p
    for i in range(start, stop):
        if not active[i]:
            memset(&self._rewards[i, 0], 0, self.num_players * sizeof(float))
            self._terminated[i] = 0
            continue
        self.apply(i, &self._joint[i, 0])
        if self.player(i) == TERMINAL:
            self.write_returns(i, &self._rewards[i, 0])
            for p in range(self.num_players):
                row = i * self.num_players + p
                memset(&self._final[row, 0], 0, self.observation_size * sizeof(float))
                self.write_tensor(i, p, &self._final[row, 0])
            self._terminated[i] = 1
            self.reset_one(i)
        else:
            memset(&self._rewards[i, 0], 0, self.num_players * sizeof(float))
            self._terminated[i] = 0
        _write_decision_of(self, i)
