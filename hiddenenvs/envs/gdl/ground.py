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
3. Demand. Both steps are restricted to what the game's keyword relations (``legal``,
   ``next``, ``goal``, ``terminal``, ``sees``, ``init``) can ask for, by the magic-set
   transformation (:meth:`Grounder._program`): a relation used with some arguments bound
   (``(count e3 e4 f3 f4 red ?n)`` in crisscross) is computed for those bindings only, not
   for every tuple its rules could produce. Static tables (exact relations, see
   :meth:`Grounder.exact_relations`) are computed in full.

All steps are one positive logic program, so clingo's grounder (gringo, in C++) computes
them completely: its model is the relevant atoms plus the rule instances. Terms travel to
clingo as ``k<key>`` symbols (``key`` the hash-consed term key of
:mod:`~hiddenenvs.envs.gdl.parser`), so case folding, numbers and odd GDL spellings never
meet ASP syntax, and come back as keys.

The result, :class:`GroundProgram`, lists ground rules as ``(head, positives, negatives)``
over integer atom keys.

A size limit (``max_instances``, ground rule and demand instances per attempt, default
750,000) keeps a sheet whose grounding explodes from eating the memory and the user's
time: every rule's body calls a counter from the grounder (one function per rule, looked
up by name, so a call decodes nothing), which stops grounding at the limit. Counted
grounding costs about 1.5 times clingo's grounding alone (``benchmarks/
bench_gdl_refusal.py``), and a blow-up is refused at the default within about 460 MB.
Every ggp-base sheet but AlexChess (30 million and more) loads at the default: with demand,
crisscross grounds 47,000 instances (2.2 million before), and racer, the largest, 515,000
once its rules are decomposed; ``docs/results/gdl_loading.md`` has the figures. An optional
deadline (``Grounder(..., deadline=)``) refuses by time as well, for callers with a clock.
Counting cannot be skipped to go faster: uncounted grounding cannot be stopped. The rules
behind an explosion are then decomposed (:func:`_split`: a body that joins independent
fluents is factored through auxiliary rules) and grounding starts again; when nothing more
can be factored, the error names the rule that produced the most instances. Rules are
kept whole otherwise, since whole rules make smaller, faster propnets.

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
    AnyTerm,
    Atom,
    Const,
    GdlGroundingLimitError,
    GdlRecursionError,
    Var,
    intern_structure,
)
from hiddenenvs.envs.gdl.validate import NormalRule

DEFAULT_MAX_INSTANCES = 750_000


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

    def compile(self, term: AnyTerm):
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


def _compile_atom(term: Atom, compiler: _Compiler) -> _Atom:
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


KEYWORD_KEYS = frozenset(
    constant_key(name)
    for name in (
        "init",
        "next",
        "legal",
        "goal",
        "terminal",
        "sees",
        "role",
        "true",
        "does",
        "base",
        "input",
    )
)


def _demand_atom(atom: _Atom, adornment: tuple) -> str:
    """``m<relation>_<b/f per argument>(the bound arguments)``: demand for ``atom``."""
    name = f"m{atom.relation}_{''.join('b' if bound else 'f' for bound in adornment)}"
    arguments = [_asp_term(p) for p, bound in zip(atom.arguments, adornment) if bound]
    return f"{name}({','.join(arguments)})" if arguments else name


def _demand_order(atoms: list, bound: set, full: frozenset) -> list:
    """The positive atoms in the order that passes bindings along: at each step the atom
    with every argument bound (a pure test), else an atom of a relation computed in
    ``full`` anyway (it binds for the rest), else the one with the most bound arguments;
    ties in written order."""
    bound = set(bound)
    left = list(atoms)
    ordered = []
    while left:

        def rank(item, bound=bound):
            position, atom = item
            unbound = [bool(_pattern_variables(p, set()) - bound) for p in atom.arguments]
            return (any(unbound), atom.relation not in full, sum(unbound) - len(unbound), position)

        position, atom = min(enumerate(left), key=rank)
        ordered.append(atom)
        bound |= _atom_variables(atom)
        del left[position]
    return ordered


