"""The combat simulation core: one tick over every fighter of both teams.

The tick itself is compiled (``_tick.pyx``, built by ``pip install -e .``); this module
holds the state, the generator of hit rolls and the numpy line-of-sight query that
rendering, the doctrine and the tests use. ``Battle.step`` is commander mode's tick;
fighter mode runs the same rules, rolls included, in one fused compiled call
(``_tick.FighterTick``, from ``FighterState._apply_actions``).

Fighters ``0 .. T-1`` are the attackers, ``T .. 2T-1`` the defenders. A tick:

1. every live fighter that fires (commander mode: every fighter with a target; fighter
   mode: those whose action is *shoot*) aims at its **target**, the nearest live enemy it
   sees itself within ``fire_range`` (ties: lowest index), and hits with probability
   ``hit_probability * (1 - distance / (fire_range + 1))`` (Euclidean distance in cells),
   one uniform draw per fighter from the state's generator; every hit costs ``damage``
   health; both teams fire at once, so two fighters may kill each other;
2. survivors that move step to their chosen neighbour cell; a door admits at most
   ``door_capacity`` fighters at once: entrants are admitted in an order that rotates
   with the tick, the rest wait where they are; other cells hold any number of fighters;
3. sight and beliefs are updated (below); the episode ends when a team is wiped out or
   at ``max_ticks``.

**Sight** (fog of war): fighter *i* sees cell *c* when *c* is within ``sight_range``
(Euclidean) and no obstacle or wall lies strictly between them on the Bresenham line
drawn from the lower-numbered cell to the higher-numbered one (so sight is symmetric).
A team sees an enemy when one of its live fighters sees the enemy's cell.

**Belief rule** (what a team thinks is where): each team remembers, per enemy, the cell
where it last saw that enemy. The memory is replaced while the enemy is seen, and
forgotten when the enemy dies (a team always knows its kills; all damage comes from
enemies) or when a live friendly fighter sees the remembered cell and the enemy is no
longer there. The believed enemy count of an area is the number of remembered cells in
it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from hiddenenvs.envs.combat._tick import advance, update_sight
from hiddenenvs.envs.combat.maps import CombatMap

MAX_HEALTH = 100
ATTACKERS, DEFENDERS = 0, 1


@dataclass(frozen=True)
class Rules:
    """The numbers of one battle (validated by the game's parameters)."""

    team_size: int
    door_capacity: int
    max_ticks: int
    sight_range: int
    fire_range: int
    hit_probability: float
    damage: int


class Battle:
    """Positions, health and memories of both teams, plus the generator of hit rolls."""

    __slots__ = (
        "map",
        "rules",
        "positions",
        "health",
        "tick",
        "rng",
        "belief_cells",
        "sees_pair",
        "distance_pair",
        "damage_dealt",
        "alive",
        "seen",
        "target_of",
    )

    def __init__(self, combat_map: CombatMap, rules: Rules, seed: int | None):
        self.map = combat_map
        self.rules = rules
        team_size = rules.team_size
        self.positions = np.concatenate(
            [
                combat_map.spawn_cells(ATTACKERS, team_size),
                combat_map.spawn_cells(DEFENDERS, team_size),
            ]
        )
        self.health = np.full(2 * team_size, MAX_HEALTH, dtype=np.int32)
        self.alive = np.ones(2 * team_size, dtype=bool)
        self.tick = 0
        self.rng = np.random.default_rng(seed)
        # belief_cells[team, enemy]: flat cell where `team` last saw its enemy number `enemy`, -1 if none
        self.belief_cells = np.full((2, team_size), -1, dtype=np.int32)
        self.damage_dealt = np.zeros(2, dtype=np.int64)
        self._update_sight()

    def clone(self) -> Battle:
        other = Battle.__new__(Battle)
        other.map = self.map
        other.rules = self.rules
        other.positions = self.positions.copy()
        other.health = self.health.copy()
        other.alive = self.alive.copy()
        other.tick = self.tick
        other.rng = _generator_from_state(self.rng.bit_generator.state)
        other.belief_cells = self.belief_cells.copy()
        # derived from positions after each tick, replaced and never modified in place
        other.sees_pair = self.sees_pair
        other.distance_pair = self.distance_pair
        other.seen = self.seen
        other.target_of = self.target_of
        other.damage_dealt = self.damage_dealt.copy()
        return other

    def reseed(self, seed: int) -> None:
        """Draw the hit rolls from now on from a new generator seeded with ``seed``."""
        self.rng = np.random.default_rng(seed)

    def snapshot(self) -> dict:
        """The per-episode arrays (no map tables): what a pickled state carries."""
        return {
            "positions": self.positions,
            "health": self.health,
            "alive": self.alive,
            "tick": self.tick,
            "rng": self.rng.bit_generator.state,
            "belief_cells": self.belief_cells,
            "damage_dealt": self.damage_dealt,
        }

    @classmethod
    def restore(cls, combat_map: CombatMap, rules: Rules, snapshot: dict) -> Battle:
        """The battle :meth:`snapshot` saved, on the shared ``combat_map``; sight and
        targets are recomputed from the positions."""
        battle = cls.__new__(cls)
        battle.map = combat_map
        battle.rules = rules
        battle.positions = snapshot["positions"]
        battle.health = snapshot["health"]
        battle.alive = snapshot["alive"]
        battle.tick = snapshot["tick"]
        battle.rng = _generator_from_state(snapshot["rng"])
        battle.damage_dealt = snapshot["damage_dealt"]
        # the sight pass also applies the belief rule, which the saved beliefs already
        # include: it runs on a scratch copy, then the saved beliefs are put back
        battle.belief_cells = snapshot["belief_cells"].copy()
        battle._update_sight()
        battle.belief_cells = snapshot["belief_cells"].copy()
        return battle

    # ---- queries (``alive``: (2T,) bool, health above 0) -------------------------------
    def team_slice(self, team: int) -> slice:
        size = self.rules.team_size
        return slice(team * size, (team + 1) * size)

    def alive_counts(self) -> tuple[int, int]:
        alive = self.alive
        size = self.rules.team_size
        return int(np.count_nonzero(alive[:size])), int(np.count_nonzero(alive[size:]))

    def winner(self) -> int | None:
        """ATTACKERS or DEFENDERS once decided, -1 for mutual elimination, None while it goes on."""
        attackers, defenders = self.alive_counts()
        if attackers == 0 and defenders == 0:
            return -1
        if defenders == 0:
            return ATTACKERS
        if attackers == 0 or self.tick >= self.rules.max_ticks:
            return DEFENDERS
        return None

    def seen_enemies(self, team: int) -> np.ndarray:
        """(T,) bool: which enemies of ``team`` one of its live fighters sees now."""
        return self.seen[team]

    def targets(self) -> np.ndarray:
        """(2T,) the fighter each fighter would shoot (nearest enemy it sees in fire range), -1 if none."""
        return self.target_of

    def door_occupancy(self) -> np.ndarray:
        doors = self.map.door_of_cell[self.positions[self.alive]]
        return np.bincount(doors[doors >= 0], minlength=self.map.num_doors)

    def line_of_sight(
        self, cells_a: np.ndarray, cells_b: np.ndarray, radius: int | None = None
    ) -> np.ndarray:
        """Element-wise: do cells a and b see each other (within ``radius``, default sight range)?"""
        radius = self.rules.sight_range if radius is None else radius
        cells_a, cells_b = np.asarray(cells_a), np.asarray(cells_b)
        if cells_a.shape != cells_b.shape:
            cells_a, cells_b = np.broadcast_arrays(cells_a, cells_b)
        low, high = np.minimum(cells_a, cells_b), np.maximum(cells_a, cells_b)
        rows, cols = self.map.cell_rows, self.map.cell_cols
        d_rows, d_cols = rows[high] - rows[low], cols[high] - cols[low]
        within = (d_rows**2 + d_cols**2) <= radius**2
        offsets = self.map.line_of_sight_offsets(radius)
        clear = np.zeros(cells_a.shape, dtype=bool)
        if within.any():
            between = (
                low[within][:, None] + offsets[d_rows[within] + radius, d_cols[within] + radius]
            )
            clear[within] = ~self.map.blocks_sight[between].any(axis=1)
        return clear

    # ---- one tick ------------------------------------------------------------------
    def step(self, fires: np.ndarray, wanted_cells: np.ndarray, engage: bool = False) -> None:
        """Advance one tick. ``fires``: (2T,) bool; ``wanted_cells``: (2T,) neighbour or own
        cell; ``engage``: fighters with a target stand and shoot instead of moving."""
        rules = self.rules
        rolls = self.rng.random(2 * rules.team_size)
        # fresh arrays: clones and callers may hold the previous ones
        self.positions = self.positions.copy()
        self.health = self.health.copy()
        self.alive = self.alive.copy()
        self.damage_dealt = np.zeros(2, dtype=np.int64)
        advance(
            self.positions,
            self.health,
            self.alive.view(np.uint8),
            np.asarray(fires, dtype=bool).view(np.uint8),
            np.asarray(wanted_cells, dtype=np.int32),
            engage,
            rolls,
            self.target_of,
            self.distance_pair,
            self.map.door_of_cell,
            self.map.num_doors,
            rules.door_capacity,
            self.tick,
            rules.team_size,
            rules.hit_probability,
            float(rules.fire_range),
            rules.damage,
            self.damage_dealt,
        )
        self.tick += 1
        self._update_sight()

    def _update_sight(self) -> None:
        """Sight, targets and beliefs after a move, in one compiled pass (``_tick.pyx``)."""
        size = self.rules.team_size
        combat_map = self.map
        self.sees_pair = np.empty((size, size), dtype=bool)
        self.distance_pair = np.empty((size, size))
        seen = np.empty((2, size), dtype=bool)
        self.target_of = np.empty(2 * size, dtype=np.int64)
        update_sight(
            self.positions,
            self.alive.view(np.uint8),
            combat_map.cell_rows,
            combat_map.cell_cols,
            combat_map.blocks_sight.view(np.uint8),
            combat_map.line_of_sight_offsets(self.rules.sight_range),
            self.rules.sight_range,
            float(self.rules.fire_range),
            size,
            self.belief_cells,
            self.sees_pair.view(np.uint8),
            self.distance_pair,
            seen.view(np.uint8),
            self.target_of,
        )
        self.seen = (seen[0], seen[1])  # enemies the attackers / defenders see


def _generator_from_state(state: Mapping[str, Any]) -> np.random.Generator:
    """A new generator in exactly the bit-generator ``state`` given (clones, unpickling)."""
    bit_generator = getattr(np.random, state["bit_generator"])()
    bit_generator.state = state
    return np.random.Generator(bit_generator)
