"""Pictures for the envs' ``rgb_array`` render mode, drawn with matplotlib's Agg canvas.

matplotlib is imported inside the functions: the base install has none, and every env
must still import and play without it (only ``render_rgb`` needs it, and says so).
A picture is drawn on an axis whose data units are inches of the figure (``width`` by
``height``, origin bottom left), so sizes read the same in every picture.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

DPI = 100  # pixels per inch of the pictures
FELT = "#2e7d4f"  # the poker table's cloth
FELT_EDGE = "#6d4c2f"
CARD_BACK = "#2c4f9e"
CHIP = "#c0392b"
INK = "#1b1b1b"
BOARD = "#f3e6c8"  # a board's squares, a matrix's cells
HIGHLIGHT = "#f5b83d"  # the chosen cell, the current bid
SEAT_COLOURS = ("#1f5fbf", "#c2361f", "#2e8b57", "#8e44ad")  # player 0, 1, 2, 3


def canvas(width: float, height: float, title: str) -> tuple[Any, Any]:
    """A blank ``width`` x ``height`` inch figure and its axis in inches, titled."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError(
            "render_rgb draws the picture with matplotlib; pip install 'hiddenenvs[render]' "
            "(or use render_mode='ansi')"
        ) from None
    figure = Figure(figsize=(width, height), dpi=DPI)
    axis = figure.add_axes((0, 0, 1, 1))
    axis.set_xlim(0, width)
    axis.set_ylim(0, height)
    axis.axis("off")
    axis.text(width / 2, height - 0.12, title, ha="center", va="top", fontsize=11, color=INK)
    return figure, axis


def to_rgb(figure: Any) -> np.ndarray:
    """The figure drawn by the Agg canvas as an ``(H, W, 3)`` uint8 array."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    agg = FigureCanvasAgg(figure)
    agg.draw()
    return np.asarray(agg.buffer_rgba())[..., :3].copy()


def card(axis: Any, x: float, y: float, label: str | None, width: float = 0.5) -> None:
    """A playing card centred at ``(x, y)``: ``label`` face up, face down for None, an
    empty dashed place for ``""`` (not dealt yet)."""
    from matplotlib.patches import FancyBboxPatch

    height = 1.4 * width
    box = (x - width / 2, y - height / 2)
    style = "round,pad=0,rounding_size=0.06"
    if label == "":
        axis.add_patch(
            FancyBboxPatch(
                box, width, height, boxstyle=style, fill=False, ec="#aaaaaa", ls="--", lw=1
            )
        )
        return
    face_up = label is not None
    axis.add_patch(
        FancyBboxPatch(
            box,
            width,
            height,
            boxstyle=style,
            fc="white" if face_up else CARD_BACK,
            ec=INK,
            lw=1.2,
            hatch=None if face_up else "xx",
        )
    )
    if face_up:
        axis.text(x, y, label, ha="center", va="center", fontsize=22 * width / 0.5, color=INK)


def chip_stack(axis: Any, x: float, y: float, count: int, caption: str) -> None:
    """``count`` chips stacked at ``(x, y)`` (at most 12 drawn), the caption to the left."""
    from matplotlib.patches import Ellipse

    for level in range(min(count, 12)):
        axis.add_patch(
            Ellipse((x, y + 0.05 * level), 0.3, 0.12, fc=CHIP, ec="white", lw=0.8, zorder=3)
        )
    axis.text(x - 0.25, y, caption, ha="right", va="center", fontsize=8, color="white")


def poker_table(
    title: str,
    seats: Sequence[str],
    cards: Sequence[str | None],
    in_pot: Sequence[int],
    betting: str,
    status: str,
    public: str | None = None,
) -> np.ndarray:
    """Two seats at a table: seat 0 below, seat 1 above, each with its card (None: face
    down) and the chips it has put in; the public card in the middle (``""``: not dealt
    yet; None: the game has none); the betting so far and the status below the table."""

    width, height = 4.4, 3.6
    figure, axis = canvas(width, height, title)
    from matplotlib.patches import Ellipse  # after canvas(), which explains a missing matplotlib

    axis.add_patch(Ellipse((2.2, 1.95), 4.1, 2.75, fc=FELT, ec=FELT_EDGE, lw=6))
    for seat, y in ((0, 0.95), (1, 2.95)):
        colour = SEAT_COLOURS[seat]
        axis.text(
            0.55,
            y,
            seats[seat],
            ha="center",
            va="center",
            fontsize=9,
            color="white",
            bbox={"boxstyle": "round", "fc": colour, "ec": "none"},
        )
        card(axis, 1.55 if public is not None else 2.2, y, cards[seat], width=0.42)
        chip_stack(axis, 3.6, y - 0.15, in_pot[seat], f"in pot {in_pot[seat]}")
    pot_x = 2.2
    if public is not None:
        axis.text(1.95, 1.95, "public", ha="right", va="center", fontsize=8, color="white")
        card(axis, 2.3, 1.95, public, width=0.42)
        pot_x = 3.3
    axis.text(
        pot_x, 1.95, f"pot {sum(in_pot)}", ha="center", va="center", fontsize=10, color="white"
    )
    axis.text(width / 2, 0.3, betting, ha="center", va="center", fontsize=8.5, color=INK)
    axis.text(
        width / 2, 0.1, status, ha="center", va="center", fontsize=8.5, color=INK, weight="bold"
    )
    return to_rgb(figure)


def seat_title(game_name: str, seats: Sequence[str], player: int | None) -> str:
    """A picture's title: the game, and whose view it is (the true state for None)."""
    if player is None:
        return f"{game_name}: true state"
    return f"{game_name}: seen by {seats[player]}"