def _compile_rule(rule: NormalRule) -> _CompiledRule:
    compiler = _Compiler()
    positives = [_compile_atom(atom, compiler) for atom in rule.positives]
    head = _compile_atom(rule.head, compiler)
    negatives = [_compile_atom(atom, compiler) for atom in rule.negatives]
    distincts = [
        (compiler.compile(left), compiler.compile(right)) for left, right, _ in rule.distincts
    ]
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
    rules.append(
        _CompiledRule(
            rule.source,
            rule.head,
            [a for a, _ in atoms],
            rule.negatives,
            rule.distincts,
            rule.equals,
        )
    )
    return rules


def _substitute(pattern, mapping: dict):
    """``pattern`` with its variables replaced by ``mapping``'s patterns (variable number ->
    pattern)."""
    if type(pattern) is int:
        return mapping[-pattern - 1] if pattern < 0 else pattern
    return (pattern[0], tuple(_substitute(sub, mapping) for sub in pattern[1]))


def _unfold_static(rule: _CompiledRule, definitions: dict) -> _CompiledRule:
    """``rule`` with each positive atom over a relation of ``definitions`` replaced by the
    body of that relation's one rule (its variables renamed apart).

    ``definitions`` maps an exact relation to its single rule, non-recursive, whose head
    arguments are distinct variables: ``(<= (set ?p1 ?p2 ?p3 ?p4) (bit ?b) (index ?n)
    (bitNIs ?n ?p1 ?b) ... (bitNIs ?n ?p4 ?b))`` in ggp-base's quarto. Inside the rule that
    uses it, ``(set ?p1 ?p2 ?p3 ?p4)`` ties four state fluents together, so no variable of
    the body can be eliminated narrowly (:func:`_split`: each is width five); unfolded, each
    piece ``?pi`` meets only its cell's fluent and its own ``bitNIs``, and is eliminated
    through an auxiliary atom of ``(?y ?n ?b)``. The atoms that hold are unchanged (an
    existential body of a positive literal, inlined).
    """
    if not any(atom.relation in definitions for atom in rule.positives):
        return rule
    used: set = set(rule.variables)
    for atom in rule.negatives:
        used |= _atom_variables(atom)
    for left, right in rule.distincts + rule.equals:
        _pattern_variables(right, _pattern_variables(left, used))
    next_variable = 1 + max(used, default=-1)
    positives, distincts = [], list(rule.distincts)
    for atom in rule.positives:
        definition = definitions.get(atom.relation)
        if definition is None:
            positives.append(atom)
            continue
        mapping = {
            -pattern - 1: argument
            for pattern, argument in zip(definition.head.arguments, atom.arguments)
        }
        own: set = set(definition.variables)
        for left, right in definition.distincts:
            _pattern_variables(right, _pattern_variables(left, own))
        for variable in sorted(own - set(mapping)):  # renamed apart
            mapping[variable] = -next_variable - 1
            next_variable += 1
        positives += [
            _Atom(body.relation, tuple(_substitute(p, mapping) for p in body.arguments))
            for body in definition.positives
        ]
        distincts += [
            (_substitute(left, mapping), _substitute(right, mapping))
            for left, right in definition.distincts
        ]
    return _CompiledRule(rule.source, rule.head, positives, rule.negatives, distincts, rule.equals)


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
            key = (
                intern_structure((functor, tuple(self(a) for a in arguments)))
                if arguments or name[0] == "z"
                else functor
            )
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


class _Counters:
    """The grounder's callbacks: ``@c<n>(binding)`` is called once per binding of rule copy
    ``n`` (clingo looks the function up by name), so a call decodes no argument; every
    1,024 calls, and past the limit, :meth:`Grounder.stop_if_over` checks the budgets."""

    ZERO = clingo.Number(0)

    def __init__(self, grounder: Grounder):
        self._grounder = grounder

    def __getattr__(self, name: str):
        if not (name.startswith("c") and name[1:].isdigit()):
            raise AttributeError(name)
        grounder = self._grounder
        rule = grounder.rules[grounder.program_rules[int(name[1:])]]
        zero = self.ZERO

        def count(_binding):
            rule.instances += 1
            grounder.total += 1
            if grounder.total > grounder.max_instances or not grounder.total & 1023:
                grounder.stop_if_over()
            return zero

        setattr(self, name, count)
        return count


