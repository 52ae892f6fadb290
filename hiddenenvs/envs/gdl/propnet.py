"""Propositional network of a ground GDL-II program, simplified and compiled.

Build (``Propnet.from_file(path)`` / ``Propnet.from_sheet(sheet)``):

1. parse, validate (:mod:`.validate`) and ground (:mod:`.ground`) the rules;
2. propositions: *base* ``(true f)``, *input* ``(does r m)``, *view* (every other derived
   atom) and the outputs ``legal``, ``goal``, ``terminal``, ``next``, ``sees`` (``init`` is
   evaluated once, it depends on neither state nor move);
3. components: every view/output proposition is an OR over its ground rules, each an AND
   of literals (NOT for negated atoms); a transition links ``(next f)`` to ``(true f)``;
4. simplification: constant folding in dependency order (facts are TRUE, atoms without
   rules FALSE, static relations such as ``succ`` or ``plus`` vanish, recursive static
   components get their least fixpoint), then every proposition that cannot influence
   legal/goal/terminal/next/sees is dropped;
5. strongly connected components of what is left, in dependency order: positive recursion
   through the state (e.g. reachability) becomes a *loop block* that the evaluator
   iterates to its least fixpoint. Gates that depend on ``does`` form phase B.

``percept_conditions[role][i]`` keeps the folded condition of each percept (an OR of
ANDs of literals, or a constant), so a game can tell which percepts every role gets
under the same condition.

Evaluation is compiled (``_propnet.pyx``) over packed bit-vector states (``bytes``, bit
``i`` = base proposition ``i``). :class:`Propnet` adds LRU caches for state evaluations
and transitions with hit statistics (``cache_info()``), on by default.

Shared compiled sheets. :meth:`Propnet.shared` compiles a sheet once per process and hands
each caller its own :meth:`~Propnet.instance`: the parsed sheet, the ground program's
layout and every name table are shared (never modified after the build), while the node
values the evaluator writes, the LRU caches and their statistics belong to the instance.
Compiled sheets are kept in a bounded LRU (:data:`SHEET_CACHE_SIZE`) keyed by the file's
path, a digest of its bytes and the grounding limit, so an edited file is compiled again;
building is locked per key, so threads asking for the same sheet at once compile it once.
:meth:`~Propnet.derived` memoises facts computed from the network (a game's reachable-state
search) on the shared build.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import threading
import time
from collections import OrderedDict, defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hiddenenvs.envs.gdl._propnet import CompiledPropnet
from hiddenenvs.envs.gdl.ground import (
    DEFAULT_MAX_INSTANCES,
    DOES_KEY,
    INIT_KEY,
    LEGAL_KEY,
    NEXT_KEY,
    TRUE_KEY,
    arguments_of,
    constant_key,
    ground,
    relation_of,
)
from hiddenenvs.envs.gdl.parser import (
    MAX_SHEET_BYTES,
    STRUCTURES,
    Compound,
    Const,
    GdlGroundingLimitError,
    GdlPlayError,
    GdlRuleError,
    Location,
    RuleSheet,
    Var,
    abbreviated,
    goal_value,
    intern_structure,
    parse_file,
    parse_text,
)
from hiddenenvs.envs.gdl.validate import NormalRule, strongly_connected_components, validate
from hiddenenvs.files import read_regular_file

GOAL_KEY = constant_key("goal")
SEES_KEY = constant_key("sees")
TERMINAL_KEY = constant_key("terminal")
ROLE_KEY = constant_key("role")
OUTPUT_KEYS = (LEGAL_KEY, GOAL_KEY, TERMINAL_KEY, NEXT_KEY, SEES_KEY)
SHEET_CACHE_SIZE = 16  # compiled sheets kept per process (Propnet.shared)


class TermPrinter:
    """Ground term keys -> KIF text with the spelling used in the rule sheet."""

    def __init__(self, sheet: RuleSheet):
        self.spelling: dict[int, str] = {}
        stack: list = []
        for rule in sheet.rules:
            stack.append(rule.head)
            stack.extend(rule.body)
            while stack:
                item = stack.pop()
                if isinstance(item, Compound):
                    self.spelling.setdefault(item.functor.key, item.functor.text)
                    stack.extend(item.args)
                elif isinstance(item, (Const, Var)):
                    self.spelling.setdefault(item.key, item.text)
                else:  # Not / Or / Distinct
                    stack.extend(getattr(item, "literals", ()))
                    for name in ("literal", "left", "right"):
                        if hasattr(item, name):
                            stack.append(getattr(item, name))

    def __call__(self, key: int, spaced: bool = False) -> str:
        """``(cell 1 1 x)``; with ``spaced`` ggp-base's ``( cell 1 1 x )``."""
        out: list[str] = []
        stack: list = [key]
        open_paren, close_paren = ("( ", " )") if spaced else ("(", ")")
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                out.append(item)
                continue
            structure = STRUCTURES[item]
            if structure[0] == "c":
                out.append(self.spelling.get(item, structure[1]))
                continue
            functor, arguments = structure
            stack.append(close_paren)
            for argument in reversed(arguments):
                stack.append(argument)
                stack.append(" ")
            out.append(open_paren + self.spelling.get(functor, STRUCTURES[functor][1]))
        return "".join(out)


