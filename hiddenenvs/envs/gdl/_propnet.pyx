# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled propnet evaluation over bit-vector states (see propnet.py for the layout).

Node values live in one uint8 array: node 0 is FALSE, node 1 is TRUE, then the base
propositions, the input (does) propositions and the gates. A gate is an OR over
conjunctions of literals (``2 * node + negated``). Gates are evaluated in blocks in
dependency order; a block flagged ``loop`` is a positive recursive component, iterated
from all-false until nothing changes (its least fixpoint). Phase A (legal, goal,
terminal) reads only the state; phase B (next, sees) also reads the joint move.
"""

import numpy as np
cimport numpy as cnp
from libc.stdint cimport uint8_t, uint64_t, int32_t

cnp.import_array()


cdef inline uint64_t _xorshift(uint64_t *s) noexcept nogil:
    cdef uint64_t x = s[0]
    x ^= x << 13
    x ^= x >> 7
    x ^= x << 17
    s[0] = x
    return x


cdef class CompiledPropnet:
    cdef public int num_nodes, num_base, num_roles, first_base, first_input
    cdef uint8_t[::1] values
    cdef int32_t[::1] a_blocks, b_blocks        # (start, end, loop) triples over gate order
    cdef int32_t[::1] gate_node, gate_conj_start, conj_lit_start, lits
    cdef int32_t[::1] legal_start, legal_nodes, input_nodes
    cdef int32_t[::1] goal_start, goal_nodes, goal_values
    cdef int32_t[::1] next_nodes, sees_start, sees_nodes
    cdef public int terminal_node, state_bytes
    cdef int32_t[::1] scratch_moves

    def __init__(self, dict layout):
        self.num_nodes = layout["num_nodes"]
        self.num_base = layout["num_base"]
        self.num_roles = layout["num_roles"]
        self.first_base = 2
        self.first_input = 2 + self.num_base
        self.values = np.zeros(self.num_nodes, dtype=np.uint8)
        self.values[1] = 1
        i32 = lambda name: np.ascontiguousarray(layout[name], dtype=np.int32)
        self.a_blocks = i32("a_blocks")
        self.b_blocks = i32("b_blocks")
        self.gate_node = i32("gate_node")
        self.gate_conj_start = i32("gate_conj_start")
        self.conj_lit_start = i32("conj_lit_start")
        self.lits = i32("lits")
        self.legal_start = i32("legal_start")
        self.legal_nodes = i32("legal_nodes")
        self.input_nodes = i32("input_nodes")
        self.goal_start = i32("goal_start")
        self.goal_nodes = i32("goal_nodes")
        self.goal_values = i32("goal_values")
        self.next_nodes = i32("next_nodes")
        self.sees_start = i32("sees_start")
        self.sees_nodes = i32("sees_nodes")
        self.terminal_node = layout["terminal_node"]
        self.state_bytes = (self.num_base + 7) // 8
        self.scratch_moves = np.zeros(max(1, len(layout["legal_nodes"])), dtype=np.int32)

    def copy(self):
        """A propnet over the same (read-only) layout arrays with its own node values and
        scratch: instances of one compiled sheet share the layout, and each evaluates on
        its own buffers (evaluation writes them with the GIL released)."""
        cdef CompiledPropnet other = CompiledPropnet.__new__(CompiledPropnet)
        other.num_nodes = self.num_nodes
        other.num_base = self.num_base
        other.num_roles = self.num_roles
        other.first_base = self.first_base
        other.first_input = self.first_input
        other.values = np.zeros(self.num_nodes, dtype=np.uint8)
        other.values[1] = 1
        other.a_blocks = self.a_blocks
        other.b_blocks = self.b_blocks
        other.gate_node = self.gate_node
        other.gate_conj_start = self.gate_conj_start
        other.conj_lit_start = self.conj_lit_start
        other.lits = self.lits
        other.legal_start = self.legal_start
        other.legal_nodes = self.legal_nodes
        other.input_nodes = self.input_nodes
        other.goal_start = self.goal_start
        other.goal_nodes = self.goal_nodes
        other.goal_values = self.goal_values
        other.next_nodes = self.next_nodes
        other.sees_start = self.sees_start
        other.sees_nodes = self.sees_nodes
        other.terminal_node = self.terminal_node
        other.state_bytes = self.state_bytes
        other.scratch_moves = np.zeros(self.scratch_moves.shape[0], dtype=np.int32)
        return other

    # ------------------------------------------------------------------ core (nogil)
    cdef inline uint8_t _gate(self, int g) noexcept nogil:
        cdef int c, l, lit
        cdef uint8_t ok
        for c in range(self.gate_conj_start[g], self.gate_conj_start[g + 1]):
            ok = 1
            for l in range(self.conj_lit_start[c], self.conj_lit_start[c + 1]):
                lit = self.lits[l]
                if self.values[lit >> 1] == (lit & 1):
                    ok = 0
                    break
            if ok:
                return 1
        return 0

    cdef void _run(self, int32_t[::1] blocks) noexcept nogil:
        cdef int b, g, start, end
        cdef uint8_t changed, value
        for b in range(0, blocks.shape[0], 3):
            start = blocks[b]
            end = blocks[b + 1]
            if blocks[b + 2] == 0:
                for g in range(start, end):
                    self.values[self.gate_node[g]] = self._gate(g)
            else:
                for g in range(start, end):
                    self.values[self.gate_node[g]] = 0
                changed = 1
                while changed:
                    changed = 0
                    for g in range(start, end):
                        value = self._gate(g)
                        if value != self.values[self.gate_node[g]]:
                            self.values[self.gate_node[g]] = value
                            changed = 1

    cdef void _load(self, const uint8_t[::1] state) noexcept nogil:
        cdef int i
        for i in range(self.num_base):
            self.values[2 + i] = (state[i >> 3] >> (i & 7)) & 1

    cdef void _store_next(self, uint8_t[::1] out) noexcept nogil:
        cdef int i
        for i in range(self.state_bytes):
            out[i] = 0
        for i in range(self.num_base):
            if self.values[self.next_nodes[i]]:
                out[i >> 3] |= <uint8_t>(1 << (i & 7))

    cdef void _clear_inputs(self) noexcept nogil:
        cdef int i
        for i in range(self.input_nodes.shape[0]):
            self.values[self.input_nodes[i]] = 0

    # ------------------------------------------------------------------ Python API
    def evaluate_state(self, const uint8_t[::1] state):
        """Phase A on ``state`` (packed bits): (terminal, legal move lists, goal values)."""
        cdef int r, k, g
        with nogil:
            self._load(state)
            self._run(self.a_blocks)
        legal = []
        goals = []
        for r in range(self.num_roles):
            legal.append(tuple([k - self.legal_start[r]
                                for k in range(self.legal_start[r], self.legal_start[r + 1])
                                if self.values[self.legal_nodes[k]]]))
            goals.append(tuple([self.goal_values[g]
                                for g in range(self.goal_start[r], self.goal_start[r + 1])
                                if self.values[self.goal_nodes[g]]]))
        return bool(self.values[self.terminal_node]), tuple(legal), tuple(goals)

    def transition(self, const uint8_t[::1] state, joint):
        """Phase A and B: (next state bytes, percept index tuples per role).

        ``joint`` holds one move index per role (into that role's move list).
        """
        cdef int r, k
        out = np.zeros(self.state_bytes, dtype=np.uint8)
        cdef uint8_t[::1] out_view = out
        with nogil:
            self._load(state)
            self._run(self.a_blocks)
            self._clear_inputs()
        for r in range(self.num_roles):
            self.values[self.input_nodes[self.legal_start[r] + <int>joint[r]]] = 1
        with nogil:
            self._run(self.b_blocks)
            self._store_next(out_view)
        sees = []
        for r in range(self.num_roles):
            sees.append(tuple([k - self.sees_start[r]
                               for k in range(self.sees_start[r], self.sees_start[r + 1])
                               if self.values[self.sees_nodes[k]]]))
        return out.tobytes(), tuple(sees)

    def depth_charge(self, const uint8_t[::1] state, uint64_t seed, int max_steps):
        """Random playout entirely in compiled code.

        Every role picks uniformly among its legal moves each step, from ``state`` until
        a terminal state or ``max_steps`` transitions. Returns (final state bytes, steps,
        status) with status 0 = terminal, 1 = step limit, 2 = a role had no legal move.
        """
        cdef int steps = 0, status = 1, r, k, count
        cdef uint64_t rng = seed * 6364136223846793005ULL + 1442695040888963407ULL
        out = np.array(state, dtype=np.uint8, copy=True)
        cdef uint8_t[::1] current = out
        if rng == 0:
            rng = 88172645463325252ULL
        with nogil:
            while True:
                self._load(current)
                self._run(self.a_blocks)
                if self.values[self.terminal_node]:
                    status = 0
                    break
                if steps >= max_steps:
                    status = 1
                    break
                self._clear_inputs()
                for r in range(self.num_roles):
                    count = 0
                    for k in range(self.legal_start[r], self.legal_start[r + 1]):
                        if self.values[self.legal_nodes[k]]:
                            self.scratch_moves[count] = k
                            count += 1
                    if count == 0:
                        status = 2
                        break
                    k = self.scratch_moves[_xorshift(&rng) % count]
                    self.values[self.input_nodes[k]] = 1
                if status == 2:
                    break
                self._run(self.b_blocks)
                self._store_next(current)
                steps += 1
        return out.tobytes(), steps, status
