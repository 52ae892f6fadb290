"""Instantiation (grounding) of validated GDL rules, with clingo's grounder doing the joins.

1. Relaxed fixpoint. Drop every negated literal (which can only make more atoms
   derivable), let ``(true f)`` hold for every ``f`` some ``init`` or ``next`` rule can
   produce and ``(does r m)`` for every ``(legal r m)`` that can be derived, and compute the
   least model. Its atoms over-approximate every atom that can hold in any reachable state
   under any joint move: the *relevant* atoms.
2. Instantiation. Each rule is instantiated over the relevant atoms only: one
   ``i<n>(head, positives..., negatives...)`` atom per binding of its variables that
   satisfies its positive atoms (within the relevant ones), its ``distinct`` and its
   equalities. A negated atom that is not relevant can never hold: the literal is dropped
   as true.

Both steps are one positive logic program, so clingo's grounder (gringo, in C++) computes
them completely: its model is the relevant atoms plus the rule instances. Terms travel to
clingo as ``k<key>`` symbols (``key`` the hash-consed term key of
:mod:`~hiddenenvs.envs.gdl.parser`), so case folding, numbers and odd GDL spellings never
meet ASP syntax, and come back as keys.

The result, :class:`GroundProgram`, lists ground rules as ``(head, positives, negatives)``
over integer atom keys.

A size limit (``max_instances``, ground rule instances per attempt, default 500,000)
keeps a sheet whose grounding explodes from eating the memory and the user's time: every
rule's body calls a counter from the grounder, which stops grounding at the limit. An
instance costs about 6 microseconds of grounding (clingo, C++) plus 7-14 of the counter
callback (the clingo binding's own overhead), so the default refuses a blow-up after 4-7 s
of CPU and at most about 250 MB (``benchmarks/bench_gdl_refusal.py``; the old default,
3,000,000, took 38 s and 990 MB). Of the shipped and ggp-base sheets, only racer (0.76
million instances once decomposed) and crisscross (2.2 million) need more; they load with
``max_instances=3_000_000``, and the error says to raise it. Counting cannot be skipped to
go faster: uncounted grounding cannot be stopped, and grounding to the limit uncounted in a
child process would only about halve the per-instance cost. The rules behind the
explosion are then decomposed (:func:`_split`: a body that joins independent fluents is
factored through auxiliary rules) and grounding starts again; when nothing more can be
factored, the error names the rule that produced the most instances. Rules are kept whole
otherwise, since whole rules make smaller, faster propnets.

Depth. Terms reach clingo as text and come back through :class:`_Decoder`, both
recursive in the depth of a term; the validator already bounds the sheet's own terms
(:data:`~hiddenenvs.envs.gdl.validate.MAX_TERM_DEPTH`), and a ground term that rules nest
deeper than Python's recursion allows is refused with a
:class:`~hiddenenvs.envs.gdl.parser.GdlRecursionError` naming the sheet, never a bare
``RecursionError``.
"""

from __future__ import annotations

import itertools
import time
from collections import defaultdict
from dataclasses import dataclass, field

import clingo

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

DEFAULT_MAX_INSTANCES = 500_000


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


@dataclass
class _Atom:
    relation: int
    arguments: tuple  # compiled patterns


@dataclass
class _CompiledRule:
    source: NormalRule
    head: _Atom
    positives: list
    negatives: list
    distincts: list  # (left pattern, right pattern)
    equals: list
    instances: int = 0
    undecomposable: bool = False  # _split found nothing to factor out

    @property
    def variables(self) -> list[int]:
        found: set = set()
        for atom in [self.head, *self.positives]:
            found |= _atom_variables(atom)
        return sorted(found)

    @property
    def asp_body(self) -> str:
        """The positive body, distinct and equalities in ASP syntax."""
        body = [_asp_atom(atom) for atom in self.positives]
        body += [f"{_asp_term(left)}!={_asp_term(right)}" for left, right in self.distincts]
        body += [f"{_asp_term(left)}={_asp_term(right)}" for left, right in self.equals]
        return ",".join(body)


def _pattern_variables(pattern, out: set) -> set:
    if type(pattern) is int:
        if pattern < 0:
            out.add(-pattern - 1)
    else:
        for sub in pattern[1]:
            _pattern_variables(sub, out)
    return out


