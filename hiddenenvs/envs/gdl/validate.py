"""Normalisation and static validation of a GDL / GDL-II rule sheet, before any play.

``validate(sheet) -> list[NormalRule]`` expands ``or`` into separate rules (De Morgan under
``not``), then checks, each failure a :class:`~hiddenenvs.envs.gdl.parser.GdlError`
subclass located at ``file:line:column`` and naming the rule:

- limits, checked before anything is expanded: a rule's ``or`` literals may expand into at
  most :data:`MAX_OR_ALTERNATIVES` (4,096) rules and the whole sheet into at most
  :data:`MAX_NORMAL_RULES` (200,000), counted before expanding (26 ``(or a b)`` literals in
  one body would be 67 million rules); a term may nest at most :data:`MAX_TERM_DEPTH` (100)
  levels deep (the grounder's term handling recurses) (GdlSyntaxError);
- roles: at least one ``(role r)``, each a ground fact, no duplicates, and each with at
  least one ``legal`` rule that can apply to it, so a role that could never move is found
  at load time, not at play time (GdlRuleError, at the role's declaration);
- keywords: ``true``/``does`` only in bodies; ``init``/``next``/``sees`` only in heads;
  ``legal``, ``goal``, ``terminal``, ``init`` must not depend on ``does``; ``init`` must not
  depend on ``true`` (GdlRuleError, with the chain of rules that creates the dependency);
  ground goal values must be integers 0..100 (GdlRuleError);
- safety: every variable of the head, of a negated literal and of a ``distinct`` occurs in
  a positive body atom (GdlSafetyError);
- stratification: no negation inside a recursive cycle (GdlStratificationError);
- recursion restriction (Love et al., GDL specification, 2008, section 3.5): in a rule whose
  head ``p`` is in the same dependency cycle as a body atom ``q(v1..vk)``, every ``vj`` is
  ground, is an argument of the head, or has its variables bound by positive body atoms
  outside the cycle (GdlRecursionError).

``base`` and ``input`` rules are optional hints the engine does not need: when nothing else
depends on them they are dropped unchecked (published sheets often write them unsafely).
When another rule depends on them they are checked like any other rule.
"""

from __future__ import annotations

from dataclasses import dataclass

from hiddenenvs.envs.gdl.parser import (
    AnyTerm,
    Atom,
    Compound,
    Const,
    Distinct,
    GdlRecursionError,
    GdlRuleError,
    GdlSafetyError,
    GdlStratificationError,
    GdlSyntaxError,
    Literal,
    Location,
    Not,
    Or,
    Rule,
    RuleSheet,
    Term,
    abbreviated,
    goal_value,
    has_variables,
    variables_of,
)

HINT_RELATIONS = ("base", "input")
MAX_OR_ALTERNATIVES = 4_096  # rules one rule's (or ...) literals may expand into
MAX_NORMAL_RULES = 200_000  # rules the whole sheet may expand into
MAX_TERM_DEPTH = 100  # nesting levels of one term (a constant or variable is depth 1)
OUTPUT_RELATIONS = ("legal", "goal", "terminal", "next", "sees", "init", "role")


# A conjunction of signed simple literals (True: positive), one alternative of a body.
Conjunction = list[tuple[bool, Atom | Distinct]]
# The two terms of a (distinct a b) and where it stands.
TermPair = tuple[AnyTerm, AnyTerm, Location | None]


@dataclass(frozen=True)
class NormalRule:
    """A rule without ``or``: head, positive atoms, negated atoms, distinct and equal pairs."""

    head: Atom
    positives: tuple[Atom, ...]
    negatives: tuple[Atom, ...]
    distincts: tuple[TermPair, ...]  # must differ
    equals: tuple[TermPair, ...]  # from (not (distinct a b)), must be equal
    source: Rule

    def where(self) -> str:
        return f"the {self.source.describe()} at line {self.source.loc.line}"


def _expand(literal: Literal, positive: bool = True) -> list[Conjunction]:
    """Alternatives (a disjunction of conjunctions) of signed simple literals."""
    if isinstance(literal, Or):
        parts = [_expand(lit, positive) for lit in literal.literals]
        if positive:  # or: any alternative of any part
            return [alt for part in parts for alt in part]
        result: list[Conjunction] = [[]]  # not (or a b) = (not a) and (not b)
        for part in parts:
            result = [left + right for left in result for right in part]
        return result
    if isinstance(literal, Not):
        return _expand(literal.literal, not positive)
    return [[(positive, literal)]]


