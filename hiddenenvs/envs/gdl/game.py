"""Any GDL or GDL-II rule sheet as a game of the shared model.

| Import          | ``hiddenenvs.make("gdl", rules="path/to/game.kif")`` or ``sheet="name"``  |
|-----------------|---------------------------------------------------------------------------|
| Agents          | the sheet's roles except ``random``, in declaration order                 |
| Actions         | ``Discrete(max moves of a role)``: the ground moves a role can ever make, |
|                 | masked by legality; ``action_to_string`` gives the move in KIF            |
| Observation     | ``Box(0, 1, (1 + A + P,), float32)`` (see below)                          |
| Parallel API    | yes (``hiddenenvs.make_parallel``): every step is simultaneous            |

Rules: those of the sheet. Each GDL step is, in the model, a CHANCE node for the role
``random`` (uniform over its legal moves; skipped when it has one) followed by a
SIMULTANEOUS node over the other roles. A role whose only legal move is one move plays it
automatically and is not a mover. Returns are the goal values of the terminal state
(0..100), or scaled to [-1, 1] with ``scale_returns=True``. Percepts: a sheet with
``sees`` rules is GDL-II and each role gets its ``sees`` percepts for the joint move; a
sheet without is GDL-I and every role sees the whole joint move.

Parameters:

- ``rules`` (str, default ``""``): path of a rule sheet (KIF).
- ``sheet`` (str, default ``""``): name of a sheet shipped in ``hiddenenvs/envs/gdl/games/``
  (file stem, ``.gdl`` or ``.kif``; a plain name, never a path: ``../`` is refused); give at most one of ``rules``/``sheet`` (neither:
  the shipped ``tictactoe``).
- ``scale_returns`` (bool, default False): goal ``g`` becomes ``g / 50 - 1``.
- ``max_steps`` (int, default 200): GDL steps before the episode is cut (the cut state
  is terminal; each role's return is its goal there if it has exactly one, else 0).
  Also the horizon of the tensors.
- ``history_window`` (int, default 10): GDL steps the information-state tensor holds one by
  one, most recent first; older steps are kept as the set of own moves and percepts seen
  (:mod:`hiddenenvs.envs.gdl.encoding`). Exact (one to one on the keys) when it covers the
  horizon, as for every shipped sheet but Meier.
- ``max_instances`` (int, default 750000): grounding size limit (ground rule
  instances per grounding attempt); beyond it, an error names the exploding rule. The
  refusal takes time in proportion (:mod:`hiddenenvs.envs.gdl.ground`). Every ggp-base
  sheet but AlexChess loads at the default (racer, the largest, grounds 515,000).
- ``max_sheet_bytes`` (int, default 524288): the sheet file's size limit, checked before
  it is read; a sheet may also hold at most 10,000 rules and facts (the reader refuses at
  the first one beyond, naming its line). Published sheets are under 100 KB.
- ``goal_conflicts`` (str, default ``"refuse"``): a terminal state where a role has
  several goal values, or none, breaks GDL's rules. ``"refuse"`` raises ``GdlPlayError``
  there, and finds such states when the sheet is loaded: the exhaustive search below, or
  where it stops early up to 100 random playouts within 10,000 transitions (fixed seed).
  ``"lowest"`` / ``"highest"`` give the role the lowest / highest of its values (0 with
  none), as ggp-base's players take the first goal their prover finds, and warn once per
  game (``GdlGoalConflictWarning``). Published GDL-II sheets (a Kriegspiel tic-tac-toe, a
  small Stratego) need a lenient mode.
- ``max_load_seconds`` (float, default 0: none): a wall-clock budget for grounding and
  compiling the sheet (the GGP player passes what its start clock leaves); beyond it the
  load is refused with one line naming the file and the stage reached. A sheet already
  compiled in this process is reused at once, whatever the budget.

Steps, keys and public observations. Every model step adds one entry to
``public_state_key()`` and to every player's ``information_state_key(p)``, each entry
``(public, private)``; a GDL step is two model steps when the sheet has a ``random``
role (always, even when random's move is forced, so the number of entries never tells a
player whether random had a choice) and one otherwise:

- random's move: ``(None, None)`` for everyone. Random's move is perceived only through
  percepts, at the next entry.
- the joint move, GDL-I (no ``sees`` rules): ``(joint, None)`` with ``joint`` the move
  index of every role (random included): the whole joint move is public.
- the joint move, GDL-II: ``(public percepts, (own move, private percepts))``. A percept
  is *public* when every non-random role can get it and the folded rules give it to
  every one of them under the same condition (the same OR of ANDs over the state and the
  joint move, e.g. ``(<= (sees ?p (shown ?v)) (player ?p) ...)``: both players see the
  dice). Then whenever one role gets it all do, and every role knows so; every other
  percept is private to the role that gets it, and so is the role's own move. The public
  part is the tuple of indices into ``game.public_percept_names`` of the public percepts
  this step (the same for every role, and a function of each role's own percepts); the
  private part is the move index and the indices into ``propnet.percept_names[role]`` of
  the role's other percepts. The rule is sound, not complete: a fact that every role
  infers from different percepts (in ``gdl_biased_rps`` each role sees the *other*
  role's throw) stays private. With a single non-random role (Monty Hall) every percept
  is public.

Steps the game plays by itself (nobody has a real choice) add their entries as they
happen. ``history()`` lists random's moves at chance nodes (ints) and joint moves
(tuples, ``-1`` for roles with one legal move), as ``game.state_from_history`` replays
them.

Tensors (``A`` = most moves of a role, ``P`` = percept features: most percepts of a role
for GDL-II, the sum of all roles' move counts for GDL-I, ``Q`` = public percept
features: the public percepts for GDL-II, ``P`` for GDL-I; tensor steps are GDL steps;
``W`` = ``history_window`` capped at the horizon):

| Tensor                           | Layout                                               |
|----------------------------------|------------------------------------------------------|
| ``observation_tensor(p)``        | step / max_steps, own last move one-hot (A), last    |
|                                  | percepts multi-hot (P)                               |
| ``information_state_tensor``     | step / max_steps, 1 if random has moved in this step,|
|                                  | the last W steps most recent first (own move one-hot |
|                                  | (A), percepts multi-hot (P)), and, when W is below   |
|                                  | the horizon, the own moves and percepts of the older |
|                                  | steps as a set (A + P): :mod:`.encoding`             |
| ``public_observation_tensor()``  | step / max_steps, 1 if random has moved in this step,|
|                                  | then per step the public percepts multi-hot (Q), or  |
|                                  | for GDL-I the joint move, one-hot per role (Q)       |
| ``state.state_tensor()``         | the base propositions (true state; not for players)  |

The horizon is the exact maximum game length when the search below finishes, else
``max_steps``. Sizes of the information-state tensor at the defaults, with those of the
earlier layout (one block per step up to the horizon) in parentheses: Meier 970 (5,545),
blind and biased blind tic-tac-toe 101 (100), Monty Hall 38 (37), gdl_biased_rps 8 (7).

Beliefs: ``game.sample_consistent_history(p, key, rng, policy)`` draws a history from the
exact posterior of :mod:`hiddenenvs.beliefs` without enumerating the tree. It runs a
forward filter over the key's steps: from every reached node it proposes random's moves
and the other roles' moves (``p``'s own move is read from the key), keeps the children
whose new key entries match ``p``'s key, and merges children that reach the same
propnet state (with a ``policy``, also the same information states of the other roles,
since the policy reads them), summing their forward weights (chance probability times
the others' action probabilities). A history is then drawn backwards from the last
step, each predecessor with probability proportional to its forward weight times the
step's weight: exactly the posterior. The work grows with the distinct consistent
states per step (hundreds in blind tic-tac-toe and Meier), not with the histories. The
pass is kept per key (the last 64 keys): under the uniform policy with its weights; under
a policy as a structure that proposes every legal move of the others, which each call
weights anew under the policy it is given (one question per information state of
another role, no propnet work; in arrays where every answer is positive), reaching the
nodes, sums and draws a pass built for that policy alone would (moves of probability
zero weigh nothing). OOS draws under a strategy that changes every iteration, 50 times a
search at one key; at blind tic-tac-toe's keys of 5, 9 and 13 entries that is 16, 29
and 36 times as many draws a second as a pass per draw
(``benchmarks/bench_gdl_beliefs.py``). When the whole structure needs more than the node
cap, a policy that leaves moves out gets a pass of its own, as before. A seat's key grows
one decision at a time, and the structure for a key is the structure kept for its longest
kept prefix taken on from that one's last two key lengths (the expansions before those
read only the prefix), with the same nodes, steps and order as one built from the start:
MCNFSP's 16 games in lockstep on blind tic-tac-toe (``configs/mcnfsp_blind_tictactoe.yaml``,
``budget.episodes=1024``, one core) play the same episodes in 97-101 s instead of
107-113 s, and ExIt-OOS there (64 episodes, ``workers=0``) in 71-78 s instead of 76-82 s;
``SAMPLER_KEYS`` holds the 32 seats' chains in flight (the kept nodes' cap is unchanged:
the processes grew by about 240 MB). The last layers are most of a pass, so the saving is
the early layers'.
``game.sample_consistent_histories(p, key, rng, count, policy)`` draws ``count`` from
one weighting.

Instances share the compiled sheet: every game built from the same file (same bytes,
same ``max_instances``) in a process reuses one parsed, ground and compiled network and
one reachable-state search (``Propnet.shared``); each game evaluates on its own buffers
and caches, so ``num_envs`` instances cost about one.

Pickling: a game pickles as its ``spec``; the receiving process rebuilds (and grounds)
the sheet, once per process. With ``rules=<path>`` the spec holds the path as given, so
the receiving process must see the same file at that path (give an absolute path when
the working directory may differ). A state pickles as its game and ``history()``.

Utility: CONSTANT_SUM (ZERO_SUM once scaled, for sums of 50 per player) when an exhaustive
search of the reachable states (bounded) proves the goals of the players always add up to
the same value; otherwise GENERAL_SUM.
"""

