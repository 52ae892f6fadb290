"""KIF reader for GDL and GDL-II rule sheets.

``parse_file(path)`` and ``parse_text(text, filename="<string>")`` turn a rule sheet into
a :class:`RuleSheet`: a tuple of :class:`Rule` objects, each a head and a body of literals.
The reader never recurses in Python, so deeply nested terms and very large files cannot
hit the interpreter's recursion limit.

Lexical rules
=============
- ``;`` starts a comment that runs to the end of the line.
- Tokens are ``(``, ``)`` and symbols (any run of characters other than white space,
  parentheses and ``;``). A symbol starting with ``?`` is a variable; every other symbol,
  numbers included, is a constant.
- Symbols compare case-insensitively (GDL spec) but keep their spelling for display:
  ``Const("X") == Const("x")`` and both hash alike; ``str()`` prints the spelling read.

Term representation
===================
Every term is immutable, carries ``loc`` (a :class:`Location`: ``filename``, ``line``,
``column``, 1-based; ``str(loc) == "file:line:column"``) and compares by structure with
case folded, never by location.

==================  ===============================================================
class               meaning
==================  ===============================================================
``Const``           constant ``name`` (lower-cased key), ``text`` (spelling)
``Var``             variable; ``name`` includes the ``?`` (lower-cased), ``text``
``Compound``        ``functor`` (a ``Const``) applied to ``args`` (tuple of terms)
==================  ===============================================================

Atoms (relations) are ``Const`` (zero arity, e.g. ``terminal``) or ``Compound``
(``(true (cell 1 1 b))``, ``(does ?r ?m)``, ``(legal ?r ?m)``). ``term.relation`` is the
lower-cased relation name of an atom and ``term.args`` its arguments (``()`` for a
``Const``).

Body literals are atoms or:

==================  ===============================================================
``Not(literal)``     negation as failure (``(not ...)``)
``Distinct(a, b)``  the two terms differ once grounded (``(distinct a b)``)
``Or(literals)``    disjunction (``(or ...)``), a tuple of literals
==================  ===============================================================

A rule is ``Rule(head, body, loc)``; a fact is a rule with an empty body. ``str(rule)``
prints it back as KIF. :class:`RuleSheet` holds ``rules`` (in file order),
``filename`` and ``text``; ``sheet.roles()`` lists the declared roles.

Hash-consing: each term's ``key`` is a small integer that identifies its folded
structure, so equality and hashing are O(1) whatever the nesting depth.

Errors
======
Every problem with a rule sheet raises a subclass of :class:`GdlError` whose message
reads ``"file:line:column: what is wrong"`` and names the rule concerned:
:class:`GdlSyntaxError` (reading), :class:`GdlSafetyError`, :class:`GdlStratificationError`,
:class:`GdlRecursionError`, :class:`GdlRuleError` (misuse of ``true``/``does``, roles,
goal values, arities), :class:`GdlGroundingLimitError` (instantiation too large) and
:class:`GdlPlayError` (problems found while playing, e.g. a role without a legal move).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from hiddenenvs.files import FileTooLargeError, read_regular_file

__all__ = [
    "Compound",
    "Const",
    "Distinct",
    "GdlError",
    "GdlGroundingLimitError",
    "GdlPlayError",
    "GdlRecursionError",
    "GdlRuleError",
    "GdlSafetyError",
    "GdlStratificationError",
    "GdlSyntaxError",
    "Literal",
    "Location",
    "Not",
    "Or",
    "Rule",
    "RuleSheet",
    "Term",
    "Var",
    "parse_file",
    "parse_text",
]


# ----------------------------------------------------------------------------- errors


class Location(NamedTuple):
    filename: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}:{self.column}"


class GdlError(Exception):
    """A problem with a rule sheet, located at ``location`` (a :class:`Location`)."""

    def __init__(self, location: Location | None, message: str):
        self.location = location
        self.message = message
        super().__init__(f"{location}: {message}" if location is not None else message)


MAX_ERROR_LINE_CHARS = 500


def error_line(error: GdlError) -> str:
    """A refused rule sheet as the one line a command prints (``train.py``,
    ``evaluate.py``): ``file:line:column: message``, whitespace folded, at most
    :data:`MAX_ERROR_LINE_CHARS` characters, and the kind of refusal when the message alone
    does not say it (``GdlSafetyError``: "rule sheet refused (safety): ..."; a
    ``GdlPlayError``, raised in play: "rule sheet failed in play: ...")."""
    kind = type(error).__name__.removeprefix("Gdl").removesuffix("Error")
    words = " ".join(re.findall(r"[A-Z][a-z]*", kind)).lower()
    label = "rule sheet failed in play" if isinstance(error, GdlPlayError) else "rule sheet refused"
    if words and words != "play":
        label += f" ({words})"
    text = " ".join(str(error).split())
    return abbreviated(f"{label}: {text}", MAX_ERROR_LINE_CHARS)


class GdlSyntaxError(GdlError):
    """Unbalanced parentheses, junk, or a form that is not GDL."""


class GdlSafetyError(GdlError):
    """A variable of a head, ``distinct`` or negated literal not bound by a positive literal."""


class GdlStratificationError(GdlError):
    """Negation through recursion: the rules cannot be stratified."""


class GdlRecursionError(GdlError):
    """Recursion that breaks GDL's recursion restriction (unbounded terms)."""


