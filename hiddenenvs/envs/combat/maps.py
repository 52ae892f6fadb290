"""Combat maps: the stored map format, its validation, and the tables the simulator reads.

A map is a JSON file (``maps/default.json``, ``maps/small.json``, written by
:mod:`hiddenenvs.envs.combat.map_builder`, or any file of the same format):

=================  ===========================================================================
key                meaning
=================  ===========================================================================
``rows``           list of equal-length strings, one character per cell: ``.`` ground,
                   ``#`` obstacle (rock, fence), ``W`` wall, ``D`` door; the border must be
                   impassable (the map is closed)
``area_size``      side of a square area in cells; height and width must be multiples of it
``door_capacity``  default most fighters standing in one door at once
``max_ticks``      default time limit of an episode
``birth_points``   ``{"attackers": [row, col], "defenders": [row, col]}``, passable cells
``destinations``   list of ``{"name": str, "area": [area_row, area_col]}``: where commanders
                   can send fighters
=================  ===========================================================================

Limits, checked before anything sized by the map is allocated (a :class:`MapError` names
the file, the value and the limit): at most :data:`MAX_SIDE` (512) cells a side and
:data:`MAX_CELLS` (65,536) cells in all (the default map has 57,600), at most
:data:`MAX_AREAS` (1,024) areas, :data:`MAX_DESTINATIONS` (64) destinations, areas x
destinations at most :data:`MAX_AREA_DESTINATIONS` (16,384; the commander's action count
is ``1 + areas * destinations * team_size``), ``door_capacity`` at most
:data:`MAX_DOOR_CAPACITY` and ``max_ticks`` at most :data:`MAX_TICKS`, and a file of at most
:data:`MAX_FILE_BYTES` (4 MiB). Messages quote at most :data:`QUOTE_CHARS` characters of a
value (a number of thousands of digits is named by its length). Loading a map at the limits takes well under a second:
the distance fields are scipy's compiled breadth-first search, linear in the cells.

On load a map is validated (cell codes, shape, closed border, birth points passable,
destination areas with ground, every door and destination reachable from the attackers'
birth point, the defenders' birth point too) and every error names the file and the place.

Movement is by king moves (8 neighbours, one cell per tick); a diagonal move needs both
orthogonal cells passable, so nobody squeezes between two blocked corners. Obstacles and
walls block movement and sight; doors block neither.
"""

from __future__ import annotations

import functools
import json
import reprlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MAPS_DIR = Path(__file__).resolve().parent / "maps"
MAP_NAMES = ("default", "small")

GROUND, OBSTACLE, WALL, DOOR = 0, 1, 2, 3
CELL_CODES = {".": GROUND, "#": OBSTACLE, "W": WALL, "D": DOOR}
# Order matters only for ties on a shortest path: orthogonal moves first.
DIRECTIONS = ((-1, 0), (1, 0), (0, -1), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1))
DIRECTION_NAMES = (
    "north",
    "south",
    "west",
    "east",
    "north-west",
    "north-east",
    "south-west",
    "south-east",
)
TEAMS = ("attackers", "defenders")
UNREACHABLE = 1 << 20
MAX_SIDE = 512
MAX_CELLS = 65_536
MAX_AREAS = 1_024
MAX_DESTINATIONS = 64
MAX_AREA_DESTINATIONS = 16_384
MAX_FILE_BYTES = 4 << 20
MAX_DOOR_CAPACITY = 1_024  # fighters in one door (the stored maps: 3)
MAX_DOORS = 127  # separate doors: the compiled tick holds door ids as int8
MAX_TICKS = 1_000_000  # an episode's time limit (the stored maps: 600 and 200)
MAX_NUMBER_DIGITS = 30  # a JSON integer longer than this is never a valid map value
QUOTE_CHARS = 60
_QUOTE = reprlib.Repr()
_QUOTE.maxstring = _QUOTE.maxother = QUOTE_CHARS
_QUOTE.maxlist = _QUOTE.maxdict = 4
_QUOTE.maxlevel = 2


class MapError(ValueError):
    """A map file that cannot be used, with the file and the place named."""


class _LongNumber(str):
    """A JSON integer of more than :data:`MAX_NUMBER_DIGITS` digits, kept unread (Python
    refuses to read past 4,300 digits); no field accepts it."""

    def __repr__(self) -> str:
        return f"<a number of {len(self.lstrip('-')):,} digits>"