from __future__ import annotations

import functools
import itertools
import math
import warnings
from collections import OrderedDict, defaultdict
from pathlib import Path
from typing import Any, cast

import numpy as np

from hiddenenvs.beliefs import action_probability_function
from hiddenenvs.envs.gdl.encoding import PerceptionEncoding
from hiddenenvs.envs.gdl.ground import DEFAULT_MAX_INSTANCES
from hiddenenvs.envs.gdl.parser import MAX_SHEET_BYTES, GdlPlayError, Location
from hiddenenvs.envs.gdl.propnet import Propnet
from hiddenenvs.envs.gdl.seat_views import BLANK_VALUES, plain_term
from hiddenenvs.game import (
    CHANCE,
    SIMULTANEOUS,
    TERMINAL,
    ChanceMode,
    Dynamics,
    Game,
    GameInfo,
    Information,
    Parameter,
    State,
    Utility,
)

GAMES_DIR = Path(__file__).resolve().parent / "games"
EXPLORATION_BUDGET = 20_000  # transitions spent proving constant-sum and game length
DEFAULT_SHEET = "tictactoe"  # when neither rules= nor sheet= is given
SAMPLER_MAX_NODES = 200_000  # distinct (state, step) nodes the belief sampler may keep
# Keys whose forward passes the belief sampler keeps, per game and policy kind: more than
# the searches that draw in turn (MCNFSP plays 16 games in lockstep, a search per seat, and
# extends each seat's last pass at its next decision).
SAMPLER_KEYS = 64
# ... and at most this many nodes in all of the structures kept for policies (about 1.4 KB
# a node: blind tic-tac-toe's key of 13 entries keeps 22,704 nodes, 31 MB); the oldest go.
SAMPLER_KEPT_NODES = 2 * SAMPLER_MAX_NODES
# Steps of the information-state tensor's window: every shipped sheet but Meier fits whole
# (blind tic-tac-toe: 9 steps); Meier (63) keeps its last three turns of roll, claim and
# respond one by one, and the earlier claims and rolls as a set.
DEFAULT_HISTORY_WINDOW = 10
# goal_conflicts: "refuse" (GDL's rule: exactly one goal value per role in a terminal
# state), or the lowest or highest of a role's values (0 when it has none).
GOAL_CONFLICTS = ("refuse", "lowest", "highest")
# The load-time check of "refuse" where the exhaustive search does not finish: random
# playouts from the initial state, at most this many, within this many transitions.
GOAL_CHECK_PLAYOUTS = 100
GOAL_CHECK_TRANSITIONS = 10_000


class GdlGoalConflictWarning(UserWarning):
    """A lenient ``goal_conflicts`` mode settled a terminal state with several goal values
    (or none) for a role; said once per game."""


def resolve_sheet(name: str) -> Path:
    """The shipped sheet ``name``; only a plain file name inside the shipped folder."""
    known = sorted(p.stem for p in GAMES_DIR.glob("*.*") if p.suffix in (".gdl", ".kif"))
    if Path(name).name != name or name in ("", ".", ".."):
        raise ValueError(
            f"gdl: sheet= takes the name of a shipped rule sheet, not a path "
            f"(got {name!r}); shipped: {known}; give a path with rules="
        )
    for suffix in ("", ".gdl", ".kif"):
        path = GAMES_DIR / f"{name}{suffix}"
        if path.is_file() and path.resolve().parent == GAMES_DIR.resolve():
            return path
    raise ValueError(f"gdl: no shipped rule sheet named {name!r}; shipped: {known}")