class GdlRuleError(GdlError):
    """Misuse of GDL keywords: ``true``/``does`` placement, roles, goal values, arity."""


class GdlGroundingLimitError(GdlError):
    """Instantiating the rules would exceed the configured size limit."""


class GdlPlayError(GdlError):
    """A problem reached while playing (e.g. a role with no legal move)."""


# ----------------------------------------------------------------------------- terms

# Hash-consing table: folded structure -> small integer key. Shared by all sheets.
# ``STRUCTURES[key]`` is the structure back: ``("c", name)``, ``("v", name)`` or
# ``(functor_key, argument_keys)``; the grounder builds ground terms directly as keys.
_INTERN: dict = {}
STRUCTURES: list = []


def intern_structure(structure) -> int:
    key = _INTERN.get(structure)
    if key is None:
        key = len(STRUCTURES)
        _INTERN[structure] = key
        STRUCTURES.append(structure)
    return key


_intern = intern_structure


class Term:
    __slots__ = ("key", "loc")
    key: int  # the hash-consing key of the folded structure
    loc: Location | None  # None for a term built in code rather than read from a sheet
    is_variable: bool
    args: tuple[AnyTerm, ...]

    def __eq__(self, other) -> bool:
        return isinstance(other, Term) and self.key == other.key

    def __hash__(self) -> int:
        return self.key

    def __str__(self) -> str:
        return to_kif(self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({to_kif(self)!r})"


class Const(Term):
    __slots__ = ("name", "text")
    is_variable = False
    args: tuple = ()

    def __init__(self, text: str, loc: Location | None = None):
        self.text = text
        self.name = text.lower()
        self.loc = loc
        self.key = _intern(("c", self.name))

    @property
    def relation(self) -> str:
        return self.name


class Var(Term):
    __slots__ = ("name", "text")
    is_variable = True
    args: tuple = ()

    def __init__(self, text: str, loc: Location | None = None):
        self.text = text
        self.name = text.lower()
        self.loc = loc
        self.key = _intern(("v", self.name))


class Compound(Term):
    __slots__ = ("args", "functor", "has_variables")
    is_variable = False
    has_variables: bool

    def __init__(self, functor: Const, args: tuple, loc: Location | None = None):
        self.functor = functor
        self.args = tuple(args)
        self.loc = loc if loc is not None else functor.loc
        self.has_variables = any(
            a.is_variable or (isinstance(a, Compound) and a.has_variables) for a in self.args
        )
        self.key = _intern((functor.key, tuple(a.key for a in self.args)))

    @property
    def relation(self) -> str:
        return self.functor.name


# Every term is one of the three kinds; annotating with the union lets the checker narrow.
AnyTerm = Const | Var | Compound


def has_variables(term: Term) -> bool:
    return term.is_variable or (isinstance(term, Compound) and term.has_variables)


def variables_of(term: Term) -> list[Var]:
    """Variables of a term in order of first appearance (iterative)."""
    seen: dict[int, Var] = {}
    stack = [term]
    while stack:
        t = stack.pop()
        if isinstance(t, Var):
            seen.setdefault(t.key, t)
        elif isinstance(t, Compound) and t.has_variables:
            stack.extend(reversed(t.args))
    return list(seen.values())


@dataclass(frozen=True)
class Not:
    literal: Literal
    loc: Location | None = None

    def __str__(self) -> str:
        return f"(not {self.literal})"


@dataclass(frozen=True)
class Distinct:
    left: AnyTerm
    right: AnyTerm
    loc: Location | None = None

    def __str__(self) -> str:
        return f"(distinct {self.left} {self.right})"


@dataclass(frozen=True)
class Or:
    literals: tuple
    loc: Location | None = None

    def __str__(self) -> str:
        return "(or " + " ".join(str(lit) for lit in self.literals) + ")"


Atom = Const | Compound
Literal = Atom | Not | Distinct | Or


def to_kif(term: Term) -> str:
    """KIF text of a term with its original spelling, e.g. ``(cell 1 1 b)`` (iterative)."""
    out: list[str] = []
    stack: list = [term]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, Compound):
            stack.append(")")
            for arg in reversed(item.args):
                stack.append(arg)
                stack.append(" ")
            out.append("(" + item.functor.text)
        else:
            out.append(item.text)
    return "".join(out)