def _read_int(text: str) -> int | _LongNumber:
    return int(text) if len(text) <= MAX_NUMBER_DIGITS else _LongNumber(text)


def _quote(value) -> str:
    """``repr(value)`` of at most :data:`QUOTE_CHARS` characters, however large the value."""
    text = repr(value) if isinstance(value, _LongNumber) else _QUOTE.repr(value)
    return text if len(text) <= QUOTE_CHARS else text[: QUOTE_CHARS - 3] + "..."


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(eq=False)
class CombatMap:
    """A validated map plus the precomputed tables of the simulator (flat cell indices)."""

    name: str
    source: str
    codes: np.ndarray  # (height, width) int8 cell codes
    area_size: int
    door_capacity: int
    max_ticks: int
    birth_cells: tuple[int, int]  # flat cell per team
    destination_names: tuple[str, ...]
    destination_areas: np.ndarray  # (num_destinations,) area index

    def __post_init__(self):
        self.height, self.width = self.codes.shape
        self.num_cells = self.height * self.width
        flat = self.codes.ravel()
        self.passable = (flat == GROUND) | (flat == DOOR)
        self.blocks_sight = ~self.passable
        self.cell_rows, self.cell_cols = np.divmod(np.arange(self.num_cells), self.width)
        self.areas_per_row = self.width // self.area_size
        self.areas_per_column = self.height // self.area_size
        self.num_areas = self.areas_per_row * self.areas_per_column
        self.area_of_cell = (
            (self.cell_rows // self.area_size) * self.areas_per_row
            + self.cell_cols // self.area_size
        ).astype(np.int32)
        door_labels, self.num_doors = _label_doors(self.codes)
        if self.num_doors > MAX_DOORS:
            raise MapError(
                f"map {self.source}: {self.num_doors} separate doors (4-connected groups of "
                f"'D' cells); the limit is {MAX_DOORS}"
            )
        self.door_of_cell = door_labels.astype(np.int8)  # the tick reads int8 door ids
        self.move_target = _move_targets(self.codes)
        self.num_destinations = len(self.destination_names)

    # ---- construction and validation ----------------------------------------------
    @classmethod
    def load(cls, name_or_path: str) -> CombatMap:
        """A stored map by name (``"default"``, ``"small"``) or a path to a JSON map file."""
        return _load_cached(str(name_or_path))

    @classmethod
    def from_dict(cls, data: dict, source: str = "<dict>") -> CombatMap:
        def fail(message: str) -> MapError:
            return MapError(f"map {source}: {message}")

        if not isinstance(data, dict):
            raise fail(f"must be a JSON object, got {type(data).__name__}")
        required = (
            "rows",
            "area_size",
            "door_capacity",
            "max_ticks",
            "birth_points",
            "destinations",
        )
        missing = [key for key in required if key not in data]
        if missing:
            raise fail(f"missing key(s) {missing}; a map needs {list(required)}")
        rows = data["rows"]
        if (
            not isinstance(rows, list)
            or not rows
            or not all(isinstance(r, str) and r for r in rows)
        ):
            raise fail("'rows' must be a non-empty list of non-empty strings")
        width = len(rows[0])
        if len(rows) > MAX_SIDE or width > MAX_SIDE or len(rows) * width > MAX_CELLS:
            raise fail(
                f"{len(rows)} x {width} cells is too large: the limits are {MAX_SIDE} cells "
                f"a side and {MAX_CELLS:,} cells in all"
            )
        destinations = data["destinations"]
        if isinstance(destinations, list) and len(destinations) > MAX_DESTINATIONS:
            raise fail(f"{len(destinations):,} destinations; the limit is {MAX_DESTINATIONS}")
        for index, row in enumerate(rows):
            if len(row) != width:
                raise fail(f"row {index} has {len(row)} cells, row 0 has {width}")
            for col, char in enumerate(row):
                if char not in CELL_CODES:
                    raise fail(
                        f"unknown cell code {char!r} at row {index}, column {col}; "
                        f"allowed: {''.join(CELL_CODES)}"
                    )
        codes = np.array([[CELL_CODES[c] for c in row] for row in rows], dtype=np.int8)
        height = codes.shape[0]
        area_size = data["area_size"]
        if not _is_int(area_size) or not 1 <= area_size <= MAX_SIDE:
            raise fail(
                f"'area_size' must be an integer in [1, {MAX_SIDE}], got {_quote(area_size)}"
            )
        if height % area_size or width % area_size:
            raise fail(
                f"{height} x {width} cells is not a whole number of {area_size} x {area_size} areas"
            )
        num_areas = (height // area_size) * (width // area_size)
        if num_areas > MAX_AREAS:
            raise fail(
                f"{num_areas:,} areas of {area_size} x {area_size} cells; the limit is {MAX_AREAS:,}"
            )
        if isinstance(destinations, list) and num_areas * len(destinations) > MAX_AREA_DESTINATIONS:
            raise fail(
                f"{num_areas:,} areas x {len(destinations)} destinations = "
                f"{num_areas * len(destinations):,}; the limit is {MAX_AREA_DESTINATIONS:,}"
            )
        for key, most in (("door_capacity", MAX_DOOR_CAPACITY), ("max_ticks", MAX_TICKS)):
            if not _is_int(data[key]) or not 1 <= data[key] <= most:
                raise fail(f"{key!r} must be an integer in [1, {most:,}], got {_quote(data[key])}")
        border = np.concatenate([codes[0], codes[-1], codes[:, 0], codes[:, -1]])
        if np.isin(border, (GROUND, DOOR)).any():
            raise fail("the border must be walls or obstacles (the map is closed)")
        birth_cells = []
        for team in TEAMS:
            point = (
                data["birth_points"].get(team) if isinstance(data["birth_points"], dict) else None
            )
            if not (isinstance(point, list) and len(point) == 2 and all(_is_int(v) for v in point)):
                raise fail(
                    f"birth_points[{team!r}] must be [row, col] (two integers), got {_quote(point)}"
                )
            row, col = point
            if not (0 <= row < height and 0 <= col < width):
                raise fail(
                    f"birth point of the {team} {point} is outside the {height} x {width} map"
                )
            if codes[row, col] not in (GROUND, DOOR):
                raise fail(f"birth point of the {team} {point} is not passable")
            birth_cells.append(row * width + col)
        if not isinstance(destinations, list) or not destinations:
            raise fail("'destinations' must be a non-empty list")
        names, areas = [], []
        for index, entry in enumerate(destinations):
            area = entry.get("area") if isinstance(entry, dict) else None
            if not (isinstance(area, list) and len(area) == 2 and all(_is_int(v) for v in area)):
                raise fail(
                    f"destination {index} needs 'area': [area_row, area_col], got {_quote(entry)}"
                )
            area_row, area_col = area
            if not (0 <= area_row < height // area_size and 0 <= area_col < width // area_size):
                raise fail(f"destination {index} area {area} is outside the map's areas")
            block = codes[
                area_row * area_size : (area_row + 1) * area_size,
                area_col * area_size : (area_col + 1) * area_size,
            ]
            if not (block == GROUND).any():
                raise fail(f"destination {index} area {area} has no ground cell")
            name = entry.get("name", f"destination {index}")
            if not isinstance(name, str) or len(name) > QUOTE_CHARS:
                raise fail(
                    f"destination {index}: 'name' must be a string of at most {QUOTE_CHARS} "
                    f"characters, got {_quote(name)}"
                )
            names.append(name)
            areas.append(area_row * (width // area_size) + area_col)
        name = data.get("name", source)
        if not isinstance(name, str) or len(name) > 200:
            raise fail(f"'name' must be a string of at most 200 characters, got {_quote(name)}")
        combat_map = cls(
            name=name,
            source=source,
            codes=codes,
            area_size=area_size,
            door_capacity=data["door_capacity"],
            max_ticks=data["max_ticks"],
            birth_cells=tuple(birth_cells),
            destination_names=tuple(names),
            destination_areas=np.asarray(areas, dtype=np.int32),
        )
        combat_map._check_reachability(fail)
        return combat_map

    def _check_reachability(self, fail) -> None:
        from_attackers = self.distance_fields[self.num_destinations]
        if from_attackers[self.birth_cells[1]] >= UNREACHABLE:
            raise fail(
                "the defenders' birth point cannot be reached from the attackers' birth point"
            )
        for door in range(self.num_doors):
            cells = np.flatnonzero(self.door_of_cell == door)
            if from_attackers[cells].min() >= UNREACHABLE:
                row, col = divmod(int(cells[0]), self.width)
                raise fail(
                    f"door {door} at row {row}, column {col} cannot be reached from the attackers' birth point"
                )
        for index, name in enumerate(self.destination_names):
            if from_attackers[self.distance_fields[index] == 0].min() >= UNREACHABLE:
                raise fail(
                    f"destination {name!r} cannot be reached from the attackers' birth point"
                )

    # ---- precomputed tables ----------------------------------------------------------
    @functools.cached_property
    def distance_fields(self) -> np.ndarray:
        """(num_destinations + 2, num_cells) int32: moves to each destination area (its
        cells off doors), then to each team's birth point (``UNREACHABLE`` where there is
        no path)."""
        sources = np.zeros((self.num_destinations + 2, self.num_cells), dtype=bool)
        off_doors = self.passable & (self.door_of_cell < 0)  # nobody stops in a doorway
        for index, area in enumerate(self.destination_areas):
            sources[index] = (self.area_of_cell == area) & off_doors
        for team, cell in enumerate(self.birth_cells):
            sources[self.num_destinations + team, cell] = True
        return _distance_fields(self.codes, sources)

    @functools.cached_property
    def next_cell(self) -> np.ndarray:
        """(num_fields, num_cells) int32: the next cell on a shortest path to each field's
        target (the cell itself once there, or when the target is unreachable)."""
        distance = self.distance_fields
        best_distance = distance.copy()
        best_cell = np.broadcast_to(
            np.arange(self.num_cells, dtype=np.int32), distance.shape
        ).copy()
        for target in self.move_target:
            allowed = target >= 0
            candidate = np.full_like(distance, UNREACHABLE)
            candidate[:, allowed] = distance[:, target[allowed]]
            better = candidate < best_distance
            best_distance[better] = candidate[better]
            best_cell[better] = np.broadcast_to(target, distance.shape)[better]
        return best_cell

    def spawn_cells(self, team: int, count: int) -> np.ndarray:
        """The ``count`` passable cells nearest the team's birth point (ties by cell index)."""
        nearest_first = self._cells_by_birth_distance[team]
        if len(nearest_first) < count:
            raise MapError(
                f"map {self.source}: only {len(nearest_first)} cells around the {TEAMS[team]}' "
                f"birth point for {count} fighters"
            )
        return nearest_first[:count].copy()

    @functools.cached_property
    def _cells_by_birth_distance(self) -> tuple[np.ndarray, ...]:
        """Per team, the reachable cells sorted by (moves from its birth point, cell index)."""
        by_team = []
        for team in range(len(TEAMS)):
            distance = self.distance_fields[self.num_destinations + team]
            reachable = np.flatnonzero(distance < UNREACHABLE)
            by_team.append(reachable[np.lexsort((reachable, distance[reachable]))].astype(np.int32))
        return tuple(by_team)

    def line_of_sight_offsets(self, radius: int) -> np.ndarray:
        """(2r+1, 2r+1, r) int64 flat offsets of the cells strictly between a cell and the
        cell (dy, dx) away on the Bresenham line, padded with 0 (the cell itself)."""
        return _line_offsets(radius, self.width)


@functools.lru_cache(maxsize=16)
def _load_cached(name_or_path: str) -> CombatMap:
    if name_or_path in MAP_NAMES:
        path = MAPS_DIR / f"{name_or_path}.json"
    else:
        path = Path(name_or_path)
        if path.suffix != ".json" or not path.is_file():
            raise MapError(
                f"map must be one of {list(MAP_NAMES)} or a path to a .json map file, got {_quote(name_or_path)}"
            )
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise MapError(f"map {path}: {size:,} bytes; the limit is {MAX_FILE_BYTES:,}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"), parse_int=_read_int)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise MapError(f"map {path}: not valid JSON ({error})") from None
    except RecursionError:
        raise MapError(f"map {path}: not valid JSON (values nest too deeply)") from None
    combat_map = CombatMap.from_dict(data, source=name_or_path)
    combat_map.next_cell  # noqa: B018 - build the path tables once, on load
    return combat_map


def _label_doors(codes: np.ndarray) -> tuple[np.ndarray, int]:
    """Door id per flat cell (-1 off doors): 4-connected components of door cells."""
    height, width = codes.shape
    label = np.full(codes.size, -1, dtype=np.int32)
    door_cells = set(map(int, np.flatnonzero(codes.ravel() == DOOR)))
    count = 0
    while door_cells:
        stack = [door_cells.pop()]
        while stack:
            cell = stack.pop()
            label[cell] = count
            row, col = divmod(cell, width)
            for d_row, d_col in DIRECTIONS[:4]:
                neighbour = (row + d_row) * width + col + d_col
                if (
                    0 <= row + d_row < height
                    and 0 <= col + d_col < width
                    and neighbour in door_cells
                ):
                    door_cells.remove(neighbour)
                    stack.append(neighbour)
        count += 1
    return label, count


def _move_allowed(codes: np.ndarray) -> np.ndarray:
    """(8, height, width) bool: may a fighter on this cell move one step in direction d."""
    passable = (codes == GROUND) | (codes == DOOR)
    height, width = codes.shape
    padded = np.zeros((height + 2, width + 2), dtype=bool)
    padded[1:-1, 1:-1] = passable

    def shifted(d_row: int, d_col: int) -> np.ndarray:
        return padded[1 + d_row : 1 + d_row + height, 1 + d_col : 1 + d_col + width]

    allowed = np.empty((8, height, width), dtype=bool)
    for index, (d_row, d_col) in enumerate(DIRECTIONS):
        allowed[index] = passable & shifted(d_row, d_col)
        if d_row and d_col:
            allowed[index] &= shifted(d_row, 0) & shifted(0, d_col)
    return allowed


def _move_targets(codes: np.ndarray) -> np.ndarray:
    """(8, num_cells) int32: the flat cell a move in direction d reaches, -1 if not allowed."""
    allowed = _move_allowed(codes).reshape(8, -1)
    width = codes.shape[1]
    cells = np.arange(codes.size, dtype=np.int32)
    targets = np.full((8, codes.size), -1, dtype=np.int32)
    for index, (d_row, d_col) in enumerate(DIRECTIONS):
        targets[index, allowed[index]] = cells[allowed[index]] + d_row * width + d_col
    return targets


def _distance_fields(codes: np.ndarray, sources: np.ndarray) -> np.ndarray:
    """Multi-source breadth-first search, one field per row of ``sources``.

    The move graph (one edge per allowed king move) gets one extra node per field with an
    edge to each of that field's source cells; scipy's compiled unweighted shortest paths
    from those nodes, minus the extra edge, are the fields. Linear in the cells per field,
    whatever the map's shape (a wavefront over the whole grid per step was quadratic on
    a serpentine map). Moves are symmetric, so distance *from* the sources equals
    distance *to* them.
    """
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import shortest_path

    num_fields, num_cells = sources.shape
    targets = _move_targets(codes)
    move_from = np.broadcast_to(np.arange(num_cells), targets.shape)[targets >= 0]
    field_of_source, source_cell = np.nonzero(sources)
    graph = csr_matrix(
        (
            np.ones(len(move_from) + len(source_cell), dtype=np.int8),
            (
                np.concatenate([move_from, num_cells + field_of_source]),
                np.concatenate([targets[targets >= 0], source_cell]),
            ),
        ),
        shape=(num_cells + num_fields, num_cells + num_fields),
    )
    lengths = shortest_path(
        graph,
        method="D",
        directed=True,
        unweighted=True,
        indices=np.arange(num_cells, num_cells + num_fields),
    )[:, :num_cells]
    distance = np.full((num_fields, num_cells), UNREACHABLE, dtype=np.int32)
    reached = np.isfinite(lengths)
    distance[reached] = lengths[reached].astype(np.int32) - 1
    return distance


@functools.lru_cache(maxsize=8)
def _line_offsets(radius: int, width: int) -> np.ndarray:
    size = 2 * radius + 1
    offsets = np.zeros((size, size, max(1, radius)), dtype=np.int64)
    for d_row in range(-radius, radius + 1):
        for d_col in range(-radius, radius + 1):
            for index, (row, col) in enumerate(_bresenham_between(d_row, d_col)):
                offsets[d_row + radius, d_col + radius, index] = row * width + col
    return offsets


def _bresenham_between(d_row: int, d_col: int) -> list[tuple[int, int]]:
    """Cells strictly between (0, 0) and (d_row, d_col) on Bresenham's line."""
    cells = []
    row = col = 0
    abs_row, abs_col = abs(d_row), abs(d_col)
    step_row, step_col = (d_row > 0) - (d_row < 0), (d_col > 0) - (d_col < 0)
    error = abs_col - abs_row
    while (row, col) != (d_row, d_col):
        doubled = 2 * error
        if doubled > -abs_row:
            error -= abs_row
            col += step_col
        if doubled < abs_col:
            error += abs_col
            row += step_row
        cells.append((row, col))
    return cells[:-1]