class GdlGame(Game):
    NAME = "gdl"
    RENDER_MODES = ("ansi", "human", "rgb_array")
    PARAMETERS = (
        Parameter("rules", str, "", "path of a GDL/GDL-II rule sheet"),
        Parameter("sheet", str, "", "name of a rule sheet shipped in hiddenenvs/envs/gdl/games"),
        Parameter("scale_returns", bool, False, "scale goal values 0..100 to [-1, 1]"),
        Parameter("max_steps", int, 200, "GDL steps before the episode is cut", minimum=1),
        Parameter(
            "history_window",
            int,
            DEFAULT_HISTORY_WINDOW,
            "GDL steps the information-state tensor holds one by one (older ones as a set)",
            minimum=1,
        ),
        Parameter("max_instances", int, DEFAULT_MAX_INSTANCES, "grounding size limit", minimum=1),
        Parameter("max_sheet_bytes", int, MAX_SHEET_BYTES, "rule sheet size limit", minimum=1),
        Parameter(
            "goal_conflicts",
            str,
            "refuse",
            "a terminal state where a role has several goal values (or none)",
            choices=GOAL_CONFLICTS,
        ),
        Parameter(
            "max_load_seconds",
            float,
            0.0,
            "time budget for grounding and compiling the sheet (0: none)",
            minimum=0.0,
        ),
    )

    def __init__(self, **params):
        super().__init__(**params)
        rules, sheet = self.params["rules"], self.params["sheet"]
        if rules and sheet:
            raise ValueError(
                "gdl: give one of rules= (a path) or sheet= (a shipped name), not both"
            )
        if not rules and not sheet:
            sheet = DEFAULT_SHEET
        if "(" in rules or "\n" in rules:  # a sheet's text where its path belongs
            raise ValueError(
                "gdl: rules= takes the path of a rule sheet file, got text starting "
                f"{rules[:40]!r}; write the sheet to a .gdl/.kif file and pass its path"
            )
        path = Path(rules) if rules else resolve_sheet(sheet)
        self.propnet = Propnet.shared(
            path,
            max_instances=self.params["max_instances"],
            max_sheet_bytes=self.params["max_sheet_bytes"],
            max_seconds=self.params["max_load_seconds"] or None,
        )
        net = self.propnet
        lowered = [name.lower() for name in net.roles]
        self.random_role = lowered.index("random") if "random" in lowered else None
        self.player_roles = [r for r in range(len(net.roles)) if r != self.random_role]
        if not self.player_roles:
            raise GdlPlayError(Location(str(path), 1, 1), "the sheet has no role besides random")
        sheet_name = Path(path).stem  # the display name; the identity is self.spec
        self.max_steps = self.params["max_steps"]
        num_moves = [len(net.moves[r]) for r in self.player_roles]
        self.num_actions = max(1, max(num_moves))
        if net.has_sees:
            self.percept_features = max([len(net.percepts[r]) for r in self.player_roles] + [1])
            self.role_offsets = None
        else:
            self.role_offsets = np.cumsum([0] + [len(m) for m in net.moves])
            self.percept_features = int(self.role_offsets[-1])
        self.public_percept_names, self.public_index = self._public_percepts()
        public_features = len(self.public_percept_names) if net.has_sees else self.percept_features
        # A step's key entries depend on its moves and percepts only; searches meet the
        # same few thousand steps again and again.
        self.step_entries = functools.lru_cache(maxsize=1 << 16)(self._step_entries)
        utility, utility_sum, depth, conflict = self.propnet.derived(
            ("explore", self.max_steps), self._explore
        )
        self._goal_conflict_reported = False
        if self.params["goal_conflicts"] == "refuse":
            if conflict is None and depth is None:  # the search stopped early: sample
                conflict = self.propnet.derived(
                    ("goal playouts", self.max_steps), self._goal_conflict_in_playouts
                )
            if conflict is not None:
                role, values, steps = conflict
                raise GdlPlayError(
                    net.rule_location("goal", role),
                    f"role {net.roles[role]} has {len(values)} goal values {list(values)} in "
                    f"a terminal state reached in {steps} steps (needs exactly one); "
                    f"goal_conflicts='lowest' or 'highest' plays such a sheet anyway",
                )
        # The belief sampler's forward passes (module docstring): the uniform policy's
        # weighted once per key; under a policy, the structure every policy shares, weighted
        # anew per call (None: it needs more than max_nodes nodes).
        self._uniform_filter = functools.lru_cache(maxsize=SAMPLER_KEYS)(
            lambda player, target, max_nodes: _ForwardFilter(
                self, player, target, max_nodes, by_others=False
            ).weigh(action_probability_function(None))
        )
        # (player, key, max_nodes) -> structure or None, the most recently used last.
        self._policy_filters: OrderedDict[tuple, _ForwardFilter | None] = OrderedDict()
        scale = self.params["scale_returns"]
        if scale and utility is Utility.CONSTANT_SUM:
            utility_sum = utility_sum / 50 - len(self.player_roles)
            if abs(utility_sum) < 1e-12:
                utility, utility_sum = Utility.ZERO_SUM, 0.0
        steps = depth if depth is not None else self.max_steps
        self.horizon = min(steps, self.max_steps)  # tensor steps
        self.perception = PerceptionEncoding(
            self.num_actions,
            self.percept_features,
            self.role_offsets,
            self.horizon,
            self.max_steps,
            self.params["history_window"],
        )
        per_step = 2 if self.random_role is not None else 1
        self.info = GameInfo(
            short_name=sheet_name,
            long_name=f"GDL: {sheet_name}",
            num_players=len(self.player_roles),
            num_distinct_actions=self.num_actions,
            max_chance_outcomes=len(net.moves[self.random_role])
            if self.random_role is not None
            else 0,
            dynamics=Dynamics.SIMULTANEOUS,
            chance_mode=ChanceMode.EXPLICIT_STOCHASTIC
            if self.random_role is not None
            else ChanceMode.DETERMINISTIC,
            information=Information.IMPERFECT,
            utility=utility,
            min_utility=-1.0 if scale else 0.0,
            max_utility=1.0 if scale else 100.0,
            max_game_length=steps * per_step,
            information_state_tensor_shape=self.perception.shape,
            observation_tensor_shape=(1 + self.num_actions + self.percept_features,),
            player_names=tuple(net.roles[r] for r in self.player_roles),
            utility_sum=utility_sum,
            public_observation_tensor_shape=(2 + self.horizon * public_features,),
        )

    def _public_percepts(self) -> tuple[tuple[str, ...], list[tuple[int, ...]] | None]:
        """(public percept names, per player: percept index -> public index or -1).

        Public: every non-random role can get the percept, under the same folded
        condition (module docstring).
        """
        net = self.propnet
        if not net.has_sees:
            return (), None
        conditions = [
            dict(zip(net.percept_names[r], net.percept_conditions[r])) for r in self.player_roles
        ]
        first, *others = conditions
        public = sorted(
            name
            for name, condition in first.items()
            if all(name in other and other[name] == condition for other in others)
        )
        index = {name: k for k, name in enumerate(public)}
        return tuple(public), [
            tuple(index.get(name, -1) for name in net.percept_names[r]) for r in self.player_roles
        ]

    def _goal_conflict(self, info) -> tuple[int, tuple] | None:
        """(role, its goal values) of the first player role without exactly one goal
        value in the terminal state ``info`` describes, else None."""
        for role in self.player_roles:
            if len(info.goals[role]) != 1:
                return role, tuple(info.goals[role])
        return None

    def _goal_conflict_in_playouts(self) -> tuple[int, tuple, int] | None:
        """(role, goal values, steps) of a terminal state that random playouts (fixed
        seed, uniform joint moves, bounded by the module's constants) reach with a role
        holding several goal values or none, else None."""
        net = self.propnet
        rng = np.random.default_rng(0)
        transitions = 0
        for _ in range(GOAL_CHECK_PLAYOUTS):
            state = net.initial_state
            for steps in range(self.max_steps + 1):
                info = net.evaluate(state)
                if info.terminal:
                    conflict = self._goal_conflict(info)
                    if conflict is not None:
                        net.clear_cache()
                        return (*conflict, steps)
                    break
                if steps == self.max_steps or any(not legal for legal in info.legal):
                    break
                transitions += 1
                if transitions > GOAL_CHECK_TRANSITIONS:
                    net.clear_cache()
                    return None
                joint = tuple(legal[rng.integers(len(legal))] for legal in info.legal)
                state = net.transition(state, joint)[0]
        net.clear_cache()
        return None

    def _explore(self):
        """(utility, sum, max depth, goal conflict) by exhaustive search of the reachable
        states, if small; the conflict is (role, goal values, steps) of the first terminal
        state met where a role has several goal values or none (else None)."""
        net = self.propnet
        frontier = {net.initial_state}
        seen = set(frontier)
        sums = set()
        budget = EXPLORATION_BUDGET
        depth = 0
        while frontier:
            next_frontier = set()
            for state in frontier:
                info = net.evaluate(state)
                if info.terminal:
                    conflict = self._goal_conflict(info)
                    if conflict is not None:
                        return Utility.GENERAL_SUM, None, None, (*conflict, depth)
                    sums.add(sum(info.goals[r][0] for r in self.player_roles))
                    continue
                if any(not legal for legal in info.legal):
                    return Utility.GENERAL_SUM, None, None, None
                # The joint moves are counted before any is made: 24 roles with 2 moves
                # each are 16.7 million, which as tuples took 5.9 GB.
                budget -= math.prod(len(legal) for legal in info.legal)
                if budget < 0 or depth >= self.max_steps:
                    return Utility.GENERAL_SUM, None, None, None
                for joint in itertools.product(*info.legal):
                    child = net.transition(state, joint)[0]
                    if child not in seen:
                        seen.add(child)
                        next_frontier.add(child)
            frontier = next_frontier
            depth += 1 if frontier else 0
        net.clear_cache()
        if len(sums) == 1:
            return Utility.CONSTANT_SUM, float(next(iter(sums))), depth, None
        return Utility.GENERAL_SUM, None, depth, None

    def new_initial_state(self, seed=None):
        return GdlState(self)

    def _settled_goal(self, role: int, values: tuple) -> float:
        """A lenient ``goal_conflicts`` mode's value for ``role``'s goal ``values`` (not
        exactly one) in a terminal state; warns once per game what it did."""
        mode = self.params["goal_conflicts"]
        value = float((min if mode == "lowest" else max)(values)) if values else 0.0
        if not self._goal_conflict_reported:
            self._goal_conflict_reported = True
            warnings.warn(
                f"gdl {self.info.short_name}: role {self.propnet.roles[role]} has goal values "
                f"{list(values)} in a terminal state; goal_conflicts={mode!r} gives {value:g} "
                f"(said once per game)",
                GdlGoalConflictWarning,
                stacklevel=2,
            )
        return value

    def sample_consistent_history(
        self, player, information_state_key, rng, policy=None, max_nodes=SAMPLER_MAX_NODES
    ):
        """A history drawn from the exact posterior by forward filtering and backward
        sampling over ``player``'s key (module docstring); ``ValueError`` when no history
        is consistent, all have zero reach, or more than ``max_nodes`` nodes are needed."""
        return self._posterior(player, tuple(information_state_key), policy, max_nodes).draw(rng)

    def sample_consistent_histories(self, player, information_state_key, rng, count, policy=None):
        """``count`` draws from one forward pass (the policy is fixed for the batch)."""
        posterior = self._posterior(player, tuple(information_state_key), policy, SAMPLER_MAX_NODES)
        return [posterior.draw(rng) for _ in range(count)]

    def _posterior(self, player: int, target: tuple, policy, max_nodes: int) -> _Posterior:
        if policy is None:  # uniform weights are a function of the key: reuse them
            return self._uniform_filter(player, target, max_nodes)
        probabilities_of = action_probability_function(policy)
        forward = self._policy_filter(player, target, max_nodes)
        if forward is None:  # too large with every move: the pass for this policy alone
            forward = _ForwardFilter(
                self, player, target, max_nodes, by_others=True, support=probabilities_of
            )
        return forward.weigh(probabilities_of)

    def _policy_filter(self, player: int, target: tuple, max_nodes: int) -> _ForwardFilter | None:
        """The structure under every policy (all the others' legal moves proposed), kept
        for the last keys (``SAMPLER_KEYS``, ``SAMPLER_KEPT_NODES``), or None when it needs
        more than ``max_nodes`` nodes (a policy that leaves moves out may need fewer)."""
        kept = self._policy_filters
        asked = (player, target, max_nodes)
        if asked in kept:
            kept.move_to_end(asked)
            return kept[asked]
        parent = None
        for length in range(len(target) - 1, 0, -1):  # the longest kept prefix
            prefix = (player, target[:length], max_nodes)
            if prefix in kept:
                parent = kept[prefix]
                if parent is not None and parent.can_extend_to(target):
                    # A seat's keys grow one decision at a time: the chain's last pass is
                    # the one it extends next, and would otherwise crowd the other chains out.
                    del kept[prefix]
                else:
                    parent = None
                break
        try:
            forward: _ForwardFilter | None = _ForwardFilter(
                self, player, target, max_nodes, by_others=True, extending=parent
            )
        except _TooManyNodes:
            forward = None
        kept[asked] = forward
        while len(kept) > 1 and (
            len(kept) > SAMPLER_KEYS
            or sum(len(f.states) for f in kept.values() if f is not None) > SAMPLER_KEPT_NODES
        ):
            kept.popitem(last=False)
        return forward

    def _step_entries(self, moves: tuple, percepts: tuple) -> tuple[Any, list]:
        """(public entry, private entry per player) of a joint move (module docstring);
        ``step_entries`` is its cached form (the result is shared: never modify it)."""
        roles = self.player_roles
        if not self.propnet.has_sees:
            return moves, [None] * len(roles)
        if not self.public_percept_names:
            return (), [(moves[role], percepts[role]) for role in roles]
        public_index = self.public_index
        public = tuple(public_index[0][k] for k in percepts[roles[0]] if public_index[0][k] >= 0)
        return public, [
            (moves[role], tuple(k for k in percepts[role] if public_index[player][k] < 0))
            for player, role in enumerate(roles)
        ]

    def action_to_string(self, player, action):
        # A chance outcome is a move of the random role (chance_outcomes lists them).
        role = self.random_role if player == CHANCE else self.player_roles[player]
        moves = self.propnet.move_names[role]
        return moves[action] if action < len(moves) else f"<no move {action}>"

    # ---- for a person (human play) ----
    def describe_step(self, player, public, private):
        """A key step in the sheet's own words: the moves and percepts of the step that
        ``player`` knows, outer brackets dropped (``you claim 32; you see rolled 32``).
        Random's move is known only through the next step's percepts, and a ``noop`` is
        no news: a step of nothing but those is ``""``."""
        if public is None:
            return ""
        net, me = self.propnet, self.player_roles[player]
        if not net.has_sees:  # GDL-I: the whole joint move is public
            moves = [
                ("you" if role == me else net.roles[role], net.move_names[role][move])
                for role, move in enumerate(public)
                if role != self.random_role
            ]
            return "; ".join(f"{who} {plain_term(move)}" for who, move in moves if move != "noop")
        own_move, private_percepts = private
        parts = []
        if net.move_names[me][own_move] != "noop":
            parts.append(f"you {plain_term(net.move_names[me][own_move])}")
        seen = [net.percept_names[me][k] for k in private_percepts]
        seen += [self.public_percept_names[k] for k in public]
        if seen:
            parts.append("you see " + ", ".join(plain_term(name) for name in seen))
        return "; ".join(parts)

    def describe_view(self, state, player):
        """What ``player`` knows of the position, for a person: in GDL-I every role sees
        every joint move, so the whole state (a grid where the fluents are ``(name row
        column value)``, :func:`grid_text`); in GDL-II the board drawn from its own key
        where :mod:`.seat_views` knows the sheet (blind tic-tac-toe), else None (the
        steps say it all)."""
        if self.propnet.has_sees:
            from hiddenenvs.envs.gdl.seat_views import seat_view

            return seat_view(self, state, player)
        return grid_text(self.propnet.state_fluents(state.fluents))


