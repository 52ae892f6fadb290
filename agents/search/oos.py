"""Online Outcome Sampling (Lisý, Lanctot & Bowling 2015, "Online Monte Carlo
Counterfactual Regret Minimization for Search in Imperfect Information Games", AAMAS;
the search of ExIt-OOS, Kitchen & Benedetti 2018).

OOS is outcome-sampling MCCFR (:mod:`agents.search.outcome_sampling_mccfr`) run during
play, with two changes. (1) *Targeting*: with probability ``delta`` an iteration samples
from a biased sampler that only follows actions and chance outcomes consistent with the
target ``tau`` (the searcher's information set, IST, or its public state, PST); the
other iterations sample as OS-MCCFR. Every sample's probability is the mixture
``q(z) = delta * q_biased(z) + (1 - delta) * q_unbiased(z)``, so importance weights
``1 / q(z)`` keep the sampled counterfactual values unbiased. (2) *Incremental tree*:
the tables start empty; an iteration adds the first information set it meets that is
not in the table, plays uniformly there, then rolls out with a rollout policy ``rho``
(uniform in OOS, a network in ExIt-OOS) whose probabilities enter both the sample
probability and the tail ``pi(z | h.a)``.

One iteration, for each update player ``e``::

    biased = (tau != root) and U < delta
    walk(h = root, pi = 1, q_b = q_u = 1):
      terminal z: return u_e(z), tail 1, q(z) = delta q_b + (1 - delta) q_u
      h consistent with all of tau: below = True
      chance: p_b = p_c on tau-consistent outcomes, renormalised (p_c when below or none)
      node of a mover p, I in the table: sigma = regret matching
         q_u = eps Unif + (1 - eps) sigma      if p = e, else sigma
         q_b = eps Unif(A) + (1 - eps) sigma|A if p = e, else gamma Unif(A) + (1 - gamma) sigma|A,
               A the tau-consistent actions (q_b = q_u when below or A is empty)
         sample a from q_b if biased else q_u; recurse with q_b * q_b(a), q_u * q_u(a)
         p = e: W = u pi_{-e}(h) / q(z), R(I, a) += W (pi(z|h.a) - pi(z|h)), R(I, b) -= W pi(z|h)
         p != e: S(I) += sigma pi_p(h) / (delta q_b(h) + (1 - delta) q_u(h))
                 (in a one-player game p = e too: no other player would average it)
      I not in the table: add it (sigma uniform), then roll out below with rho

At a simultaneous node the movers sample one after another, each restricted to the
actions that keep some joint action consistent with the target given the earlier
movers' choices, so the joint sample probability is a product of known factors.

Variants chosen where the reference codes differ (the paper, OpenSpiel, the original OOS code):

- *Target compensation* (the paper's eq. 3): omitted, as in OpenSpiel's ``oos.h``. The
  mixture weights above already make every sampled value unbiased (checked by
  ``tests/test_search_mccfr.py``); compensation only rescales whole iterations.
- *Expansion step*: GT's (the original code's): the expanded node's regret uses the
  rollout tail, ``W (c - x)`` with ``c`` the rollout's probability, not OpenSpiel's
  ``u_h = u_ha`` shortcut that gives the sampled action zero regret.
- *Exploration inside the target*: the biased sampler explores only over the allowed
  actions (GT), not over banned ones as OpenSpiel's ``TargetedPolicy`` does, so a
  biased sample never leaves the target by exploration.
- *Chance reach*: ``pi_{-e}`` includes chance (OpenSpiel; GT leaves it out, valid only
  for uniform chance).
- *gamma*: the paper never defines it; here it is the probability mass of ``Unif(A)``
  mixed into the biased sampler at other players' nodes, so that an observed action
  the current strategy gives zero probability stays reachable.
- *Rollouts*: below the node a sample adds, every player follows ``rho``, biased
  samples too (``rho`` is then the biased sampler's probability as well), so a biased
  sample that expands a node above the target rolls out past it and counts as missed;
  the incremental tree reaches the target after about as many samples as it is deep.
- *Final move*: from the *average* strategy at the searcher's information set
  (OpenSpiel; S1: "only the average converges"); ``final_policy="current"`` plays GT's
  current strategy. A target never reached plays uniformly.
- *Lost targets*: OpenSpiel counts them and plays uniform, GT clears the tree. Here
  biased iterations that miss the target are counted (``missed_targets``), and when the
  searcher's information set is still not in the table after half the budget, the rest
  of the budget resolves the subgame below it: each iteration starts from a history
  drawn from the belief posterior under the current strategies mixed with gamma of
  uniform (:func:`hiddenenvs.beliefs.sample_history`; the mix keeps the true history at
  positive reach), i.e. the posterior is the subgame's chance root
  (``restored_searches`` counts them).

Two backends, one algorithm. ``backend="tree"`` (what ``"auto"`` picks for a game of at
most a million histories with the uniform rollout: Kuhn, Leduc, Liar's Dice(1),
II-Goofspiel(6)) runs the iterations in compiled code on the enumerated tree
(``_tree_mccfr.pyx``, ``oos_iterations``): the tables are the regret and average arrays
of :class:`agents.search.tree_mccfr.TreeTables` plus a per-information-set flag for the
incremental tree, and the target is a per-node mark (in the target, above it, neither)
set once per move, so the targeting test costs nothing and is exact: a prefix from
which the target cannot be reached (an opponent dealt the card the searcher holds; in
II-Goofspiel, bids the later round winners contradict, the paper's "constraint
solving") is not targeted, where the model path's key-prefix test follows it and
misses. ``backend="model"`` walks the game model (any game, any rollout policy). On a
turn-based game where no target-consistent prefix is a dead end both consume the
generator identically, so one seed gives the same tables (``tests/test_search_mccfr.py``);
at a simultaneous node the tree's sequentialised movers sample one after another, as
above, and a sample adds one mover's information set (the model path adds all movers').
About 500,000 iterations/s on Liar's Dice(1) against 1,500 on the model path on an idle
core (``benchmarks/bench_oos.py``).

The model path keeps what it computes, exactly (the same draws and tables as computing it
again, ``tests/test_oos_targeting.py``): which children of a node keep the target's view
consistent, as each child's view suffix per node for every search of the game
(:class:`ChildViews`; GDL names a node by its propnet state, so transpositions share it),
and the belief sampler's strategy per information set until the tables change it
(:meth:`OOS._strategy_of`). On blind tic-tac-toe and Meier a match of searches runs about
three times as many simulations a CPU second (``benchmarks/bench_oos_targeting.py``).

ExIt-OOS (:mod:`agents.exit_oos`) adds two things, both backends. (1) A network rollout
policy: on the tree backend :meth:`OOS.set_rollout_policy` evaluates ``rho`` once for
every information set of the tree (one batched call, at a representative state) and
hands the compiled walk a per-slot probability table; while ``rho`` is fixed this is the
same as calling it at every rollout step, as the model path does. (2) ``reweighting=
"ema"`` (Kitchen & Benedetti 2018, ExIt-OOS): the importance weight ``1 / q(z)`` becomes
``1 / (q_u(z) r)``, with ``r <- 0.99 r + 0.01 q(z) / q_u(z)`` updated after each sample
(``ema_ratio``), and the average-strategy weight ``1 / q(h)`` likewise ``1 / (q_u(h) r)``
(where ``q_u = 0``, a biased sample the unbiased sampler cannot draw, the mixture weight
stays and ``r`` is not updated); ``"none"`` (default) keeps OOS's mixture weight.

Tables persist through a match and are cleared when a view's key does not extend the
previous one (a new match). The rollout policy is a callable
``rho(states, players, masks) -> probabilities (B, num_distinct_actions)``, batch-shaped
for a network.
"""