@dataclass(frozen=True)
class Rule:
    head: Atom
    body: tuple
    loc: Location

    def __str__(self) -> str:
        if not self.body:
            return str(self.head)
        return f"(<= {self.head} " + " ".join(str(lit) for lit in self.body) + ")"

    def describe(self) -> str:
        """Short text for error messages: the rule's head and where it starts."""
        return f"rule for {self.head}" if self.body else f"fact {self.head}"


@dataclass(frozen=True)
class RuleSheet:
    rules: tuple
    filename: str
    text: str = ""

    def roles(self) -> list[Const]:
        return [
            r.head.args[0]
            for r in self.rules
            if not r.body and r.head.relation == "role" and len(r.head.args) == 1
        ]

    def __len__(self) -> int:
        return len(self.rules)


# ----------------------------------------------------------------------------- reader

_TOKEN = re.compile(r"\s+|;[^\n]*|\(|\)|[^\s();]+")
# KIF symbol characters besides letters and digits; anything else (quotes, commas,
# brackets, control characters) is junk rather than a symbol.
_SYMBOL_PUNCTUATION = frozenset("!$%&*+-./<=>?@_~^:#")
KEYWORD_FORMS = {"not": 1, "distinct": 2}
# Size limits, checked before and while reading (reading costs tens of microseconds a
# token, and every later stage grows with the sheet): the largest of ggp-base's published
# sheets are 70 KB and 579 sentences, so these leave several times that room while a
# sheet at the limits is read, refused or loaded in seconds.
MAX_SHEET_BYTES = 512 * 1024
MAX_SENTENCES = 10_000  # top-level rules and facts