def grid_text(fluents: list[str]) -> str:
    """Fluents as a person reads them: those of the form ``(name row column value)`` with
    integer row and column as a grid of values (one grid per name, ``.`` for a blank
    value), the others listed plainly below it."""
    grids: dict[str, dict[tuple[int, int], str]] = {}
    others = []
    for fluent in fluents:
        words = plain_term(fluent).split()
        if len(words) == 4 and words[1].isdigit() and words[2].isdigit() and "(" not in fluent[1:]:
            value = "." if words[3].lower() in BLANK_VALUES else words[3]
            grids.setdefault(words[0], {})[(int(words[1]), int(words[2]))] = value
        else:
            others.append(plain_term(fluent))
    lines = []
    for name, cells in grids.items():
        rows = sorted({row for row, _ in cells})
        columns = sorted({column for _, column in cells})
        width = max(len(value) for value in cells.values())
        lines.append(f"{name}:")
        lines.append("     " + " ".join(f"{column:>{width}}" for column in columns))
        for row in rows:
            values = (cells.get((row, column), " ") for column in columns)
            lines.append(f"  {row:>2} " + " ".join(f"{value:>{width}}" for value in values))
    if others:
        lines.append(", ".join(others))
    return "\n".join(lines)


class GdlState(State):
    __slots__ = (
        "_decisions",
        "_info",
        "_keys",
        "_public",
        "_returns",
        "_steps",
        "cut",
        "fluents",
        "pending_random",
        "steps",
    )
    game: GdlGame

    def __init__(self, game: GdlGame):
        self.game = game
        self.fluents = game.propnet.initial_state
        self.steps = 0
        # Per GDL step: (move index per role, percept indices per role).
        self._steps: tuple[tuple[tuple[int, ...], tuple], ...] = ()
        self._decisions = ()  # history(): chance outcomes and joint moves
        self._public = ()  # public_state_key(), extended one entry per model step
        self._keys = [() for _ in game.player_roles]  # information_state_key(p), likewise
        self.pending_random: int | None = None
        self.cut = False
        self._info = None
        self._returns = None
        self._advance()

    def clone(self):
        other = GdlState.__new__(GdlState)
        other.game = self.game
        other.fluents = self.fluents
        other.steps = self.steps
        other._steps = self._steps  # the tuples are never modified, only replaced
        other._decisions = self._decisions
        other._public = self._public
        other._keys = list(self._keys)
        other.pending_random = self.pending_random
        other.cut = self.cut
        other._info = self._info
        other._returns = self._returns
        return other

    # ---- evaluation
    def info(self):
        if self._info is None:
            net = self.game.propnet
            self._info = net.evaluate(self.fluents)
            net.check_playable(self.fluents, self._info)
        return self._info

    def state_tensor(self) -> np.ndarray:
        """The base propositions of the true state (for ReBeL-style reasoning)."""
        return self.game.propnet.state_bits(self.fluents).astype(np.float32)

    def current_player(self):
        if self.cut:
            return TERMINAL
        info = self.info()
        if info.terminal:
            return TERMINAL
        random_role = self.game.random_role
        if (
            random_role is not None
            and self.pending_random is None
            and len(info.legal[random_role]) > 1
        ):
            return CHANCE
        return SIMULTANEOUS

    def movers(self):
        if self.current_player() != SIMULTANEOUS:
            return []
        legal = self._info.legal
        return [p for p, role in enumerate(self.game.player_roles) if len(legal[role]) > 1]

    def legal_actions(self, player=None):
        current = self.current_player()
        if current == TERMINAL:
            return []
        if current == CHANCE:
            if player in (None, CHANCE):
                return list(self.info().legal[self.game.random_role])
            return []
        if player is None:
            raise ValueError(f"{self.game.info.short_name}: simultaneous node; name the player")
        return list(self.info().legal[self.game.player_roles[player]])

    def chance_outcomes(self):
        if self.current_player() != CHANCE:
            raise ValueError(
                f"{self.game.info.short_name}: chance_outcomes() called at a non-chance node"
            )
        legal = self.info().legal[self.game.random_role]
        return [(move, 1.0 / len(legal)) for move in legal]

    def _apply_action(self, action):
        self.pending_random = action
        self._decisions += (action,)
        self._append_random_entry()
        self._advance()

    def _append_random_entry(self):
        self._public += (None,)
        self._keys = [key + ((None, None),) for key in self._keys]

    def _advance(self):
        """Play steps where nobody has a real choice (chance included) automatically."""
        roles = self.game.player_roles
        while self.current_player() == SIMULTANEOUS:
            legal = self._info.legal
            if any(len(legal[role]) > 1 for role in roles):
                return
            self._transition([legal[role][0] for role in roles])

    def _apply_actions(self, joint):
        legal = self.info().legal
        self._decisions += (
            tuple(
                move if len(legal[role]) > 1 else -1
                for move, role in zip(joint, self.game.player_roles)
            ),
        )
        self._transition(joint)
        self._advance()

    def _transition(self, joint):
        game = self.game
        net = game.propnet
        info = self.info()
        moves = [0] * len(net.roles)
        for player, role in enumerate(game.player_roles):
            moves[role] = joint[player]
        if game.random_role is not None:
            if self.pending_random is None:  # forced: its entry comes with the step
                self._append_random_entry()
                moves[game.random_role] = info.legal[game.random_role][0]
            else:
                moves[game.random_role] = self.pending_random
        moves = tuple(moves)
        self.fluents, percepts = net.transition(self.fluents, moves)
        self._steps += ((moves, percepts),)
        self._append_step_entries(moves, percepts)
        self.steps += 1
        self.pending_random = None
        self._info = None
        if self.steps >= game.max_steps and not self.info().terminal:
            self.cut = True

    def _append_step_entries(self, moves, percepts):
        public, private = self.game.step_entries(moves, percepts)
        self._public += (public,)
        self._keys = [key + ((public, own),) for key, own in zip(self._keys, private)]

    # ---- outcome
    def returns(self):
        if self.current_player() != TERMINAL:
            return np.zeros(len(self.game.player_roles))
        if self._returns is None:
            goals = self.info().goals
            values = []
            mode = self.game.params["goal_conflicts"]
            for role in self.game.player_roles:
                if len(goals[role]) == 1:
                    values.append(float(goals[role][0]))
                elif self.cut:
                    values.append(0.0)
                elif mode != "refuse":
                    values.append(self.game._settled_goal(role, goals[role]))
                else:
                    raise GdlPlayError(
                        self.game.propnet.rule_location("goal", role),
                        f"role {self.game.propnet.roles[role]} has {len(goals[role])} goal "
                        f"values {list(goals[role])} in a terminal state (needs exactly one)",
                    )
            values = np.asarray(values)
            if self.game.params["scale_returns"]:
                values = values / 50.0 - 1.0
            self._returns = values
        return self._returns.copy()

    # ---- information
    def history(self):
        return self._decisions

    def markov_key(self) -> tuple:
        """What this state's future depends on, hashable: the propnet state, random's move
        if already drawn this step, and the step count (the cut). States with equal keys
        have the same legal moves and chance outcomes, and each child adds the same entries
        to every key (a search keeps what it learns of a node under it: fewer names than
        histories, since move orders transpose)."""
        return (self.fluents, self.pending_random, self.steps, self.cut)

    def information_state_key(self, player):
        return self._keys[player]

    def public_state_key(self):
        return self._public

    def own_history(self, player) -> list[tuple[int, tuple]]:
        """``[(own move, percepts)]`` per GDL step, as the information-state tensor holds it:
        percept indices into ``propnet.percept_names[role]`` (GDL-II) or the joint move
        (GDL-I)."""
        role = self.game.player_roles[player]
        if self.game.propnet.has_sees:
            return [(moves[role], percepts[role]) for moves, percepts in self._steps]
        return [(moves[role], moves) for moves, _ in self._steps]

    def observation_tensor(self, player):
        game = self.game
        tensor = np.zeros(game.info.observation_tensor_shape, dtype=np.float32)
        tensor[0] = min(1.0, self.steps / game.max_steps)
        if self._steps:
            move, seen = self.own_history(player)[-1]
            game.perception.last_step_into(tensor, 1, move, seen)
        return tensor

    def information_state_tensor(self, player):
        """:mod:`hiddenenvs.envs.gdl.encoding`: a function of the player's key."""
        return self.game.perception.tensor(
            self.steps, self.pending_random is not None, self.own_history(player)
        )

    def public_observation_tensor(self):
        """Module docstring; computed from ``public_state_key()`` alone."""
        game = self.game
        tensor = np.zeros(game.info.public_observation_tensor_shape, dtype=np.float32)
        step_entries = [entry for entry in self._public if entry is not None]
        tensor[0] = min(1.0, len(step_entries) / game.max_steps)
        tensor[1] = float(bool(self._public) and self._public[-1] is None)
        width = len(game.public_percept_names) if game.propnet.has_sees else game.percept_features
        for step, entry in enumerate(step_entries[: game.horizon]):
            offset = 2 + step * width
            if game.role_offsets is None:
                tensor[[offset + k for k in entry]] = 1.0
            else:
                tensor[offset + game.role_offsets[:-1] + np.asarray(entry)] = 1.0
        return tensor

    def render_rgb(self, player: int | None = None) -> np.ndarray:
        """The state as an ``(360, 440, 3)`` uint8 image: its boards, dice and other
        fluents (None: the true state), or what GDL-II seat ``player`` knows
        (:mod:`hiddenenvs.envs.gdl.render`)."""
        from hiddenenvs.envs.gdl.render import render_gdl

        return render_gdl(self, player)

    def __str__(self):
        net = self.game.propnet
        lines = [f"step {self.steps}: " + " ".join(net.state_fluents(self.fluents))]
        if self.is_terminal():
            lines.append(f"terminal, returns {self.returns().tolist()}")
        return "\n".join(lines)


