# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False, language_level=3
"""Compiled passes over the flat arrays of :class:`hiddenenvs.analysis.GameTree`.

The numpy passes of :mod:`hiddenenvs.analysis.exploitability` cost a few array operations
per depth level, and a CFR iteration a few dozen numpy calls; on a tree of two thousand
nodes (Leduc) that overhead, not the arithmetic, is the time. Here the same passes are
single loops over the nodes in the tree's order (parents before children, siblings
contiguous), without the GIL:

* :func:`reach_probabilities` and :func:`node_values`: the forward and backward passes
  of :mod:`hiddenenvs.analysis.exploitability`, computing the same products and sums in
  the same order (so the same floating-point results).
* :class:`CFRTree`: whole CFR / CFR+ iterations (regret matching, one forward and one
  backward pass per updated player, the regret and average-policy sums) on
  caller-owned regret and average arrays, the equations of :mod:`agents.cfr`.
"""

from libc.stdint cimport int64_t

import numpy as np


cdef enum:
    PAIRWISE_BLOCK = 128  # numpy's PW_BLOCKSIZE


cdef double pairwise_weighted_sum(
    const double* values, int64_t stride, const double* weights, int64_t count
) noexcept nogil:
    """sum_k values[k * stride] * weights[k], added in the order of numpy's pairwise
    summation (``DOUBLE_pairwise_sum``: fewer than 8 terms one by one, up to 128 in eight
    interleaved partial sums, more split in two halves), so that the sums below equal
    numpy's ``add.reduce`` / ``add.reduceat`` bit for bit."""
    cdef double partial[8]
    cdef double total
    cdef int64_t k, j, half
    if count < 8:
        total = 0.0
        for k in range(count):
            total += values[k * stride] * weights[k]
        return total
    if count <= PAIRWISE_BLOCK:
        for j in range(8):
            partial[j] = values[j * stride] * weights[j]
        k = 8
        while k < count - count % 8:
            for j in range(8):
                partial[j] += values[(k + j) * stride] * weights[k + j]
            k += 8
        total = ((partial[0] + partial[1]) + (partial[2] + partial[3])) + (
            (partial[4] + partial[5]) + (partial[6] + partial[7])
        )
        while k < count:
            total += values[k * stride] * weights[k]
            k += 1
        return total
    half = count // 2
    half -= half % 8
    return pairwise_weighted_sum(values, stride, weights, half) + pairwise_weighted_sum(
        values + half * stride, stride, weights + half, count - half
    )


cdef inline double reduceat_weighted_sum(
    const double* values, int64_t stride, const double* weights, int64_t count
) noexcept nogil:
    """One segment of numpy's ``add.reduceat``: the first term plus the pairwise sum of
    the others."""
    return values[0] * weights[0] + pairwise_weighted_sum(
        values + stride, stride, weights + 1, count - 1
    )


def _children(tree) -> tuple[np.ndarray, np.ndarray]:
    """Per node: the index of its first child (children are contiguous) and their number."""
    parent = np.asarray(tree.parent, dtype=np.int64)
    count = np.bincount(parent[1:], minlength=len(parent)).astype(np.int64)
    first = np.full(len(parent), -1, dtype=np.int64)
    first[parent[1:][::-1]] = np.arange(len(parent) - 1, 0, -1)
    return first, count


def reach_probabilities(tree, const double[::1] edge_probs):
    """``(num_nodes, num_players + 1)``: each player's (and chance's, last) share of pi(h),
    as :func:`hiddenenvs.analysis.exploitability.reach_probabilities`."""
    cdef const int64_t[::1] parent = np.ascontiguousarray(tree.parent, dtype=np.int64)
    cdef const int64_t[::1] column = np.ascontiguousarray(tree.parent_actor_column, dtype=np.int64)
    cdef int64_t columns = tree.num_players + 1
    reach_array = np.ones((parent.shape[0], columns))
    cdef double[:, ::1] reach = reach_array
    cdef int64_t node, k, up
    with nogil:
        for node in range(1, parent.shape[0]):
            up = parent[node]
            for k in range(columns):
                reach[node, k] = reach[up, k]
            reach[node, column[node]] *= edge_probs[node]
    return reach_array


