# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False, language_level=3
"""Compiled batch kernel for combat's fighter mode in :mod:`hiddenenvs.vector`.

:class:`CombatFighterKernel` holds ``num_envs`` battles in flat arrays and steps them all
in one ``nogil`` loop through the C functions of the scalar game's tick
(:mod:`hiddenenvs.envs.combat._tick`, shared through its ``.pxd``): intents, shots,
steps and doors, sight and beliefs, the result and rewards, views and masks. Its output
buffers are those of :mod:`hiddenenvs.vector._kernels`' kernels, for a simultaneous game
with every fighter a player.

Hit rolls: the scalar state draws them from ``np.random.default_rng(seed)`` (numpy's
PCG64 seeded through ``SeedSequence(seed)``), ``2 T`` per tick with
``Generator.random``. This kernel runs the same generator in C per env (SeedSequence's
hash for an integer seed below ``2**64``, PCG64's XSL-RR step and ``next_double``), so
an env's rolls are the scalar state's for the same seed, bit for bit
(``tests/test_vector_combat.py`` compares them through whole episodes). Each new game of
env ``i`` takes its seed (``deals[i, 0]``, below ``2**63``) from the env's splitmix64
generator, seeded from ``(seed, i)`` as in the other kernels: a batch's games are a
function of ``make``'s seed alone.
"""

from libc.stdint cimport int8_t, int32_t, int64_t, uint8_t, uint64_t
from libc.string cimport memset

import numpy as np

from hiddenenvs.envs.combat._tick cimport (
    _advance,
    _fighter_intents,
    _fighter_masks,
    _fighter_outcome,
    _fill_views,
    _update_sight,
)

from hiddenenvs.envs.combat._tick import terrain_view_table

cdef extern from *:
    """
    /* numpy's PCG64 (XSL-RR 128/64) as np.random.default_rng(seed) seeds it, through
       SeedSequence(seed) (pool of 4 words, no spawn key), for seeds below 2**64. */
    typedef unsigned __int128 hiddenenvs_u128;
    #define HIDDENENVS_PCG_MULTIPLIER \\
        (((hiddenenvs_u128)2549297995355413924ULL << 64) | 4865540595714422341ULL)

    static inline uint32_t hiddenenvs_hashmix(uint32_t value, uint32_t *hash_const) {
        value ^= *hash_const;
        *hash_const *= 0x931e8875U;
        value *= *hash_const;
        value ^= value >> 16;
        return value;
    }

    static inline uint32_t hiddenenvs_mix(uint32_t x, uint32_t y) {
        uint32_t result = 0xca01f9ddU * x - 0x4973f715U * y;
        return result ^ (result >> 16);
    }

    /* rng[0], rng[1]: the 128-bit state (high, low words); rng[2], rng[3]: the increment. */
    static void hiddenenvs_pcg64_seed(uint64_t *rng, uint64_t seed) {
        uint32_t entropy[2], pool[4], words[8], hash_const = 0x43b0d7e5U, value;
        uint64_t halves[4];
        hiddenenvs_u128 state, increment;
        int entropy_words, i, j;
        entropy[0] = (uint32_t)seed;
        entropy[1] = (uint32_t)(seed >> 32);
        entropy_words = entropy[1] ? 2 : 1;  /* the int's 32-bit words, 0 as one word */
        for (i = 0; i < 4; i++)  /* SeedSequence.mix_entropy */
            pool[i] = hiddenenvs_hashmix(i < entropy_words ? entropy[i] : 0U, &hash_const);
        for (i = 0; i < 4; i++)
            for (j = 0; j < 4; j++)
                if (i != j)
                    pool[j] = hiddenenvs_mix(pool[j], hiddenenvs_hashmix(pool[i], &hash_const));
        hash_const = 0x8b51f9ddU;  /* SeedSequence.generate_state(4, uint64) */
        for (i = 0; i < 8; i++) {
            value = pool[i % 4] ^ hash_const;
            hash_const *= 0x58f38dedU;
            value *= hash_const;
            words[i] = value ^ (value >> 16);
        }
        for (i = 0; i < 4; i++)
            halves[i] = (uint64_t)words[2 * i] | ((uint64_t)words[2 * i + 1] << 32);
        /* pcg64_set_seed: state 0, step, add the seed, step */
        increment = ((((hiddenenvs_u128)halves[2] << 64) | halves[3]) << 1) | 1U;
        state = increment + ((((hiddenenvs_u128)halves[0]) << 64) | halves[1]);
        state = state * HIDDENENVS_PCG_MULTIPLIER + increment;
        rng[0] = (uint64_t)(state >> 64);
        rng[1] = (uint64_t)state;
        rng[2] = (uint64_t)(increment >> 64);
        rng[3] = (uint64_t)increment;
    }

    /* Generator.random's draw: the next 64-bit output's top 53 bits over 2**53. */
    static inline double hiddenenvs_pcg64_next_double(uint64_t *rng) {
        hiddenenvs_u128 state = ((hiddenenvs_u128)rng[0] << 64) | rng[1];
        hiddenenvs_u128 increment = ((hiddenenvs_u128)rng[2] << 64) | rng[3];
        uint64_t folded, output;
        unsigned rotation;
        state = state * HIDDENENVS_PCG_MULTIPLIER + increment;
        rng[0] = (uint64_t)(state >> 64);
        rng[1] = (uint64_t)state;
        folded = rng[0] ^ rng[1];
        rotation = (unsigned)(state >> 122);
        output = (folded >> rotation) | (folded << ((-rotation) & 63));
        return (output >> 11) * (1.0 / 9007199254740992.0);
    }
    """
    void pcg64_seed "hiddenenvs_pcg64_seed" (uint64_t *rng, uint64_t seed) noexcept nogil
    double pcg64_next_double "hiddenenvs_pcg64_next_double" (uint64_t *rng) noexcept nogil