class _TooManyNodes(ValueError):
    """The belief sampler's node cap (a ValueError, as callers catch it)."""


class _ForwardFilter:
    """The belief sampler's forward pass over one player's key (module docstring): the
    structure, which :meth:`weigh` weights under a policy.

    Nodes are the distinct (propnet state, random's pending move[, the others'
    information states]) reached at each key length, numbered in the order found (a
    parent before its children); ``out[n]`` lists node ``n``'s steps that keep to the
    key, ``(child, history entry, chance probability)`` at a chance node and
    ``(child, joint move, None)`` at a joint move, whose weight :meth:`weigh` reads from
    the policy; ``queries[n]`` lists the ``(player, legal moves)`` whose probabilities
    it needs there (None at a chance node). Without ``support`` every legal move of
    the others is proposed, so one structure serves every policy; with ``support`` (a
    probability function) moves it gives no positive probability are left out, as a
    pass for that policy alone would (the fallback when the whole structure outgrows
    ``max_nodes``). ``by_others`` merges nodes by the others' information states too,
    which a policy needs (it reads them) and the uniform one does not.
    """

    def __init__(
        self,
        game: GdlGame,
        player: int,
        target: tuple,
        max_nodes: int,
        by_others: bool,
        support=None,
        extending: _ForwardFilter | None = None,
    ):
        self.game, self.player, self.target = game, player, target
        self.by_others, self.support, self.max_nodes = by_others, support, max_nodes
        self._arrays: _StepArrays | None = None
        # The pass as it stood before its last two key lengths were expanded (what a pass
        # for a longer key sharing this one does the same way): (nodes, expanded nodes,
        # the layers still to expand), or None when the pass stopped earlier.
        self.resume_point: tuple[int, int, dict[int, dict]] | None = None
        self.final: list[int] = []
        if extending is not None:
            self.final = self._run(*self._resumed(extending))
            return
        root = game.new_initial_state()
        self.states: list[GdlState] = [root]
        self.lengths: list[int] = [len(root.information_state_key(player))]  # key length
        self.queries: list[list[tuple[int, tuple[int, ...]]] | None] = [None]
        self.out: list[list[tuple[int, int | tuple[int, ...], float | None]]] = [[]]
        self.expanded: list[int] = []  # the nodes whose steps were proposed, in turn
        if root.information_state_key(player) == target[: self.lengths[0]]:
            layers: dict[int, dict] = defaultdict(dict)  # key length -> {signature: node}
            layers[self.lengths[0]][None] = 0
            self.final = self._run(self.lengths[0], layers)

    def can_extend_to(self, target: tuple) -> bool:
        """Whether a pass over ``target`` (same player and cap) may go on from this one's
        resume point: ``target`` is longer and has this key as its prefix."""
        return (
            self.resume_point is not None  # (never for a pass with its own support)
            and len(target) > len(self.target)
            and target[: len(self.target)] == self.target
        )

    def _resumed(self, parent: _ForwardFilter) -> tuple[int, dict[int, dict]]:
        """This pass's structure taken from ``parent``'s resume point: a pass over a longer
        key with ``parent``'s key as its prefix makes the same nodes and steps until then
        (the expansions before read the key's first ``len(parent.target)`` entries only),
        so it goes on from there under its own key. The nodes and steps expanded before are
        shared, never modified; the nodes still to expand get steps of their own."""
        assert parent.resume_point is not None and parent.can_extend_to(self.target)
        nodes, expanded, pending = parent.resume_point
        self.states = parent.states[:nodes]
        self.lengths = parent.lengths[:nodes]
        self.queries = parent.queries[:nodes]
        self.out = parent.out[:nodes]
        self.expanded = parent.expanded[:expanded]
        layers: dict[int, dict] = defaultdict(dict)
        for length, layer in pending.items():
            layers[length] = dict(layer)
            for node in layer.values():
                self.queries[node], self.out[node] = None, []
        return min(pending), layers

    def _run(self, start: int, layers: dict[int, dict]) -> list[int]:
        """Expands ``layers`` (key length -> {signature: node}) from length ``start`` on
        and returns the nodes at the key's length; records the resume point on the way."""
        resume_at = len(self.target) - 1
        for length in range(start, len(self.target) + 1):  # children have longer keys
            if length == resume_at and self.support is None:
                pending = {n: dict(layer) for n, layer in layers.items() if layer}
                if pending:
                    self.resume_point = (len(self.states), len(self.expanded), pending)
            layer = layers.pop(length, None)
            if not layer:
                continue
            if length == len(self.target):
                return list(layer.values())
            for node in layer.values():
                self.expanded.append(node)
                for entry, probability, child in self._children(node):
                    self._add(layers, node, entry, probability, child, length)
        return []

    def _children(self, node: int):
        """``(entry, chance probability or None, child)`` for the proposals that keep to
        the key; records the node's policy queries first."""
        game = self.game
        state = self.states[node]
        current = state.current_player()
        if current == CHANCE:
            for outcome, probability in state.chance_outcomes():
                child = state.clone()
                child.apply_action(outcome)
                yield outcome, probability, child
            return
        if current != SIMULTANEOUS:
            return
        # The key entry this joint move must produce (random's forced move, if any,
        # adds its entry first); it also names the player's own move.
        index = len(state.information_state_key(self.player))
        info = state.info()
        moves = [0] * len(game.propnet.roles)
        if game.random_role is not None:
            index += state.pending_random is None
            moves[game.random_role] = (
                state.pending_random
                if state.pending_random is not None
                else info.legal[game.random_role][0]
            )
        if index >= len(self.target) or self.target[index][0] is None:
            return
        expected = self.target[index]
        own_role = game.player_roles[self.player]
        own = expected[1][0] if game.propnet.has_sees else expected[0][own_role]
        queries: list[tuple[int, tuple[int, ...]]] = []
        self.queries[node] = queries
        joints: list[tuple[int, ...]] = [()]
        for q, role in enumerate(game.player_roles):
            legal = info.legal[role]
            if len(legal) <= 1:
                options = [-1]
            elif q == self.player:
                if own not in legal:
                    return
                options = [own]
            else:
                queries.append((q, tuple(legal)))
                options = list(legal)
                if self.support is not None:
                    weights = _move_weights(self.support(state, q), legal)
                    options = [a for a in legal if weights[a] > 0]
            joints = [joint + (a,) for joint in joints for a in options]
        # Most proposals contradict the player's percepts: test them on the (cached)
        # propnet transition before building a state.
        for joint in joints:
            for q, role in enumerate(game.player_roles):
                moves[role] = joint[q] if joint[q] >= 0 else info.legal[role][0]
            _, percepts = game.propnet.transition(state.fluents, tuple(moves))
            public, private = game.step_entries(tuple(moves), percepts)
            if (public, private[self.player]) != expected:
                continue
            child = state.clone()
            child.apply_actions(joint)
            yield joint, None, child

    def _add(self, layers, parent: int, entry, probability, child: GdlState, known: int):
        key = child.information_state_key(self.player)
        if len(key) > len(self.target) or key[known:] != self.target[known : len(key)]:
            return
        signature: tuple = (child.fluents, child.pending_random, child.cut)
        if self.by_others:
            signature += tuple(
                child.information_state_key(q)
                for q in range(self.game.info.num_players)
                if q != self.player
            )
        layer = layers[len(key)]
        node = layer.get(signature)
        if node is None:
            if len(self.states) >= self.max_nodes:
                raise _TooManyNodes(
                    f"{self.game.spec}: the belief sampler needs more than {self.max_nodes} "
                    f"distinct states to follow player {self.player}'s key "
                    f"({len(self.target)} steps); raise max_nodes"
                )
            node = layer[signature] = len(self.states)
            self.states.append(child)
            self.lengths.append(len(key))
            self.queries.append(None)
            self.out.append([])
        self.out[parent].append((node, entry, probability))

    def weigh(self, probabilities_of) -> _Posterior:
        """The forward weights under ``probabilities_of`` (``fn(state, player)``, None:
        uniform), as a pass for that policy alone computes them: the same nodes (those
        its positive steps reach), found in the same order, with the same sums, so draws
        from the same generator are the same.

        The policy is asked once per information state of another player (a policy
        reads only what its player knows, as the merged nodes assume), at the first node
        the pass meets it. Where every move it is asked about has positive probability,
        that pass is this structure, in this order: the weights are then gathered and
        summed in arrays. A zero (or NaN) turns to :meth:`_weigh_each`, which leaves such
        steps out node by node; the nodes asked until then are ones that pass reaches."""
        if self._arrays is None:
            self._arrays = _StepArrays(self)
        arrays = self._arrays
        values = list(arrays.constants)
        for node, q, legal in arrays.asks:
            probabilities = probabilities_of(self.states[node], q)
            for move in legal:  # _move_weights' values, without building its dict
                weight = (
                    1.0 / len(legal)
                    if probabilities is None
                    else float(probabilities.get(move, 0.0))
                )
                if not weight > 0:
                    return self._weigh_each(probabilities_of)
                values.append(weight)
        factors = np.asarray(values)[arrays.factors]
        weights = factors[:, 0]
        for column in range(1, factors.shape[1]):  # the others in turn, as a pass multiplies
            weights = weights * factors[:, column]
        alpha = np.zeros(len(self.states))
        alpha[0] = 1.0
        for start, stop in arrays.layers:  # np.add.at sums in order, as a pass does
            parents = arrays.parent[start:stop]
            np.add.at(alpha, arrays.child[start:stop], alpha[parents] * weights[start:stop])
        return _ArrayPosterior(self, list(self.final), alpha, weights)

    def _weigh_each(self, probabilities_of) -> _Posterior:
        """:meth:`weigh` step by step, leaving out the steps of a move of probability
        zero: the nodes they alone lead to are not reached, nor asked about."""
        answers: dict[tuple, dict[int, float]] = {}  # (q, q's key, legal) -> weights

        def ask(state: GdlState, q: int, legal: tuple[int, ...]) -> dict[int, float]:
            asked = (q, state.information_state_key(q), legal)
            if asked not in answers:
                answers[asked] = _move_weights(probabilities_of(state, q), legal)
            return answers[asked]

        count = len(self.states)
        alpha = [0.0] * count  # per node: its reach
        alpha[0] = 1.0
        # Per node: the steps into it, (parent, chance outcome or joint move, weight).
        edges: list[list[tuple[int, Any, float]]] = [[] for _ in range(count)]
        reached = [False] * count
        reached[0] = True
        layers: dict[int, list[int]] = defaultdict(list)  # key length -> nodes as found
        layers[self.lengths[0]].append(0)
        final: list[int] = []
        if self.final:
            for length in range(len(self.target) + 1):
                layer = layers.pop(length, None)
                if not layer:
                    continue
                if length == len(self.target):
                    final = layer
                    break
                for node in layer:
                    for child, entry, weight in self._weighted_steps(node, ask):
                        if not reached[child]:
                            reached[child] = True
                            layers[self.lengths[child]].append(child)
                        alpha[child] += alpha[node] * weight
                        edges[child].append((node, entry, weight))
        return _Posterior(self, final, alpha, edges)

    def _weighted_steps(self, node: int, ask):
        queries = self.queries[node]
        if queries is None:  # a chance node (or one without steps)
            return self.out[node]
        state = self.states[node]
        weights = [(q, ask(state, q, legal)) for q, legal in queries]
        steps = []
        for child, joint, _ in self.out[node]:
            weight = 1.0
            for q, by_move in weights:
                move_weight = by_move[cast(tuple, joint)[q]]  # a joint move's step
                if not move_weight > 0:
                    break
                weight *= move_weight
            else:
                steps.append((child, joint, weight))
        return steps