def check_viewer(game: Any, player: int | None) -> None:
    """``player`` must be None (the true state) or a seat of ``game``."""
    if player is not None and not 0 <= player < game.info.num_players:
        raise ValueError(
            f"{game.NAME}: render_rgb(player=...) takes a seat 0..{game.info.num_players - 1} "
            f"or None (the true state), got {player!r}"
        )


PIPS = {  # a die's pips on a 3 x 3 lattice, (column, row) from the top left
    1: [(1, 1)],
    2: [(0, 0), (2, 2)],
    3: [(0, 0), (1, 1), (2, 2)],
    4: [(0, 0), (2, 0), (0, 2), (2, 2)],
    5: [(0, 0), (2, 0), (1, 1), (0, 2), (2, 2)],
    6: [(0, 0), (2, 0), (0, 1), (2, 1), (0, 2), (2, 2)],
}


def die(axis: Any, x: float, y: float, value: str, size: float = 0.7) -> None:
    """A die centred at ``(x, y)`` showing ``value`` (``"1"`` to ``"6"``) in pips, or
    covered (face down, a ``?``) for any other value."""
    from matplotlib.patches import Circle, FancyBboxPatch

    shown = value in ("1", "2", "3", "4", "5", "6")
    axis.add_patch(
        FancyBboxPatch(
            (x - size / 2, y - size / 2),
            size,
            size,
            boxstyle=f"round,pad=0,rounding_size={size / 6}",
            fc="white" if shown else CARD_BACK,
            ec=INK,
            lw=1.5,
        )
    )
    if not shown:
        axis.text(x, y, "?", ha="center", va="center", fontsize=28 * size, color="white")
        return
    step = size / 3.6
    for column, row in PIPS[int(value)]:
        centre = (x + (column - 1) * step, y - (row - 1) * step)
        axis.add_patch(Circle(centre, size / 12, fc=INK, ec="none"))


def dice_cups(
    title: str,
    seats: Sequence[str],
    hands: Sequence[Sequence[str]],
    bid: str,
    bid_face: str | None,
    bids: str,
    status: str,
) -> np.ndarray:
    """Two seats' dice on a table, seat 0 below and seat 1 above (``"?"``: a die under
    the cup, unseen), the current bid in the middle (with a die of its face), the bids so
    far and the status below."""

    width, height = 4.4, 3.6
    figure, axis = canvas(width, height, title)
    from matplotlib.patches import Ellipse  # after canvas(), which explains a missing matplotlib

    axis.add_patch(Ellipse((2.2, 1.95), 4.1, 2.75, fc=FELT, ec=FELT_EDGE, lw=6))
    size = 0.42
    for seat, y in ((0, 0.95), (1, 2.95)):
        axis.text(
            0.55,
            y,
            seats[seat],
            ha="center",
            va="center",
            fontsize=9,
            color="white",
            bbox={"boxstyle": "round", "fc": SEAT_COLOURS[seat], "ec": "none"},
        )
        hand = hands[seat]
        for k, value in enumerate(hand):
            die(axis, 2.45 + (k - (len(hand) - 1) / 2) * (size + 0.08), y, value, size)
    axis.text(
        2.2 if bid_face is None else 2.05,
        1.95,
        bid,
        ha="center",
        va="center",
        fontsize=11,
        color="white",
        weight="bold",
    )
    if bid_face is not None:
        die(axis, 2.95, 1.95, bid_face, 0.34)
    axis.text(width / 2, 0.3, bids, ha="center", va="center", fontsize=8.5, color=INK)
    axis.text(
        width / 2, 0.1, status, ha="center", va="center", fontsize=8.5, color=INK, weight="bold"
    )
    return to_rgb(figure)


