"""Pictures of GDL states (``GdlState.render_rgb``), for any sheet.

The true state: every fluent of the form ``(name row column value)`` with integer row and
column is drawn as a board (one per name, as :func:`hiddenenvs.envs.gdl.game.grid_text`
reads them: blank values empty, ``x`` and ``o`` in the seats' colours); a ``(dice A B)``
fluent with pips 1..6 (Meier) as two dice; the other fluents listed below in words.

A seat's view (GDL-II) is drawn from its own information-state key alone, never from
the true state: in a blind marking game (blind tic-tac-toe, :mod:`.seat_views`) the board
it knows (its own marks, the cells it found taken, untried cells shaded); in another
sheet the steps it knows in words, and in a sheet with ``(rolled V)`` / ``(shown V)``
percepts (Meier: V a two-digit roll) the dice of the current roll as it saw them, or two
covered dice if it has not seen this roll.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hiddenenvs.envs import _render
from hiddenenvs.envs.gdl.seat_views import (
    BLANK_VALUES,
    MARKS,
    blind_cells,
    is_blind_marking,
    plain_term,
)

WIDTH, HEIGHT = 4.4, 3.6  # inches
LINE_HEIGHT = 0.24  # inches per line of text
STEPS_SHOWN = 6  # of a seat's known steps, the last ones (the picture stays legible)
DICE_PERCEPTS = ("rolled", "shown")  # Meier's percepts that name the dice's value


def render_gdl(state: Any, player: int | None = None) -> np.ndarray:
    """The picture of ``state``: the true state (``player`` None, or any player of a
    GDL-I sheet, where every role sees every move), else ``player``'s view."""
    game = state.game
    _render.check_viewer(game, player)
    net = game.propnet
    seats = game.info.player_names
    name = game.params["sheet"] or game.NAME
    figure, axis = _render.canvas(WIDTH, HEIGHT, _render.seat_title(name, seats, player))
    if player is None or not net.has_sees:
        grids, dice, lines = _true_state(net.state_fluents(state.fluents))
        shaded: set = set()
    elif is_blind_marking(game, player):
        cells, own, theirs = blind_cells(game, state.information_state_key(player), player)
        shaded = {cell for cell, value in cells.items() if value == "."}
        grids = {f"{seats[player]}'s board": cells}
        dice = None
        lines = [f"{own}: yours, {theirs}: tried and found taken, shaded: untried"]
    else:
        grids, shaded = {}, set()
        dice, lines = _seat_knowledge(game, state, player)
    top = HEIGHT - 0.45
    if grids:
        top = _draw_grids(axis, grids, shaded, top)
    if dice is not None:
        _draw_dice(axis, dice, top)
        top -= 0.95
    room = max(0, int((top - 0.35) / LINE_HEIGHT))  # lines that fit above the status
    if len(lines) > room:
        lines = [*lines[: max(room - 1, 0)], "..."][:room]
    for line in lines:
        axis.text(0.2, top, line, ha="left", va="top", fontsize=10, color=_render.INK)
        top -= LINE_HEIGHT
    axis.text(WIDTH / 2, 0.1, _status(state), ha="center", va="bottom", fontsize=9, weight="bold")
    return _render.to_rgb(figure)


def _true_state(fluents: list[str]) -> tuple[dict, tuple[str, ...] | None, list[str]]:
    """The fluents split into boards (name to ``{(row, column): value}``), the dice's pips
    (or None) and the other fluents in words."""
    grids: dict[str, dict[tuple[int, int], str]] = {}
    dice = None
    others = []
    for fluent in fluents:
        words = plain_term(fluent).split()
        if len(words) == 4 and words[1].isdigit() and words[2].isdigit() and "(" not in fluent[1:]:
            value = "." if words[3].lower() in BLANK_VALUES else words[3]
            grids.setdefault(words[0], {})[(int(words[1]), int(words[2]))] = value
        elif words[0] == "dice" and len(words) == 3 and all(w in "123456" for w in words[1:]):
            dice = (words[1], words[2])
        else:
            others.append(plain_term(fluent))
    return grids, dice, _wrapped(", ".join(others))