def _move_weights(probabilities, legal) -> dict[int, float]:
    """``{move: weight}`` over ``legal`` from a policy's probabilities (None: uniform)."""
    if probabilities is None:
        return {a: 1.0 / len(legal) for a in legal}
    return {a: float(probabilities.get(a, 0.0)) for a in legal}


class _StepArrays:
    """A forward pass's steps as arrays, in the order the pass proposed them: per step its
    parent, child and the indices of its factors in the values :meth:`_ForwardFilter.weigh`
    gathers (``constants``: 1 and the chance probabilities, then the policy's answers to
    ``asks`` in turn, one per legal move), padded with 1;
    ``layers``: the steps out of each key length's nodes; ``into``: per node the steps
    into it, in order (``into_start`` bounds them)."""

    def __init__(self, forward: _ForwardFilter):
        steps = [(node, step) for node in forward.expanded for step in forward.out[node]]
        width = max([1] + [len(q) for q in forward.queries if q is not None])
        self.constants: list[float] = [1.0]
        # One question per information state of another player (and its legal moves), at
        # its first node: (node, player, legal moves).
        self.asks: list[tuple[int, int, tuple[int, ...]]] = []
        first_value: dict[tuple, int] = {}  # (q, q's key, legal) -> its first value
        offsets: dict[tuple[int, int], int] = {}  # (node, query) -> its first value
        position = 1 + sum(1 for node, (_, _, p) in steps if p is not None)
        for node in forward.expanded:
            for index, (q, legal) in enumerate(forward.queries[node] or ()):
                asked = (q, forward.states[node].information_state_key(q), legal)
                if asked not in first_value:
                    first_value[asked] = position
                    self.asks.append((node, q, legal))
                    position += len(legal)
                offsets[node, index] = first_value[asked]
        self.factors = np.zeros((len(steps), width), dtype=np.int64)
        for row, (node, (_, entry, probability)) in enumerate(steps):
            if probability is not None:  # a chance step
                self.factors[row, 0] = len(self.constants)
                self.constants.append(probability)
                continue
            for index, (q, legal) in enumerate(forward.queries[node] or ()):
                move = cast(tuple, entry)[q]  # a joint move's step
                self.factors[row, index] = offsets[node, index] + legal.index(move)
        self.parent = np.array([node for node, _ in steps], dtype=np.int64)
        self.child = np.array([child for _, (child, _, _) in steps], dtype=np.int64)
        self.entries = [entry for _, (_, entry, _) in steps]
        lengths = np.array([forward.lengths[n] for n in self.parent], dtype=np.int64)
        bounds = np.flatnonzero(np.diff(lengths)) + 1
        edges = [0, *bounds.tolist(), len(steps)]
        self.layers = [(a, b) for a, b in zip(edges[:-1], edges[1:]) if b > a]
        self.into = np.argsort(self.child, kind="stable")
        self.into_start = np.searchsorted(
            self.child[self.into], np.arange(len(forward.states) + 1)
        ).tolist()