@dataclass(frozen=True)
class StateInfo:
    terminal: bool
    legal: tuple  # per role: move indices into Propnet.moves[role]
    goals: tuple  # per role: tuple of goal values that hold


class Propnet:
    """A compiled, simplified propnet with LRU caches (see the module docstring).

    Loading budgets (all refused with a one-line :class:`~.parser.GdlError` naming the
    file): ``max_sheet_bytes`` (:meth:`from_file`, :meth:`shared`; the sheet's size, checked
    before reading, with at most :data:`~.parser.MAX_SENTENCES` rules and facts),
    ``max_instances`` (ground rule instances, :mod:`.ground`) and ``max_seconds`` (wall-clock
    seconds for validating, grounding and building, checked every 1,024 instances or atoms
    and between stages; ``None``: no time budget). A caller with a clock, such as the GGP
    player's START, passes what is left of it as ``max_seconds``.
    """

    def __init__(
        self,
        sheet: RuleSheet,
        max_instances: int = DEFAULT_MAX_INSTANCES,
        cache_size: int = 100_000,
        max_seconds: float | None = None,
    ):
        self.sheet = sheet
        self.filename = sheet.filename
        self.printer = TermPrinter(sheet)
        deadline = None if max_seconds is None else time.monotonic() + max_seconds
        rules = validate(sheet)
        program = ground(rules, max_instances, deadline)
        if deadline is not None and time.monotonic() > deadline:
            raise GdlGroundingLimitError(
                Location(self.filename, 1, 1),
                f"loading the sheet exceeds its time budget of "
                f"{max_seconds:g} s (after grounding); give it more time "
                f"or a smaller sheet",
            )
        self._build(program)
        self._derived: dict = {}
        self._derived_lock = threading.Lock()
        self.cache_size = cache_size

    @classmethod
    def from_file(cls, path, max_sheet_bytes: int = MAX_SHEET_BYTES, **options) -> Propnet:
        return cls(parse_file(Path(path), max_bytes=max_sheet_bytes), **options)

    @classmethod
    def shared(
        cls,
        path,
        max_instances: int = DEFAULT_MAX_INSTANCES,
        max_sheet_bytes: int = MAX_SHEET_BYTES,
        max_seconds: float | None = None,
    ) -> Propnet:
        """An :meth:`instance` of the sheet at ``path``, compiled once per process (module
        docstring; budgets as in the class docstring: a sheet already compiled is handed out
        without spending ``max_seconds``); errors are those of :meth:`from_file`, and a failed
        build is not kept."""
        sheet_path = Path(path)
        options = {"max_instances": max_instances, "max_seconds": max_seconds}
        try:
            data = read_regular_file(sheet_path, max_sheet_bytes)
        except OSError:  # from_file refuses it with the reason, naming the file
            return cls.from_file(sheet_path, max_sheet_bytes=max_sheet_bytes, **options)
        key = (str(sheet_path), hashlib.sha256(data).hexdigest(), max_instances, max_sheet_bytes)
        return _SHEETS.get(
            key, lambda: cls._from_bytes(sheet_path, data, max_sheet_bytes, options)
        ).instance()

    @classmethod
    def _from_bytes(cls, path: Path, data: bytes, max_sheet_bytes: int, options: dict) -> Propnet:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:  # from_file refuses it with the reason, naming the file
            return cls.from_file(path, max_sheet_bytes=max_sheet_bytes, **options)
        return cls(parse_text(text, filename=str(path), max_bytes=max_sheet_bytes), **options)

    def instance(self) -> Propnet:
        """This network with its own evaluation buffers and empty caches, sharing the
        compiled layout, the name tables and :meth:`derived` results (module docstring)."""
        other = copy.copy(self)
        other.compiled = self.compiled.copy()
        other.cache_size = self.cache_size
        return other

    def derived(self, key, compute):
        """``compute()`` once per ``key`` for every instance of this compiled sheet (the
        result is shared: never modify it)."""
        with self._derived_lock:
            if key not in self._derived:
                self._derived[key] = compute()
            return self._derived[key]

    # ------------------------------------------------------------------ build
    def _build(self, program) -> None:
        origin = Location(self.filename, 1, 1)
        role_keys = [
            r.head.args[0].key for r in self.sheet.rules if not r.body and r.head.relation == "role"
        ]
        role_index = {key: i for i, key in enumerate(role_keys)}
        self.role_keys = role_keys
        self.roles = [self.printer(key) for key in role_keys]
        relevant = program.relevant

        rules_by_head: dict[int, list[tuple]] = defaultdict(list)
        source_by_head: dict[int, NormalRule] = {}
        for (head, positives, negatives), source in zip(program.rules, program.sources):
            rules_by_head[head].append((positives, negatives))
            source_by_head.setdefault(head, source)
        self._source_by_head = source_by_head

        base = sorted(
            (k for k in relevant if relation_of(k) == TRUE_KEY), key=lambda k: self.printer(k)
        )
        base_fluents = [arguments_of(k)[0] for k in base]
        moves: list[list[int]] = [[] for _ in role_keys]
        for key in relevant:
            if relation_of(key) == LEGAL_KEY:
                role, move = arguments_of(key)
                if role not in role_index:
                    raise GdlRuleError(
                        source_by_head[key].source.loc,
                        f"legal move for an undeclared role: "
                        f"{self.printer(key)} in {source_by_head[key].where()}",
                    )
                moves[role_index[role]].append(move)
        for role_moves in moves:
            role_moves.sort(key=lambda k: self.printer(k))
        self.base = base_fluents
        self.moves = moves
        self.move_names = [[self.printer(m) for m in role_moves] for role_moves in moves]

        # Constant folding in dependency order over every atom.
        does_keys = {k for k in relevant if relation_of(k) == DOES_KEY}
        variable = set(base) | does_keys
        constant: dict[int, bool] = {}
        simplified: dict[int, list[tuple]] = {}

        def literal_value(atom):
            if atom in variable:
                return None
            return constant.get(atom, False) if atom not in simplified else None

        atoms = list(rules_by_head)
        components = strongly_connected_components(
            atoms,
            lambda a: [
                b for pos, neg in rules_by_head.get(a, ()) for b in pos + neg if b in rules_by_head
            ],
        )
        for component in components:
            members = set(component)
            recursive = len(component) > 1 or any(
                component[0] in pos for pos, _ in rules_by_head[component[0]]
            )
            internal_only = True
            for head in component:
                conjunctions = []
                for positives, negatives in rules_by_head[head]:
                    literals = []
                    dead = False
                    for atom in positives:
                        if recursive and atom in members:
                            literals.append((atom, False))
                            continue
                        value = literal_value(atom)
                        if value is None:
                            literals.append((atom, False))
                            internal_only = False
                        elif not value:
                            dead = True
                            break
                    if dead:
                        continue
                    for atom in negatives:
                        value = literal_value(atom)
                        if value is None:
                            literals.append((atom, True))
                            internal_only = False
                        elif value:
                            dead = True
                            break
                    if not dead:
                        conjunctions.append(tuple(literals))
                simplified[head] = conjunctions
            if recursive:
                if internal_only:
                    self._fold_component(component, simplified, constant)
            else:
                head = component[0]
                conjunctions = simplified[head]
                if not conjunctions or () in conjunctions:
                    constant[head] = bool(conjunctions)
                    del simplified[head]

        # Outputs.
        def value_of(atom):
            if atom in variable:
                return atom
            if atom in simplified:
                return atom
            return constant.get(atom, False)

        initial = {
            arguments_of(k)[0]
            for k in relevant
            if relation_of(k) == INIT_KEY and constant.get(k, False)
        }
        self.initial_fluents = initial
        goals: list[list[tuple[int, int]]] = [[] for _ in role_keys]
        sees: list[list[int]] = [[] for _ in role_keys]
        for key in relevant:
            relation = relation_of(key)
            if relation == GOAL_KEY:
                role, value = arguments_of(key)
                text = self.printer(value)
                goal = goal_value(text)
                if goal is None:
                    source = source_by_head.get(key)
                    raise GdlRuleError(
                        source.source.loc if source else origin,
                        f"goal value {abbreviated(text)} of {abbreviated(self.printer(key))} "
                        f"is not an "
                        f"integer between 0 and 100"
                        + (f" (from {source.where()})" if source else ""),
                    )
                if role in role_index:
                    goals[role_index[role]].append((key, goal))
            elif relation == SEES_KEY:
                role, percept = arguments_of(key)
                if role in role_index:
                    sees[role_index[role]].append(percept)
        for role_sees in sees:
            role_sees.sort(key=lambda k: self.printer(k))
        for role_goals in goals:
            role_goals.sort(key=lambda item: item[1])
        self.percepts = sees
        self.percept_names = [[self.printer(p) for p in role_sees] for role_sees in sees]
        self.has_sees = any(relation_of(k) == SEES_KEY for k in relevant)

        def intern_atom(relation, *arguments):
            return intern_structure((relation, tuple(arguments)))

        # The condition of each (sees role percept) after constant folding: its OR of
        # ANDs of literals, or its constant value. Two roles whose percept has the same
        # condition get it in exactly the same (state, joint move)s (the game's public
        # percepts, see hiddenenvs.envs.gdl.game).
        def condition(atom):
            if atom in simplified:
                return frozenset(frozenset(conj) for conj in simplified[atom])
            return constant.get(atom, False)

        self.percept_conditions = [
            [condition(intern_atom(SEES_KEY, role_keys[r], p)) for p in sees[r]]
            for r in range(len(role_keys))
        ]

        outputs = {
            "legal": [
                [intern_atom(LEGAL_KEY, role_keys[r], m) for m in moves[r]]
                for r in range(len(role_keys))
            ],
            "goal": goals,
            "terminal": TERMINAL_KEY,
            "next": [intern_atom(NEXT_KEY, f) for f in base_fluents],
            "sees": [
                [intern_atom(SEES_KEY, role_keys[r], p) for p in sees[r]]
                for r in range(len(role_keys))
            ],
        }
        self._layout(outputs, base, moves, role_keys, simplified, constant, variable, components)

    @staticmethod
    def _fold_component(component, simplified, constant) -> None:
        """Least fixpoint of a component whose remaining literals are all internal."""
        holds = set()
        changed = True
        while changed:
            changed = False
            for head in component:
                if head in holds:
                    continue
                if any(all(atom in holds for atom, _negated in conj) for conj in simplified[head]):
                    holds.add(head)
                    changed = True
        for head in component:
            constant[head] = head in holds
            del simplified[head]

    def _layout(
        self, outputs, base, moves, role_keys, simplified, constant, variable, components
    ) -> None:
        # Which gates matter: backwards from the outputs.
        roots = []
        for role_atoms in outputs["legal"]:
            roots += role_atoms
        for role_goals in outputs["goal"]:
            roots += [atom for atom, _ in role_goals]
        roots.append(outputs["terminal"])
        roots += outputs["next"]
        for role_atoms in outputs["sees"]:
            roots += role_atoms
        needed = set()
        stack = [a for a in roots if a in simplified]
        while stack:
            atom = stack.pop()
            if atom in needed:
                continue
            needed.add(atom)
            for conj in simplified[atom]:
                stack.extend(a for a, _ in conj if a in simplified and a not in needed)

        # Node numbering: 0 FALSE, 1 TRUE, base, inputs, gates.
        node_of: dict[int, int] = {}
        for i, key in enumerate(base):
            node_of[key] = 2 + i
        input_nodes = []
        next_free = 2 + len(base)
        for r, role_moves in enumerate(moves):
            for move in role_moves:
                key = intern_structure((DOES_KEY, (role_keys[r], move)))
                node_of[key] = next_free
                input_nodes.append(next_free)
                next_free += 1
        depends_on_move: dict[int, bool] = {}
        ordered = [c for c in components if c[0] in needed]
        for component in ordered:
            for atom in component:
                node_of[atom] = next_free
                next_free += 1

        def node(atom) -> int:
            if atom in node_of:
                return node_of[atom]
            if atom in variable:  # a does/true atom no role can ever make true
                return 0
            return 1 if constant.get(atom, False) else 0

        gate_node: list[int] = []
        gate_conj_start: list[int] = []
        conj_lit_start: list[int] = []
        lits: list[int] = []
        # Per phase (move-dependent or not): [start, end, recursive] blocks of gates, and the
        # components with whether each is recursive.
        phase_blocks: dict[bool, list[list[int]]] = {False: [], True: []}
        phase_gates: dict[bool, list[tuple[list[int], bool]]] = {False: [], True: []}
        for component in ordered:
            move_dependent = any(
                (a in node_of and relation_of(a) == DOES_KEY) or depends_on_move.get(a, False)
                for atom in component
                for conj in simplified[atom]
                for a, _ in conj
            )
            for atom in component:
                depends_on_move[atom] = move_dependent
            recursive = len(component) > 1 or any(
                a == component[0] for conj in simplified[component[0]] for a, _ in conj
            )
            phase_gates[move_dependent].append((component, recursive))
        for phase in (False, True):
            for component, recursive in phase_gates[phase]:
                start = len(gate_node)
                for atom in component:
                    gate_node.append(node_of[atom])
                    gate_conj_start.append(len(conj_lit_start))
                    for conj in simplified[atom]:
                        conj_lit_start.append(len(lits))
                        lits.extend(2 * node(a) + int(negated) for a, negated in conj)
                blocks = phase_blocks[phase]
                if not recursive and blocks and blocks[-1][2] == 0:
                    blocks[-1][1] = len(gate_node)
                else:
                    blocks.append([start, len(gate_node), int(recursive)])
        gate_conj_start.append(len(conj_lit_start))
        conj_lit_start.append(len(lits))

        legal_start, legal_nodes = [0], []
        for role_atoms in outputs["legal"]:
            legal_nodes += [node(a) for a in role_atoms]
            legal_start.append(len(legal_nodes))
        goal_start, goal_nodes, goal_values = [0], [], []
        for role_goals in outputs["goal"]:
            goal_nodes += [node(a) for a, _ in role_goals]
            goal_values += [v for _, v in role_goals]
            goal_start.append(len(goal_nodes))
        sees_start, sees_nodes = [0], []
        for role_atoms in outputs["sees"]:
            sees_nodes += [node(a) for a in role_atoms]
            sees_start.append(len(sees_nodes))
        layout = {
            "num_nodes": next_free,
            "num_base": len(base),
            "num_roles": len(role_keys),
            "a_blocks": [x for block in phase_blocks[False] for x in block],
            "b_blocks": [x for block in phase_blocks[True] for x in block],
            "gate_node": gate_node,
            "gate_conj_start": gate_conj_start,
            "conj_lit_start": conj_lit_start,
            "lits": lits,
            "legal_start": legal_start,
            "legal_nodes": legal_nodes,
            "input_nodes": input_nodes,
            "goal_start": goal_start,
            "goal_nodes": goal_nodes,
            "goal_values": goal_values,
            "next_nodes": [node(a) for a in outputs["next"]],
            "sees_start": sees_start,
            "sees_nodes": sees_nodes,
            "terminal_node": node(outputs["terminal"]),
        }
        self.num_gates = len(gate_node)
        self.num_literals = len(lits)
        self.compiled = CompiledPropnet(layout)
        base_index = {f: i for i, f in enumerate(self.base)}
        bits = np.zeros((len(base) + 7) // 8 or 0, dtype=np.uint8)
        for fluent in self.initial_fluents:
            i = base_index[fluent]
            bits[i >> 3] |= 1 << (i & 7)
        self.initial_state = bits.tobytes()

    # ------------------------------------------------------------------ queries
    @property
    def cache_size(self) -> int:
        return self._cache_size

    @cache_size.setter
    def cache_size(self, size: int) -> None:
        """Entries per LRU cache (0: none); setting it empties the caches and statistics."""
        self._cache_size = size
        self._evaluate = functools.lru_cache(maxsize=size)(self._evaluate_uncached)
        self._transition = functools.lru_cache(maxsize=size)(self.compiled.transition)

    def _evaluate_uncached(self, state: bytes) -> StateInfo:
        return StateInfo(*self.compiled.evaluate_state(state))

    def evaluate(self, state: bytes) -> StateInfo:
        """Terminal flag, legal move indices and goal values of ``state`` (cached)."""
        return self._evaluate(state)

    def transition(self, state: bytes, joint: tuple) -> tuple[bytes, tuple]:
        """(next state, percept indices per role) after ``joint`` (move index per role)."""
        return self._transition(state, joint)

    def check_playable(self, state: bytes, info: StateInfo) -> None:
        """GdlPlayError when a role has no legal move in the non-terminal ``state``."""
        if info.terminal:
            return
        for role, legal in enumerate(info.legal):
            if not legal:
                raise GdlPlayError(
                    self.rule_location("legal", role),
                    f"role {self.roles[role]} has no legal move in a reached non-terminal "
                    f"state (no legal rule for it holds, the first is here): "
                    f"{{{' '.join(self.state_fluents(state))}}}",
                )

    def rule_location(self, relation: str, role: int) -> Location:
        """Where the first ``relation`` rule that can concern ``role`` starts (for errors)."""
        wanted = self.sheet.roles()[role]
        for rule in self.sheet.rules:
            head = rule.head
            if (
                head.relation == relation
                and head.args
                and (head.args[0] == wanted or head.args[0].is_variable)
            ):
                return rule.loc
        return Location(self.filename, 1, 1)

    def cache_info(self) -> dict:
        """Hits, misses and hit rate of the state and the transition caches."""
        info = {}
        for kind, cached in (("state", self._evaluate), ("transition", self._transition)):
            statistics = cached.cache_info()
            total = statistics.hits + statistics.misses
            info[kind] = {
                "hits": statistics.hits,
                "misses": statistics.misses,
                "hit_rate": statistics.hits / total if total else 0.0,
            }
        return info

    def clear_cache(self) -> None:
        self._evaluate.cache_clear()
        self._transition.cache_clear()

    def depth_charge(self, state: bytes, seed: int, max_steps: int = 10_000):
        """Compiled random playout: (final state, transitions made, status)."""
        return self.compiled.depth_charge(state, seed, max_steps)

    # ------------------------------------------------------------------ text
    def state_fluents(self, state: bytes, spaced: bool = False) -> list[str]:
        bits = np.unpackbits(np.frombuffer(state, dtype=np.uint8), bitorder="little")
        return sorted(
            self.printer(self.base[i], spaced) for i in np.flatnonzero(bits) if i < len(self.base)
        )

    def state_bits(self, state: bytes) -> np.ndarray:
        bits = np.unpackbits(np.frombuffer(state, dtype=np.uint8), bitorder="little")
        return bits[: len(self.base)]

    def move_index(self, role: int, text: str) -> int:
        """Index of the move spelled ``text`` (KIF, any spacing and case) for ``role``."""
        wanted = " ".join(text.replace("(", " ( ").replace(")", " ) ").split()).lower()
        for index, move in enumerate(self.moves[role]):
            if self.printer(move, spaced=True).lower() == wanted:
                return index
        raise GdlPlayError(
            self.rule_location("legal", role),
            f"{text!r} is not a move role {self.roles[role]} can ever make",
        )


class _SheetCache:
    """A bounded, thread-safe LRU of compiled sheets; one build per key at a time."""

    def __init__(self, size: int):
        self.size = size
        self.entries: OrderedDict = OrderedDict()
        self.lock = threading.Lock()
        self.building: dict = {}  # key -> lock held while that key builds

    def get(self, key, build):
        with self.lock:
            if key in self.entries:
                self.entries.move_to_end(key)
                return self.entries[key]
            key_lock = self.building.setdefault(key, threading.Lock())
        with key_lock:
            with self.lock:
                if key in self.entries:  # built by another thread meanwhile
                    return self.entries[key]
            try:
                value = build()
            except BaseException:
                with self.lock:
                    self.building.pop(key, None)
                raise
            with self.lock:
                self.entries[key] = value
                while len(self.entries) > self.size:
                    self.entries.popitem(last=False)
                self.building.pop(key, None)
            return value

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()

    def discard(self, path: str) -> None:
        with self.lock:
            for key in [key for key in self.entries if key[0] == path]:
                del self.entries[key]


_SHEETS = _SheetCache(SHEET_CACHE_SIZE)


def forget_sheet(path) -> None:
    """Drop the sheet at ``path`` from the compiled-sheet cache of :meth:`Propnet.shared`
    (the GGP player at a match's end: its memory is freed once no game holds it)."""
    _SHEETS.discard(str(Path(path)))