def node_values(tree, const double[::1] edge_probs):
    """``(num_nodes, num_players)``: expected returns below each node, as
    :func:`hiddenenvs.analysis.exploitability.node_values` (and summed in numpy's order)."""
    first_child_array, child_count_array = _children(tree)
    cdef const int64_t[::1] first_child = first_child_array
    cdef const int64_t[::1] child_count = child_count_array
    values_array = np.array(tree.terminal_returns, dtype=np.float64, order="C", copy=True)
    cdef double[:, ::1] values = values_array
    cdef int64_t players = values.shape[1]
    cdef int64_t node, k, first
    with nogil:
        # Children have larger indices than their parent: a descending sweep meets every
        # child before its parent.
        for node in range(values.shape[0] - 1, -1, -1):
            if child_count[node] == 0:
                continue
            first = first_child[node]
            for k in range(players):
                values[node, k] = reduceat_weighted_sum(
                    &values[first, k], players, &edge_probs[first], child_count[node]
                )
    return values_array


cdef class CFRTree:
    """A tree's arrays and scratch buffers for compiled CFR / CFR+ iterations.

    :meth:`iterate` updates the caller's ``cumulative_regret`` and ``cumulative_policy``
    (one entry per infoset-action slot) in place, exactly as :class:`agents.cfr.CFRSolver`
    defines an iteration.
    """

    cdef int64_t num_players, num_nodes, num_slots
    cdef const int64_t[::1] parent, column, edge_slot, first_child, child_count
    cdef const int64_t[::1] slot_start, slot_owner, slot_node, slot_player
    cdef const int64_t[::1] child_nodes, child_start
    cdef const double[::1] chance_probability
    cdef const double[:, ::1] terminal_returns
    cdef double[::1] strategy, edge_prob, values, regret, ones
    cdef double[:, ::1] reach

    def __init__(self, tree):
        self.num_players = tree.num_players
        self.num_nodes = tree.num_nodes
        self.num_slots = tree.num_slots
        self.parent = np.ascontiguousarray(tree.parent, dtype=np.int64)
        self.column = np.ascontiguousarray(tree.parent_actor_column, dtype=np.int64)
        self.edge_slot = np.ascontiguousarray(tree.edge_slot, dtype=np.int64)
        self.first_child, self.child_count = _children(tree)
        self.slot_start = np.ascontiguousarray(tree.infoset_slot_start, dtype=np.int64)
        self.slot_owner = np.ascontiguousarray(tree.slot_infoset, dtype=np.int64)
        self.slot_node = np.ascontiguousarray(tree.infoset_node[tree.slot_infoset], dtype=np.int64)
        self.slot_player = np.ascontiguousarray(
            tree.infoset_player[tree.slot_infoset], dtype=np.int64
        )
        children = [np.asarray(nodes, dtype=np.int64) for nodes in tree.player_child_nodes]
        self.child_nodes = np.ascontiguousarray(
            np.concatenate(children) if children else np.zeros(0, dtype=np.int64)
        )
        self.child_start = np.concatenate([[0], np.cumsum([len(c) for c in children])]).astype(
            np.int64
        )
        self.chance_probability = np.ascontiguousarray(tree.chance_probability, dtype=np.float64)
        self.terminal_returns = np.ascontiguousarray(tree.terminal_returns, dtype=np.float64)
        self.strategy = np.zeros(self.num_slots)
        self.edge_prob = np.zeros(self.num_nodes)
        self.reach = np.zeros((self.num_nodes, self.num_players + 1))
        self.values = np.zeros(self.num_nodes)
        self.regret = np.zeros(self.num_slots)
        self.ones = np.ones(max(1, int(np.diff(tree.infoset_slot_start).max(initial=1))))

    def iterate(
        self,
        double[::1] cumulative_regret,
        double[::1] cumulative_policy,
        int64_t first_iteration,
        int64_t iterations,
        bint plus,
    ):
        """Iterations ``first_iteration .. first_iteration + iterations - 1``: CFR+
        (``plus``: alternating updates, regrets clipped at zero, the average weighted by
        the iteration) or CFR (simultaneous updates, uniform average weights)."""
        if cumulative_regret.shape[0] != self.num_slots or cumulative_policy.shape[0] != self.num_slots:
            raise ValueError(
                f"CFRTree.iterate: regret and policy arrays must have {self.num_slots} entries "
                f"(one per infoset-action slot), got {cumulative_regret.shape[0]} and "
                f"{cumulative_policy.shape[0]}"
            )
        cdef int64_t iteration, player
        with nogil:
            for iteration in range(first_iteration, first_iteration + iterations):
                if plus:
                    for player in range(self.num_players):
                        self._regret_matching(cumulative_regret)
                        self._update(player, cumulative_regret, cumulative_policy, <double>iteration, True)
                else:
                    self._regret_matching(cumulative_regret)
                    for player in range(self.num_players):
                        self._update(player, cumulative_regret, cumulative_policy, 1.0, False)

    cdef void _regret_matching(self, const double[::1] cumulative_regret) noexcept nogil:
        """sigma(I, a) = R+(I, a) / sum_b R+(I, b), uniform when no regret is positive."""
        cdef int64_t infoset, slot, first, last
        cdef double total, positive
        for slot in range(self.num_slots):
            positive = cumulative_regret[slot]
            self.strategy[slot] = positive if positive > 0.0 else 0.0
        for infoset in range(self.slot_start.shape[0] - 1):
            first = self.slot_start[infoset]
            last = self.slot_start[infoset + 1]
            total = reduceat_weighted_sum(&self.strategy[first], 1, &self.ones[0], last - first)
            for slot in range(first, last):
                if total > 0.0:
                    self.strategy[slot] /= total
                else:
                    self.strategy[slot] = 1.0 / (last - first)

    cdef void _update(
        self,
        int64_t player,
        double[::1] cumulative_regret,
        double[::1] cumulative_policy,
        double average_weight,
        bint plus,
    ) noexcept nogil:
        """One player's regrets and average policy under the current ``strategy``."""
        cdef int64_t node, up, slot, k, column, first
        cdef double probability, others
        # Forward: the edge probabilities and every column of pi(h); pi_{-i}(h) is the
        # product of the other columns in column order (as exploitability's
        # counterfactual_reach, so the regrets are bit for bit the numpy passes').
        self.edge_prob[0] = 1.0
        for k in range(self.num_players + 1):
            self.reach[0, k] = 1.0
        for node in range(1, self.num_nodes):
            slot = self.edge_slot[node]
            probability = self.chance_probability[node] if slot < 0 else self.strategy[slot]
            self.edge_prob[node] = probability
            up = self.parent[node]
            for k in range(self.num_players + 1):
                self.reach[node, k] = self.reach[up, k]
            self.reach[node, self.column[node]] *= probability
        # Backward: the player's expected return below every node (children have larger
        # indices than their parent, so a descending sweep meets them first).
        for node in range(self.num_nodes - 1, -1, -1):
            if self.child_count[node] == 0:
                self.values[node] = self.terminal_returns[node, player]
            else:
                first = self.first_child[node]
                self.values[node] = reduceat_weighted_sum(
                    &self.values[first], 1, &self.edge_prob[first], self.child_count[node]
                )
        # Instantaneous regrets r(I, a) = sum_{h in I} pi_{-i}(h) (v(h.a) - v(h)).
        for slot in range(self.num_slots):
            self.regret[slot] = 0.0
        for k in range(self.child_start[player], self.child_start[player + 1]):
            node = self.child_nodes[k]
            up = self.parent[node]
            others = 1.0
            for column in range(self.num_players + 1):
                if column != player:
                    others *= self.reach[up, column]
            self.regret[self.edge_slot[node]] += others * (
                self.values[node] - self.values[up]
            )
        for slot in range(self.num_slots):
            if self.slot_player[slot] != player:
                continue
            if plus:
                probability = cumulative_regret[slot] + self.regret[slot]
                cumulative_regret[slot] = probability if probability > 0.0 else 0.0
            else:
                cumulative_regret[slot] += self.regret[slot]
            cumulative_policy[slot] += (
                average_weight * self.reach[self.slot_node[slot], player] * self.strategy[slot]
            )