class _Posterior:
    """A forward pass weighted under one policy: draws histories backwards from it."""

    def __init__(self, forward: _ForwardFilter, final: list[int], alpha, edges):
        self.forward, self.final, self.alpha, self.edges = forward, final, alpha, edges
        self._final_weights: Any = None  # the final nodes' reach, once for all draws

    def steps_into(self, node: int) -> list[tuple[int, Any, float]]:
        """``(parent, history entry, weight)`` of the weighted steps into ``node``."""
        return self.edges[node]

    def final_weights(self) -> Any:
        if self._final_weights is None:
            self._final_weights = [self.alpha[n] for n in self.final]
        return self._final_weights

    def draw(self, rng: np.random.Generator) -> tuple:
        forward = self.forward
        game, player = forward.game, forward.player
        if not forward.final:
            raise ValueError(
                f"{game.spec}: no history is consistent with player {player}'s "
                f"information-state key {forward.target!r}"
            )
        weights = self.final_weights()
        if not len(weights) or float(np.sum(weights)) <= 0.0:
            raise ValueError(
                f"{game.spec}: the policy gives zero reach to every history consistent with "
                f"player {player}'s key"
            )
        node = _pick(self.final, weights, rng)
        reversed_history = []
        while edges := self.steps_into(node):
            parent, entry, _ = _pick(edges, [self.alpha[p] * w for p, _, w in edges], rng)
            reversed_history.append(entry)
            node = parent
        return tuple(reversed(reversed_history))


class _ArrayPosterior(_Posterior):
    """:class:`_Posterior` of :meth:`_ForwardFilter.weigh`'s arrays: every step weighted."""

    def __init__(self, forward: _ForwardFilter, final: list[int], alpha, weights):
        super().__init__(forward, final, alpha, {})  # edges: the nodes' steps, as drawn
        self.weights = weights

    def steps_into(self, node: int) -> list[tuple[int, Any, float]]:
        if node not in self.edges:
            arrays = self.forward._arrays
            assert arrays is not None
            steps = arrays.into[arrays.into_start[node] : arrays.into_start[node + 1]]
            self.edges[node] = [
                (int(arrays.parent[i]), arrays.entries[i], float(self.weights[i])) for i in steps
            ]
        return self.edges[node]

    def final_weights(self) -> Any:
        if self._final_weights is None:
            self._final_weights = self.alpha[np.asarray(self.final, dtype=np.int64)]
        return self._final_weights


def _pick(items: list, weights: list[float], rng: np.random.Generator):
    cumulative = np.cumsum(weights)
    index = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], "right"))
    return items[min(index, len(items) - 1)]
