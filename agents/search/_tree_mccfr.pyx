# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False, language_level=3
"""Compiled ES-, OS-MCCFR and OOS traversals over an enumerated game tree (the fast path of
:mod:`agents.search.tree_mccfr` and :mod:`agents.search.oos`; the equations are those of
:mod:`agents.search.external_sampling_mccfr`, :mod:`agents.search.outcome_sampling_mccfr`
and :mod:`agents.search.oos`).

The tree is the flat layout of :class:`hiddenenvs.analysis.GameTree` (children of a node
contiguous, simultaneous moves sequentialised); regrets and average weights are arrays
over its infoset-action slots, or over the slots of an abstraction's abstract information
sets (``infoset_slot_start``: a node reads and updates the slots of its infoset's abstract
set, so merged information sets share one regret and average table). Random numbers come
from the solver's numpy ``Generator`` through its bit generator's C interface, so a seed
gives the same run and the generator's state checkpoints as usual.
"""

from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.stdint cimport int64_t
from numpy.random cimport bitgen_t

import numpy as np

cdef int64_t CHANCE = -1
cdef double EMA_DECAY = 0.99  # ExIt-OOS (Kitchen & Benedetti 2018): r <- 0.99 r + 0.01 q / q_u
cdef int64_t TERMINAL = -4


cdef inline void regret_matching(const double* regret, int64_t count, double* strategy) noexcept nogil:
    """sigma(I, a) = R+(I, a) / sum_b R+(I, b), uniform when no regret is positive."""
    cdef double total = 0.0, positive
    cdef int64_t k
    for k in range(count):
        positive = regret[k] if regret[k] > 0.0 else 0.0
        strategy[k] = positive
        total += positive
    if total > 0.0:
        for k in range(count):
            strategy[k] /= total
    else:
        for k in range(count):
            strategy[k] = 1.0 / count


cdef inline int64_t sample_index(const double* probabilities, int64_t count, double uniform) noexcept nogil:
    cdef double cumulative = 0.0
    cdef int64_t k
    for k in range(count):
        cumulative += probabilities[k]
        if uniform < cumulative:
            return k
    return count - 1


cdef inline int64_t draw_index(const double* weights, int64_t count, double uniform) noexcept nogil:
    """:func:`hiddenenvs.game.draw_index`: proportional to ``weights`` (not normalised),
    summed in the same order, so the model path and this one draw the same index."""
    cdef double total = 0.0, cumulative = 0.0
    cdef int64_t k
    for k in range(count):
        total += weights[k]
    uniform *= total
    for k in range(count):
        cumulative += weights[k]
        if uniform < cumulative:
            return k
    return count - 1


# OOS node kinds on the sampled path (what the backward pass does there).
cdef enum:
    OOS_CHANCE = 0
    OOS_ROLLOUT = 1
    OOS_TABLE = 2