from __future__ import annotations

import itertools
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Generator, Iterable, Sequence
from typing import Any, TypedDict, TypeVar, cast

import numpy as np

from agents.base import SearchAgent
from agents.search import check_deadline, parse_budget, register_spec
from agents.search.tables import (
    InfosetEntry,
    RegretTables,
    apply_choices,
    chance_distribution,
    legal_actions_of,
    movers_and_joint,
)
from agents.search.tree_mccfr import TreeTables, use_tree
from hiddenenvs.analysis import GameTree
from hiddenenvs.analysis.tree import _skip_forced_simultaneous
from hiddenenvs.beliefs import sample_history
from hiddenenvs.game import (
    CHANCE,
    SIMULTANEOUS,
    TERMINAL,
    ChanceMode,
    Game,
    SeatView,
    State,
    draw_index,
)

TARGETING = ("ist", "pst")
REWEIGHTING = ("none", "ema")
EMA_DECAY = 0.99  # as _tree_mccfr.pyx: r <- 0.99 r + 0.01 q(z) / q_u(z)
# "auto" enumerates a game for the compiled path up to this many histories: OOS searches
# every move of a match, so a tree build of seconds (Liar's Dice(1): 0.3M nodes) pays.
# The count walks Python states, so a larger game without its own tree builder spends
# about 10 s per agent before falling back to the model path (backend="model" skips it).
OOS_AUTO_TREE_MAX_NODES = 1_000_000
# Compiled iterations run in chunks of this many between clock checks of a time budget.
CHUNK = 64
# Information sets whose belief-sampler strategy the model path keeps between changes
# (OOS._strategy_of): about 1 KB each; past the bound the kept ones are all dropped.
BELIEF_STRATEGIES_MAX = 100_000
# Nodes whose children's target views the model path keeps, per game (ChildViews): about
# 1 KB a node at blind tic-tac-toe's 81 joint moves, so at most about 50 MB.
CHILD_VIEWS_MAX_NODES = 50_000
RolloutPolicy = Callable[[list, np.ndarray, np.ndarray], np.ndarray]
# A suspended rollout step: the state, its movers and their legal-action masks.
RolloutRequest = tuple[State, list[int], np.ndarray]
# What a sample returns up the walk: u_update(z), the tail pi(z | h) and q(z).
Sample = tuple[float, float, float]
# A state machine's return value (answer_rollouts, search_concurrently).
Result = TypeVar("Result")


class ChildViews:
    """The target views of a node's children, kept per node for the targeted walk.

    Above the target the model path's biased sampler asks which of a node's children
    (chance outcomes, or the movers' joint choices) keep the searcher's view of the
    history consistent with the target, and finding out clones the node and plays each
    child (81 joint moves a node in blind tic-tac-toe). What it finds is a function of
    the node alone: a child's view is its parent's extended by the step's entries. So
    each node keeps the distinct extensions (``suffixes``) and which child has which
    (``suffix_of_child``), and every later visit, in any search of the game and at any
    target, compares a few suffixes with the target instead of playing the children.

    Nodes are named by the view they keep (``kind``: the player's information state,
    or the public state) and the state's ``markov_key()`` where the game has one (GDL:
    the propnet state and step, so transposed move orders share a node), else its
    :meth:`~hiddenenvs.game.State.history`, which determines the state (it is what a
    state pickles as). A SAMPLED_STOCHASTIC game's history may leave its draws' seed
    out, so :func:`child_views_of` keeps none for it.
    At most ``max_nodes`` nodes, the least recently used dropped first. A node where
    some child's view does not extend its parent's is kept as ``None``: played again
    at every visit.
    """

    def __init__(self, max_nodes: int = CHILD_VIEWS_MAX_NODES):
        self.max_nodes = max_nodes
        self._nodes: OrderedDict[tuple, tuple[tuple, tuple[int, ...]] | None] = OrderedDict()
        self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._nodes)

    def suffixes(
        self,
        kind: tuple,
        state: State,
        view_of: Callable[[State], tuple],
        choices: Sequence,
        play: Callable[[State, Any], None],
    ) -> tuple[tuple, tuple[int, ...]] | None:
        """``(suffixes, suffix_of_child)`` of ``state``'s children, ``play(clone, choice)``
        for each of ``choices``, under the view ``view_of`` (kept, or found and kept)."""
        markov_key = getattr(state, "markov_key", None)
        node = (kind, markov_key() if markov_key is not None else tuple(state.history()))
        nodes = self._nodes
        if node in nodes:
            self.hits += 1
            nodes.move_to_end(node)
            return nodes[node]
        self.misses += 1
        view = view_of(state)
        length = len(view)
        found: dict[tuple, int] = {}
        suffix_of_child = []
        kept: tuple[tuple, tuple[int, ...]] | None = None
        for choice in choices:
            child = state.clone()
            play(child, choice)
            child_view = view_of(child)
            if child_view[:length] != view:
                break
            suffix_of_child.append(found.setdefault(child_view[length:], len(found)))
        else:
            kept = (tuple(found), tuple(suffix_of_child))
        nodes[node] = kept
        if len(nodes) > self.max_nodes:
            nodes.popitem(last=False)
        return kept


