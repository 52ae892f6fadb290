"""GGP messages as KIF S-expressions: read (with limits), write, compare.

A message is a symbol or a parenthesised list of messages, tokenised by the rule-sheet
reader's own lexical rules (:mod:`hiddenenvs.envs.gdl.parser`: ``;`` comments, symbols,
parentheses). :func:`read_message` returns ``str`` for a symbol and ``list`` for a list;
:func:`to_kif` writes one back. Symbols compare case-insensitively (GDL), so
:func:`normalise` gives the canonical spelling of a term for comparisons (lower case,
one space between tokens, none inside parentheses: ``(mark 1 1)``).

Limits: a message may hold at most :data:`MAX_MESSAGE_TOKENS` tokens and nest
:data:`MAX_MESSAGE_DEPTH` deep; anything else (unbalanced parentheses, junk, two
top-level terms) raises :class:`MessageError` saying what and where. The rule sheet a
START message carries is checked again, as any sheet, by the GDL reader and grounder.
"""

from __future__ import annotations

from hiddenenvs.envs.gdl.parser import _TOKEN

MAX_MESSAGE_BYTES = 4_000_000  # an HTTP body; a large rule sheet is about 100 KB
MAX_MESSAGE_TOKENS = 1_000_000
MAX_MESSAGE_DEPTH = 200

Message = str | list


class MessageError(ValueError):
    """A GGP message that is not one well-formed KIF term."""


def read_message(text: str) -> Message:
    """The one KIF term in ``text`` (see the module docstring)."""
    top: list = []
    stack: list[list] = []
    tokens = 0
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token[0].isspace() or token[0] == ";":
            continue
        tokens += 1
        if tokens > MAX_MESSAGE_TOKENS:
            raise MessageError(f"message has more than {MAX_MESSAGE_TOKENS:,} tokens (the limit)")
        if token == "(":
            if len(stack) >= MAX_MESSAGE_DEPTH:
                raise MessageError(
                    f"message nests deeper than {MAX_MESSAGE_DEPTH} (the limit) at "
                    f"character {match.start()}"
                )
            stack.append([])
        elif token == ")":
            if not stack:
                raise MessageError(f"unbalanced ')' at character {match.start()}")
            finished = stack.pop()
            (stack[-1] if stack else top).append(finished)
        else:
            (stack[-1] if stack else top).append(token)
    if stack:
        raise MessageError(f"unbalanced '(': {len(stack)} still open at the end of the message")
    if len(top) != 1:
        raise MessageError(f"expected one KIF term, found {len(top)}: {text[:80]!r}")
    return top[0]


def to_kif(message: Message) -> str:
    """KIF text of ``message`` (lists in parentheses, one space between items)."""
    if isinstance(message, str):
        return message
    return "(" + " ".join(to_kif(item) for item in message) + ")"


def normalise(text: str) -> str:
    """The canonical spelling of a KIF term, for case- and spacing-blind comparison."""
    return to_kif(read_message(text)).lower()


def is_nil(message: Message) -> bool:
    return message == [] or (isinstance(message, str) and message.lower() == "nil")