def _atom_variables(atom: _Atom) -> set:
    found: set = set()
    for pattern in atom.arguments:
        _pattern_variables(pattern, found)
    return found


def _compile_atom(term: Term, compiler: _Compiler) -> _Atom:
    if isinstance(term, Const):
        return _Atom(term.key, ())
    return _Atom(term.functor.key, tuple(compiler.compile(arg) for arg in term.args))


# ----------------------------------------------------------------------------- ASP text


def _asp_term(pattern) -> str:
    if type(pattern) is int:
        return _asp_ground(pattern) if pattern >= 0 else f"X{-pattern - 1}"
    return f"k{pattern[0]}({','.join(_asp_term(p) for p in pattern[1])})"


def _asp_ground(key: int) -> str:
    """``k<key>`` for a constant; a compound without arguments, ``(gameOver)``, is
    ``z<functor>`` since ASP would read ``k<functor>()`` as the constant."""
    structure = STRUCTURES[key]
    if structure[0] == "c":
        return f"k{key}"
    if not structure[1]:
        return f"z{structure[0]}"
    return f"k{structure[0]}({','.join(_asp_ground(k) for k in structure[1])})"


def _asp_atom(atom: _Atom) -> str:
    if not atom.arguments:
        return f"k{atom.relation}"
    return f"k{atom.relation}({','.join(_asp_term(p) for p in atom.arguments)})"


def _compile_rule(rule: NormalRule) -> _CompiledRule:
    compiler = _Compiler()
    positives = [_compile_atom(atom, compiler) for atom in rule.positives]
    head = _compile_atom(rule.head, compiler)
    negatives = [_compile_atom(atom, compiler) for atom in rule.negatives]
    distincts = [(compiler.compile(left), compiler.compile(right))
                 for left, right, _ in rule.distincts]
    equals = [(compiler.compile(left), compiler.compile(right)) for left, right, _ in rule.equals]
    return _CompiledRule(rule, head, positives, negatives, distincts, equals)


_AUXILIARY_NAMES = itertools.count()


def _split(rule: _CompiledRule) -> list[_CompiledRule]:
    """Eliminate the body's own variables one at a time through auxiliary rules.

    A variable of the body alone (not in the head, a negated atom or an (in)equality)
    matters only to the positive atoms that contain it. When one of them depends on the
    state or the move (``true``/``does``, whose relaxed fixpoint crosses every fluent with
    every other), those atoms become
    ``(aux ?rest...) :- atoms``, projected onto their variables still needed elsewhere, and
    the rule uses ``(aux ?rest...)``. ``(<= (h ?p) (true (velx ?p ?dx)) (true (posx ?p ?x))
    ...)`` then no longer joins every velocity with every position: instances add across
    the parts instead of multiplying. This is the rule decomposition of ASP optimisers
    such as lpopt (Bichler, Morak & Woltran 2016), by variable elimination with the
    narrowest auxiliary atom first; the atoms that hold are unchanged.
    """
    kept = _atom_variables(rule.head)
    for atom in rule.negatives:
        kept |= _atom_variables(atom)
    for left, right in rule.distincts + rule.equals:
        _pattern_variables(left, kept)
        _pattern_variables(right, kept)
    atoms = [(atom, _atom_variables(atom)) for atom in rule.positives]
    dynamic = {TRUE_KEY, DOES_KEY}
    rules = []
    while True:
        best = None
        for variable in sorted(set().union(*(v for _, v in atoms)) - kept):
            group = [item for item in atoms if variable in item[1]]
            if len(group) == len(atoms):
                continue  # the auxiliary rule would be the whole body again
            if not any(atom.relation in dynamic for atom, _ in group):
                continue  # joins of static tables are usually filtered by the rest
            width = len(set().union(*(v for _, v in group)))
            if best is None or width < best[0]:
                best = (width, group)
        if best is None:
            break
        group = best[1]
        rest = [item for item in atoms if item not in group]
        needed = kept.union(*(v for _, v in rest))
        shared = sorted(set().union(*(v for _, v in group)) & needed)
        name = intern_structure(("c", f"aux {next(_AUXILIARY_NAMES)}"))
        dynamic.add(name)
        head = _Atom(name, tuple(-v - 1 for v in shared))
        rules.append(_CompiledRule(rule.source, head, [a for a, _ in group], [], [], []))
        atoms = rest + [(head, set(shared))]
    if not rules:
        return [rule]
    rules.append(_CompiledRule(rule.source, rule.head, [a for a, _ in atoms], rule.negatives,
                               rule.distincts, rule.equals))
    return rules