# One ChildViews per game (its nodes are facts of the game), shared by its searches.
_CHILD_VIEWS: weakref.WeakKeyDictionary[Game, ChildViews] = weakref.WeakKeyDictionary()


def child_views_of(game: Game) -> ChildViews | None:
    """``game``'s :class:`ChildViews`; None for a game whose history does not name its
    states (SAMPLED_STOCHASTIC: the draws' seed may be left out)."""
    if game.info.chance_mode is ChanceMode.SAMPLED_STOCHASTIC:
        return None
    views = _CHILD_VIEWS.get(game)
    if views is None:
        views = _CHILD_VIEWS[game] = ChildViews()
    return views


class OOSOptions(TypedDict, total=False):
    """Keyword options of :class:`OOS` that a caller passes on (ExIt-OOS's, a spec's)."""

    delta: float
    epsilon: float
    gamma: float
    targeting: str
    reweighting: str
    final_policy: str
    average_tremble: float
    prior_regret: float


def uniform_rollout(states: list[State], players: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """The OOS rollout policy: uniform over each row's legal actions."""
    masks = np.asarray(masks, dtype=np.float64)
    return masks / masks.sum(axis=1, keepdims=True)


def _check_options(
    delta: float,
    epsilon: float,
    gamma: float,
    targeting: str,
    reweighting: str,
    final_policy: str,
    average_tremble: float,
) -> None:
    """ValueError (one line) for an OOS option out of its choices or range."""
    if targeting not in TARGETING:
        raise ValueError(f"OOS targeting must be one of {TARGETING}, got {targeting!r}")
    if reweighting not in REWEIGHTING:
        raise ValueError(f"OOS reweighting must be one of {REWEIGHTING}, got {reweighting!r}")
    if final_policy not in ("average", "current"):
        raise ValueError(f"OOS final_policy must be 'average' or 'current', got {final_policy!r}")
    for name, value in (
        ("delta", delta),
        ("epsilon", epsilon),
        ("gamma", gamma),
        ("average_tremble", average_tremble),
    ):
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"OOS {name} must be in [0, 1], got {value}")