def _count_alternatives(literal) -> int:
    """How many alternatives :func:`_expand` would make, without making them (iterative)."""
    # Post-order over (literal, positive); Or nodes combine their parts' counts.
    counts: list[int] = []
    stack: list = [(literal, True, False)]
    while stack:
        node, positive, combine = stack.pop()
        if isinstance(node, Not):
            stack.append((node.literal, not positive, False))
        elif isinstance(node, Or) and not combine:
            stack.append((node, positive, True))
            stack.extend((part, positive, False) for part in node.literals)
        elif isinstance(node, Or):
            parts = [counts.pop() for _ in node.literals]
            total = 1 if not positive else 0
            for part in parts:  # or: parts add up; not (or ...): they multiply
                total = total + part if positive else total * part
            counts.append(total)
        else:
            counts.append(1)
    return counts[0]


def _term_depth(term) -> int:
    """Nesting depth of a term (iterative: the sheet may nest arbitrarily)."""
    deepest = 0
    stack = [(term, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if isinstance(node, Compound):
            stack.extend((arg, depth + 1) for arg in node.args)
    return deepest


def _check_sizes(rule: Rule) -> int:
    """Refuse a rule past the documented limits; the number of rules it expands into."""
    atoms: list[Term] = [rule.head]
    alternatives = 1
    literals = list(rule.body)
    while literals:
        literal = literals.pop()
        if isinstance(literal, Not):
            literals.append(literal.literal)
        elif isinstance(literal, Or):
            literals.extend(literal.literals)
        elif isinstance(literal, Distinct):
            atoms += [literal.left, literal.right]
        else:
            atoms.append(literal)
    for atom in atoms:
        if _term_depth(atom) > MAX_TERM_DEPTH:
            raise GdlSyntaxError(
                _location_of(atom, rule.loc),
                f"a term in the {rule.head.relation!r} rule at line {rule.loc.line} "
                f"nests more than {MAX_TERM_DEPTH} levels deep (the limit)",
            )
    for literal in rule.body:
        alternatives *= _count_alternatives(literal)
        if alternatives > MAX_OR_ALTERNATIVES:
            raise GdlSyntaxError(
                rule.loc,
                f"{rule.describe()}: its (or ...) literals expand into "
                f"more than {MAX_OR_ALTERNATIVES:,} rules (the limit); split the "
                f"rule or factor the disjunctions into auxiliary relations",
            )
    return alternatives


def normalise(sheet: RuleSheet) -> list[NormalRule]:
    expanded_total = sum(_check_sizes(rule) for rule in sheet.rules)
    if expanded_total > MAX_NORMAL_RULES:
        raise GdlSyntaxError(
            Location(sheet.filename, 1, 1),
            f"the sheet's {len(sheet.rules):,} rules expand into "
            f"{expanded_total:,} rules once (or ...) is expanded, more than "
            f"the limit of {MAX_NORMAL_RULES:,}",
        )
    rules = []
    for rule in sheet.rules:
        alternatives: list[Conjunction] = [[]]
        try:
            for literal in rule.body:
                expanded = _expand(literal)
                alternatives = [left + right for left in alternatives for right in expanded]
        except RecursionError:
            raise GdlSyntaxError(rule.loc, f"{rule.describe()}: not/or nested too deeply") from None
        for alternative in alternatives:
            positives: list[Atom] = []
            negatives: list[Atom] = []
            distincts: list[TermPair] = []
            equals: list[TermPair] = []
            for positive, literal in alternative:
                if isinstance(literal, Distinct):
                    (distincts if positive else equals).append(
                        (literal.left, literal.right, literal.loc)
                    )
                else:
                    (positives if positive else negatives).append(literal)
            rules.append(
                NormalRule(
                    rule.head,
                    tuple(positives),
                    tuple(negatives),
                    tuple(distincts),
                    tuple(equals),
                    rule,
                )
            )
    return rules


def _location_of(term: Term, fallback: Location | None) -> Location | None:
    return term.loc if term.loc is not None else fallback


def validate(sheet: RuleSheet) -> list[NormalRule]:
    """Normalised rules of ``sheet`` that the engine needs, after every static check."""
    rules = normalise(sheet)
    _check_keywords(sheet, rules)
    rules = _drop_unneeded_hints(rules)
    for rule in rules:
        _check_safety(rule)
    graph = _dependency_graph(rules)
    components = _component_ids(graph)
    _check_stratification(rules, components)
    _check_recursion(rules, components)
    _check_dependencies(rules, graph)
    return rules


# ----------------------------------------------------------------------------- checks


def _check_keywords(sheet: RuleSheet, rules: list[NormalRule]) -> None:
    origin = Location(sheet.filename, 1, 1)
    roles: dict[int, Rule] = {}  # role key -> its declaration
    for rule in rules:
        head, source = rule.head, rule.source
        relation = head.relation
        if relation in ("true", "does"):
            raise GdlRuleError(
                _location_of(head, source.loc),
                f"'{relation}' cannot be the head of a rule ({source.describe()}); "
                f"it is given by the state or the joint move",
            )
        if relation in ("not", "distinct", "or"):
            raise GdlSyntaxError(head.loc, f"'{relation}' cannot be the head of a rule")
        if relation == "role":
            if source.body or len(head.args) != 1 or has_variables(head):
                raise GdlRuleError(
                    head.loc, f"roles must be ground facts (role name); found {source}"
                )
            role = head.args[0]
            if role.key in roles:
                raise GdlRuleError(
                    head.loc,
                    f"role {role} is declared twice (first at line {roles[role.key].loc.line})",
                )
            roles[role.key] = source
        if relation in ("legal", "does", "sees") and len(head.args) != 2:
            raise GdlRuleError(
                head.loc, f"'{relation}' takes two arguments (role and move), found {head}"
            )
        if relation == "goal":
            if len(head.args) != 2:
                raise GdlRuleError(
                    head.loc, f"'goal' takes two arguments (role and value), found {head}"
                )
            _check_goal_value(head.args[1], rule.where(), head.loc)
        if relation in ("init", "next", "true") and len(head.args) != 1:
            raise GdlRuleError(head.loc, f"'{relation}' takes one argument, found {head}")
        for atom in rule.positives + rule.negatives:
            if not isinstance(atom, (Const, Compound)):
                raise GdlSyntaxError(source.loc, f"{rule.where()}: {atom} is not an atom")
            name = atom.relation
            if name in ("init", "next", "sees"):
                raise GdlRuleError(
                    atom.loc,
                    f"'{name}' may only appear in rule heads, found "
                    f"{atom} in the body of {rule.where()}",
                )
            if name in ("true",) and len(atom.args) != 1:
                raise GdlRuleError(atom.loc, f"'true' takes one argument, found {atom}")
            if name == "does" and len(atom.args) != 2:
                raise GdlRuleError(atom.loc, f"'does' takes two arguments, found {atom}")
    if not roles:
        raise GdlRuleError(origin, "no roles: the rule sheet declares no (role ...) fact")
    # A legal rule applies to a role when its first argument is that role or a variable.
    legal_for = {
        head.args[0].key if not has_variables(head.args[0]) else None
        for head in (rule.head for rule in rules)
        if head.relation == "legal"
    }
    for key, declaration in roles.items():
        if key not in legal_for and None not in legal_for:
            raise GdlRuleError(
                declaration.loc,
                f"role {declaration.head.args[0]} has no legal rule "
                f"in {sheet.filename}: it could never move",
            )
    if not any(rule.head.relation == "terminal" for rule in rules):
        raise GdlRuleError(origin, "no terminal rule: the game could never end")


def _check_goal_value(value: Term, where: str, loc: Location | None) -> None:
    if has_variables(value):
        return  # checked on the ground goal propositions
    if not isinstance(value, Const) or goal_value(value.name) is None:
        raise GdlRuleError(
            _location_of(value, loc),
            f"goal value {abbreviated(str(value))} in {abbreviated(where, 120)} is not an "
            f"integer between 0 and 100",
        )


def _drop_unneeded_hints(rules: list[NormalRule]) -> list[NormalRule]:
    used = {
        atom.relation
        for rule in rules
        for atom in rule.positives + rule.negatives
        if rule.head.relation not in HINT_RELATIONS
    }
    return [
        rule
        for rule in rules
        if rule.head.relation not in HINT_RELATIONS or rule.head.relation in used
    ]


def _check_safety(rule: NormalRule) -> None:
    bound = {var.key for atom in rule.positives for var in variables_of(atom)}
    places: list[tuple[str, Term]] = [("head", rule.head)]
    places += [(f"negated literal (not {atom})", atom) for atom in rule.negatives]
    for left, right, loc in rule.distincts:
        places += [(f"(distinct {left} {right})", left), (f"(distinct {left} {right})", right)]
    for left, right, loc in rule.equals:
        places += [
            (f"(not (distinct {left} {right}))", left),
            (f"(not (distinct {left} {right}))", right),
        ]
    for place, term in places:
        for var in variables_of(term):
            if var.key not in bound:
                raise GdlSafetyError(
                    _location_of(var, rule.source.loc),
                    f"unsafe variable {var.text} in {rule.where()}: it appears "
                    f"in the {place} but in no positive body literal",
                )


def _dependency_graph(rules: list[NormalRule]) -> dict[str, list[tuple[str, bool, NormalRule]]]:
    """relation -> [(body relation, negated?, rule)] (``or`` already expanded)."""
    graph: dict[str, list] = {}
    for rule in rules:
        edges = graph.setdefault(rule.head.relation, [])
        edges += [(atom.relation, False, rule) for atom in rule.positives]
        edges += [(atom.relation, True, rule) for atom in rule.negatives]
    return graph


def strongly_connected_components(nodes, successors) -> list[list]:
    """Tarjan's algorithm without recursion; components come dependencies first."""
    index: dict = {}
    low: dict = {}
    on_stack: set = set()
    stack: list = []
    components: list[list] = []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(successors(root)))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(successors(child))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(component)
    return components


def _component_ids(graph: dict) -> dict[str, int]:
    """relation -> its strongly connected component's number (recursive iff shared/looped)."""
    components = strongly_connected_components(
        list(graph), lambda node: [edge[0] for edge in graph.get(node, [])]
    )
    return {member: number for number, component in enumerate(components) for member in component}


def _recursive(head: str, body: str, components: dict[str, int]) -> bool:
    return body in components and components.get(head) == components[body]


def _check_stratification(rules: list[NormalRule], components: dict[str, int]) -> None:
    for rule in rules:
        for atom in rule.negatives:
            if _recursive(rule.head.relation, atom.relation, components):
                raise GdlStratificationError(
                    _location_of(atom, rule.source.loc),
                    f"negation through recursion in {rule.where()}: (not {atom}) depends on "
                    f"'{rule.head.relation}' itself, so the rules cannot be stratified",
                )


def _check_recursion(rules: list[NormalRule], components: dict[str, int]) -> None:
    for rule in rules:
        head = rule.head.relation
        recursive = [a for a in rule.positives if _recursive(head, a.relation, components)]
        if not recursive:
            continue
        outside = {
            var.key
            for atom in rule.positives
            if atom not in recursive
            for var in variables_of(atom)
        }
        head_args = set(rule.head.args)
        for atom in recursive:
            for argument in atom.args:
                if not has_variables(argument) or argument in head_args:
                    continue
                if all(var.key in outside for var in variables_of(argument)):
                    continue
                raise GdlRecursionError(
                    _location_of(argument, rule.source.loc),
                    f"recursion breaks GDL's restriction in {rule.where()}: the argument "
                    f"{argument} of the recursive literal {atom} is neither ground, nor an "
                    f"argument of the head, nor bound by a non-recursive positive literal "
                    f"(such recursion can build unboundedly large terms)",
                )


def _dependency_chain(graph: dict, start: str, target: str) -> list[NormalRule] | None:
    """Rules leading from relation ``start`` to relation ``target`` (breadth first)."""
    previous: dict[str, tuple[str, NormalRule] | None] = {start: None}
    frontier = [start]
    while frontier:
        next_frontier = []
        for relation in frontier:
            for body, _negated, rule in graph.get(relation, []):
                if body in previous:
                    continue
                previous[body] = (relation, rule)
                if body == target:
                    chain = []
                    node = body
                    while (step := previous[node]) is not None:
                        node, via = step
                        chain.append(via)
                    return chain[::-1]
                next_frontier.append(body)
        frontier = next_frontier
    return None


def _check_dependencies(rules: list[NormalRule], graph: dict) -> None:
    forbidden = [
        ("legal", "does"),
        ("goal", "does"),
        ("terminal", "does"),
        ("init", "does"),
        ("init", "true"),
    ]
    for relation, keyword in forbidden:
        if relation not in graph:
            continue
        chain = _dependency_chain(graph, relation, keyword)
        if chain:
            steps = " -> ".join(
                f"line {rule.source.loc.line} ({rule.head.relation})" for rule in chain
            )
            last = chain[-1]
            culprit = next(
                (atom for atom in last.positives + last.negatives if atom.relation == keyword),
                last.head,
            )
            raise GdlRuleError(
                _location_of(culprit, last.source.loc),
                f"'{relation}' must not depend on '{keyword}', but it does "
                f"through {steps}: {culprit} in {last.where()}",
            )


__all__ = ["NormalRule", "normalise", "strongly_connected_components", "validate"]