cdef class CompiledTree:
    """The arrays one traversal reads, as C pointers, plus the regret and average tables.

    ``regret`` and ``average`` are float64 arrays over the tree's slots, updated in place.
    ``infoset_slot_start`` (default the tree's own) gives, per information set, the first
    of its slots in those arrays: an abstraction points several information sets with the
    same legal actions at the same slots (:class:`agents.search.tree_mccfr.InfosetAbstraction`);
    the arrays then have one entry per abstract slot.
    """

    cdef object _keep  # the numpy arrays behind the pointers
    cdef const int64_t* child_start
    cdef const int64_t* child_count
    cdef const int64_t* actor
    cdef const int64_t* slot_start_of_node  # first table slot of a decision node's infoset, -1 elsewhere
    cdef const int64_t* edge_index  # position of a node's edge among its parent's slots, -1 after chance
    cdef const double* chance_probability
    cdef const double* returns
    cdef double* regret
    cdef double* average
    cdef double* strategies  # per depth: the strategy of the node on the current path
    cdef double* values  # per depth: the traverser's child values (external sampling)
    cdef int64_t* path_node
    cdef int64_t* path_child
    cdef double* path_probability  # sigma(I, a) or the chance probability of the sampled edge
    cdef double* path_others_reach  # pi_{-i}(h) at the update player's nodes
    cdef double* reach  # per player, chance last
    cdef int64_t num_players, max_actions
    cdef bitgen_t* bitgen
    # OOS: the node's information set, what the path did at each depth, and the tables'
    # membership and target marks (set_oos_target).
    cdef const int64_t* infoset_of_node
    cdef int64_t* path_kind
    cdef double* path_own_reach  # pi_p(h) of the mover p at other players' table nodes
    cdef double* path_sample_reach  # delta q_b(h) + (1 - delta) q_u(h)
    cdef double* path_unbiased_reach  # q_u(h), for the "ema" weight
    cdef double* scratch  # 3 rows of max_actions: allowed, unbiased and biased sampling
    cdef const signed char* target_mark  # 2 in the target, 1 above it, 0 elsewhere
    cdef unsigned char* in_table  # per information set: added to the OOS tree
    cdef object _oos_keep
    cdef int64_t num_nodes, num_infosets, num_table_slots
    # ExIt-OOS: the rollout policy per table slot (NULL: uniform), and the switch to the
    # moving-average importance weight (ema_ratio: r, the running mean of q(z) / q_u(z)).
    cdef const double* rollout
    cdef object _rollout_keep
    cdef bint ema
    cdef public double ema_ratio
    # OOS: the average strategy's own-reach weight trembles (see set_oos_average_tremble).
    cdef double average_tremble
    cdef double* tremble_reach  # per player: pi_p(h) under (1 - tremble) sigma + tremble uniform

    def __init__(self, tree, double[::1] regret, double[::1] average, generator, infoset_slot_start=None):
        table_start = np.asarray(tree.infoset_slot_start if infoset_slot_start is None else infoset_slot_start,
                                 dtype=np.int64)
        if len(table_start) < tree.num_infosets:
            raise ValueError(f"{tree}: infoset_slot_start needs one entry per information set "
                             f"({tree.num_infosets}), got {len(table_start)}")
        own_counts = np.diff(tree.infoset_slot_start)
        num_table_slots = int((table_start[:tree.num_infosets] + own_counts).max(initial=0))
        if (tree.num_slots == 0 or (table_start[:tree.num_infosets] < 0).any()
                or len(regret) != num_table_slots or len(average) != num_table_slots):
            raise ValueError(f"{tree}: MCCFR needs regret and average arrays over its "
                             f"{num_table_slots} infoset-action slots (and at least one decision)")
        parent = np.ascontiguousarray(tree.parent, dtype=np.int64)
        num_nodes = len(parent)
        nodes = np.arange(num_nodes)
        # Parents are non-decreasing in the level-by-level layout, so children are a range.
        child_start = np.ascontiguousarray(np.searchsorted(parent, nodes, side="left"), dtype=np.int64)
        child_count = np.ascontiguousarray(np.searchsorted(parent, nodes, side="right") - child_start, dtype=np.int64)
        infoset = np.asarray(tree.infoset, dtype=np.int64)
        slot_start_of_node = np.ascontiguousarray(
            np.where(infoset >= 0, table_start[np.maximum(infoset, 0)], -1), dtype=np.int64)
        actor = np.ascontiguousarray(tree.actor, dtype=np.int64)
        parent_infoset = np.where(parent >= 0, infoset[np.maximum(parent, 0)], -1)
        edge_index = np.ascontiguousarray(
            np.where(tree.edge_slot >= 0, tree.edge_slot - tree.infoset_slot_start[np.maximum(parent_infoset, 0)], -1),
            dtype=np.int64)
        chance_probability = np.ascontiguousarray(tree.chance_probability, dtype=np.float64)
        returns = np.ascontiguousarray(tree.terminal_returns, dtype=np.float64).reshape(-1)
        self.num_players = tree.num_players
        self.num_nodes = num_nodes
        self.num_infosets = len(tree.infoset_player)
        self.num_table_slots = num_table_slots
        self.max_actions = max(1, int(child_count.max()) if num_nodes else 1)
        depth = int(tree.depth.max()) + 2 if num_nodes else 2
        strategies = np.zeros(depth * self.max_actions)
        values = np.zeros(depth * self.max_actions)
        path_node = np.zeros(depth, dtype=np.int64)
        path_child = np.zeros(depth, dtype=np.int64)
        path_probability = np.zeros(depth)
        path_others_reach = np.zeros(depth)
        reach = np.zeros(self.num_players + 1)
        tremble_reach = np.zeros(self.num_players + 1)
        infoset_of_node = np.ascontiguousarray(infoset, dtype=np.int64)
        path_kind = np.zeros(depth, dtype=np.int64)
        path_own_reach = np.zeros(depth)
        path_sample_reach = np.zeros(depth)
        path_unbiased_reach = np.zeros(depth)
        scratch = np.zeros(3 * self.max_actions)
        capsule = generator.bit_generator.capsule
        self.bitgen = <bitgen_t*> PyCapsule_GetPointer(capsule, "BitGenerator")
        self._keep = (child_start, child_count, slot_start_of_node, actor, edge_index, chance_probability,
                      returns, regret, average, strategies, values, path_node, path_child,
                      path_probability, path_others_reach, reach, generator, capsule,
                      infoset_of_node, path_kind, path_own_reach, path_sample_reach, path_unbiased_reach, scratch,
                      tremble_reach)
        cdef int64_t[::1] view_int
        cdef double[::1] view_double
        view_int = child_start; self.child_start = &view_int[0]
        view_int = child_count; self.child_count = &view_int[0]
        view_int = actor; self.actor = &view_int[0]
        view_int = slot_start_of_node; self.slot_start_of_node = &view_int[0]
        view_int = edge_index; self.edge_index = &view_int[0]
        view_double = chance_probability; self.chance_probability = &view_double[0]
        view_double = returns; self.returns = &view_double[0]
        self.regret = &regret[0]
        self.average = &average[0]
        view_double = strategies; self.strategies = &view_double[0]
        view_double = values; self.values = &view_double[0]
        view_int = path_node; self.path_node = &view_int[0]
        view_int = path_child; self.path_child = &view_int[0]
        view_double = path_probability; self.path_probability = &view_double[0]
        view_double = path_others_reach; self.path_others_reach = &view_double[0]
        view_double = reach; self.reach = &view_double[0]
        view_double = tremble_reach; self.tremble_reach = &view_double[0]
        view_int = infoset_of_node; self.infoset_of_node = &view_int[0]
        view_int = path_kind; self.path_kind = &view_int[0]
        view_double = path_own_reach; self.path_own_reach = &view_double[0]
        view_double = path_sample_reach; self.path_sample_reach = &view_double[0]
        view_double = path_unbiased_reach; self.path_unbiased_reach = &view_double[0]
        view_double = scratch; self.scratch = &view_double[0]
        self.target_mark = NULL
        self.in_table = NULL
        self.rollout = NULL
        self.ema = False
        self.ema_ratio = 1.0
        self.average_tremble = 0.0

    cdef inline double uniform(self) noexcept:
        return self.bitgen.next_double(self.bitgen.state)

    cdef inline int64_t sample_chance(self, int64_t node) noexcept:
        cdef int64_t first = self.child_start[node]
        return sample_index(&self.chance_probability[first], self.child_count[node], self.uniform())

    cdef inline double* strategy_at(self, int64_t node, int64_t depth) noexcept:
        """The current strategy of ``node``'s information set, in slot order, written at ``depth``."""
        cdef double* strategy = &self.strategies[depth * self.max_actions]
        regret_matching(&self.regret[self.slot_start_of_node[node]], self.child_count[node], strategy)
        return strategy

    cdef inline double others_reach(self, int64_t player) noexcept:
        """The product of every other player's (chance included) reach probability."""
        cdef double others = 1.0
        cdef int64_t p
        for p in range(self.num_players + 1):
            if p != player:
                others *= self.reach[p]
        return others

    # ---- external sampling -------------------------------------------------------------------
    def external_sampling(self, int64_t iterations):
        """``iterations`` ES-MCCFR iterations, one traversal per player each."""
        cdef int64_t t, traverser
        for t in range(iterations):
            for traverser in range(self.num_players):
                self.external_traverse(0, traverser, 0, 1.0)

    cdef double external_traverse(self, int64_t node, int64_t traverser, int64_t depth,
                                  double own_reach) noexcept:
        """``own_reach``: the traverser's reach of ``node``; a one-player game, having no other
        player to average its strategy, averages at the traverser's nodes with it."""
        cdef int64_t player, first, count, k, j, child, slot
        cdef double* strategy
        cdef double* values
        cdef double value
        while True:  # chance and the other players sample one child: follow it without recursion
            player = self.actor[node]
            if player == TERMINAL:
                return self.returns[node * self.num_players + traverser]
            first = self.child_start[node]
            if player == CHANCE:
                node = first + self.sample_chance(node)
                continue
            count = self.child_count[node]
            strategy = self.strategy_at(node, depth)
            slot = self.slot_start_of_node[node]
            if player != traverser:
                for k in range(count):
                    self.average[slot + k] += strategy[k]
                k = sample_index(strategy, count, self.uniform())
                for j in range(count):  # the child whose edge is slot k
                    if self.edge_index[first + j] == k:
                        node = first + j
                        break
                continue
            if self.num_players == 1:
                for k in range(count):
                    self.average[slot + k] += own_reach * strategy[k]
            values = &self.values[depth * self.max_actions]
            for j in range(count):
                child = first + j
                k = self.edge_index[child]
                values[k] = self.external_traverse(child, traverser, depth + 1, own_reach * strategy[k])
            # The children overwrote deeper workspace rows only; this row's strategy is intact.
            value = 0.0
            for k in range(count):
                value += strategy[k] * values[k]
            for k in range(count):
                self.regret[slot + k] += values[k] - value
            return value

    # ---- outcome sampling --------------------------------------------------------------------
    def outcome_sampling(self, int64_t iterations, double exploration):
        """``iterations`` OS-MCCFR iterations (one sampled history per update player each)
        with ``exploration`` = epsilon of the update player's sampling policy."""
        cdef int64_t t, update
        for t in range(iterations):
            for update in range(self.num_players):
                self.outcome_sample(update, exploration)

    cdef void outcome_sample(self, int64_t update, double exploration) noexcept:
        cdef int64_t node = 0, depth = 0, player, first, count, slot, k, j, chosen, p
        cdef double sample_reach = 1.0, sampling, utility, weight, tail, x, threshold, cumulative
        cdef double* strategy
        for p in range(self.num_players + 1):
            self.reach[p] = 1.0
        # Forward: sample one terminal history, recording the path.
        while self.actor[node] != TERMINAL:
            player = self.actor[node]
            first = self.child_start[node]
            count = self.child_count[node]
            self.path_node[depth] = node
            if player == CHANCE:
                chosen = first + self.sample_chance(node)
                self.path_probability[depth] = self.chance_probability[chosen]
                self.reach[self.num_players] *= self.chance_probability[chosen]
                sample_reach *= self.chance_probability[chosen]
            else:
                strategy = self.strategy_at(node, depth)
                slot = self.slot_start_of_node[node]
                if player == update and self.num_players == 1:  # no other player averages it
                    for j in range(count):
                        self.average[slot + j] += strategy[j] * self.reach[player] / sample_reach
                if player == update:
                    self.path_others_reach[depth] = self.others_reach(update)
                    threshold = self.uniform()
                    cumulative = 0.0
                    k = count - 1
                    for j in range(count):  # sample from exploration * uniform + (1 - exploration) * sigma
                        cumulative += exploration / count + (1.0 - exploration) * strategy[j]
                        if threshold < cumulative:
                            k = j
                            break
                    sampling = exploration / count + (1.0 - exploration) * strategy[k]
                else:
                    # Stochastically weighted averaging: sigma * pi_p(h) / q(h).
                    for j in range(count):
                        self.average[slot + j] += strategy[j] * self.reach[player] / sample_reach
                    k = sample_index(strategy, count, self.uniform())
                    sampling = strategy[k]
                chosen = first
                for j in range(count):
                    if self.edge_index[first + j] == k:
                        chosen = first + j
                        break
                self.path_probability[depth] = strategy[k]
                self.reach[player] *= strategy[k]
                sample_reach *= sampling
            self.path_child[depth] = chosen
            node = chosen
            depth += 1
        utility = self.returns[node * self.num_players + update]
        # Backward: tail = pi(z | h.a); the update player's sampled regrets (eq. 10).
        tail = 1.0
        while depth > 0:
            depth -= 1
            node = self.path_node[depth]
            if self.actor[node] == update:
                weight = utility * self.path_others_reach[depth] / sample_reach
                x = self.path_probability[depth] * tail
                slot = self.slot_start_of_node[node]
                for j in range(self.child_count[node]):
                    self.regret[slot + j] -= weight * x
                self.regret[slot + self.edge_index[self.path_child[depth]]] += weight * tail
            tail *= self.path_probability[depth]

    # ---- online outcome sampling (agents.search.oos) -------------------------------------------
    def set_oos_arrays(self, const signed char[::1] target_mark, unsigned char[::1] in_table):
        """The arrays OOS shares with its Python side: per node the target mark (2 in the
        target, 1 on a path to it, 0 elsewhere), per information set whether the
        incremental tree holds it. Both are read (and ``in_table`` written) in place."""
        if len(target_mark) != self.num_nodes or len(in_table) != self.num_infosets:
            raise ValueError(f"OOS needs a target mark per node ({self.num_nodes}) and a table flag "
                             f"per information set ({self.num_infosets}), got {len(target_mark)} and {len(in_table)}")
        self._oos_keep = (target_mark, in_table)
        self.target_mark = &target_mark[0]
        self.in_table = &in_table[0]

    def set_oos_rollout(self, probabilities):
        """The rollout policy rho as a probability per table slot (the layout of ``regret``),
        read in place; ``None`` rolls out uniformly."""
        cdef const double[::1] view
        if probabilities is None:
            self.rollout, self._rollout_keep = NULL, None
            return
        view = probabilities
        if len(view) != self.num_table_slots:
            raise ValueError(f"OOS rollout table needs a probability per slot ({self.num_table_slots}), "
                             f"got {len(view)}")
        self._rollout_keep = probabilities
        self.rollout = &view[0]

    def set_oos_reweighting(self, bint ema):
        """False: OOS's mixture weight 1 / (delta q_b + (1 - delta) q_u); True: ExIt-OOS's
        1 / (q_u r), r the exponential moving average of q(z) / q_u(z) (``ema_ratio``). A
        biased sample the unbiased sampler could not draw (q_u = 0: an action the current
        strategy gives zero probability) keeps the mixture weight and leaves r alone."""
        self.ema = ema

    def set_oos_average_tremble(self, double tremble):
        """The own reach that weighs an OOS average-strategy update: the mover's reach under
        ``(1 - tremble) sigma + tremble uniform`` instead of under ``sigma`` (0: OOS as
        published). With 0 an information set the searcher's current strategy does not reach
        gets no average at all, however often the targeted samples visit it."""
        if not 0.0 <= tremble <= 1.0:
            raise ValueError(f"OOS average tremble must be in [0, 1], got {tremble}")
        self.average_tremble = tremble

    def oos_iterations(self, int64_t iterations, bint targeted, double delta, double epsilon, double gamma):
        """``iterations`` OOS iterations from the root, one sample per update player each;
        returns how many biased samples missed the target."""
        if self.target_mark == NULL:
            raise ValueError("call set_oos_arrays before running OOS iterations")
        cdef int64_t t, update, missed = 0
        cdef bint biased
        for t in range(iterations):
            for update in range(self.num_players):
                biased = False
                if targeted:  # the draw happens only for a target, as on the model path
                    biased = self.uniform() < delta
                if not self.oos_sample(update, 0, biased, not targeted, delta, epsilon, gamma) and biased:
                    missed += 1
        return missed

    def oos_walk(self, int64_t update, int64_t start, double delta, double epsilon, double gamma):
        """One unbiased OOS sample for ``update`` from node ``start`` taken as the root of the
        subgame below the target (a restored search); returns whether it reached the target."""
        if self.target_mark == NULL:
            raise ValueError("call set_oos_arrays before running OOS iterations")
        if not 0 <= start < self.num_nodes:
            raise ValueError(f"start node {start} is not in the tree ({self.num_nodes} nodes)")
        return self.oos_sample(update, start, False, True, delta, epsilon, gamma)

    cdef bint oos_sample(self, int64_t update, int64_t node, bint biased, bint below,
                         double delta, double epsilon, double gamma) noexcept:
        """One OOS sample (the walk of agents.search.oos.OOS._walk on the tree's arrays)."""
        cdef int64_t depth = 0, player, first, count, slot, k, j, p, infoset, allowed_count, chosen
        cdef double biased_reach = 1.0, unbiased_reach = 1.0, total, mix, restricted
        cdef double utility, q, weight, x, tail, share
        cdef bint in_tree = True, targeting, restrict
        cdef double* strategy
        cdef double* allowed = self.scratch
        cdef double* unbiased = &self.scratch[self.max_actions]
        cdef double* biased_probabilities = &self.scratch[2 * self.max_actions]
        cdef const double* drawn_from
        for p in range(self.num_players + 1):
            self.reach[p] = 1.0
            self.tremble_reach[p] = 1.0
        # Forward: sample one terminal history, recording what to update on the way back.
        while self.actor[node] != TERMINAL:
            if not below and self.target_mark[node] == 2:
                below = True
            targeting = (not below) and biased_reach > 0.0
            player = self.actor[node]
            first = self.child_start[node]
            count = self.child_count[node]
            self.path_node[depth] = node
            if player == CHANCE:
                # p_b: chance restricted to the outcomes on a path to the target, renormalised.
                restrict = False
                if targeting:
                    total = 0.0
                    for j in range(count):
                        allowed[j] = self.chance_probability[first + j] if self.target_mark[first + j] > 0 else 0.0
                        total += allowed[j]
                    if total > 0.0:
                        restrict = True
                        for j in range(count):
                            biased_probabilities[j] = allowed[j] / total
                drawn_from = biased_probabilities if (biased and restrict) else &self.chance_probability[first]
                k = draw_index(drawn_from, count, self.uniform())
                chosen = first + k
                self.path_kind[depth] = OOS_CHANCE
                self.path_probability[depth] = self.chance_probability[chosen]
                self.reach[self.num_players] *= self.chance_probability[chosen]
                biased_reach *= biased_probabilities[k] if restrict else self.chance_probability[chosen]
                unbiased_reach *= self.chance_probability[chosen]
            else:
                if not in_tree:  # below the node this sample added: the rollout policy
                    slot = self.slot_start_of_node[node]
                    for j in range(count):
                        unbiased[j] = 1.0 / count if self.rollout == NULL else self.rollout[slot + j]
                    k = draw_index(unbiased, count, self.uniform())
                    self.path_kind[depth] = OOS_ROLLOUT
                    self.path_probability[depth] = unbiased[k]
                    biased_reach *= unbiased[k]
                    unbiased_reach *= unbiased[k]
                else:
                    infoset = self.infoset_of_node[node]
                    if not self.in_table[infoset]:  # expand: one new information set per sample
                        self.in_table[infoset] = 1
                        in_tree = False
                    strategy = self.strategy_at(node, depth)
                    for j in range(count):
                        unbiased[j] = epsilon / count + (1.0 - epsilon) * strategy[j] if player == update else strategy[j]
                    restrict = False
                    if targeting:
                        allowed_count = 0
                        for j in range(count):
                            k = self.edge_index[first + j]
                            allowed[k] = 1.0 if self.target_mark[first + j] > 0 else 0.0
                            allowed_count += self.target_mark[first + j] > 0
                        if allowed_count > 0:
                            restrict = True
                            total = 0.0
                            for j in range(count):
                                total += strategy[j] * allowed[j]
                            mix = epsilon if player == update else gamma
                            for j in range(count):
                                restricted = strategy[j] * allowed[j] / total if total > 0.0 else allowed[j] / allowed_count
                                biased_probabilities[j] = mix * allowed[j] / allowed_count + (1.0 - mix) * restricted
                    if not restrict:
                        for j in range(count):
                            biased_probabilities[j] = unbiased[j]
                    k = draw_index(biased_probabilities if biased else unbiased, count, self.uniform())
                    self.path_sample_reach[depth] = delta * biased_reach + (1.0 - delta) * unbiased_reach
                    self.path_unbiased_reach[depth] = unbiased_reach
                    if player == update:
                        self.path_others_reach[depth] = self.others_reach(update)
                    self.path_own_reach[depth] = self.tremble_reach[player]
                    self.path_kind[depth] = OOS_TABLE
                    self.path_probability[depth] = strategy[k]
                    self.reach[player] *= strategy[k]
                    self.tremble_reach[player] *= (1.0 - self.average_tremble) * strategy[k] + self.average_tremble / count
                    biased_reach *= biased_probabilities[k]
                    unbiased_reach *= unbiased[k]
                chosen = first
                for j in range(count):  # the child whose edge is slot k
                    if self.edge_index[first + j] == k:
                        chosen = first + j
                        break
            self.path_child[depth] = chosen
            node = chosen
            depth += 1
        utility = self.returns[node * self.num_players + update]
        q = delta * biased_reach + (1.0 - delta) * unbiased_reach
        if self.ema and unbiased_reach > 0.0:  # S1's weight: q_u(z) times the running mean of q / q_u
            self.ema_ratio = EMA_DECAY * self.ema_ratio + (1.0 - EMA_DECAY) * q / unbiased_reach
            q = unbiased_reach * self.ema_ratio
        # Backward: tail = pi(z | h.a) (rollout and chance included); regrets of the update
        # player, average weights of the others (of the one player too in a one-player game),
        # at the table's nodes only.
        tail = 1.0
        while depth > 0:
            depth -= 1
            if self.path_kind[depth] == OOS_TABLE:
                node = self.path_node[depth]
                count = self.child_count[node]
                slot = self.slot_start_of_node[node]
                strategy = &self.strategies[depth * self.max_actions]
                if self.actor[node] == update:
                    weight = utility * self.path_others_reach[depth] / q
                    x = weight * self.path_probability[depth] * tail
                    for j in range(count):
                        self.regret[slot + j] -= x
                    self.regret[slot + self.edge_index[self.path_child[depth]]] += weight * tail
                if self.actor[node] != update or self.num_players == 1:  # one player: no other averages it
                    if self.ema and self.path_unbiased_reach[depth] > 0.0:
                        share = self.path_own_reach[depth] / (self.path_unbiased_reach[depth] * self.ema_ratio)
                    else:
                        share = self.path_own_reach[depth] / self.path_sample_reach[depth]
                    for j in range(count):
                        self.average[slot + j] += strategy[j] * share
            tail *= self.path_probability[depth]
        return below