def parse_file(
    path, max_bytes: int = MAX_SHEET_BYTES, max_sentences: int = MAX_SENTENCES
) -> RuleSheet:
    """Read a rule sheet from ``path`` (errors name the file as given); a file larger than
    ``max_bytes`` is refused before it is read."""
    path = Path(path)
    try:
        text = read_regular_file(path, max_bytes).decode("utf-8")
    except FileTooLargeError as exc:
        raise _too_large(str(path), exc.size, max_bytes) from None
    except OSError as exc:
        raise GdlSyntaxError(Location(str(path), 0, 0), f"cannot read rule sheet: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise GdlSyntaxError(Location(str(path), 1, 1), f"not UTF-8 text: {exc}") from exc
    return parse_text(text, filename=str(path), max_bytes=max_bytes, max_sentences=max_sentences)


def parse_text(
    text: str,
    filename: str = "<string>",
    max_bytes: int = MAX_SHEET_BYTES,
    max_sentences: int = MAX_SENTENCES,
) -> RuleSheet:
    """Parse KIF ``text`` into a :class:`RuleSheet` (syntax checks only; see validation).

    Refused with a :class:`GdlSyntaxError`: text over ``max_bytes`` (UTF-8), before
    reading; more than ``max_sentences`` top-level rules and facts, at the first one over.
    """
    if len(text) > max_bytes or len(text.encode("utf-8")) > max_bytes:
        raise _too_large(filename, len(text.encode("utf-8")), max_bytes)
    items = _read_terms(text, filename, max_sentences)
    return RuleSheet(tuple(_to_rule(item, filename) for item in items), filename, text)


def abbreviated(text: str, limit: int = 60) -> str:
    """``text``, or its start and length when longer than ``limit`` (a 5,000-digit constant
    is not echoed whole into a one-line error)."""
    if len(text) <= limit:
        return text
    suffix = f"... ({len(text):,} characters)"
    return text[: max(0, limit - len(suffix))] + suffix


def goal_value(text: str) -> int | None:
    """The goal value a constant names (an integer 0..100, ASCII digits), else None.
    ``str.isdigit`` takes ``²`` and ``int`` refuses 5,000 digits: both are checked first."""
    digits = text.lstrip("0")
    if not (text.isascii() and text.isdigit() and len(digits) <= 3):
        return None
    value = int(digits or "0")
    return value if value <= 100 else None


def _too_large(filename: str, size: int, max_bytes: int) -> GdlSyntaxError:
    return GdlSyntaxError(
        Location(filename, 1, 1),
        f"the rule sheet is {size:,} bytes, more than the limit of "
        f"{max_bytes:,} (published GDL sheets are under 100 KB)",
    )


class _Open(NamedTuple):
    loc: Location
    items: list


def _read_terms(text: str, filename: str, max_sentences: int = MAX_SENTENCES) -> list[AnyTerm]:
    """Tokens -> top-level terms with an explicit stack of open parentheses."""
    top: list[AnyTerm] = []
    stack: list[_Open] = []
    line, line_start = 1, 0
    for match in _TOKEN.finditer(text):
        token = match.group()
        start = match.start()
        first = token[0]
        if first.isspace():
            newlines = token.count("\n")
            if newlines:
                line += newlines
                line_start = start + token.rindex("\n") + 1
            continue
        if first == ";":
            continue
        loc = Location(filename, line, start - line_start + 1)
        if token == "(":
            stack.append(_Open(loc, []))
        elif token == ")":
            if not stack:
                raise GdlSyntaxError(loc, "unbalanced ')': no '(' is open here")
            opened = stack.pop()
            term: AnyTerm = _make_compound(opened, filename)
            (stack[-1].items if stack else top).append(term)
            if not stack and len(top) > max_sentences:
                raise GdlSyntaxError(
                    opened.loc,
                    f"the sheet has more than {max_sentences:,} "
                    f"rules and facts (the limit); this is the first beyond it",
                )
        else:
            for offset, char in enumerate(token):
                if not (char.isalnum() or char in _SYMBOL_PUNCTUATION):
                    junk_loc = Location(filename, line, start - line_start + 1 + offset)
                    raise GdlSyntaxError(
                        junk_loc,
                        f"unexpected character {char!r} in {token!r} "
                        f"(KIF symbols use letters, digits and "
                        f"{''.join(sorted(_SYMBOL_PUNCTUATION))})",
                    )
            term = Var(token, loc) if first == "?" else Const(token, loc)
            if stack:
                stack[-1].items.append(term)
            else:
                top.append(term)
    if stack:
        raise GdlSyntaxError(
            stack[-1].loc,
            f"unbalanced '(': {len(stack)} parenthes"
            f"{'is' if len(stack) == 1 else 'es'} still open at end of file "
            f"(the innermost opens here)",
        )
    return top


def _make_compound(opened: _Open, filename: str) -> Compound:
    if not opened.items:
        raise GdlSyntaxError(opened.loc, "empty list '()' is not a GDL term")
    functor, *args = opened.items
    if not isinstance(functor, Const):
        what = "a variable" if isinstance(functor, Var) else "a list"
        raise GdlSyntaxError(
            opened.loc, f"a term must start with a symbol, found {what}: {to_kif(functor)}"
        )
    # "(gameOver)" is a zero-arity function term, distinct from the constant gameOver (as
    # in ggp-base); as a sentence, "(terminal)" is the proposition terminal (_as_atom).
    return Compound(functor, tuple(args), opened.loc)


def _as_atom(term: AnyTerm) -> AnyTerm:
    if isinstance(term, Compound) and not term.args:
        return Const(term.functor.text, term.loc)
    return term


def _to_rule(item: AnyTerm, filename: str) -> Rule:
    item = _as_atom(item)
    if isinstance(item, Var):
        raise GdlSyntaxError(item.loc, f"a variable cannot stand alone as a sentence: {item.text}")
    assert item.loc is not None  # read from the sheet, so located
    if isinstance(item, Compound) and item.relation == "<=":
        head = _as_atom(item.args[0])
        if not isinstance(head, (Const, Compound)) or (
            isinstance(head, Compound) and head.relation in ("<=", "not", "or", "distinct")
        ):
            raise GdlSyntaxError(item.loc, f"the head of a rule must be an atom, found {head}")
        body = tuple(_to_literal(lit, head) for lit in item.args[1:])
        return Rule(head, body, item.loc)
    if isinstance(item, Const) and item.name == "<=":
        raise GdlSyntaxError(item.loc, "'<=' outside a rule")
    if isinstance(item, Compound) and item.relation in ("not", "or", "distinct"):
        raise GdlSyntaxError(item.loc, f"'{item.functor.text}' cannot be a fact: {item}")
    return Rule(item, (), item.loc)


def _to_literal(term: Term, head: Term) -> Literal:
    """Convert a body term into a literal; nested not/or are converted with a stack."""
    # Post-order over the not/or structure: (term, converted-children list or None).
    results: list = []
    stack: list = [(term, False)]
    while stack:
        node, expanded = stack.pop()
        if not expanded:
            node = _as_atom(node)
        if isinstance(node, Var):
            raise GdlSyntaxError(
                node.loc, f"in the rule for {head}: a variable cannot be a literal: {node.text}"
            )
        name = node.relation if isinstance(node, (Const, Compound)) else None
        if isinstance(node, Compound) and name in ("not", "or"):
            if not expanded:
                if name == "not" and len(node.args) != 1:
                    raise GdlSyntaxError(
                        node.loc,
                        f"in the rule for {head}: 'not' takes one "
                        f"literal, found {len(node.args)}: {node}",
                    )
                stack.append((node, True))
                for arg in node.args:
                    stack.append((arg, False))
                continue
            count = len(node.args)
            children = [results.pop() for _ in range(count)]  # popped in source order
            results.append(
                Not(children[0], node.loc) if name == "not" else Or(tuple(children), node.loc)
            )
            continue
        if name in ("not", "or", "distinct") and isinstance(node, Const):
            raise GdlSyntaxError(node.loc, f"in the rule for {head}: '{node.text}' needs arguments")
        if name == "distinct":
            if len(node.args) != 2:
                raise GdlSyntaxError(
                    node.loc,
                    f"in the rule for {head}: 'distinct' takes two "
                    f"terms, found {len(node.args)}: {node}",
                )
            results.append(Distinct(node.args[0], node.args[1], node.loc))
            continue
        if name == "<=":
            raise GdlSyntaxError(node.loc, f"in the rule for {head}: a rule inside a rule body")
        results.append(node)
    return results[0]