class _Decoder:
    """clingo symbols back to term keys, memoised on the symbol's handle.

    clingo interns its symbols, so equal symbols share ``_rep``; keying on it avoids a
    call into the library per lookup (terms repeat a lot across instances).
    """

    def __init__(self):
        self.keys: dict = {}

    def __call__(self, symbol) -> int:
        key = self.keys.get(symbol._rep)
        if key is None:
            name = symbol.name
            functor = int(name[1:])
            arguments = symbol.arguments
            key = (intern_structure((functor, tuple(self(a) for a in arguments)))
                   if arguments or name[0] == "z" else functor)
            self.keys[symbol._rep] = key
        return key


# ----------------------------------------------------------------------------- program


@dataclass
class GroundProgram:
    """Ground rules ``(head, positives, negatives)`` plus what the propnet needs to know."""

    rules: list = field(default_factory=list)
    relevant: set = field(default_factory=set)
    sources: list = field(default_factory=list)  # NormalRule of each ground rule


class _LimitReached(Exception):
    """Raised inside the grounder's callback to stop it (clingo re-raises it by type)."""


class Grounder:
    """Grounds validated rules; ``deadline`` (a :func:`time.monotonic` value, or None) is a
    time budget checked every 1,024 instances and symbols, refused like the size limit."""

    def __init__(self, rules: list[NormalRule], max_instances: int = DEFAULT_MAX_INSTANCES,
                 deadline: float | None = None):
        self.location = rules[0].source.loc if rules else None
        self.deadline = deadline
        self.timed_out = False
        try:
            self.rules = [_compile_rule(rule) for rule in rules]
        except RecursionError:
            raise self._too_deep() from None
        self.max_instances = max_instances
        self.total = 0

    def count(self, rule_number: clingo.Symbol, *_) -> clingo.Symbol:
        """Called by the grounder once per rule instance (relaxed or final): the limit."""
        rule = self.rules[rule_number.number]
        rule.instances += 1
        self.total += 1
        if self.deadline is not None and not self.total & 1023 and time.monotonic() > self.deadline:
            self.exceeded = self._out_of_time(f"grounding ({self.total:,} instances so far)")
            raise _LimitReached()
        if self.total > self.max_instances:
            worst = max(self.rules, key=lambda r: r.instances)
            self.exceeded = GdlGroundingLimitError(
                worst.source.source.loc,
                f"grounding exceeds the limit of {self.max_instances:,} instances; "
                f"{worst.source.where()} explodes with {worst.instances:,} instances so far "
                f"(raise max_instances if the game really is this large)")
            raise _LimitReached()
        return rule_number

    def _program(self, exact: set, counted: bool = True) -> str:
        """The relaxed rules, the instance rules and the keyword closure, as ASP text.

        Rule ``n``'s instances are atoms ``i<n>(head, positives..., negatives...)`` of ground
        terms (positives over exact relations left out) and its relaxed head is read off
        them; rules of exact relations have only the relaxed rule. Either way the body
        calls the counter once per instance (unless not ``counted``: benchmarks/
        bench_gdl_refusal.py measures clingo's grounding alone with it).
        """
        lines = [f"k{TRUE_KEY}(X) :- k{INIT_KEY}(X).", f"k{TRUE_KEY}(X) :- k{NEXT_KEY}(X).",
                 f"k{DOES_KEY}(R,M) :- k{LEGAL_KEY}(R,M)."]
        for number, rule in enumerate(self.rules):
            # The grounder calls the counter once per binding of its arguments, so it gets
            # every variable, packed in one term (one symbol to convert, not one each).
            variables = ",".join(f"X{i}" for i in rule.variables)
            counter = ("" if not counted else f"@count({number},v({variables}))={number}"
                       if variables else f"@count({number})={number}")
            body = ",".join(part for part in (rule.asp_body, counter) if part)
            rule_end = f" :- {body}." if body else "."
            if rule.head.relation in exact:
                lines.append(_asp_atom(rule.head) + rule_end)
                continue
            terms = [_asp_atom(rule.head)]
            terms += [_asp_atom(atom) for atom in rule.positives if atom.relation not in exact]
            terms += [_asp_atom(atom) for atom in rule.negatives]
            instance = f"i{number}({','.join(terms)})"
            lines.append(instance + rule_end)
            # The relaxed head projects the instance, so the body is joined (and counted) once.
            lines.append(f"{terms[0]} :- {instance}.")
        return "\n".join(lines)

    def _solve(self, exact: set) -> tuple[set, dict]:
        """Relevant atom keys, and each rule's instances as term keys, from clingo's model."""
        control = clingo.Control(["--warn=none"])
        control.add("base", [], self._program(exact))
        self.exceeded = None
        try:
            control.ground([("base", [])], context=self)
        except _LimitReached:
            raise self.exceeded from None
        except RecursionError:
            raise self._too_deep() from None
        decode = _Decoder()
        relevant: set = set()
        instances: dict[int, list] = defaultdict(list)
        try:
            with control.solve(yield_=True) as models:
                for count, symbol in enumerate(next(iter(models)).symbols(atoms=True)):
                    if (self.deadline is not None and not count & 1023
                            and time.monotonic() > self.deadline):
                        raise self._out_of_time(f"reading the ground program ({count:,} atoms)")
                    name = symbol.name
                    if name[0] == "i":
                        instances[int(name[1:])].append([decode(a) for a in symbol.arguments])
                    else:
                        relevant.add(decode(symbol))
        except RecursionError:
            raise self._too_deep() from None
        return relevant, instances

    def _out_of_time(self, stage: str) -> GdlGroundingLimitError:
        self.timed_out = True
        return GdlGroundingLimitError(self.location, f"loading the sheet exceeds its time budget "
                                      f"in {stage}; give it more time or a smaller sheet")

    def _too_deep(self) -> GdlRecursionError:
        return GdlRecursionError(self.location, "the rules build terms nested too deeply to ground "
                                 "(Python's recursion limit); nest terms less deeply")

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

    def _decompose_explosive(self) -> bool:
        """Decompose (:func:`_split`) the rules behind a twentieth or more of the instances
        counted before the limit stopped the grounder; False if none of them can be."""
        threshold = self.total / 20
        decomposed = False
        rules = []
        for rule in self.rules:
            parts = [rule]
            if rule.instances >= threshold and not rule.undecomposable:
                parts = _split(rule)
                rule.undecomposable = len(parts) == 1
                decomposed |= len(parts) > 1
            rules += parts
        self.rules = rules
        for rule in rules:
            rule.instances = 0
        self.total = 0
        return decomposed

    def instantiate(self) -> GroundProgram:
        try:
            return self._instantiate()
        except RecursionError:  # term depth, anywhere from ASP text to decoding
            raise self._too_deep() from None

    def _instantiate(self) -> GroundProgram:
        # Plain rules make the smallest propnets; only rules that explode are decomposed,
        # at most twice over, before the limit error stands.
        for attempt in range(3):
            exact = self.exact_relations()
            try:
                relevant, instances_by_rule = self._solve(exact)
                break
            except GdlGroundingLimitError:
                if attempt == 2 or self.timed_out or not self._decompose_explosive():
                    raise
        program = GroundProgram(relevant=relevant)
        seen = set()
        for number, rule in enumerate(self.rules):
            kept = sum(atom.relation not in exact for atom in rule.positives)
            negated_exact = [atom.relation in exact for atom in rule.negatives]
            for terms in instances_by_rule.get(number, ()):
                negatives = []
                for key, is_exact in zip(terms[1 + kept:], negated_exact):
                    if key in relevant:
                        if is_exact:  # an exact atom that holds: the rule never fires
                            break
                        negatives.append(key)
                else:
                    ground = (terms[0], tuple(sorted(set(terms[1:1 + kept]))),
                              tuple(sorted(set(negatives))))
                    if ground not in seen:
                        seen.add(ground)
                        program.rules.append(ground)
                        program.sources.append(rule.source)
        return program


def ground(rules: list[NormalRule], max_instances: int = DEFAULT_MAX_INSTANCES,
           deadline: float | None = None) -> GroundProgram:
    """Ground ``rules`` (validated, see :func:`~hiddenenvs.envs.gdl.validate.validate`)
    within ``max_instances`` and, if given, by the :func:`time.monotonic` ``deadline``."""
    return Grounder(rules, max_instances, deadline).instantiate()


__all__ = [
    "DEFAULT_MAX_INSTANCES",
    "GroundProgram",
    "Grounder",
    "ground",
]
