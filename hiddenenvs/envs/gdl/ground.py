"""Instantiation (grounding) of validated GDL rules by relevance analysis.

1. Relaxed fixpoint. Drop every negated literal (which can only make more atoms
   derivable), let ``(true f)`` hold for every ``f`` some ``init`` or ``next`` rule can
   produce and ``(does r m)`` for every ``(legal r m)`` that can be derived, and compute the
   least model by semi-naive evaluation. Its atoms over-approximate every atom that can
   hold in any reachable state under any joint move: the *relevant* atoms.
2. Instantiation. Each rule is instantiated over the relevant atoms only (joins on the
   positive body atoms, ``distinct`` checked as soon as both sides are bound). A negated
   atom that is not relevant can never hold: the literal is dropped as true.

The result, :class:`GroundProgram`, lists ground rules as ``(head, positives, negatives)``
over integer atom keys (hash-consed, see :mod:`~hiddenenvs.envs.gdl.parser`).

A size limit (``max_instances``, ground rule instances plus relevant atoms) keeps a sheet
whose grounding explodes from eating the memory: the error names the rule that produced
the most instances. Ground terms are hash-consed integers; matching is structural.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from hiddenenvs.envs.gdl.parser import (
    STRUCTURES,
    Const,
    GdlGroundingLimitError,
    GdlRecursionError,
    Term,
    Var,
    intern_structure,
)
from hiddenenvs.envs.gdl.validate import NormalRule

DEFAULT_MAX_INSTANCES = 300_000


def constant_key(name: str) -> int:
    return intern_structure(("c", name.lower()))


TRUE_KEY = constant_key("true")
DOES_KEY = constant_key("does")
LEGAL_KEY = constant_key("legal")
NEXT_KEY = constant_key("next")
INIT_KEY = constant_key("init")


def atom_key(relation_key: int, *args: int) -> int:
    return intern_structure((relation_key, tuple(args)))


def relation_of(key: int) -> int:
    """The relation (constant key) of a ground atom key."""
    structure = STRUCTURES[key]
    return key if structure[0] == "c" else structure[0]


def arguments_of(key: int) -> tuple:
    structure = STRUCTURES[key]
    return () if structure[0] == "c" else structure[1]


# ----------------------------------------------------------------------------- patterns
# A compiled pattern is an int >= 0 (a ground term key), an int < 0 (variable number
# -pattern - 1) or a tuple (functor key, argument patterns) for a non-ground compound.


class _Compiler:
    def __init__(self):
        self.variables: dict[int, int] = {}

    def compile(self, term: Term):
        if isinstance(term, Var):
            return -self.variables.setdefault(term.key, len(self.variables)) - 1
        if isinstance(term, Const) or not term.has_variables:
            return term.key
        return (term.functor.key, tuple(self.compile(arg) for arg in term.args))


def _match(pattern, key: int, binding: list, trail: list) -> bool:
    if type(pattern) is int:
        if pattern >= 0:
            return pattern == key
        index = -pattern - 1
        bound = binding[index]
        if bound is None:
            binding[index] = key
            trail.append(index)
            return True
        return bound == key
    structure = STRUCTURES[key]
    arguments = structure[1]
    if structure[0] != pattern[0] or len(arguments) != len(pattern[1]):
        return False
    for sub_pattern, sub_key in zip(pattern[1], arguments):
        if not _match(sub_pattern, sub_key, binding, trail):
            return False
    return True


def _build(pattern, binding: list) -> int:
    if type(pattern) is int:
        return pattern if pattern >= 0 else binding[-pattern - 1]
    return intern_structure((pattern[0], tuple(_build(p, binding) for p in pattern[1])))


def _pattern_variables(pattern, out: set) -> set:
    if type(pattern) is int:
        if pattern < 0:
            out.add(-pattern - 1)
    else:
        for sub in pattern[1]:
            _pattern_variables(sub, out)
    return out


@dataclass
class _Atom:
    relation: int
    arguments: tuple  # compiled patterns
    variables: set


@dataclass
class _CompiledRule:
    source: NormalRule
    head: _Atom
    positives: list
    negatives: list
    distincts: list  # (left pattern, right pattern, variables)
    equals: list
    num_variables: int
    instances: int = 0


def _compile_atom(term: Term, compiler: _Compiler) -> _Atom:
    if isinstance(term, Const):
        return _Atom(term.key, (), set())
    arguments = tuple(compiler.compile(arg) for arg in term.args)
    variables: set = set()
    for argument in arguments:
        _pattern_variables(argument, variables)
    return _Atom(term.functor.key, arguments, variables)


def _compile_rule(rule: NormalRule) -> _CompiledRule:
    compiler = _Compiler()
    positives = [_compile_atom(atom, compiler) for atom in rule.positives]
    head = _compile_atom(rule.head, compiler)
    negatives = [_compile_atom(atom, compiler) for atom in rule.negatives]

    def pair(left, right):
        left_pattern, right_pattern = compiler.compile(left), compiler.compile(right)
        variables = _pattern_variables(left_pattern, set()) | _pattern_variables(right_pattern,
                                                                                  set())
        return left_pattern, right_pattern, variables

    distincts = [pair(left, right) for left, right, _ in rule.distincts]
    equals = [pair(left, right) for left, right, _ in rule.equals]
    return _CompiledRule(rule, head, positives, negatives, distincts, equals,
                         len(compiler.variables))


# ----------------------------------------------------------------------------- relation store


class _Store:
    """Relevant atoms by relation, with lazily built argument indexes."""

    def __init__(self):
        self.atoms: dict[int, list[int]] = defaultdict(list)
        self.known: set[int] = set()
        self.indexes: dict[tuple[int, int], dict[int, list[int]]] = {}
        self.indexes_by_relation: dict[int, list] = defaultdict(list)

    def add(self, key: int) -> bool:
        if key in self.known:
            return False
        self.known.add(key)
        relation = relation_of(key)
        self.atoms[relation].append(key)
        for path, index in self.indexes_by_relation.get(relation, ()):
            value = _at_path(key, path)
            if value is not None:
                index.setdefault(value, []).append(key)
        return True

    def candidates(self, relation: int, position: int | None, value: int | None) -> list[int]:
        if position is None:
            return self.atoms.get(relation, [])
        return self.index(relation, position).get(value, [])

    def index(self, relation: int, path: tuple) -> dict[int, list[int]]:
        """Atoms of ``relation`` by the ground sub-term at ``path`` (argument positions)."""
        index = self.indexes.get((relation, path))
        if index is None:
            index = {}
            for key in self.atoms.get(relation, []):
                value = _at_path(key, path)
                if value is not None:
                    index.setdefault(value, []).append(key)
            self.indexes[(relation, path)] = index
            self.indexes_by_relation[relation].append((path, index))
        return index


def _at_path(key: int, path: tuple) -> int | None:
    for position in path:
        structure = STRUCTURES[key]
        if structure[0] == "c" or position >= len(structure[1]):
            return None
        key = structure[1][position]
    return key


def _pattern_at_path(pattern, path: tuple):
    for position in path:
        pattern = pattern[1][position]
    return pattern


def _bound_paths(pattern, bound: set, prefix: tuple) -> list[tuple]:
    """Paths (from the atom) to sub-patterns fully determined once ``bound`` are bound."""
    if type(pattern) is int:
        return [prefix] if pattern >= 0 or (-pattern - 1) in bound else []
    if _pattern_variables(pattern, set()) <= bound:
        return [prefix]
    paths = []
    for position, sub in enumerate(pattern[1]):
        paths += _bound_paths(sub, bound, prefix + (position,))
    return paths


FULLY_BOUND = ()  # index path meaning "every variable bound: look the atom up"


def _best_path(atom: _Atom, bound: set, store) -> tuple[tuple | None, float]:
    """The most selective bound path of ``atom`` and the expected number of candidates."""
    if atom.variables <= bound:
        return FULLY_BOUND, 0.5
    size = len(store.atoms.get(atom.relation, ()))
    best, estimate = None, float(size)
    for position, argument in enumerate(atom.arguments):
        for path in _bound_paths(argument, bound, (position,)):
            distinct = max(1, len(store.index(atom.relation, path)))
            if size / distinct < estimate or best is None:
                best, estimate = path, size / distinct
    return best, estimate


def _plan(rule: _CompiledRule, first: int | None, store) -> list[tuple]:
    """Join order: ``first`` (the delta atom) then greedily the cheapest atom.

    Each step is (atom number, index path or None, checks that become decidable); the
    cost of an atom is the expected number of candidates through its best index.
    """
    remaining = list(range(len(rule.positives)))
    bound: set = set()
    steps = []
    pending = list(range(len(rule.distincts)))
    while remaining:
        if first is not None and not steps:
            choice = first
        else:
            def score(i, bound=bound):
                atom = rule.positives[i]
                return (_best_path(atom, bound, store)[1], len(atom.variables - bound))
            choice = min(remaining, key=score)
        remaining.remove(choice)
        atom = rule.positives[choice]
        position = None if (first is not None and not steps) else \
            _best_path(atom, bound, store)[0]
        bound |= atom.variables
        ready = [d for d in pending if rule.distincts[d][2] <= bound]
        pending = [d for d in pending if d not in ready]
        steps.append((choice, position, ready))
    return steps


@dataclass
class GroundProgram:
    """Ground rules ``(head, positives, negatives)`` plus what the propnet needs to know."""

    rules: list = field(default_factory=list)
    relevant: set = field(default_factory=set)
    sources: list = field(default_factory=list)  # NormalRule of each ground rule


class Grounder:
    def __init__(self, rules: list[NormalRule], max_instances: int = DEFAULT_MAX_INSTANCES):
        self.rules = [_compile_rule(rule) for rule in rules]
        self.max_instances = max_instances
        self.store = _Store()
        self.total = 0

    # -- joins
    def _joins(self, rule: _CompiledRule, steps: list, delta: list[int] | None):
        """Yield bindings satisfying the positive atoms (and the distinct checks)."""
        binding = [None] * rule.num_variables
        positives = rule.positives
        distincts = rule.distincts
        store = self.store
        depth_count = len(steps)
        if depth_count == 0:
            yield binding
            return
        # Explicit stack of (step number, candidate list, next position, trail).
        stack = []

        def candidates_for(step_number):
            choice, position, _ = steps[step_number]
            atom = positives[choice]
            if step_number == 0 and delta is not None:
                return delta
            if position is None:
                return store.candidates(atom.relation, None, None)
            if position == FULLY_BOUND:
                key = (intern_structure((atom.relation, tuple(_build(a, binding)
                                                              for a in atom.arguments)))
                       if atom.arguments else atom.relation)
                return (key,) if key in store.known else ()
            return store.candidates(atom.relation, position,
                                    _build(_pattern_at_path(atom.arguments[position[0]],
                                                            position[1:]), binding))

        stack.append([0, candidates_for(0), 0, []])
        while stack:
            frame = stack[-1]
            step_number, candidates, cursor, trail = frame
            for index in trail:
                binding[index] = None
            trail.clear()
            choice, _, ready = steps[step_number]
            atom = positives[choice]
            matched = False
            while cursor < len(candidates):
                key = candidates[cursor]
                cursor += 1
                if relation_of(key) != atom.relation:
                    continue
                arguments = arguments_of(key)
                if len(arguments) != len(atom.arguments):
                    continue
                ok = True
                for pattern, value in zip(atom.arguments, arguments):
                    if not _match(pattern, value, binding, trail):
                        ok = False
                        break
                if ok:
                    for d in ready:
                        left, right, _ = distincts[d]
                        if _build(left, binding) == _build(right, binding):
                            ok = False
                            break
                if ok:
                    matched = True
                    break
                for index in trail:
                    binding[index] = None
                trail.clear()
            frame[2] = cursor
            if not matched:
                stack.pop()
                continue
            if step_number + 1 == depth_count:
                yield binding
            else:
                stack.append([step_number + 1, candidates_for(step_number + 1), 0, []])

    def _count(self, rule: _CompiledRule) -> None:
        rule.instances += 1
        self.total += 1
        if self.total > self.max_instances:
            worst = max(self.rules, key=lambda r: r.instances)
            source = worst.source
            raise GdlGroundingLimitError(
                source.source.loc,
                f"grounding exceeds the limit of {self.max_instances:,} instances; "
                f"{source.where()} explodes with {worst.instances:,} instances so far "
                f"(raise max_instances if the game really is this large)")

    # -- relaxed fixpoint
    def _derived(self, key: int) -> list[int]:
        """The atom and the atoms it makes relevant (true for init/next, does for legal)."""
        relation = relation_of(key)
        if relation in (NEXT_KEY, INIT_KEY):
            return [key, atom_key(TRUE_KEY, *arguments_of(key))]
        if relation == LEGAL_KEY:
            return [key, atom_key(DOES_KEY, *arguments_of(key))]
        return [key]

    def relevant_atoms(self) -> set[int]:
        store = self.store
        delta: dict[int, list[int]] = defaultdict(list)
        try:
            for rule in self.rules:  # first round: rules over nothing (facts, static joins)
                if not rule.positives:
                    for binding in self._joins(rule, [], None):
                        self._emit(rule, binding, delta)
            while delta:
                current = delta
                delta = defaultdict(list)
                for rule in self.rules:
                    for number, atom in enumerate(rule.positives):
                        new = current.get(atom.relation)
                        if not new:
                            continue
                        steps = _plan(rule, number, store)  # sizes change: replan
                        for binding in self._joins(rule, steps, new):
                            self._emit(rule, binding, delta)
        except RecursionError:
            raise GdlRecursionError(None, "terms nest too deeply to ground") from None
        return store.known

    def _emit(self, rule: _CompiledRule, binding: list, delta: dict) -> None:
        head = rule.head
        key = (intern_structure((head.relation, tuple(_build(a, binding) for a in head.arguments)))
               if head.arguments else head.relation)
        for equal_left, equal_right, _ in rule.equals:
            if _build(equal_left, binding) != _build(equal_right, binding):
                return
        for derived in self._derived(key):
            if derived not in self.store.known:
                self._count(rule)
                self.store.add(derived)
                delta[relation_of(derived)].append(derived)

    # -- instantiation
    def exact_relations(self) -> set[int]:
        """Relations the relaxed fixpoint computes exactly (no negation, no state, no move).

        Their relevant atoms are simply true: their rules need no instances and literals
        over them fold away. Keyword relations stay, the propnet reads them.
        """
        keywords = {constant_key(name) for name in
                    ("init", "next", "legal", "goal", "terminal", "sees", "role", "true",
                     "does", "base", "input")}
        heads = defaultdict(list)
        for rule in self.rules:
            heads[rule.head.relation].append(rule)
        exact = {relation for relation in heads if relation not in keywords}
        changed = True
        while changed:
            changed = False
            for relation in list(exact):
                for rule in heads[relation]:
                    if rule.negatives or rule.equals or any(
                            atom.relation not in exact and atom.relation in heads
                            or atom.relation in keywords for atom in rule.positives):
                        exact.discard(relation)
                        changed = True
                        break
        return exact

    def instantiate(self) -> GroundProgram:
        relevant = self.relevant_atoms()
        exact = self.exact_relations()
        for rule in self.rules:
            rule.instances = 0
        self.total = len(relevant)
        program = GroundProgram(relevant=relevant)
        seen = set()
        for rule in self.rules:
            if rule.head.relation in exact:
                continue
            steps = _plan(rule, None, self.store)
            head = rule.head
            for binding in self._joins(rule, steps, None):
                if any(_build(left, binding) != _build(right, binding)
                       for left, right, _ in rule.equals):
                    continue
                head_key = (intern_structure(
                    (head.relation, tuple(_build(a, binding) for a in head.arguments)))
                    if head.arguments else head.relation)
                positives = tuple(
                    intern_structure((a.relation, tuple(_build(p, binding) for p in a.arguments)))
                    if a.arguments else a.relation
                    for a in rule.positives if a.relation not in exact)
                negatives = []
                dead = False
                for atom in rule.negatives:
                    key = (intern_structure(
                        (atom.relation, tuple(_build(p, binding) for p in atom.arguments)))
                        if atom.arguments else atom.relation)
                    if key in relevant:
                        if atom.relation in exact:
                            dead = True
                            break
                        negatives.append(key)
                if dead:
                    continue
                ground = (head_key, tuple(sorted(set(positives))), tuple(sorted(set(negatives))))
                if ground in seen:
                    continue
                seen.add(ground)
                self._count(rule)
                program.rules.append(ground)
                program.sources.append(rule.source)
        return program


def ground(rules: list[NormalRule], max_instances: int = DEFAULT_MAX_INSTANCES) -> GroundProgram:
    """Ground ``rules`` (validated, see :func:`~hiddenenvs.envs.gdl.validate.validate`)."""
    return Grounder(rules, max_instances).instantiate()


__all__ = [
    "DEFAULT_MAX_INSTANCES",
    "GroundProgram",
    "Grounder",
    "ground",
]