cdef int SIMULTANEOUS = -2
cdef int ONGOING = -2  # _fighter_outcome while the battle goes on
cdef uint64_t GOLDEN = 0x9E3779B97F4A7C15ULL


cdef inline uint64_t _splitmix_next(uint64_t* state) noexcept nogil:
    """The next output of a splitmix64 generator (as :mod:`hiddenenvs.vector._kernels`)."""
    cdef uint64_t z
    state[0] += GOLDEN
    z = state[0]
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef class CombatFighterKernel:
    """Fighter mode of ``game`` (a :class:`~hiddenenvs.envs.combat.env.CombatGame`) in
    ``num_envs`` envs; the output buffers and ``reset``/``step`` of
    :class:`hiddenenvs.vector._kernels.VectorKernel`, except that ``rewards`` hold every
    step's rewards (the shaped part each tick, as ``state.rewards()``), not only the
    returns at the end. Deals: ``[B, 1]``, each env's seed of its current game."""

    cdef readonly Py_ssize_t num_envs
    cdef readonly int num_players, num_actions
    cdef readonly object observations, legal_action_masks, current_players, rewards
    cdef readonly object terminated, truncated, final_observations, deals, generator_states
    # the map and rules (as FighterTick holds them)
    cdef const int64_t[::1] cell_rows
    cdef const int64_t[::1] cell_cols
    cdef const uint8_t[::1] blocks_sight
    cdef const int64_t[:, :, ::1] line_offsets
    cdef const int8_t[:, ::1] padded_codes
    cdef const float[:, :, ::1] terrain_views
    cdef const int32_t[:, ::1] move_target
    cdef const int8_t[::1] door_of_cell
    cdef const int32_t[::1] spawn_cells
    cdef int num_doors, door_capacity, team_size, sight_range, view_radius, damage, max_health
    cdef int64_t max_ticks
    cdef double fire_range, hit_probability, reward_scale
    # per env: the battle (as Battle holds it) and its hit-roll generator
    cdef int32_t[:, ::1] positions
    cdef int32_t[:, ::1] health
    cdef uint8_t[:, ::1] alive
    cdef int32_t[:, :, ::1] belief_cells
    cdef uint8_t[:, :, ::1] sees
    cdef double[:, :, ::1] distance
    cdef uint8_t[:, :, ::1] seen
    cdef int64_t[:, ::1] target_of
    cdef int64_t[:, ::1] damage_dealt
    cdef int64_t[::1] ticks
    cdef uint64_t[:, ::1] hit_generators
    # one tick's scratch
    cdef double[::1] rolls
    cdef int32_t[::1] wanted_cells
    cdef uint8_t[::1] fires
    cdef int64_t[:, ::1] joint
    # the outputs
    cdef float[:, :, :, :, ::1] _observations
    cdef uint8_t[:, :, ::1] _masks
    cdef float[:, ::1] _rewards
    cdef int8_t[::1] _terminated
    cdef float[:, :, :, :, ::1] _final
    cdef int64_t[:, ::1] _deals
    cdef uint64_t[::1] _rng

    def __init__(self, game, Py_ssize_t num_envs, int max_health):
        if game.mode != "fighter":
            raise ValueError(f"CombatFighterKernel: fighter mode only, got mode={game.mode!r}")
        combat_map, rules = game.map, game.rules
        self.num_envs = num_envs
        self.team_size = rules.team_size
        count = 2 * rules.team_size
        self.num_players = count
        self.num_actions = game.info.num_distinct_actions
        self.cell_rows = combat_map.cell_rows
        self.cell_cols = combat_map.cell_cols
        self.blocks_sight = combat_map.blocks_sight.view(np.uint8)
        self.line_offsets = combat_map.line_of_sight_offsets(rules.sight_range)
        self.padded_codes = game.padded_codes
        self.terrain_views = terrain_view_table(game.padded_codes)
        self.move_target = combat_map.move_target
        self.door_of_cell = combat_map.door_of_cell
        self.spawn_cells = np.ascontiguousarray(
            np.concatenate([combat_map.spawn_cells(0, rules.team_size),
                            combat_map.spawn_cells(1, rules.team_size)]), dtype=np.int32)
        self.num_doors = combat_map.num_doors
        self.door_capacity = rules.door_capacity
        self.sight_range = rules.sight_range
        self.view_radius = game.params["view_radius"]
        self.damage = rules.damage
        self.max_health = max_health
        self.max_ticks = rules.max_ticks
        self.fire_range = rules.fire_range
        self.hit_probability = rules.hit_probability
        # as FighterTick: the health balance over a whole team's health (0: unshaped)
        self.reward_scale = max_health * rules.team_size if game.params["shaped_rewards"] else 0.0
        size = rules.team_size
        self.positions = np.zeros((num_envs, count), dtype=np.int32)
        self.health = np.zeros((num_envs, count), dtype=np.int32)
        self.alive = np.zeros((num_envs, count), dtype=np.uint8)
        self.belief_cells = np.zeros((num_envs, 2, size), dtype=np.int32)
        self.sees = np.zeros((num_envs, size, size), dtype=np.uint8)
        self.distance = np.zeros((num_envs, size, size), dtype=np.float64)
        self.seen = np.zeros((num_envs, 2, size), dtype=np.uint8)
        self.target_of = np.zeros((num_envs, count), dtype=np.int64)
        self.damage_dealt = np.zeros((num_envs, 2), dtype=np.int64)
        self.ticks = np.zeros(num_envs, dtype=np.int64)
        self.hit_generators = np.zeros((num_envs, 4), dtype=np.uint64)
        self.rolls = np.zeros(count, dtype=np.float64)
        self.wanted_cells = np.zeros(count, dtype=np.int32)
        self.fires = np.zeros(count, dtype=np.uint8)
        self.joint = np.zeros((num_envs, count), dtype=np.int64)
        shape = tuple(game.info.observation_tensor_shape)
        self.observations = np.zeros((num_envs, count, *shape), dtype=np.float32)
        self.legal_action_masks = np.zeros((num_envs, count, self.num_actions), dtype=np.int8)
        self.current_players = np.full(num_envs, SIMULTANEOUS, dtype=np.int64)
        self.rewards = np.zeros((num_envs, count), dtype=np.float32)
        self.terminated = np.zeros(num_envs, dtype=bool)
        self.truncated = np.zeros(num_envs, dtype=bool)
        self.final_observations = np.zeros((num_envs, count, *shape), dtype=np.float32)
        self.deals = np.zeros((num_envs, 1), dtype=np.int64)
        self.generator_states = np.zeros(num_envs, dtype=np.uint64)
        self._observations = self.observations
        self._masks = self.legal_action_masks.view(np.uint8)
        self._rewards = self.rewards
        self._terminated = self.terminated.view(np.int8)
        self._final = self.final_observations
        self._deals = self.deals
        self._rng = self.generator_states

    cdef void _reset_one(self, Py_ssize_t i) noexcept nogil:
        """A new battle in env ``i`` (``Battle.__init__``) and its hit generator."""
        cdef Py_ssize_t k
        cdef uint64_t seed = _splitmix_next(&self._rng[i]) >> 1
        self._deals[i, 0] = <int64_t>seed
        pcg64_seed(&self.hit_generators[i, 0], seed)
        for k in range(2 * self.team_size):
            self.positions[i, k] = self.spawn_cells[k]
            self.health[i, k] = self.max_health
            self.alive[i, k] = 1
        for k in range(self.team_size):
            self.belief_cells[i, 0, k] = -1
            self.belief_cells[i, 1, k] = -1
        self.damage_dealt[i, 0] = 0
        self.damage_dealt[i, 1] = 0
        self.ticks[i] = 0
        self._sight(i)

    cdef void _sight(self, Py_ssize_t i) noexcept nogil:
        _update_sight(self.positions[i], self.alive[i], self.cell_rows, self.cell_cols,
                      self.blocks_sight, self.line_offsets, self.sight_range, self.fire_range,
                      self.team_size, self.belief_cells[i], self.sees[i], self.distance[i],
                      self.seen[i], self.target_of[i])

    cdef bint _write_views(self, Py_ssize_t i, float[:, :, :, ::1] views) noexcept nogil:
        return _fill_views(views, self.positions[i], self.health[i], self.alive[i], self.seen[i],
                           self.padded_codes, self.cell_rows, self.cell_cols, self.view_radius,
                           self.team_size, NULL, NULL, &self.terrain_views[0, 0, 0])

    cdef bint _write_decision(self, Py_ssize_t i) noexcept nogil:
        """Env ``i``'s views and masks into the outputs; False when out of memory."""
        return self._write_views(i, self._observations[i]) and _fighter_masks(
            self._masks[i], self.positions[i], self.alive[i], self.move_target,
            self.door_of_cell, self.num_doors, self.door_capacity, self.target_of[i])

    cdef int _tick(self, Py_ssize_t i) noexcept nogil:
        """One tick of env ``i`` with its ``joint`` action (``FighterTick._play``'s order:
        rolls, intents, shots and steps, sight, result); the step's rewards go to the
        outputs. Returns the result (``_fighter_outcome``), or -3 when out of memory."""
        cdef Py_ssize_t k
        cdef double team_reward[2]
        cdef int winner
        for k in range(2 * self.team_size):
            self.rolls[k] = pcg64_next_double(&self.hit_generators[i, 0])
        _fighter_intents(&self.joint[i, 0], self.positions[i], self.move_target,
                         &self.wanted_cells[0], &self.fires[0])
        if not _advance(self.positions[i], self.health[i], self.alive[i], &self.fires[0],
                        &self.wanted_cells[0], False, &self.rolls[0], self.target_of[i],
                        self.distance[i], self.door_of_cell, self.num_doors, self.door_capacity,
                        self.ticks[i], self.team_size, self.hit_probability, self.fire_range,
                        self.damage, self.damage_dealt[i]):
            return -3
        self._sight(i)
        self.ticks[i] += 1
        winner = _fighter_outcome(self.alive[i], self.team_size, self.ticks[i], self.max_ticks,
                                  self.damage_dealt[i, 0] - self.damage_dealt[i, 1],
                                  self.reward_scale, team_reward)
        for k in range(2 * self.team_size):
            self._rewards[i, k] = <float>team_reward[0 if k < self.team_size else 1]
        return winner

    def reset(self):
        """Start a new battle in every env (the generators continue where they are)."""
        cdef Py_ssize_t i
        cdef bint done = True
        with nogil:
            for i in range(self.num_envs):
                self._reset_one(i)
                done = self._write_decision(i) and done
                self._terminated[i] = 0
                memset(&self._rewards[i, 0], 0, self.num_players * sizeof(float))
        if not done:
            raise MemoryError("CombatFighterKernel.reset: no memory for the views or masks")

    def step(self, const int64_t[:, ::1] actions, const int8_t[::1] active):
        """Play ``actions`` (``[B, P]``) in every env where ``active`` (``[B]``) is set; a
        finished battle records its final views and restarts. An inactive env keeps its
        state and outputs, with zero rewards and ``terminated`` unset.

        Returns -1, or the index of the first env whose action is illegal (then no env
        has moved). A fighter with one legal action (or none: dead) has it played for it.
        """
        cdef Py_ssize_t i, illegal
        cdef int winner
        cdef bint done = True
        if (actions.shape[0] != self.num_envs or actions.shape[1] != self.num_players
                or active.shape[0] != self.num_envs):
            raise ValueError(
                f"step: actions of shape ({actions.shape[0]}, {actions.shape[1]}) and "
                f"{active.shape[0]} active flags for {self.num_envs} envs of "
                f"{self.num_players} players"
            )
        with nogil:
            illegal = self._resolve(actions, active)
            if illegal < 0:
                for i in range(self.num_envs):
                    self._terminated[i] = 0
                    if not active[i]:
                        memset(&self._rewards[i, 0], 0, self.num_players * sizeof(float))
                        continue
                    winner = self._tick(i)
                    if winner == -3:
                        done = False
                        break
                    if winner != ONGOING:
                        done = self._write_views(i, self._final[i])
                        self._terminated[i] = 1
                        self._reset_one(i)
                    if not (done and self._write_decision(i)):
                        done = False
                        break
        if not done:
            raise MemoryError("CombatFighterKernel.step: no memory for a tick")
        return illegal

    cdef Py_ssize_t _resolve(self, const int64_t[:, ::1] actions, const int8_t[::1] active) noexcept nogil:
        """As ``VectorKernel._resolve``: check the active envs' actions against the masks
        and copy them to ``joint``, a fighter's only legal action (or -1, none) replacing
        its entry; the first illegal env, or -1."""
        cdef Py_ssize_t i
        cdef int p, a, count, forced
        cdef int64_t action
        for i in range(self.num_envs):
            if not active[i]:
                continue
            for p in range(self.num_players):
                count = 0
                forced = -1
                for a in range(self.num_actions):
                    if self._masks[i, p, a]:
                        count += 1
                        forced = a
                action = actions[i, p]
                if count > 1:
                    if action < 0 or action >= self.num_actions or not self._masks[i, p, action]:
                        return i
                    self.joint[i, p] = action
                else:
                    self.joint[i, p] = forced
        return -1
