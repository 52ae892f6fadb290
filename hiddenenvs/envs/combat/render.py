"""Pictures of a battle: an RGB image, a compact text summary, each side's view in text
(:func:`commander_seat_ansi`, :func:`fighter_seat_ansi`: what a seat's units see, for
human play and the leaderboard's replays) and a matplotlib window.

Image legend: green ground, grey obstacles, dark grey walls, brown doors, destination
areas outlined in red; attackers are orange-red squares, defenders blue, with a dark
centre that shrinks as health falls; with ``visibility_team`` the cells that team does
not see are darkened (fog of war).
"""

from __future__ import annotations

import os

import numpy as np

from hiddenenvs.envs.combat.maps import DOOR, GROUND, OBSTACLE, TEAMS, WALL
from hiddenenvs.envs.combat.simulation import MAX_HEALTH, Battle

TERRAIN_COLOURS = {
    GROUND: (118, 170, 92),
    OBSTACLE: (140, 140, 140),
    WALL: (70, 70, 70),
    DOOR: (150, 100, 50),
}
TEAM_COLOURS = ((230, 80, 30), (40, 90, 230))
DESTINATION_COLOUR = (220, 30, 30)


def cell_scale(battle: Battle) -> int:
    """Pixels per cell: about 480 pixels for the whole map, at least 2 per cell."""
    return max(2, 480 // max(battle.map.height, battle.map.width))


def visible_cells(battle: Battle, team: int) -> np.ndarray:
    """(num_cells,) bool: the cells some live fighter of ``team`` sees now."""
    combat_map = battle.map
    radius = battle.rules.sight_range
    seen = np.zeros(combat_map.num_cells, dtype=bool)
    d_rows, d_cols = np.mgrid[-radius : radius + 1, -radius : radius + 1]
    inside_circle = (d_rows**2 + d_cols**2 <= radius**2).ravel()
    d_rows, d_cols = d_rows.ravel()[inside_circle], d_cols.ravel()[inside_circle]
    members = battle.team_slice(team)
    for cell in battle.positions[members][battle.alive[members]]:
        row, col = divmod(int(cell), combat_map.width)
        rows, cols = row + d_rows, col + d_cols
        on_map = (rows >= 0) & (rows < combat_map.height) & (cols >= 0) & (cols < combat_map.width)
        others = rows[on_map] * combat_map.width + cols[on_map]
        seen[others[battle.line_of_sight(np.full(len(others), cell), others)]] = True
    return seen


def render_rgb(battle: Battle, visibility_team: int | None = None) -> np.ndarray:
    """An (H * s, W * s, 3) uint8 picture of the battle (s = :func:`cell_scale`)."""
    combat_map = battle.map
    scale = cell_scale(battle)
    palette = np.zeros((4, 3), dtype=np.uint8)
    for code, colour in TERRAIN_COLOURS.items():
        palette[code] = colour
    cells = palette[combat_map.codes]
    if visibility_team is not None:
        fog = ~visible_cells(battle, visibility_team).reshape(combat_map.codes.shape)
        cells[fog] = (cells[fog] * 0.45).astype(np.uint8)
    image = np.repeat(np.repeat(cells, scale, axis=0), scale, axis=1)

    size = combat_map.area_size * scale
    for area in combat_map.destination_areas:
        top, left = divmod(int(area), combat_map.areas_per_row)
        top, left = top * size, left * size
        image[top : top + size, [left, left + size - 1]] = DESTINATION_COLOUR
        image[[top, top + size - 1], left : left + size] = DESTINATION_COLOUR

    marker = max(2, scale + scale // 2)
    for fighter in np.flatnonzero(battle.alive):
        team = int(fighter >= battle.rules.team_size)
        row, col = divmod(int(battle.positions[fighter]), combat_map.width)
        top = max(0, row * scale + scale // 2 - marker // 2)
        left = max(0, col * scale + scale // 2 - marker // 2)
        image[top : top + marker, left : left + marker] = TEAM_COLOURS[team]
        missing = 1.0 - battle.health[fighter] / MAX_HEALTH
        hole = round(missing * (marker - 2))
        if hole > 0:
            inset = (marker - hole) // 2
            image[top + inset : top + inset + hole, left + inset : left + inset + hole] = (
                20,
                20,
                20,
            )
    return image


def render_ansi(battle: Battle, winner: int | None) -> str:
    """A compact summary: tick, both teams, doors, and fighters per area (a/d digits)."""
    combat_map = battle.map
    size = battle.rules.team_size
    alive = battle.alive
    lines = [f"tick {battle.tick}/{battle.rules.max_ticks}"]
    for team, name in enumerate(TEAMS):
        members = battle.team_slice(team)
        lines.append(
            f"{name}: {int(alive[members].sum())}/{size} alive, health {int(battle.health[members].sum())}, "
            f"sees {int(battle.seen_enemies(team).sum())} enemies"
        )
    lines.append("door occupancy: " + " ".join(map(str, battle.door_occupancy().tolist())))
    if winner is not None:
        lines.append("result: " + ("mutual elimination" if winner < 0 else f"{TEAMS[winner]} win"))
    areas = combat_map.area_of_cell[battle.positions]
    counts = np.zeros((2, combat_map.num_areas), dtype=int)
    np.add.at(counts, (np.arange(2 * size) // size, areas), alive)
    destinations = set(combat_map.destination_areas.tolist())
    for area_row in range(combat_map.areas_per_column):
        row = []
        for area in range(
            area_row * combat_map.areas_per_row, (area_row + 1) * combat_map.areas_per_row
        ):
            attackers, defenders = counts[0, area], counts[1, area]
            text = (f"a{attackers}" if attackers else "") + (f"d{defenders}" if defenders else "")
            row.append((text or ("*" if area in destinations else ".")).rjust(4))
        lines.append("".join(row))
    return "\n".join(lines)


def commander_seat_ansi(state, player: int) -> str:
    """What one commander (``player``: 0 attackers, 1 defenders) knows, in text: read back
    from its observation (``state.observation_tensor(player)``), so nothing the side does
    not perceive. A grid of areas as :func:`render_ansi` lays it out: per area the side's
    own live fighters (``a3``: three attackers), the enemies its fighters see there now
    (``d2``) and those it believes are there from earlier sightings but does not see now
    (``d1?``); ``*`` marks an empty destination area, ``.`` any other empty one. Each row
    starts with the number of its first area (``18:``), as orders name areas."""
    game = state.game
    combat_map, size = game.map, game.team_size
    mine, theirs = TEAMS[player][0], TEAMS[1 - player][0]
    observation = np.asarray(state.observation_tensor(player), dtype=float)
    areas = observation[: combat_map.num_areas * 5].reshape(combat_map.num_areas, 5)
    counts = np.rint(areas * size).astype(int)  # own, believed, (health), seen now, on the way
    health = np.rint(areas[:, 2] * MAX_HEALTH * size).astype(int)
    _, time_used, own_alive, enemies_alive = observation[-4:]
    max_ticks = state.battle.rules.max_ticks
    lines = [
        f"{TEAMS[player]} see, tick {round(time_used * max_ticks)}/{max_ticks}:",
        f"yours: {round(own_alive * size)}/{size} alive, health {int(health.sum())}",
        f"enemies: {round(enemies_alive * size)} alive, {int(counts[:, 3].sum())} seen, "
        f"{int(np.maximum(counts[:, 1] - counts[:, 3], 0).sum())} more believed",
        f"per area: {mine}N yours, {theirs}N seen now,",
        f"{theirs}N? believed (last seen), * destination;",
        "rows start with their first area",
    ]
    destinations = set(combat_map.destination_areas.tolist())
    texts = []
    for area in range(combat_map.num_areas):
        own, believed, seen = counts[area, 0], counts[area, 1], counts[area, 3]
        text = (f"{mine}{own}" if own else "") + (f"{theirs}{seen}" if seen else "")
        text += f"{theirs}{believed - seen}?" if believed > seen else ""
        texts.append(text or ("*" if area in destinations else "."))
    width = max(4, max(len(text) for text in texts) + 1)
    per_row = combat_map.areas_per_row
    label = len(f"{combat_map.num_areas - per_row}:")
    for row in range(combat_map.areas_per_column):
        cells = texts[row * per_row : (row + 1) * per_row]
        # Each row starts with its first area's number: orders name areas by number.
        lines.append(f"{row * per_row}:".rjust(label) + "".join(t.rjust(width) for t in cells))
    on_the_way = [f"{int(counts[area, 4])} to area {area}" for area in np.flatnonzero(counts[:, 4])]
    if on_the_way:
        lines.append("on their way: " + ", ".join(on_the_way))
    return "\n".join(lines)


def fighter_seat_ansi(state, player: int) -> str:
    """What one fighter sees, in text: its egocentric window (the observation), ``@`` for
    itself, ``#`` obstacles and walls, ``+`` doors, ``f`` friendly fighters, ``E`` the
    enemies its team sees now; its health above."""
    view = np.asarray(state.observation_tensor(player))
    name = state.game.info.player_names[player]
    own_health = round(float(view[..., 4].max()) * MAX_HEALTH)
    if own_health == 0:
        return f"{name}: dead"
    radius = view.shape[0] // 2
    lines = [
        f"{name} sees (health {own_health}):",
        "@ you, f friends, E enemies, # blocked, + door",
    ]
    for row in range(view.shape[0]):
        line = []
        for column in range(view.shape[1]):
            obstacle, door, friend, enemy = view[row, column, :4]
            if (row, column) == (radius, radius):
                line.append("@")
            elif enemy > 0:
                line.append("E")
            elif friend > 0:
                line.append("f")
            elif obstacle > 0:
                line.append("#")
            elif door > 0:
                line.append("+")
            else:
                line.append(".")
        lines.append(" ".join(line))
    return "\n".join(lines)


def show(state, pause_seconds: float = 0.05) -> None:
    """Draw the state in a matplotlib window (needs a display)."""
    if os.name != "nt" and not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        raise RuntimeError(
            "combat: no display for a window (DISPLAY is not set); use render_mode='rgb_array' "
            "and save images, or python -m hiddenenvs.envs.combat.record to write a GIF"
        )
    import matplotlib.pyplot as plt

    plt.ion()
    plt.imshow(state.render_rgb())
    plt.axis("off")
    plt.title(f"tick {state.battle.tick}")
    plt.pause(pause_seconds)