def goofspiel_table(
    title: str,
    seats: Sequence[str],
    prizes: Sequence[str],
    bids: Sequence[Sequence[str | None]],
    winners: Sequence[int | None],
    hands: Sequence[Sequence[str | None]],
    scores: Sequence[int],
    status: str,
) -> np.ndarray:
    """Goofspiel's rounds as columns: the prize (point) card of each round revealed so far
    in the middle row, each seat's bid card of the round above and below it (None: face
    down, unseen; the winning bid on a gold ground), each seat's hand at its edge (None:
    unseen cards) and its points."""

    width, height = 4.4, 3.6
    figure, axis = canvas(width, height, title)
    from matplotlib.patches import Rectangle  # after canvas(), which explains a missing matplotlib

    slots = max(len(prizes), len(hands[0]) + len(bids[0]), 1)
    step = min(0.5, 3.2 / slots)
    card_width = min(0.82 * step, 0.36)
    left = 1.15 + card_width / 2
    rows = {"hand1": 3.05, "bid1": 2.42, "prize": 1.8, "bid0": 1.18, "hand0": 0.56}
    axis.text(0.1, rows["prize"], "prize", ha="left", va="center", fontsize=9, color=INK)
    for seat in (0, 1):
        for row, caption in ((f"bid{seat}", "bids"), (f"hand{seat}", "hand")):
            label = f"{seats[seat]}\n{caption}" + (
                f" ({scores[seat]} pts)" if caption == "bids" else ""
            )
            axis.text(
                0.1,
                rows[row],
                label,
                ha="left",
                va="center",
                fontsize=7.5,
                color=SEAT_COLOURS[seat],
            )
        for k, rank in enumerate(hands[seat]):
            card(axis, left + k * step, rows[f"hand{seat}"], rank, card_width)
    for k, prize in enumerate(prizes):
        x = left + k * step
        card(axis, x, rows["prize"], prize, card_width)
        for seat in (0, 1):
            if k < len(bids[seat]):
                y = rows[f"bid{seat}"]
                if winners[k] == seat:
                    axis.add_patch(
                        Rectangle(
                            (x - step / 2, y - 0.8 * step),
                            step,
                            1.6 * step,
                            fc=HIGHLIGHT,
                            ec="none",
                        )
                    )
                card(axis, x, y, bids[seat][k], card_width)
            else:
                card(axis, x, rows[f"bid{seat}"], "", card_width)
    axis.text(
        width / 2, 0.1, status, ha="center", va="center", fontsize=8.5, color=INK, weight="bold"
    )
    return to_rgb(figure)


def payoff_matrix(
    title: str,
    seats: Sequence[str],
    actions: Sequence[str],
    payoff: np.ndarray,
    chosen: tuple[int, int] | None,
    status: str,
) -> np.ndarray:
    """A two-player zero-sum payoff matrix: seat 0 picks the row, seat 1 the column, each
    cell the two payoffs; the chosen cell (once both have played) on gold."""

    width, height = 4.4, 3.6
    figure, axis = canvas(width, height, title)
    from matplotlib.patches import Rectangle  # after canvas(), which explains a missing matplotlib

    n = len(actions)
    size = min(0.85, 2.4 / n)
    left, top = 1.35, 2.75
    axis.text(
        left + n * size / 2,
        top + 0.42,
        f"{seats[1]} plays",
        ha="center",
        va="center",
        fontsize=9,
        color=SEAT_COLOURS[1],
    )
    axis.text(
        0.12,
        top - n * size / 2,
        f"{seats[0]}\nplays",
        ha="left",
        va="center",
        fontsize=9,
        color=SEAT_COLOURS[0],
    )
    for j, name in enumerate(actions):
        axis.text(
            left + (j + 0.5) * size,
            top + 0.15,
            name,
            ha="center",
            va="center",
            fontsize=8,
            color=SEAT_COLOURS[1],
        )
    for i, name in enumerate(actions):
        y = top - (i + 1) * size
        axis.text(
            left - 0.08,
            y + size / 2,
            name,
            ha="right",
            va="center",
            fontsize=8,
            color=SEAT_COLOURS[0],
        )
        for j in range(n):
            x = left + j * size
            fill = HIGHLIGHT if chosen == (i, j) else BOARD
            axis.add_patch(Rectangle((x, y), size, size, fc=fill, ec=INK, lw=1))
            value = payoff[i, j]
            axis.text(
                x + 0.3 * size,
                y + 0.62 * size,
                f"{value:+g}",
                ha="center",
                va="center",
                fontsize=9,
                color=SEAT_COLOURS[0],
            )
            axis.text(
                x + 0.7 * size,
                y + 0.32 * size,
                f"{-value + 0.0:+g}",
                ha="center",
                va="center",
                fontsize=9,
                color=SEAT_COLOURS[1],
            )
    axis.text(
        width / 2, 0.1, status, ha="center", va="center", fontsize=8.5, color=INK, weight="bold"
    )
    return to_rgb(figure)