def _seat_knowledge(game: Any, state: Any, player: int) -> tuple[tuple[str, ...] | None, list[str]]:
    """What ``player`` knows of a GDL-II game that is not a blind marking game: its known
    steps in words, and in a dice sheet (Meier) the dice under the cup as it saw them
    in its latest ``rolled``/``shown`` percept, covered (``"?"``) if it has not seen this
    roll (none yet, or an accept since: the next turn rolls anew)."""
    role = game.player_roles[player]
    percepts, moves = game.propnet.percept_names[role], game.propnet.move_names[role]
    key = state.information_state_key(player)
    steps = [text for text in (game.describe_step(player, *entry) for entry in key) if text]
    lines = [f"{i + 1}. {text}" for i, text in enumerate(steps)][-STEPS_SHOWN:]
    lines = [line for text in lines for line in _wrapped(text)] or ["nothing seen yet"]
    if not any(plain_term(name).split()[0] in DICE_PERCEPTS for name in percepts):
        return None, lines
    dice: tuple[str, ...] | None = None
    for move, seen in state.own_history(player):
        names = [plain_term(percepts[index]).split() for index in seen]
        if moves[move] == "accept" or ["accepted"] in names:
            dice = None  # the roll seen is over; the next is under the cup
        for words in names:
            if len(words) == 2 and words[0] in DICE_PERCEPTS and _is_roll(words[1]):
                dice = tuple(words[1])
    if dice is None:
        return ("?", "?"), ["the dice are under the cup: you have not seen this roll", *lines]
    return dice, ["the dice of this roll, as you saw them", *lines]


def _is_roll(value: str) -> bool:
    return len(value) == 2 and all(pip in "123456" for pip in value)


def _wrapped(text: str, width: int = 56) -> list[str]:
    import textwrap

    return textwrap.wrap(text, width) if text else []


def _draw_grids(axis: Any, grids: dict, shaded: set, top: float) -> float:
    """Each board side by side below ``top``; returns the height left below them."""
    from matplotlib.patches import Rectangle

    room = 2.1  # inches of height for the boards
    left, bottom = 0.3, top
    for name, cells in grids.items():
        rows = sorted({row for row, _ in cells})
        columns = sorted({column for _, column in cells})
        size = min(room / (len(rows) + 0.6), (WIDTH - 0.6) / len(grids) / (len(columns) + 0.6))
        axis.text(left, top, name, ha="left", va="top", fontsize=10, color=_render.INK)
        for i, row in enumerate(rows):
            y = top - 0.25 - (i + 1) * size
            axis.text(left + 0.12, y + size / 2, str(row), ha="center", va="center", fontsize=7)
            for j, column in enumerate(columns):
                x = left + 0.25 + j * size
                if i == 0:
                    axis.text(
                        x + size / 2, top - 0.2, str(column), ha="center", va="top", fontsize=7
                    )
                fill = "#c9c9c9" if (row, column) in shaded else _render.BOARD
                axis.add_patch(Rectangle((x, y), size, size, fc=fill, ec=_render.INK, lw=1))
                value = cells.get((row, column), "")
                if value not in (".", ""):
                    axis.text(
                        x + size / 2,
                        y + size / 2,
                        value,
                        ha="center",
                        va="center",
                        fontsize=max(7, 40 * size),
                        color=_mark_colour(value),
                    )
        left += 0.4 + (len(columns) + 0.6) * size
        bottom = min(bottom, top - 0.4 - len(rows) * size)
    return bottom


def _mark_colour(value: str) -> str:
    """x and o in the seats' colours (blind tic-tac-toe's xplayer, oplayer), else ink."""
    marks = list(MARKS.values())
    return _render.SEAT_COLOURS[marks.index(value)] if value in marks else _render.INK


def _draw_dice(axis: Any, dice: tuple[str, ...], top: float) -> None:
    """Two dice below ``top``: pips for a number, a covered die for ``"?"``."""
    for k, value in enumerate(dice):
        _render.die(axis, WIDTH / 2 - 0.45 + 0.9 * k, top - 0.45, value)


def _status(state: Any) -> str:
    """Returns at the end, else who is to move."""
    if state.is_terminal():
        return "returns " + " / ".join(f"{r:g}" for r in state.returns())
    movers = state.movers()
    if not movers:
        return "random to move"
    return "to move: " + ", ".join(state.game.info.player_names[p] for p in movers)