class Grounder:
    """Grounds validated rules; ``deadline`` (a :func:`time.monotonic` value, or None) is a
    time budget checked every 1,024 instances and symbols, refused like the size limit."""

    def __init__(
        self,
        rules: list[NormalRule],
        max_instances: int = DEFAULT_MAX_INSTANCES,
        deadline: float | None = None,
    ):
        self.location = rules[0].source.loc if rules else None
        self.deadline = deadline
        self.timed_out = False
        self.exceeded: GdlGroundingLimitError | None = None  # why grounding last stopped
        try:
            self.rules = [_compile_rule(rule) for rule in rules]
        except RecursionError:
            raise self._too_deep() from None
        self.max_instances = max_instances
        self.total = 0

    def stop_if_over(self) -> None:
        """Called by the counters: :class:`_LimitReached` past the limit or the deadline."""
        if self.total > self.max_instances:
            worst = max(self.rules, key=lambda r: r.instances)
            self.exceeded = GdlGroundingLimitError(
                worst.source.source.loc,
                f"grounding exceeds the limit of {self.max_instances:,} instances; "
                f"{worst.source.where()} explodes with {worst.instances:,} instances so far "
                f"(raise max_instances if the game really is this large)",
            )
            raise _LimitReached()
        if self.deadline is not None and time.monotonic() > self.deadline:
            self.exceeded = self._out_of_time(f"grounding ({self.total:,} instances so far)")
            raise _LimitReached()

    def _program(self, exact: set, counted: bool = True) -> str:
        """The demanded relaxed rules, their instance rules, the demand (magic) rules and the
        keyword closure, as ASP text.

        Demand (the magic-set transformation, Bancilhon et al. 1986, over the relaxed
        program). The keyword relations (``legal``, ``next``, ``goal``, ...) are computed in
        full; every other relation only where some rule body asks for it. Each of its
        rules is copied once per *adornment* asked for (which arguments arrive bound) and
        guarded by a demand atom ``m<relation>_<adornment>(bound arguments)``; each body
        atom over such a relation gets a demand rule: its bound arguments, derived from
        the guard and the atoms before it (:func:`_demand_order`). In crisscross,
        ``(stones red ?payoff)`` asks for ``(count e3 e4 f3 f4 red ?payoff)``, not for
        every quadruple of locations. Demand rules are counted like instances. The
        relevant atoms of a demanded relation are those the plain relaxed fixpoint
        derives among the demanded ones (magic sets are sound and complete for positive
        programs), so every instance whose head is needed is still produced.

        Rule copy ``n``'s instances are atoms ``i<n>(head, positives..., negatives...)``
        of ground terms (positives over exact relations left out) and its relaxed head is
        read off them; rules of exact relations have only the relaxed rule. Every body
        calls the counter once per binding (unless not ``counted``: benchmarks/
        bench_gdl_refusal.py measures clingo's grounding alone with it);
        ``self.program_rules[n]`` is the index in ``self.rules`` behind counter ``n``.
        """
        lines = [
            f"k{TRUE_KEY}(X) :- k{INIT_KEY}(X).",
            f"k{TRUE_KEY}(X) :- k{NEXT_KEY}(X).",
            f"k{DOES_KEY}(R,M) :- k{LEGAL_KEY}(R,M).",
        ]
        self.program_rules: list[int] = []
        rules_of = defaultdict(list)
        for index, rule in enumerate(self.rules):
            rules_of[rule.head.relation].append(index)

        def counter(index: int, variables) -> str:
            number = len(self.program_rules)
            self.program_rules.append(index)
            if not counted:
                return ""
            # The grounder calls the counter once per binding of its arguments, so it gets
            # every variable, packed in one term (one symbol to convert, not one each).
            names = ",".join(f"X{i}" for i in sorted(variables))
            return f"@c{number}(v({names}))=0" if names else f"@c{number}(0)=0"

        # Keyword and exact relations are computed in full: exact ones are tables such as
        # succ or add, as cheap whole as in part, whose demand rules would only add work.
        full = KEYWORD_KEYS | exact
        demanded: set = set()
        pending: list = [
            (index, None)
            for relation in sorted(rules_of)
            if relation in full
            for index in rules_of[relation]
        ]

        def ask(atom: _Atom, bound: set) -> tuple:
            """The adornment ``atom`` is asked for with ``bound`` variables; its relation's
            rules are queued for it the first time."""
            wanted = tuple(
                not _pattern_variables(pattern, set()) - bound for pattern in atom.arguments
            )
            if (atom.relation, wanted) not in demanded:
                demanded.add((atom.relation, wanted))
                pending.extend((other, wanted) for other in rules_of.get(atom.relation, ()))
            return wanted

        while pending:
            index, adornment = pending.pop()
            rule = self.rules[index]
            bound: set = set()
            prefix = []
            if adornment is not None:
                prefix.append(_demand_atom(rule.head, adornment))
                for pattern, is_bound in zip(rule.head.arguments, adornment):
                    if is_bound:
                        _pattern_variables(pattern, bound)
            filters = [(left, right, "!=") for left, right in rule.distincts]
            filters += [(left, right, "=") for left, right in rule.equals]
            for atom in _demand_order(rule.positives, bound, full):
                if atom.relation not in full:
                    wanted = ask(atom, bound)
                    checks = [
                        f"{_asp_term(left)}{op}{_asp_term(right)}"
                        for left, right, op in filters
                        if not (_pattern_variables(left, set()) | _pattern_variables(right, set()))
                        - bound
                    ]
                    body = ",".join(
                        part for part in prefix + checks + [counter(index, bound)] if part
                    )
                    lines.append(_demand_atom(atom, wanted) + (f" :- {body}." if body else "."))
                prefix.append(_asp_atom(atom))
                bound |= _atom_variables(atom)
            guard = prefix[:1] if adornment is not None else []
            body = ",".join(
                part for part in guard + [rule.asp_body, counter(index, rule.variables)] if part
            )
            rule_end = f" :- {body}." if body else "."
            if rule.head.relation in exact:
                lines.append(_asp_atom(rule.head) + rule_end)
                continue
            terms = [_asp_atom(rule.head)]
            terms += [_asp_atom(atom) for atom in rule.positives if atom.relation not in exact]
            terms += [_asp_atom(atom) for atom in rule.negatives]
            instance = f"i{len(self.program_rules) - 1}({','.join(terms)})"
            lines.append(instance + rule_end)
            # The relaxed head projects the instance, so the body is joined (and counted) once;
            # so does the demand for each negated atom (bound by the positives, for safety).
            lines.append(f"{terms[0]} :- {instance}.")
            for atom in rule.negatives:
                if atom.relation not in full:
                    lines.append(f"{_demand_atom(atom, ask(atom, bound))} :- {instance}.")
        return "\n".join(lines)

    def _solve(self, exact: set) -> tuple[set, dict]:
        """Relevant atom keys, and each rule's instances as term keys, from clingo's model."""
        control = clingo.Control(["--warn=none"])
        control.add("base", [], self._program(exact))
        self.exceeded = None
        try:
            control.ground([("base", [])], context=_Counters(self))
        except _LimitReached:
            assert self.exceeded is not None  # set before _LimitReached is raised
            raise self.exceeded from None
        except RecursionError:
            raise self._too_deep() from None
        decode = _Decoder()
        relevant: set = set()
        instances: dict[int, list] = defaultdict(list)
        try:
            with control.solve(yield_=True) as models:
                for count, symbol in enumerate(next(iter(models)).symbols(atoms=True)):
                    if (
                        self.deadline is not None
                        and not count & 1023
                        and time.monotonic() > self.deadline
                    ):
                        raise self._out_of_time(f"reading the ground program ({count:,} atoms)")
                    name = symbol.name
                    if name[0] == "i":
                        instances[int(name[1:])].append([decode(a) for a in symbol.arguments])
                    elif name[0] != "m":  # not a demand atom
                        relevant.add(decode(symbol))
        except RecursionError:
            raise self._too_deep() from None
        return relevant, instances

    def _out_of_time(self, stage: str) -> GdlGroundingLimitError:
        self.timed_out = True
        return GdlGroundingLimitError(
            self.location,
            f"loading the sheet exceeds its time budget "
            f"in {stage}; give it more time or a smaller sheet",
        )

    def _too_deep(self) -> GdlRecursionError:
        return GdlRecursionError(
            self.location,
            "the rules build terms nested too deeply to ground "
            "(Python's recursion limit); nest terms less deeply",
        )

    def exact_relations(self) -> set[int]:
        """Relations the relaxed fixpoint computes exactly (no negation, no state, no move).

        Their relevant atoms are simply true: their rules need no instances and literals
        over them fold away. Keyword relations stay, the propnet reads them.
        """
        heads = defaultdict(list)
        for rule in self.rules:
            heads[rule.head.relation].append(rule)
        exact = {relation for relation in heads if relation not in KEYWORD_KEYS}
        changed = True
        while changed:
            changed = False
            for relation in list(exact):
                for rule in heads[relation]:
                    if (
                        rule.negatives
                        or rule.equals
                        or any(
                            atom.relation not in exact
                            and atom.relation in heads
                            or atom.relation in KEYWORD_KEYS
                            for atom in rule.positives
                        )
                    ):
                        exact.discard(relation)
                        changed = True
                        break
        return exact

    def _static_definitions(self, exact: set) -> dict:
        """The exact relations that :func:`_unfold_static` may inline: defined by one rule
        with a body, not recursive, its head arguments distinct variables."""
        rules_of = defaultdict(list)
        for rule in self.rules:
            rules_of[rule.head.relation].append(rule)
        definitions = {}
        for relation in exact:
            if len(rules_of[relation]) != 1:
                continue
            (rule,) = rules_of[relation]
            arguments = rule.head.arguments
            if (
                rule.positives
                and all(type(p) is int and p < 0 for p in arguments)
                and len(set(arguments)) == len(arguments)
                and all(atom.relation != relation for atom in rule.positives)
            ):
                definitions[relation] = rule
        return definitions

    def _decompose_explosive(self, exact: set) -> bool:
        """Decompose (:func:`_split`, after :func:`_unfold_static`) the rules behind a
        twentieth or more of the instances counted before the limit stopped the grounder;
        False if none of them can be."""
        threshold = self.total / 20
        definitions = self._static_definitions(exact)
        decomposed = False
        rules = []
        for rule in self.rules:
            parts = [rule]
            if rule.instances >= threshold and not rule.undecomposable:
                parts = _split(_unfold_static(rule, definitions))
                parts[0].undecomposable = rule.undecomposable = len(parts) == 1
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
                if attempt == 2 or self.timed_out or not self._decompose_explosive(exact):
                    raise
        program = GroundProgram(relevant=relevant)
        seen = set()
        for number in sorted(instances_by_rule):
            rule = self.rules[self.program_rules[number]]
            kept = sum(atom.relation not in exact for atom in rule.positives)
            negated_exact = [atom.relation in exact for atom in rule.negatives]
            for terms in instances_by_rule[number]:
                negatives = []
                for key, is_exact in zip(terms[1 + kept :], negated_exact):
                    if key in relevant:
                        if is_exact:  # an exact atom that holds: the rule never fires
                            break
                        negatives.append(key)
                else:
                    ground = (
                        terms[0],
                        tuple(sorted(set(terms[1 : 1 + kept]))),
                        tuple(sorted(set(negatives))),
                    )
                    if ground not in seen:
                        seen.add(ground)
                        program.rules.append(ground)
                        program.sources.append(rule.source)
        return program


def ground(
    rules: list[NormalRule],
    max_instances: int = DEFAULT_MAX_INSTANCES,
    deadline: float | None = None,
) -> GroundProgram:
    """Ground ``rules`` (validated, see :func:`~hiddenenvs.envs.gdl.validate.validate`)
    within ``max_instances`` and, if given, by the :func:`time.monotonic` ``deadline``."""
    return Grounder(rules, max_instances, deadline).instantiate()


__all__ = [
    "DEFAULT_MAX_INSTANCES",
    "GroundProgram",
    "Grounder",
    "ground",
]
