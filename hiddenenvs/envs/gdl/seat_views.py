"""Seat views of GDL-II games for a person: what one role knows, drawn in the game's terms.

In GDL-II a role knows only its own moves and percepts (its information-state key), so
its view is a function of that key alone, never of the true state.
:meth:`hiddenenvs.envs.gdl.game.GdlGame.describe_view` asks :func:`seat_view`, which
draws the view of the sheets it recognises and gives None for the others (their steps, in
words, say it all).

Recognised: **blind marking games** such as blind tic-tac-toe (``blind_tictactoe``,
``biased_blind_tictactoe``): every move of the role is ``(mark ROW COLUMN)`` (or
``noop``) and its percepts are ``ok`` and ``fail``. A role that marked a cell and saw
``ok`` holds it; one that saw ``fail`` found it taken, which in these sheets means the
opponent holds it (a cell is tried once, and a try fails only on a marked cell or one the
opponent won in the same step). So the role's board shows its own marks, the cells it
found taken, and nothing of the cells it has not tried::

    xplayer's board
    (x yours, o found taken, . untried)
        1 2 3
    1   x . o
    2   . x .
    3   o . .
"""

from __future__ import annotations

from typing import Any

BLANK_VALUES = frozenset({"b", "blank", "empty"})  # the sheets' ways to spell an empty cell


def plain_term(text: str) -> str:
    """A GDL term for a person, outer brackets dropped: ``(claim 32)`` is ``claim 32``."""
    return text[1:-1] if text.startswith("(") and text.endswith(")") else text


MARKS = {"xplayer": "x", "oplayer": "o"}  # blind tic-tac-toe's roles and their marks


def _marked_cell(move: str) -> tuple[int, int] | None:
    """``(row, column)`` of a ``(mark ROW COLUMN)`` move; None for any other move."""
    words = plain_term(move).split()
    if len(words) == 3 and words[0] == "mark" and words[1].isdigit() and words[2].isdigit():
        return int(words[1]), int(words[2])
    return None


def is_blind_marking(game: Any, player: int) -> bool:
    """The role's moves are all ``(mark ROW COLUMN)`` (or ``noop``) and it perceives only
    ``ok`` and ``fail``: a blind marking game (module docstring)."""
    net = game.propnet
    role = game.player_roles[player]
    moves = [move for move in net.move_names[role] if move != "noop"]
    return (
        bool(moves)
        and all(_marked_cell(move) is not None for move in moves)
        and set(net.percept_names[role]) <= {"ok", "fail"}
    )


def blind_cells(game: Any, key: tuple, player: int) -> tuple[dict[tuple[int, int], str], str, str]:
    """The cells ``player`` knows from its information-state ``key``, ``(row, column)`` to
    its own mark, the opponent's mark (tried and found taken) or ``.`` (untried); and the
    two marks (module docstring)."""
    net = game.propnet
    role = game.player_roles[player]
    name = net.roles[role]
    own = MARKS.get(name, "#")
    theirs = next((mark for role_name, mark in MARKS.items() if role_name != name), "?")
    moves, percepts = net.move_names[role], net.percept_names[role]
    cells = {cell: "." for cell in map(_marked_cell, moves) if cell is not None}
    for _, private in key:
        if private is None:  # a step the role took no part in (random's tiebreak)
            continue
        own_move, seen = private
        cell = _marked_cell(moves[own_move])
        if cell is not None and seen:
            cells[cell] = own if percepts[seen[0]] == "ok" else theirs
    return cells, own, theirs


def blind_board(game: Any, key: tuple, player: int) -> str:
    """The board ``player`` knows from its information-state ``key``: its own marks, the
    cells it tried and found taken, ``.`` for the others (module docstring)."""
    name = game.propnet.roles[game.player_roles[player]]
    cells, own, theirs = blind_cells(game, key, player)
    rows = sorted({row for row, _ in cells})
    columns = sorted({column for _, column in cells})
    lines = [
        f"{name}'s board",
        f"({own} yours, {theirs} found taken, . untried)",
        "    " + " ".join(str(column) for column in columns),
    ]
    lines += [f"{row}   " + " ".join(cells[row, column] for column in columns) for row in rows]
    return "\n".join(lines)


def seat_view(game: Any, state: Any, player: int) -> str | None:
    """``player``'s view drawn from its key, for a sheet this module recognises; else None."""
    if is_blind_marking(game, player):
        return blind_board(game, state.information_state_key(player), player)
    return None
