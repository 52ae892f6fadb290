"""Build the stored combat maps (``maps/default.json`` and ``maps/small.json``).

Run ``python -m hiddenenvs.envs.combat.map_builder`` to regenerate them; the output is
deterministic (fixed seeds), so the stored files are reproducible from this recipe.

Recipe (the research test bed: a closed square map of areas, a walled compound with one
door in the middle of each wall, two birth points, nine destination areas):

1. a ring of wall around the map (it is closed);
2. a square compound of ``compound_areas`` areas per side, walls ``wall_thickness``
   cells thick, with a door ``door_width`` cells wide at the middle of each wall;
3. rocks (discs of radius 1-3) and fences (straight segments, one cell thick) scattered
   with a seeded generator, kept away from the birth points, the doors and their
   approaches, so every door is reachable (the loader checks it);
4. attackers are born at A in the top-left area, defenders at B in the compound's centre;
5. nine destination areas: the compound centre, the area inside and the area outside
   each door.

Cell codes: ``.`` ground, ``#`` obstacle (rock or fence), ``W`` wall, ``D`` door.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MAPS_DIR = Path(__file__).resolve().parent / "maps"


@dataclass(frozen=True)
class MapRecipe:
    name: str
    description: str
    areas_per_side: int
    area_size: int
    compound_first_area: int
    compound_areas: int
    wall_thickness: int
    door_width: int
    door_capacity: int
    max_ticks: int
    num_rocks: int
    num_fences: int
    seed: int


RECIPES = (
    MapRecipe(
        name="default",
        description="12 x 12 areas of 20 x 20 cells (the research test bed), walled compound of 5 x 5 areas",
        areas_per_side=12,
        area_size=20,
        compound_first_area=4,
        compound_areas=5,
        wall_thickness=2,
        door_width=2,
        door_capacity=3,
        max_ticks=600,
        num_rocks=70,
        num_fences=30,
        seed=2024,
    ),
    MapRecipe(
        name="small",
        description="6 x 6 areas of 8 x 8 cells, walled compound of 3 x 3 areas (for tests)",
        areas_per_side=6,
        area_size=8,
        compound_first_area=2,
        compound_areas=3,
        wall_thickness=1,
        door_width=2,
        door_capacity=2,
        max_ticks=200,
        num_rocks=6,
        num_fences=4,
        seed=7,
    ),
)


def build(recipe: MapRecipe) -> dict:
    """The map as a JSON-ready dict (see :mod:`hiddenenvs.envs.combat.maps` for the format)."""
    size = recipe.areas_per_side * recipe.area_size
    grid = np.full((size, size), ".", dtype="<U1")
    grid[0, :] = grid[-1, :] = grid[:, 0] = grid[:, -1] = "W"

    first = recipe.compound_first_area * recipe.area_size
    last = (recipe.compound_first_area + recipe.compound_areas) * recipe.area_size - 1
    thick = recipe.wall_thickness
    for band in range(thick):
        grid[first + band, first : last + 1] = "W"
        grid[last - band, first : last + 1] = "W"
        grid[first : last + 1, first + band] = "W"
        grid[first : last + 1, last - band] = "W"
    centre_area = recipe.compound_first_area + recipe.compound_areas // 2
    centre = centre_area * recipe.area_size + recipe.area_size // 2  # door cells: centre-1, centre
    door_span = slice(
        centre - recipe.door_width // 2, centre - recipe.door_width // 2 + recipe.door_width
    )
    grid[first : first + thick, door_span] = "D"
    grid[last - thick + 1 : last + 1, door_span] = "D"
    grid[door_span, first : first + thick] = "D"
    grid[door_span, last - thick + 1 : last + 1] = "D"

    birth_attackers = (recipe.area_size // 2, recipe.area_size // 2)
    birth_defenders = (centre, centre)
    keep_clear = np.zeros((size, size), dtype=bool)
    clearance = max(3, recipe.area_size // 3)

    def clear_around(row: int, col: int, radius: int) -> None:
        keep_clear[
            max(0, row - radius) : row + radius + 1, max(0, col - radius) : col + radius + 1
        ] = True

    clear_around(*birth_attackers, clearance)
    clear_around(*birth_defenders, clearance)
    for row, col in zip(*np.nonzero(grid == "D")):
        clear_around(row, col, clearance)
    keep_clear |= grid != "."

    rng = np.random.default_rng(recipe.seed)
    rows, cols = np.mgrid[0:size, 0:size]
    for _ in range(recipe.num_rocks):
        row, col, radius = rng.integers(1, size - 1), rng.integers(1, size - 1), rng.integers(1, 4)
        disc = (rows - row) ** 2 + (cols - col) ** 2 <= radius**2
        grid[disc & ~keep_clear] = "#"
    for _ in range(recipe.num_fences):
        row, col = rng.integers(1, size - 1), rng.integers(1, size - 1)
        length = int(rng.integers(recipe.area_size // 4 + 2, recipe.area_size // 2 + 4))
        segment: tuple[np.integer | slice, np.integer | slice]
        if rng.random() < 0.5:
            segment = (row, slice(col, min(size - 1, col + length)))
        else:
            segment = (slice(row, min(size - 1, row + length)), col)
        fence = np.zeros((size, size), dtype=bool)
        fence[segment] = True
        grid[fence & ~keep_clear] = "#"

    low_in = recipe.compound_first_area
    high_in = recipe.compound_first_area + recipe.compound_areas - 1
    destinations = [
        {"name": "centre", "area": [centre_area, centre_area]},
        {"name": "north door inside", "area": [low_in, centre_area]},
        {"name": "south door inside", "area": [high_in, centre_area]},
        {"name": "west door inside", "area": [centre_area, low_in]},
        {"name": "east door inside", "area": [centre_area, high_in]},
        {"name": "north door outside", "area": [low_in - 1, centre_area]},
        {"name": "south door outside", "area": [high_in + 1, centre_area]},
        {"name": "west door outside", "area": [centre_area, low_in - 1]},
        {"name": "east door outside", "area": [centre_area, high_in + 1]},
    ]
    return {
        "name": recipe.name,
        "description": recipe.description,
        "area_size": recipe.area_size,
        "door_capacity": recipe.door_capacity,
        "max_ticks": recipe.max_ticks,
        "birth_points": {"attackers": list(birth_attackers), "defenders": list(birth_defenders)},
        "destinations": destinations,
        "rows": ["".join(row) for row in grid],
    }


def main() -> None:
    from hiddenenvs.envs.combat.maps import CombatMap

    MAPS_DIR.mkdir(exist_ok=True)
    for recipe in RECIPES:
        data = build(recipe)
        path = MAPS_DIR / f"{recipe.name}.json"
        CombatMap.from_dict(data, source=str(path))  # validate before writing
        path.write_text(json.dumps(data, indent=1) + "\n")
        print(f"wrote {path} ({len(data['rows'])} x {len(data['rows'][0])} cells)")


if __name__ == "__main__":
    main()