def _compiled_chunk(done: int, iterations: int | None, deadline: float | None) -> int:
    """How many compiled iterations to run next: to the half-budget check (where a lost
    target starts a restoration), then to the budget; :data:`CHUNK` between clock checks
    of a time budget or a deadline."""
    if iterations is None:
        return CHUNK
    chunk = -(-iterations // 2) - done if done < iterations / 2 else iterations - done
    return chunk if deadline is None else min(chunk, CHUNK)


class OOS:
    """The OOS tables and iterations for one searcher (see the module docstring).

    ``search(key, iterations=...)`` or ``search(key, seconds=...)`` runs iterations
    targeted at the searcher's information set ``key`` (``key=()``: the root, i.e.
    OS-MCCFR with an incremental tree and rollouts).

    ``backend``: ``"tree"`` runs the iterations in compiled code on the enumerated game
    tree (``_tree_mccfr.pyx``; uniform rollouts, or a fixed policy's per-infoset table
    through :meth:`set_rollout_policy`); ``"model"`` walks the game model
    (any game, any rollout policy); ``"auto"`` (default) takes the tree when
    :func:`agents.search.tree_mccfr.use_tree` finds at most
    :data:`OOS_AUTO_TREE_MAX_NODES` histories and the rollout policy is uniform.
    """

    def __init__(
        self,
        game: Game,
        player: int,
        delta: float = 0.9,
        epsilon: float = 0.4,
        gamma: float = 0.01,
        targeting: str = "ist",
        rollout_policy: RolloutPolicy = uniform_rollout,
        final_policy: str = "average",
        seed: int | None = None,
        backend: str = "auto",
        reweighting: str = "none",
        average_tremble: float = 0.0,
        prior_regret: float = 0.0,
    ):
        _check_options(delta, epsilon, gamma, targeting, reweighting, final_policy, average_tremble)
        if backend == "tree" and rollout_policy is not uniform_rollout:
            raise ValueError(
                "OOS backend 'tree' starts with uniform rollouts; a rollout policy needs backend 'model' "
                "here, or OOS.set_rollout_policy after construction (a per-infoset table)"
            )
        self.game, self.player = game, player
        self.num_players = game.info.num_players
        self.num_actions = game.info.num_distinct_actions
        self.delta, self.epsilon, self.gamma = delta, epsilon, gamma
        self.targeting, self.rollout_policy, self.final_policy = (
            targeting,
            rollout_policy,
            final_policy,
        )
        self.reweighting = reweighting
        self._ema_ratio = 1.0  # the model path's r (the tree backend keeps it in compiled code)
        self.rng = np.random.default_rng(seed)
        self.tree: GameTree | None = None
        self.tables: TreeTables | RegretTables
        if rollout_policy is uniform_rollout and use_tree(game, backend, OOS_AUTO_TREE_MAX_NODES):
            self._build_tree(reweighting, average_tremble)
        elif average_tremble > 0.0 or prior_regret > 0.0:
            raise ValueError(
                f"OOS average_tremble and prior_regret need the tree backend; {game.spec} "
                f"searches on the model"
            )
        if prior_regret < 0.0:
            raise ValueError(f"OOS prior_regret must be >= 0, got {prior_regret}")
        self.average_tremble = average_tremble
        self.prior_regret = prior_regret
        self.child_views = child_views_of(game) if self.tree is None else None
        self.reset()

    def _build_tree(self, reweighting: str, average_tremble: float) -> None:
        """The tree backend: the enumerated tree, its tables compiled, the OOS arrays."""
        tree = self.tree = GameTree.build(self.game)
        tables = self.tables = TreeTables(tree)
        self.compiled = tables.compile(self.rng)
        self.in_table = np.zeros(tree.num_infosets, dtype=np.uint8)
        self._target_mark = np.zeros(tree.num_nodes, dtype=np.int8)
        self.compiled.set_oos_arrays(self._target_mark, self.in_table)
        self.compiled.set_oos_reweighting(reweighting == "ema")
        self.compiled.set_oos_average_tremble(average_tremble)
        self._rollout_table: np.ndarray | None = None
        self._child_start: np.ndarray | None = None  # built on the first restoration
        # (player, public key) -> the player's infosets with that public state, for PST.
        self._public_states: dict[tuple[int, tuple], list[int]] | None = None
        # The nodes of information set i: _nodes_by_infoset[_infoset_bounds[i]:_infoset_bounds[i + 1]].
        self._nodes_by_infoset = np.argsort(tree.infoset, kind="stable")
        self._infoset_bounds = np.searchsorted(
            tree.infoset[self._nodes_by_infoset], np.arange(tree.num_infosets + 1)
        )

    def tree_tables(self) -> tuple[GameTree, TreeTables]:
        """The tree backend's tree and tables (ValueError on the model backend)."""
        if self.tree is None or not isinstance(self.tables, TreeTables):
            raise ValueError(f"OOS on {self.game.spec}: this needs the tree backend")
        return self.tree, self.tables

    def _model_tables(self) -> RegretTables:
        """The model backend's tables (ValueError on the tree backend)."""
        if not isinstance(self.tables, RegretTables):
            raise ValueError(f"OOS on {self.game.spec}: this needs the model backend")
        return self.tables

    @property
    def backend(self) -> str:
        return "model" if self.tree is None else "tree"

    def reset(self) -> None:
        if self.tree is None:
            self.tables = RegretTables(self.num_actions)
        else:  # in place: the compiled traversal holds pointers to these arrays
            _, tables = self.tree_tables()
            # prior_regret: regret matching starts at the rollout policy's table (ExIt's
            # apprentice), each infoset's positive regrets summing to prior_regret.
            prior = self._rollout_table
            if self.prior_regret > 0.0 and prior is not None:
                tables.regret[:] = self.prior_regret * prior
            else:
                tables.regret[:] = 0.0
            tables.average[:] = 0.0
            self.in_table[:] = 0
        self.ema_ratio = 1.0
        self.iterations = 0
        self.missed_targets = 0
        self.restored_searches = 0
        self._target: tuple = ()
        # Model path: (player, key) -> _strategy_of's answer, dropped when the entry changes.
        self._belief_strategies: dict[tuple, dict[int, float]] = {}

    @property
    def ema_ratio(self) -> float:
        """``r`` of ``reweighting="ema"``: the running mean of ``q(z) / q_u(z)``."""
        return self._ema_ratio if self.tree is None else self.compiled.ema_ratio

    @ema_ratio.setter
    def ema_ratio(self, value: float) -> None:
        if self.tree is None:
            self._ema_ratio = value
        else:
            self.compiled.ema_ratio = value

    def set_rollout_policy(self, rollout_policy: RolloutPolicy) -> None:
        """Roll out with ``rollout_policy`` from now on. Tree backend: one batched call over
        a representative state of every information set gives the per-slot table the
        compiled walk reads (exact while ``rollout_policy`` does not change)."""
        self.rollout_policy = rollout_policy
        if self.tree is None:
            return
        if rollout_policy is uniform_rollout:
            self._rollout_table = None
        else:
            self._rollout_table = rollout_table(self.tree, rollout_policy)
        self.compiled.set_oos_rollout(self._rollout_table)

    def in_tables(self, player: int, key: tuple) -> bool:
        """Whether ``player``'s information set ``key`` is in the incremental tree."""
        if self.tree is None:
            return (player, tuple(key)) in self._model_tables().entries
        infoset = self.tree.infoset_index.get((player, tuple(key)))
        return infoset is not None and bool(self.in_table[infoset])

    # ---- the target ----------------------------------------------------------------------
    def _target_view(self, state: State) -> tuple:
        if self.targeting == "ist":
            return state.information_state_key(self.player)
        return state.public_state_key()

    def _consistent(self, state: State) -> bool:
        """``state``'s key agrees with the target on every step both have."""
        key = self._target_view(state)
        length = min(len(key), len(self._target))
        return key[:length] == self._target[:length]

    def _consistent_children(
        self, state: State, choices: Sequence, play: Callable[[State, Any], None]
    ) -> list[bool]:
        """:meth:`_consistent` of each child ``play(clone of state, choice)``, from the
        children's view suffixes kept in :attr:`child_views` (see :class:`ChildViews`)."""
        children = None
        if self.child_views is not None:
            kind = (self.targeting, self.player if self.targeting == "ist" else None)
            try:
                children = self.child_views.suffixes(kind, state, self._target_view, choices, play)
            except NotImplementedError:  # the game keeps no history: no node names
                self.child_views = None
        if children is None:
            consistent = []
            for choice in choices:
                child = state.clone()
                play(child, choice)
                consistent.append(self._consistent(child))
            return consistent
        suffixes, suffix_of_child = children
        view, target = self._target_view(state), self._target
        common = min(len(view), len(target))
        if view[:common] != target[:common]:  # every child's view extends this one
            return [False] * len(suffix_of_child)
        if len(view) >= len(target):
            return [True] * len(suffix_of_child)
        wanted = target[len(view) :]
        fits = [suffix[: len(wanted)] == wanted[: len(suffix)] for suffix in suffixes]
        return [fits[k] for k in suffix_of_child]

    def _reaches_target(self, state: State) -> bool:
        key = self._target_view(state)
        return len(key) >= len(self._target) and key[: len(self._target)] == self._target

    def public_state_infosets(self, key: tuple) -> list[int]:
        """Tree backend: the searcher's information sets (tree indices) with the public state
        of its information set ``key``: PST's target, all searched alike."""
        tree = self.tree
        if tree is None:
            raise ValueError("OOS.public_state_infosets needs the tree backend")
        if self._public_states is None:
            self._public_states = {}
            for i, (player, other) in enumerate(tree.infoset_keys):
                steps = cast(tuple, other)  # an information-state key: one entry per step
                self._public_states.setdefault(
                    (player, tuple(public for public, _ in steps)), []
                ).append(i)
        targets = self._public_states.get((self.player, tuple(public for public, _ in key)))
        if targets is None:
            raise ValueError(
                f"OOS: no information set of player {self.player} in {tree} has the public "
                f"state of {key!r}"
            )
        return targets

    def _mark_target(self, key: tuple) -> None:
        """Tree backend: mark the target's nodes 2 and every node above one of them 1.

        The marks are exact: a node is on a path to the target only if some history
        through it reaches the target (the model path's key-prefix test also admits dead
        ends, e.g. an opponent dealt the card the searcher holds)."""
        tree, _ = self.tree_tables()
        if self.targeting == "ist":
            infoset = tree.infoset_index.get((self.player, key))
            if infoset is None:
                raise ValueError(
                    f"OOS: {key!r} is not an information set of player {self.player} in {tree}"
                )
            targets = [infoset]
        else:
            targets = self.public_state_infosets(key)
        mark = self._target_mark
        mark[:] = 0
        nodes = np.concatenate(
            [
                self._nodes_by_infoset[self._infoset_bounds[i] : self._infoset_bounds[i + 1]]
                for i in targets
            ]
            or [np.zeros(0, dtype=np.int64)]
        )
        mark[nodes] = 2
        while len(nodes):
            nodes = np.unique(tree.parent[nodes])
            nodes = nodes[(nodes >= 0)]
            nodes = nodes[mark[nodes] == 0]
            mark[nodes] = 1

    # ---- searching ---------------------------------------------------------------------------
    def search(
        self,
        key: tuple,
        iterations: int | None = None,
        seconds: float | None = None,
        deadline: float | None = None,
    ) -> None:
        """Run the budget's iterations targeted at the searcher's information set ``key``."""
        answer_rollouts(self.search_steps(key, iterations, seconds, deadline), self.rollout_policy)

    def search_steps(
        self,
        key: tuple,
        iterations: int | None = None,
        seconds: float | None = None,
        deadline: float | None = None,
    ) -> Generator[RolloutRequest, np.ndarray, None]:
        """:meth:`search` as a state machine: a generator that suspends at every rollout
        step of the model path, yielding ``(state, movers, masks)`` and expecting ``rho``'s
        probabilities (one row per mover) back; :func:`search_concurrently` answers many
        suspended searches with one batched call. The tree backend never suspends.

        ``deadline`` (a ``time.perf_counter()`` time) is a hard stop, unlike ``seconds``:
        checked before every iteration (every chunk of :data:`CHUNK` compiled ones), past it
        the search raises :class:`agents.search.DeadlinePassed` and its move is abandoned."""
        if iterations is not None and seconds is None:
            by_iterations, limit = True, float(iterations)
        elif seconds is not None and iterations is None:
            by_iterations, limit = False, seconds
        else:
            raise ValueError("OOS.search needs exactly one budget: iterations or seconds")
        key = tuple(key)
        self._target = key if self.targeting == "ist" else tuple(public for public, _ in key)
        if self.tree is not None and key:
            self._mark_target(key)
        start, done, restoring = time.perf_counter(), 0, False
        while True:
            spent = done if by_iterations else time.perf_counter() - start
            if spent >= limit:
                break
            check_deadline(deadline, "OOS search")
            if (
                key
                and not restoring
                and spent >= limit / 2
                and not self.in_tables(self.player, key)
            ):
                restoring = True
                self.restored_searches += 1
            if restoring:
                yield from self._restored_iteration_steps(key)
                done += 1
            elif self.tree is None:
                yield from self._iteration_steps(bool(key))
                done += 1
            else:  # compiled: a chunk, ending at the half-budget check and the budget
                chunk = _compiled_chunk(done, iterations, deadline)
                self.missed_targets += self.compiled.oos_iterations(
                    chunk, bool(key), self.delta, self.epsilon, self.gamma
                )
                self.iterations += chunk
                done += chunk

    def iteration(self, targeted: bool = True) -> None:
        """One OOS iteration: one sample per update player (model backend)."""
        answer_rollouts(self._iteration_steps(targeted), self.rollout_policy)

    def _iteration_steps(self, targeted: bool) -> Generator[RolloutRequest, np.ndarray, None]:
        for update in range(self.num_players):
            biased = targeted and self.rng.random() < self.delta
            below = not targeted
            yield from self._walk(
                self.game.new_initial_state(),
                update,
                [1.0] * (self.num_players + 1),
                1.0,
                1.0,
                below,
                biased,
                True,
            )
            if biased and not self._reached:
                self.missed_targets += 1
        self.iterations += 1

    def _restored_iteration_steps(self, key: tuple) -> Generator[RolloutRequest, np.ndarray, None]:
        """Resolve below the searcher's information set from belief samples (see the docstring)."""
        for update in range(self.num_players):
            history = sample_history(self.game, self.player, key, self.rng, self._strategy_of)
            if self.tree is None:
                state = self.game.state_from_history(history)
                yield from self._walk(
                    state, update, [1.0] * (self.num_players + 1), 1.0, 1.0, True, False, True
                )
            else:
                self.compiled.oos_walk(
                    update, self._node_of_history(history), self.delta, self.epsilon, self.gamma
                )
        self.iterations += 1

    def _node_of_history(self, history) -> int:
        """The tree node a history leads to (simultaneous moves: one edge per mover)."""
        tree, _ = self.tree_tables()
        if self._child_start is None:
            self._child_start = np.searchsorted(tree.parent, np.arange(tree.num_nodes + 1))
        child_start = self._child_start

        def child(node: int, action: int) -> int:
            first, stop = child_start[node], child_start[node + 1]
            return int(first + np.flatnonzero(tree.edge_action[first:stop] == action)[0])

        state, node = self.game.new_initial_state(), 0
        for action in history:
            if state.current_player() == SIMULTANEOUS:
                for mover in state.movers():
                    node = child(node, action[mover])
                state.apply_actions(list(action))
            else:
                node = child(node, action)
                state.apply_action(action)
            _skip_forced_simultaneous(state)
        return node

    def _current_strategy(self, player: int, state: State) -> tuple[list[int], np.ndarray] | None:
        """Legal actions and regret-matching strategy of ``player``'s set at ``state``, None if not in the tables."""
        key = state.information_state_key(player)
        if self.tree is None:
            entry = self._model_tables().entries.get((player, key))
            return None if entry is None else (entry.legal, entry.current_strategy())
        tree, tables = self.tree_tables()
        infoset = tree.infoset_index[(player, key)]
        if not self.in_table[infoset]:
            return None
        slots = slice(tree.infoset_slot_start[infoset], tree.infoset_slot_start[infoset + 1])
        positive = np.maximum(tables.regret[slots], 0.0)
        total = positive.sum()
        strategy = positive / total if total > 0.0 else np.full(len(positive), 1.0 / len(positive))
        return list(tree.slot_action[slots]), strategy

    def _strategy_of(self, state: State, player: int) -> dict[int, float]:
        """The belief sampler's model of ``player``: ``gamma Unif + (1 - gamma) sigma``,
        uniform where the table has no entry yet. The gamma share keeps every history
        consistent with the searcher's key at positive reach even when regret matching
        gives an action the opponent actually played probability zero (as in the biased
        sampler); with ``gamma = 0`` such a key makes the sampler raise.

        The model path keeps each answer (shared: read it, never change it) until its
        information set's entry is added or its regrets change (:meth:`_tree_step`): the
        sampler asks about hundreds of information sets a draw, and an iteration changes
        a few."""
        if self.tree is not None:
            return self._strategy_from_tables(state, player)
        kept = self._belief_strategies
        asked = (player, state.information_state_key(player))
        answer = kept.get(asked)
        if answer is None:
            if len(kept) >= BELIEF_STRATEGIES_MAX:
                kept.clear()
            answer = kept[asked] = self._strategy_from_tables(state, player)
        return answer

    def _strategy_from_tables(self, state: State, player: int) -> dict[int, float]:
        found = self._current_strategy(player, state)
        if found is None:
            legal = legal_actions_of(state, player)
            return {action: 1.0 / len(legal) for action in legal}
        legal, current = found
        strategy = self.gamma / len(legal) + (1.0 - self.gamma) * current
        return dict(zip(legal, strategy))

    def policy(self, key: tuple, legal: tuple[int, ...]) -> np.ndarray:
        """Probabilities over all actions at the searcher's information set ``key``."""
        probabilities = np.zeros(self.num_actions)
        key = tuple(key)
        if not self.in_tables(self.player, key):
            probabilities[list(legal)] = 1.0 / len(legal)
            return probabilities
        actions: list[int] | np.ndarray
        if self.tree is None:
            entry = self._model_tables().entries[(self.player, key)]
            average, regret, actions = entry.average, entry.regret, entry.legal
        else:
            tree, tables = self.tree_tables()
            infoset = tree.infoset_index[(self.player, key)]
            slots = slice(tree.infoset_slot_start[infoset], tree.infoset_slot_start[infoset + 1])
            average, regret, actions = (
                tables.average[slots],
                tables.regret[slots],
                tree.slot_action[slots],
            )
        weights = average if self.final_policy == "average" else np.maximum(regret, 0.0)
        total = weights.sum()
        probabilities[actions] = weights / total if total > 0.0 else 1.0 / len(weights)
        return probabilities

    # ---- one sample --------------------------------------------------------------------------
    def _walk(
        self,
        state: State,
        update: int,
        reach: list[float],
        biased_reach: float,
        unbiased_reach: float,
        below: bool,
        biased: bool,
        in_tree: bool,
    ) -> Generator[RolloutRequest, np.ndarray, Sample]:
        """Sample to a terminal; returns ``(u_update(z), pi(z | state), q(z))`` (a generator:
        rollout steps suspend, see :meth:`search_steps`)."""
        player = state.current_player()
        if player == TERMINAL:
            return self._terminal(state, update, below, biased_reach, unbiased_reach)
        if not below and self._reaches_target(state):
            below = True
        # The biased sampler matters only while the biased sample can still be this one.
        targeting = not below and biased_reach > 0.0
        if player == CHANCE:
            return (
                yield from self._chance_step(
                    state, update, reach, biased_reach, unbiased_reach, below, biased, in_tree
                )
            )
        movers, joint = movers_and_joint(state)
        if player == SIMULTANEOUS and not movers:  # every entry forced
            apply_choices(state, joint, movers, [])
            return (
                yield from self._walk(
                    state, update, reach, biased_reach, unbiased_reach, below, biased, in_tree
                )
            )
        if not in_tree:
            return (
                yield from self._rollout_step(
                    state, movers, joint, update, reach, biased_reach, unbiased_reach, below, biased
                )
            )
        return (
            yield from self._tree_step(
                state,
                movers,
                joint,
                update,
                reach,
                (biased_reach, unbiased_reach),
                below,
                biased,
                targeting,
            )
        )

    def _terminal(
        self, state: State, update: int, below: bool, biased_reach: float, unbiased_reach: float
    ) -> Sample:
        """The sample's end: ``u_update(z)``, tail 1, and ``q(z)`` (the mixture, or with
        ``"ema"`` the unbiased reach times ``r``, updated here)."""
        self._reached = below
        q = self.delta * biased_reach + (1.0 - self.delta) * unbiased_reach
        if self.reweighting == "ema" and unbiased_reach > 0.0:
            self._ema_ratio = EMA_DECAY * self._ema_ratio + (1.0 - EMA_DECAY) * q / unbiased_reach
            q = unbiased_reach * self._ema_ratio
        return float(state.returns()[update]), 1.0, q

    def _chance_step(
        self,
        state: State,
        update: int,
        reach: list[float],
        biased_reach: float,
        unbiased_reach: float,
        below: bool,
        biased: bool,
        in_tree: bool,
    ) -> Generator[RolloutRequest, np.ndarray, Sample]:
        """A chance node: the biased sampler keeps to the target-consistent outcomes."""
        outcomes, probabilities = chance_distribution(state)
        biased_probabilities = probabilities
        if not below and biased_reach > 0.0:
            allowed = np.array(
                self._consistent_children(state, outcomes, _play_outcome), dtype=np.float64
            )
            if (allowed * probabilities).sum() > 0.0:
                biased_probabilities = allowed * probabilities / (allowed * probabilities).sum()
        k = draw_index(biased_probabilities if biased else probabilities, self.rng)
        state.apply_action(outcomes[k])
        reach = reach.copy()
        reach[-1] *= probabilities[k]
        utility, tail, q = yield from self._walk(
            state,
            update,
            reach,
            biased_reach * biased_probabilities[k],
            unbiased_reach * probabilities[k],
            below,
            biased,
            in_tree,
        )
        return utility, tail * probabilities[k], q

    def _tree_step(
        self,
        state: State,
        movers: list[int],
        joint: list[int] | None,
        update: int,
        reach: list[float],
        reaches: tuple[float, float],
        below: bool,
        biased: bool,
        targeting: bool,
    ) -> Generator[RolloutRequest, np.ndarray, Sample]:
        """A node in the tables (or added by this sample): the movers sample, the walk goes
        on, and the movers' regrets (the update player's) and averages (the others') are
        updated on the way back. ``reaches``: the biased and unbiased sample reach."""
        tables = self._model_tables()
        keys = [(m, state.information_state_key(m)) for m in movers]
        expanding = any(key not in tables.entries for key in keys)
        entries = [tables.entry(state, m) for m in movers]
        changed = self._belief_strategies
        if expanding:  # a new entry: no longer the sampler's uniform guess
            for key in keys:
                changed.pop(key, None)
        strategies = [entry.current_strategy() for entry in entries]
        allowed_joints = self._allowed_joints(state, joint, movers, entries) if targeting else None
        choices, biased_factor, unbiased_factor = self._sample_choices(
            movers, strategies, update, biased, allowed_joints
        )
        child_reach = reach.copy()
        others_probability = 1.0
        for mover, strategy, k in zip(movers, strategies, choices):
            child_reach[mover] *= strategy[k]
            if mover != update:
                others_probability *= strategy[k]
        apply_choices(state, joint, movers, [e.legal[k] for e, k in zip(entries, choices)])
        biased_reach, unbiased_reach = reaches
        utility, tail, q = yield from self._walk(
            state,
            update,
            child_reach,
            biased_reach * biased_factor,
            unbiased_reach * unbiased_factor,
            below,
            biased,
            not expanding,
        )
        self._update_entries(
            movers,
            entries,
            strategies,
            choices,
            update,
            reach,
            reaches,
            utility,
            q,
            others_probability * tail,
        )
        for key in keys:  # regrets changed
            changed.pop(key, None)
        for strategy, k in zip(strategies, choices):
            tail *= strategy[k]
        return utility, tail, q

    def _update_entries(
        self,
        movers: list[int],
        entries: list[InfosetEntry],
        strategies: list[np.ndarray],
        choices: list[int],
        update: int,
        reach: list[float],
        reaches: tuple[float, float],
        utility: float,
        q: float,
        tail_after: float,
    ) -> None:
        """The update player's regrets ``W (pi(z|h.a) - pi(z|h))``, ``W = u pi_{-e}(h) / q(z)``
        (``tail_after``: the others' share of ``pi(z|h.a)`` times the tail below), and the
        others' averages ``sigma pi_p(h) / q(h)``."""
        biased_reach, unbiased_reach = reaches
        # q(h), after the sample: "ema" weighs with the r this sample updated, as the tree backend.
        sample_here = (
            unbiased_reach * self._ema_ratio
            if self.reweighting == "ema" and unbiased_reach > 0.0
            else self.delta * biased_reach + (1 - self.delta) * unbiased_reach
        )
        for mover, entry, strategy, k in zip(movers, entries, strategies, choices):
            if mover == update:
                others_reach = 1.0
                for p, r in enumerate(reach):
                    if p != update:
                        others_reach *= r
                weight = utility * others_reach / q
                entry.regret -= weight * strategy[k] * tail_after
                entry.regret[k] += weight * tail_after
            if mover != update or self.num_players == 1:  # one player: no other averages it
                entry.average += strategy * (reach[mover] / sample_here)

    def _sample_choices(
        self,
        movers: list[int],
        strategies: list[np.ndarray],
        update: int,
        biased: bool,
        allowed_joints: list[tuple[int, ...]] | None,
    ) -> tuple[list[int], float, float]:
        """Each mover's choice (an index into its legal actions), one after another, and the
        biased and unbiased samplers' probabilities of the joint choice. The update player
        explores with ``epsilon``; the biased sampler keeps to ``allowed_joints`` (those
        consistent with the earlier movers' choices), mixing in ``epsilon`` or ``gamma``
        of uniform over them."""
        choices, biased_factor, unbiased_factor = [], 1.0, 1.0
        for slot, (mover, strategy) in enumerate(zip(movers, strategies)):
            size = len(strategy)
            unbiased = (
                self.epsilon / size + (1 - self.epsilon) * strategy if mover == update else strategy
            )
            biased_probabilities = unbiased
            if allowed_joints:
                allowed = np.zeros(size)
                allowed[sorted({j[slot] for j in allowed_joints})] = 1.0
                restricted = strategy * allowed
                restricted = (
                    restricted / restricted.sum()
                    if restricted.sum() > 0
                    else allowed / allowed.sum()
                )
                mix = self.epsilon if mover == update else self.gamma
                biased_probabilities = mix * allowed / allowed.sum() + (1 - mix) * restricted
            k = draw_index(biased_probabilities if biased else unbiased, self.rng)
            if allowed_joints:
                allowed_joints = [j for j in allowed_joints if j[slot] == k]
            choices.append(k)
            biased_factor *= biased_probabilities[k]
            unbiased_factor *= unbiased[k]
        return choices, biased_factor, unbiased_factor

    def _allowed_joints(
        self, state: State, joint: list[int] | None, movers: list[int], entries: list[InfosetEntry]
    ) -> list[tuple[int, ...]]:
        """Index tuples (one per mover) of the choices whose child is target-consistent."""
        combinations = list(itertools.product(*(range(len(e.legal)) for e in entries)))

        def play(child: State, combination: tuple[int, ...]) -> None:
            apply_choices(child, joint, movers, [e.legal[k] for e, k in zip(entries, combination)])

        consistent = self._consistent_children(state, combinations, play)
        return [c for c, fits in zip(combinations, consistent) if fits]

    def _rollout_step(
        self,
        state: State,
        movers: list[int],
        joint: list[int] | None,
        update: int,
        reach: list[float],
        biased_reach: float,
        unbiased_reach: float,
        below: bool,
        biased: bool,
    ) -> Generator[RolloutRequest, np.ndarray, Sample]:
        """Below the expanded node: every mover plays ``rho`` (asked of whoever drives the
        walk: the step suspends); no table is touched."""
        masks = np.stack(
            [state.legal_actions_mask(m if joint is not None else None) for m in movers]
        )
        probabilities = yield state, movers, masks
        actions, factor = [], 1.0
        for row in probabilities:
            action = draw_index(row, self.rng)
            actions.append(action)
            factor *= row[action]
        apply_choices(state, joint, movers, actions)
        utility, tail, q = yield from self._walk(
            state,
            update,
            reach,
            biased_reach * factor,
            unbiased_reach * factor,
            below,
            biased,
            False,
        )
        return utility, tail * factor, q


def _play_outcome(state: State, outcome: int) -> None:
    state.apply_action(outcome)


def answer_rollouts(
    steps: Generator[RolloutRequest, np.ndarray, Result], rollout_policy: RolloutPolicy
) -> Result:
    """Drive one state machine (:meth:`OOS.search_steps`, or a generator that delegates
    to searches) alone, answering each suspended rollout step with ``rollout_policy``;
    returns the generator's return value."""
    try:
        request = next(steps)
        while True:
            state, movers, masks = request
            request = steps.send(rollout_policy([state] * len(movers), np.asarray(movers), masks))
    except StopIteration as finished:
        return finished.value


def search_concurrently(
    machines: Iterable[Generator[RolloutRequest, np.ndarray, Result]],
    rollout_policy: RolloutPolicy,
) -> list[Result]:
    """Run several state machines at once (ExIt-OOS's design, Kitchen & Benedetti 2018,
    section 3.2): each advances until its simulation needs ``rho`` and suspends; when none
    can progress, ONE batched ``rollout_policy`` call answers every waiting rollout step,
    and all resume. Returns each generator's return value, in order.

    With a network as ``rho`` this turns one forward pass per rollout step into one per
    round of steps over all the searches. Each search's samples come from its own
    generator, so its tables are the same as when run alone (up to the last bits of a
    batched forward pass against single-row ones)."""
    machines = list(machines)
    results: dict[int, Result] = {}
    waiting: list[tuple[int, RolloutRequest]] = []
    for index, steps in enumerate(machines):
        try:
            waiting.append((index, next(steps)))
        except StopIteration as finished:
            results[index] = finished.value
    while waiting:
        states = [state for _, (state, movers, _) in waiting for _ in movers]
        players = np.concatenate(
            [np.asarray(movers, dtype=np.int64) for _, (_, movers, _) in waiting]
        )
        masks = np.concatenate([masks for _, (_, _, masks) in waiting])
        probabilities = rollout_policy(states, players, masks)
        still_waiting, row = [], 0
        for index, (_, movers, _) in waiting:
            answer, row = probabilities[row : row + len(movers)], row + len(movers)
            try:
                still_waiting.append((index, machines[index].send(answer)))
            except StopIteration as finished:
                results[index] = finished.value
        waiting = still_waiting
    return [results[index] for index in range(len(machines))]


def rollout_table(tree: GameTree, rollout_policy: RolloutPolicy) -> np.ndarray:
    """``rollout_policy``'s probability of every slot of ``tree`` (the layout of the
    regret table), from one batched call at a representative state of each information set."""
    infosets = np.arange(tree.num_infosets)
    masks = np.zeros((tree.num_infosets, tree.game.info.num_distinct_actions), dtype=np.int8)
    slot_infoset = np.repeat(infosets, np.diff(tree.infoset_slot_start))
    masks[slot_infoset, tree.slot_action] = 1
    probabilities = np.asarray(
        rollout_policy(tree.representative_states(), tree.infoset_player, masks), dtype=np.float64
    )
    if probabilities.shape != masks.shape:
        raise ValueError(
            f"rollout policy returned shape {probabilities.shape}, expected {masks.shape}"
        )
    return np.ascontiguousarray(probabilities[slot_infoset, tree.slot_action])


class OOSAgent(SearchAgent):
    """OOS as a player: a search per decision, tables kept through the match.

    Budget: ``iterations`` or ``seconds`` per move (exactly one). Other keyword arguments
    go to :class:`OOS` (``delta``, ``epsilon``, ``gamma``, ``targeting``,
    ``rollout_policy``, ``final_policy``).
    """

    def __init__(
        self,
        game: Game,
        player: int,
        iterations: int | None = None,
        seconds: float | None = None,
        seed: int | None = None,
        **options: Any,
    ):
        super().__init__(game.info.num_distinct_actions, seed)
        if (iterations is None) == (seconds is None):
            raise ValueError("OOSAgent needs exactly one budget: iterations or seconds per move")
        self.game, self.player = game, player
        self.iterations, self.seconds = iterations, seconds
        self.search = OOS(game, player, seed=int(self.rng.integers(2**63)), **options)
        self._previous_key: tuple | None = None

    def search_policy(self, view: SeatView) -> np.ndarray:
        key = tuple(view.information_state_key)
        previous = self._previous_key
        if (
            view.player != self.search.player
            or previous is None
            or key[: len(previous)] != previous
        ):
            self.search.player = view.player
            self.search.reset()  # a new match (or seat): nothing learned applies
        self._previous_key = key
        self.search.search(key, iterations=self.iterations, seconds=self.seconds)
        return self.search.policy(key, view.legal_actions)


@register_spec("oos")
def _build_agent(argument: str, game: Game, player: int, seed: int | None) -> OOSAgent:
    iterations, seconds = parse_budget(f"oos:{argument}", argument)
    return OOSAgent(game, player, iterations=iterations, seconds=seconds, seed=seed)
