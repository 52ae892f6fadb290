"""Reference reasoner for GDL and GDL-II: bottom-up evaluation of the rules, one state at a time.

This is the tests' second opinion on the grounder and the propnet, so it shares nothing with
them but the reader (:mod:`hiddenenvs.envs.gdl.parser`) and a graph routine (Tarjan's
strongly connected components, from :mod:`~hiddenenvs.envs.gdl.validate`). It evaluates the rules as a
stratified Datalog program, the textbook way (Abiteboul, Hull & Vianu, *Foundations of
Databases*, ch. 13 and 15; Love et al., *General Game Playing: Game Description Language
Specification*, 2008, sec. 3-4; Thielscher, *A General Game Description Language for
Incomplete Information Games*, AAAI 2010, for ``sees`` and ``random``):

1. ``(or ...)`` bodies are expanded into one rule per alternative, and ``(not (distinct a b))``
   becomes an equality test.
2. Relations are ordered by a dependency graph into strata (strongly connected components in
   topological order); a negative edge inside a component means the sheet is not stratified.
3. Each stratum is evaluated to its least fixpoint by semi-naive iteration: after the first
   round, a rule only fires again with at least one recursive body atom matched against the
   facts that are new since the last round. Body atoms are joined in order of fewest
   candidate facts, through hash indexes on the argument positions already bound.
4. Two rewritings keep bottom-up evaluation from deriving what nobody asks for: rules that
   ``legal``/``goal``/``terminal``/``next``/``sees``/``init`` do not depend on are dropped,
   and a relation that every body mentions with constants at some argument positions is
   only derived for those constants (a light form of magic sets: Bancilhon, Maier, Sagiv &
   Ullman, PODS 1986). Without the second, crisscross's ``count`` relation would be
   derived for every four-tuple of cells.

The relations split into three layers that are evaluated separately and cached: *static*
relations (no ``true``/``does`` below them, e.g. ``role``, ``init``, successor tables) once
per sheet; *state* relations (``legal``, ``goal``, ``terminal``, ...) once per state; *move*
relations (``next``, ``sees``, ...) once per state and joint move. ``base``/``input`` hints are
ignored (they are not needed to play, and published sheets often write them unsafely).

Terms are plain Python values, independent of the engine's encoding: a constant is its
lower-cased name (``"cell"``), a compound a tuple ``(functor, arg, ...)`` (``("cell", "1",
"1", "b")``); symbols compare case-insensitively as GDL requires, and :meth:`render` prints a
term with the spelling of the sheet. A state is a ``frozenset`` of such terms (the true
fluents), a joint move a sequence with one move per role in declaration order.

>>> reasoner = ReferenceReasoner.from_text('''
...     (role p) (init (count 0)) (succ 0 1) (succ 1 2)
...     (<= (legal p inc) (true (count ?n)))
...     (<= (next (count ?m)) (does p inc) (true (count ?n)) (succ ?n ?m))
...     (<= terminal (true (count 2))) (goal p 100)''')
>>> state = reasoner.initial_state()
>>> [reasoner.render(move) for move in reasoner.legal_moves(state)[0]]
['inc']
>>> state = reasoner.next_state(reasoner.next_state(state, ["inc"]), ["inc"])
>>> reasoner.is_terminal(state), reasoner.goals(state)
(True, [100])
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

from hiddenenvs.envs.gdl.parser import (
    AnyTerm,
    Compound,
    Distinct,
    GdlGroundingLimitError,
    GdlPlayError,
    GdlRuleError,
    GdlSafetyError,
    GdlStratificationError,
    Not,
    Or,
    RuleSheet,
    parse_file,
    parse_text,
)
from hiddenenvs.envs.gdl.validate import strongly_connected_components

# A relation is identified by its name and arity: ("cell", 3), ("terminal", 0).
TRUE = ("true", 1)
DOES = ("does", 2)
HINT_RELATIONS = {"base", "input"}
# What players ask about; every other relation matters only through these.
GAME_RELATIONS = {"role", "init", "legal", "next", "terminal", "goal", "sees"}

# Body literal kinds after expansion of `or`.
ATOM, NEGATED, DISTINCT, SAME = "atom", "not", "distinct", "same"


def is_variable(term) -> bool:
    return isinstance(term, str) and term.startswith("?")


def variables(term, out: set) -> set:
    if isinstance(term, tuple):
        for arg in term[1:]:
            variables(arg, out)
    elif is_variable(term):
        out.add(term)
    return out


def substitute(term, bindings: dict):
    """The term with its variables replaced by their bindings."""
    if isinstance(term, tuple):
        return (term[0],) + tuple(substitute(arg, bindings) for arg in term[1:])
    if is_variable(term):
        return bindings.get(term, term)
    return term


def match(pattern, ground, bindings: dict, trail: list) -> bool:
    """One-way unification of ``pattern`` with a ground term, extending ``bindings``.

    Variables bound here are appended to ``trail`` so the caller can undo them; on failure
    the caller undoes the trail as well.
    """
    if type(pattern) is tuple:
        if type(ground) is not tuple or len(ground) != len(pattern) or ground[0] != pattern[0]:
            return False
        for p, g in zip(pattern[1:], ground[1:]):
            if not match(p, g, bindings, trail):
                return False
        return True
    if pattern[0] == "?":
        bound = bindings.get(pattern)
        if bound is None:
            bindings[pattern] = ground
            trail.append(pattern)
            return True
        return bound == ground
    return pattern == ground


class _Rule:
    """One rule after `or` expansion: head relation and arguments, body literals."""

    __slots__ = ("atoms", "body", "head", "head_args", "location", "variables")

    def __init__(self, head, head_args, body, location):
        self.head = head
        self.head_args = head_args
        self.body = body  # [(ATOM|NEGATED, relation, args) | (DISTINCT|SAME, left, right)]
        self.location = location
        self.atoms = [i for i, literal in enumerate(body) if literal[0] == ATOM]
        self.variables = [_literal_variables(literal) for literal in body]
        self._check_safety()

    def describe(self) -> str:
        return f"the rule for {self.head[0]}/{self.head[1]} at {self.location}"

    def _check_safety(self) -> None:
        bound = set().union(*(self.variables[i] for i in self.atoms))
        for i, literal in enumerate(self.body):
            if literal[0] != ATOM and not self.variables[i] <= bound:
                unbound = ", ".join(sorted(self.variables[i] - bound))
                raise GdlSafetyError(
                    self.location,
                    f"{self.describe()}: variable(s) {unbound} "
                    f"of a negated literal or distinct are not bound by a "
                    f"positive literal",
                )
        head_variables = set().union(*(variables(arg, set()) for arg in self.head_args))
        if not head_variables <= bound:
            unbound = ", ".join(sorted(head_variables - bound))
            raise GdlSafetyError(
                self.location,
                f"{self.describe()}: head variable(s) "
                f"{unbound} are not bound by a positive literal",
            )

    def plan(self, first_atom: int | None, estimate, bound: set) -> list:
        """Body in evaluation order: ``first_atom`` (the semi-naive delta) first, then
        greedily the positive atom with the fewest candidate facts (``estimate(relation,
        key_positions)``), each test as soon as its variables are bound.

        An atom's step is ``(ATOM, relation, patterns, key_positions, rest)``: ``relation``
        and ``patterns`` after the per-functor view of ``true``, the argument positions that
        are ground when the step runs (looked up in an index) and the ``(position,
        pattern)`` pairs still to match. The delta atom has ``key_positions = None``: it is
        matched against the delta facts, argument by argument."""
        atoms = list(self.atoms)
        tests = [i for i in range(len(self.body)) if i not in atoms]
        bound = set(bound)
        order: list = []
        while True:
            for i in list(tests):
                if self.variables[i] <= bound:
                    order.append(self.body[i])
                    tests.remove(i)
            if not atoms:
                return order
            lookups = {i: _lookup(self.body[i], bound) for i in atoms}
            if first_atom in atoms:
                chosen = first_atom
                relation, patterns = self.body[chosen][1], self.body[chosen][2]
                key_positions = None
            else:
                chosen = min(atoms, key=lambda i: estimate(lookups[i][0], lookups[i][2]))
                relation, patterns, key_positions = lookups[chosen]
            rest = tuple(
                (k, p)
                for k, p in enumerate(patterns)
                if key_positions is None or k not in key_positions
            )
            atoms.remove(chosen)
            order.append((ATOM, relation, patterns, key_positions, rest))
            bound |= self.variables[chosen]


def _lookup(literal, bound: set):
    """(relation, argument patterns, positions ground under ``bound``) for a body atom,
    reading ``(true (f a b))`` as ``a b`` in the relation ``("true", "f", 2)``."""
    relation, patterns = literal[1], literal[2]
    if relation == TRUE and type(patterns[0]) is tuple:
        fluent = patterns[0]
        relation, patterns = ("true", fluent[0], len(fluent) - 1), fluent[1:]
    key_positions = tuple(k for k, p in enumerate(patterns) if variables(p, set()) <= bound)
    return relation, patterns, key_positions


def _literal_variables(literal) -> set:
    out: set = set()
    if literal[0] in (ATOM, NEGATED):
        for arg in literal[2]:
            variables(arg, out)
    else:
        variables(literal[1], out)
        variables(literal[2], out)
    return out


class _Facts:
    """Ground facts by relation, with indexes on argument positions built on first use.

    ``true`` facts are also filed under ``("true", functor, arity)`` with the fluent's own
    arguments, so that ``(true (cell ?m ?n b))`` looks up cells only.
    """

    __slots__ = ("indexes", "relations")

    def __init__(self, parent: _Facts | None = None):
        # A child layer shares the parent's relations and indexes: a layer is never
        # modified once a child exists.
        self.relations: dict = dict(parent.relations) if parent else {}
        self.indexes: dict = dict(parent.indexes) if parent else {}

    def get(self, relation) -> set:
        return self.relations.get(relation, ())

    def add(self, relation, args: tuple) -> bool:
        known = self.relations.get(relation)
        if known is None:
            known = self.relations[relation] = set()
            self.indexes[relation] = {}
        if args in known:
            return False
        known.add(args)
        for positions, index in self.indexes[relation].items():
            index.setdefault(tuple(args[k] for k in positions), []).append(args)
        if relation == TRUE and type(args[0]) is tuple:
            fluent = args[0]
            self.add(("true", fluent[0], len(fluent) - 1), fluent[1:])
        return True

    def new_relation(self, relation) -> None:
        """Give ``relation`` its own (empty) storage in this layer."""
        self.relations[relation] = set()
        self.indexes[relation] = {}

    def index(self, relation, positions: tuple) -> dict:
        """Values at ``positions`` -> facts of ``relation`` (built once, kept up to date)."""
        by_positions = self.indexes.setdefault(relation, {})
        index = by_positions.get(positions)
        if index is None:
            index = {}
            for args in self.relations.get(relation, ()):
                index.setdefault(tuple(args[k] for k in positions), []).append(args)
            by_positions[positions] = index
        return index

    def estimate(self, relation, positions: tuple) -> float:
        """Average number of facts of ``relation`` sharing values at ``positions``."""
        size = len(self.relations.get(relation, ()))
        if not size or not positions:
            return size
        return size / len(self.index(relation, positions))


class ReferenceReasoner:
    """Plays a rule sheet by evaluating its rules bottom-up, without grounding.

    ``cache_size`` states (and as many state/move pairs) keep their evaluated relations.
    ``max_derivations`` (None: no limit) bounds the rule firings of one evaluation (the
    sheet's static relations, a state's, or a state and joint move's): past it a
    ``GdlGroundingLimitError`` is raised, for callers that play sheets from strangers (the
    GGP player's fallback).
    """

    def __init__(self, sheet: RuleSheet, cache_size: int = 256, max_derivations: int | None = None):
        self.sheet = sheet
        self.max_derivations = max_derivations
        self._derivations_left = max_derivations
        self.spelling: dict[str, str] = {}
        self.rules: list[_Rule] = []
        facts: list = []
        for rule in sheet.rules:
            if rule.head.relation in HINT_RELATIONS:
                continue
            head = self._convert(rule.head)
            relation, head_args = _relation_of(head)
            if not rule.body:
                if any(variables(arg, set()) for arg in head_args):
                    raise GdlSafetyError(rule.loc, f"fact {rule.head} has variables")
                facts.append((relation, head_args))
                continue
            alternatives: list[list[tuple]] = [[]]  # body literals, as _Rule.body holds them
            for literal in rule.body:
                expanded = self._expand(literal)
                alternatives = [left + right for left in alternatives for right in expanded]
            for body in alternatives:
                self.rules.append(_Rule(relation, head_args, body, rule.loc))
        self._ground_facts: dict = {}
        for relation, args in facts:
            self._ground_facts.setdefault(relation, []).append(args)
        self.role_keys: list = [args[0] for args in self._ground_facts.get(("role", 1), ())]
        if not self.role_keys:
            raise GdlRuleError(None, f"{sheet.filename}: no (role ...) declared")
        self.roles: list[str] = [self.render(role) for role in self.role_keys]
        self._keep_relevant_rules()
        self._demand = self._constant_demand()
        self._strata = self._stratify()
        self._static = self._evaluate(_Facts(), "static")
        self._cache_size = cache_size
        self._state_cache: OrderedDict = OrderedDict()
        self._move_cache: OrderedDict = OrderedDict()

    @classmethod
    def from_file(cls, path: str | Path, **kwargs) -> ReferenceReasoner:
        return cls(parse_file(path), **kwargs)

    @classmethod
    def from_text(cls, text: str, filename: str = "<string>", **kwargs) -> ReferenceReasoner:
        return cls(parse_text(text, filename), **kwargs)

    # ------------------------------------------------------------------ terms

    def _convert(self, term: AnyTerm):
        if isinstance(term, Compound):
            self.spelling.setdefault(term.functor.name, term.functor.text)
            return (term.functor.name,) + tuple(self._convert(arg) for arg in term.args)
        self.spelling.setdefault(term.name, term.text)
        return term.name

    def parse_terms(self, text: str) -> list:
        """Ground terms written in KIF (any spacing, any case), e.g. ``"(cell 1 1 b) noop"``.

        They are read as the arguments of one wrapper term, so that ``(gameOver)`` stays a
        zero-arity function term (as in a fluent) rather than becoming a sentence."""
        wrapper = parse_text(f"(terms {text})", "<terms>").rules[0].head
        return [self._convert(term) for term in wrapper.args]

    def render(self, term) -> str:
        """KIF text of a term, with the spelling of the rule sheet."""
        if isinstance(term, tuple):
            return "(" + " ".join(self.render(part) for part in term) + ")"
        return self.spelling.get(term, term)

    def _expand(self, literal) -> list[list]:
        """The alternatives (conjunctions of simple literals) of a body literal."""
        if isinstance(literal, Or):
            return [alt for sub in literal.literals for alt in self._expand(sub)]
        if isinstance(literal, Distinct):
            return [[(DISTINCT, self._convert(literal.left), self._convert(literal.right))]]
        if isinstance(literal, Not):
            inner = literal.literal
            if isinstance(inner, Distinct):
                return [[(SAME, self._convert(inner.left), self._convert(inner.right))]]
            if isinstance(inner, Or):  # not (a or b) = (not a) and (not b)
                parts = [self._expand(Not(sub, literal.loc)) for sub in inner.literals]
                return [
                    list(itertools.chain.from_iterable(combo))
                    for combo in itertools.product(*parts)
                ]
            if isinstance(inner, Not):
                raise GdlRuleError(
                    literal.loc,
                    f"double negation {literal} is not supported by the reference reasoner",
                )
            relation, args = _relation_of(self._convert(inner))
            return [[(NEGATED, relation, args)]]
        relation, args = _relation_of(self._convert(literal))
        return [[(ATOM, relation, args)]]

    # ------------------------------------------------------------------ strata

    def _keep_relevant_rules(self) -> None:
        """Drop rules that nothing a player asks about (legal, goal, ...) depends on."""
        depends: dict = {}
        for rule in self.rules:
            depends.setdefault(rule.head, set()).update(
                literal[1] for literal in rule.body if literal[0] in (ATOM, NEGATED)
            )
        relevant = set()
        todo = [relation for relation in depends if relation[0] in GAME_RELATIONS]
        while todo:
            relation = todo.pop()
            if relation not in relevant:
                relevant.add(relation)
                todo.extend(depends.get(relation, ()))
        self.rules = [rule for rule in self.rules if rule.head in relevant]

    def _constant_demand(self) -> dict:
        """Demand from constants, a light form of the magic-sets rewriting (Bancilhon et
        al., PODS 1986): when every body literal that mentions a relation gives ground
        arguments at some positions, only facts with those argument values can ever be
        looked up, so its rules are evaluated for those values alone.

        Returns relation -> (positions, set of value tuples)."""
        calls: dict = {}
        for rule in self.rules:
            for literal in rule.body:
                if literal[0] in (ATOM, NEGATED):
                    calls.setdefault(literal[1], []).append(literal[2])
        demand = {}
        for relation, call_args in calls.items():
            if relation[0] in GAME_RELATIONS or relation in (TRUE, DOES):
                continue
            positions = tuple(
                k
                for k in range(relation[1])
                if all(not variables(args[k], set()) for args in call_args)
            )
            if positions:
                demand[relation] = (
                    positions,
                    {tuple(args[k] for k in positions) for args in call_args},
                )
        return demand

    def _stratify(self) -> list[tuple[str, list, set]]:
        """Strongly connected components of the relation graph in dependency order, each
        as (layer, rules, relations of the component)."""
        edges: dict = {}
        negative: set = set()
        for rule in self.rules:
            targets = edges.setdefault(rule.head, set())
            for literal in rule.body:
                if literal[0] in (ATOM, NEGATED):
                    targets.add(literal[1])
                    edges.setdefault(literal[1], set())
                    if literal[0] == NEGATED:
                        negative.add((rule.head, literal[1]))
        for relation in self._ground_facts:
            edges.setdefault(relation, set())
        components = strongly_connected_components(  # dependencies first
            list(edges), lambda relation: sorted(edges[relation], key=str)
        )
        component_of = {rel: i for i, comp in enumerate(components) for rel in comp}
        for head, body_relation in negative:
            if component_of[head] == component_of[body_relation]:
                rule = next(
                    r
                    for r in self.rules
                    if r.head == head
                    and any(lit[0] == NEGATED and lit[1] == body_relation for lit in r.body)
                )
                raise GdlStratificationError(
                    rule.location,
                    f"{rule.describe()}: negation of {body_relation[0]} through recursion",
                )
        layer_of: dict = {}
        strata = []
        for comp in components:
            layer = "static"
            for relation in comp:
                if relation == DOES:
                    layer = "move"
                elif relation == TRUE and layer == "static":
                    layer = "state"
                for dependency in edges[relation]:
                    if dependency in comp:
                        continue
                    dep_layer = layer_of[dependency]
                    if dep_layer == "move" or (dep_layer == "state" and layer == "static"):
                        layer = dep_layer
            for relation in comp:
                layer_of[relation] = layer
            rules = [rule for rule in self.rules if rule.head in comp]
            strata.append((layer, rules, set(comp)))
        self.layer_of = layer_of
        for relation, layer in (
            (("legal", 2), "state"),
            (("goal", 2), "state"),
            (("terminal", 0), "state"),
            (("init", 1), "static"),
        ):
            if _LAYERS.index(layer_of.get(relation, "static")) > _LAYERS.index(layer):
                raise GdlRuleError(
                    None,
                    f"{self.sheet.filename}: {relation[0]} depends on "
                    f"{'does' if layer_of[relation] == 'move' else 'true'}",
                )
        return strata

    def _evaluate(self, facts: _Facts, layer: str) -> _Facts:
        """Least fixpoint of every stratum of ``layer``, in order, into ``facts``."""
        self._derivations_left = self.max_derivations
        for stratum_layer, rules, component in self._strata:
            if stratum_layer != layer:
                continue
            for relation in component:
                if relation in (TRUE, DOES):
                    continue
                facts.new_relation(relation)
                for args in self._ground_facts.get(relation, ()):
                    facts.add(relation, args)
            self._fixpoint(facts, rules, component)
        return facts

    def _fixpoint(self, facts: _Facts, rules: list[_Rule], component: set) -> None:
        delta: dict = {}
        for rule in rules:
            for args in self._fire(rule, facts, None, None):
                if facts.add(rule.head, args):
                    delta.setdefault(rule.head, set()).add(args)
        recursive = [
            (rule, [i for i, lit in enumerate(rule.body) if lit[0] == ATOM and lit[1] in component])
            for rule in rules
        ]
        recursive = [(rule, positions) for rule, positions in recursive if positions]
        while delta and recursive:
            new_delta: dict = {}
            for rule, positions in recursive:
                for position in positions:
                    source = delta.get(rule.body[position][1])
                    if not source:
                        continue
                    for args in self._fire(rule, facts, position, source):
                        if facts.add(rule.head, args):
                            new_delta.setdefault(rule.head, set()).add(args)
            delta = new_delta

    def _fire(self, rule: _Rule, facts: _Facts, delta_position, delta_facts) -> list:
        """Heads derived by ``rule`` (for the demanded values only, see
        :meth:`_constant_demand`); with ``delta_position``, that body atom is matched
        against ``delta_facts`` only."""
        results: list[tuple] = []  # the derived heads' arguments
        demand = self._demand.get(rule.head)
        if demand is None:
            self._solve(rule, facts, delta_position, delta_facts, {}, results)
            return results
        positions, wanted = demand
        for values in wanted:
            bindings: dict = {}
            trail: list = []
            if all(
                match(rule.head_args[k], value, bindings, trail)
                for k, value in zip(positions, values)
            ):
                self._solve(rule, facts, delta_position, delta_facts, bindings, results)
        return results

    def _solve(
        self, rule: _Rule, facts: _Facts, delta_position, delta_facts, bindings: dict, results: list
    ) -> None:
        """Append to ``results`` the heads of ``rule`` for every way to satisfy its body
        that extends ``bindings``."""
        plan = rule.plan(delta_position, facts.estimate, set(bindings))
        last = len(plan)

        def solve(step: int) -> None:
            if step == last:
                if self._derivations_left is not None:
                    self._derivations_left -= 1
                    if self._derivations_left < 0:
                        raise self._too_many_derivations(rule)
                results.append(tuple(substitute(arg, bindings) for arg in rule.head_args))
                return
            literal = plan[step]
            kind = literal[0]
            if kind == ATOM:
                _, relation, patterns, key_positions, rest = literal
                if key_positions is None:
                    candidates = delta_facts
                elif key_positions:
                    key = tuple(substitute(patterns[k], bindings) for k in key_positions)
                    candidates = facts.index(relation, key_positions).get(key, ())
                else:
                    candidates = facts.get(relation)
                for fact in candidates:
                    trail: list = []
                    for k, pattern in rest:
                        if not match(pattern, fact[k], bindings, trail):
                            break
                    else:
                        solve(step + 1)
                    for name in trail:
                        del bindings[name]
            elif kind == NEGATED:
                ground = tuple(substitute(arg, bindings) for arg in literal[2])
                if ground not in facts.get(literal[1]):
                    solve(step + 1)
            else:
                equal = substitute(literal[1], bindings) == substitute(literal[2], bindings)
                if equal == (kind == SAME):
                    solve(step + 1)

        solve(0)

    def _too_many_derivations(self, rule: _Rule) -> GdlGroundingLimitError:
        return GdlGroundingLimitError(
            rule.location,
            f"the reference reasoner fired more than {self.max_derivations:,} rule "
            f"instances in one evaluation ({rule.describe()})",
        )

    # ------------------------------------------------------------------ game

    def _state_facts(self, state: frozenset) -> _Facts:
        cached = self._state_cache.get(state)
        if cached is not None:
            self._state_cache.move_to_end(state)
            return cached
        facts = _Facts(self._static)
        facts.new_relation(TRUE)
        for fluent in state:
            facts.add(TRUE, (fluent,))
        self._evaluate(facts, "state")
        self._state_cache[state] = facts
        if len(self._state_cache) > self._cache_size:
            self._state_cache.popitem(last=False)
        return facts

    def _move_facts(self, state: frozenset, joint: Sequence) -> _Facts:
        if len(joint) != len(self.role_keys):
            raise GdlPlayError(
                None,
                f"{self.sheet.filename}: a joint move needs one move per "
                f"role ({', '.join(self.roles)}), got {len(joint)}",
            )
        key = (state, tuple(joint))
        cached = self._move_cache.get(key)
        if cached is not None:
            self._move_cache.move_to_end(key)
            return cached
        facts = _Facts(self._state_facts(state))
        facts.new_relation(DOES)
        for role, move in zip(self.role_keys, joint):
            facts.add(DOES, (role, move))
        self._evaluate(facts, "move")
        self._move_cache[key] = facts
        if len(self._move_cache) > self._cache_size:
            self._move_cache.popitem(last=False)
        return facts

    def initial_state(self) -> frozenset:
        return frozenset(args[0] for args in self._static.get(("init", 1)))

    def legal_moves(self, state: frozenset) -> list[list]:
        """Each role's legal moves (in role order), sorted by their KIF text."""
        legal = self._state_facts(state).get(("legal", 2))
        return [
            sorted((move for role_key, move in legal if role_key == role), key=self.render)
            for role in self.role_keys
        ]

    def is_terminal(self, state: frozenset) -> bool:
        return () in self._state_facts(state).get(("terminal", 0))

    def goal_values(self, state: frozenset) -> list[list[int]]:
        """Every goal value each role has in ``state`` (GDL requires exactly one in a
        terminal state)."""
        goals = self._state_facts(state).get(("goal", 2))
        return [
            sorted(int(value) for role_key, value in goals if role_key == role)
            for role in self.role_keys
        ]

    def goals(self, state: frozenset) -> list[int | None]:
        """Each role's goal value; an error names a role with none or several. GDL-II's
        ``random`` role needs no goal (None when it has none)."""
        values = self.goal_values(state)
        for role, role_values in zip(self.roles, values):
            if len(role_values) > 1 or (not role_values and role.lower() != "random"):
                raise GdlPlayError(
                    None,
                    f"{self.sheet.filename}: role {role} has goal values "
                    f"{role_values} in this state, expected exactly one",
                )
        return [role_values[0] if role_values else None for role_values in values]

    def next_state(self, state: frozenset, joint: Sequence) -> frozenset:
        return frozenset(args[0] for args in self._move_facts(state, joint).get(("next", 1)))

    def percepts(self, state: frozenset, joint: Sequence) -> list[frozenset]:
        """What each role sees (``sees`` facts) when ``joint`` is played in ``state``."""
        sees = self._move_facts(state, joint).get(("sees", 2))
        return [
            frozenset(percept for role_key, percept in sees if role_key == role)
            for role in self.role_keys
        ]


_LAYERS = ("static", "state", "move")


def _relation_of(atom) -> tuple[tuple[str, int], tuple]:
    if isinstance(atom, tuple):
        return (atom[0], len(atom) - 1), atom[1:]
    return (atom, 0), ()
