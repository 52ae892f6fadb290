"""Scripted opponents for the combat sim: "doctrine" (a stand-in for the research's
human-imitating opponent) and uniform random, in both modes.

Doctrine, commander mode (one order per decision, every order "send n from area i to
destination j"):

- attackers *mass, then push*: the staging area is the outside-door destination nearest
  the attackers' birth point (ties: the first listed). While some live attacker is still
  farther from the centre than the staging area, the largest group of attackers neither
  in the staging area nor already ordered there is sent to it. Once everyone is there (or
  further in), everyone in the staging area is sent to the centre, through the door;
  then, each time its biggest group has arrived somewhere, it goes to the destination
  nearest the enemies the team believes in, or sweeps the destinations in turn;
- defenders *split between the doors and the centre*: the live defenders are dealt
  round-robin over (north, south, west, east door inside, centre); each decision sends
  the missing number of fighters from the centre area to the door with the largest
  deficit; the rest hold the centre.

Doctrine, fighter mode: every fighter shoots when it has a target, otherwise walks one
step along the shortest path to its doctrine destination (attackers: staging area, then
centre, by the same team-wide rule; defender number k: the k-th of the five posts above,
round-robin), holding when a door is full.

Random: a uniformly random legal action. The doctrine is deterministic; it takes ``rng``
only to share the signature ``policy(state, player, rng) -> action`` with random.

Destinations are found by name: the map must name them ``centre``, ``<side> door
inside`` and ``<side> door outside`` (the stored maps do).
"""

from __future__ import annotations

import numpy as np

from hiddenenvs.envs.combat.env import HOLD, SHOOT, CommanderState, FighterState
from hiddenenvs.envs.combat.maps import UNREACHABLE, CombatMap
from hiddenenvs.envs.combat.simulation import ATTACKERS, DEFENDERS
from hiddenenvs.game import State

DEFENDER_POSTS = (
    "north door inside",
    "south door inside",
    "west door inside",
    "east door inside",
    "centre",
)


def _destination(combat_map: CombatMap, name: str) -> int:
    if name not in combat_map.destination_names:
        raise ValueError(
            f"combat doctrine: map {combat_map.source} has no destination named {name!r}; "
            f"it has {list(combat_map.destination_names)}"
        )
    return combat_map.destination_names.index(name)


def staging_destination(combat_map: CombatMap) -> int:
    """The outside-door destination nearest the attackers' birth point (ties: first listed)."""
    outside = [
        i for i, name in enumerate(combat_map.destination_names) if name.endswith("door outside")
    ]
    if not outside:
        raise ValueError(
            f"combat doctrine: map {combat_map.source} has no '<side> door outside' destination"
        )
    birth = combat_map.birth_cells[ATTACKERS]
    return min(outside, key=lambda index: combat_map.distance_fields[index][birth])


def _attackers_push(state: CommanderState | FighterState, staging: int, centre: int) -> bool:
    """True once every live attacker is in the staging area or nearer the centre than it."""
    battle = state.battle
    combat_map = battle.map
    to_centre = combat_map.distance_fields[centre]
    staging_cells = combat_map.distance_fields[staging] == 0
    threshold = to_centre[staging_cells & (to_centre < UNREACHABLE)].max()
    members = battle.team_slice(ATTACKERS)
    cells = battle.positions[members][battle.alive[members]]
    return bool((to_centre[cells] <= threshold).all())


SWEEP = (
    "centre",
    "north door inside",
    "east door inside",
    "south door inside",
    "west door inside",
    "north door outside",
    "east door outside",
    "south door outside",
    "west door outside",
)


def _hunt_order(state: CommanderState, player: int) -> int:
    """After the push: once the biggest group has arrived, send it to the destination
    nearest the enemies it believes in, or, believing in none, sweep the destinations in
    turn (a new one every 6 area widths of ticks)."""
    game = state.game
    combat_map = game.map
    battle = state.battle
    members = battle.team_slice(player)
    alive = battle.alive[members]
    cells = battle.positions[members]
    areas = combat_map.area_of_cell[cells]
    orders = state.orders[members]
    source = int(np.bincount(areas[alive]).argmax())
    group = alive & (areas == source)
    walking = (orders >= 0) & (combat_map.distance_fields[np.maximum(orders, 0), cells] > 0)
    if (group & walking).any():
        return HOLD
    beliefs = battle.belief_cells[player]
    if (beliefs >= 0).any():
        destination = int(
            combat_map.distance_fields[: combat_map.num_destinations, beliefs[beliefs >= 0]]
            .min(axis=1)
            .argmin()
        )
    else:
        period = 6 * combat_map.area_size
        destination = _destination(combat_map, SWEEP[(battle.tick // period) % len(SWEEP)])
    if combat_map.destination_areas[destination] == source:
        return HOLD
    return game.encode_order(source, destination, int(group.sum()))


def _commander_doctrine(state: CommanderState, player: int, rng: np.random.Generator) -> int:
    game = state.game
    combat_map = game.map
    battle = state.battle
    members = battle.team_slice(player)
    alive = battle.alive[members]
    areas = combat_map.area_of_cell[battle.positions[members]]
    orders = state.orders[members]
    centre = _destination(combat_map, "centre")
    if player == ATTACKERS:
        staging = staging_destination(combat_map)
        staging_area = combat_map.destination_areas[staging]
        if _attackers_push(state, staging, centre):
            waiting = alive & (areas == staging_area) & (orders != centre)
            if waiting.any():
                return game.encode_order(
                    staging_area, centre, int((alive & (areas == staging_area)).sum())
                )
            return _hunt_order(state, player)
        strays = alive & (areas != staging_area) & (orders != staging) & (orders != centre)
        if not strays.any():
            return HOLD
        area = int(np.bincount(areas[strays]).argmax())
        return game.encode_order(area, staging, int((alive & (areas == area)).sum()))
    posts = [_destination(combat_map, name) for name in DEFENDER_POSTS]
    quota = np.bincount(np.arange(int(alive.sum())) % len(posts), minlength=len(posts))
    assigned = np.array([(alive & (orders == post)).sum() for post in posts])
    centre_area = combat_map.destination_areas[centre]
    deficits = quota[:-1] - assigned[:-1]
    available = alive & (areas == centre_area) & ((orders < 0) | (orders == centre))
    if deficits.max() <= 0 or not available.any():
        return HOLD
    door = int(deficits.argmax())
    count = min(int(deficits[door]), int(available.sum()))
    return game.encode_order(centre_area, posts[door], count)


def _fighter_doctrine(state: FighterState, player: int, rng: np.random.Generator) -> int:
    game = state.game
    combat_map = game.map
    battle = state.battle
    mask = state.legal_actions_mask(player)
    if not mask.any():
        return HOLD
    if mask[SHOOT]:
        return SHOOT
    team, index = divmod(player, game.team_size)
    centre = _destination(combat_map, "centre")
    if team == ATTACKERS:
        staging = staging_destination(combat_map)
        if not _attackers_push(state, staging, centre):
            destination = staging
        else:
            destination = centre
            hunted = _step_towards_belief(state, player, mask)
            if hunted is not None:
                return hunted
    else:
        destination = _destination(combat_map, DEFENDER_POSTS[index % len(DEFENDER_POSTS)])
    cell = battle.positions[player]
    step_to = combat_map.next_cell[destination, cell]
    if step_to == cell:
        return HOLD
    direction = int(np.flatnonzero(combat_map.move_target[:, cell] == step_to)[0])
    return 1 + direction if mask[1 + direction] else HOLD


def _step_towards_belief(state: FighterState, player: int, mask: np.ndarray) -> int | None:
    """Inside the compound, the legal step nearest (straight line) to the nearest believed
    enemy; None outside the compound or when the team believes no enemy is anywhere."""
    battle = state.battle
    combat_map = battle.map
    cell = battle.positions[player]
    centre = _destination(combat_map, "centre")
    inside = [_destination(combat_map, name) for name in DEFENDER_POSTS]
    if (
        min(combat_map.distance_fields[post][cell] for post in inside) > 0
        and combat_map.distance_fields[centre][cell] > combat_map.area_size
    ):
        return None
    beliefs = battle.belief_cells[ATTACKERS]
    beliefs = beliefs[beliefs >= 0]
    if not len(beliefs):
        return None
    rows, cols = divmod(beliefs, combat_map.width)
    row, col = divmod(int(cell), combat_map.width)
    nearest = int(np.argmin((rows - row) ** 2 + (cols - col) ** 2))
    targets = combat_map.move_target[:, cell]
    legal = (targets >= 0) & mask[1:SHOOT].astype(bool)
    if not legal.any():
        return None
    target_rows, target_cols = divmod(np.where(legal, targets, cell), combat_map.width)
    distance = (target_rows - rows[nearest]) ** 2 + (target_cols - cols[nearest]) ** 2
    distance = np.where(legal, distance, np.inf)
    return 1 + int(distance.argmin())


def doctrine_action(
    state: CommanderState | FighterState, player: int, rng: np.random.Generator
) -> int:
    """The doctrine's action for ``player`` (commander: a team; fighter: one fighter)."""
    if isinstance(state, CommanderState):
        return _commander_doctrine(state, player, rng)
    return _fighter_doctrine(state, player, rng)


def random_action(state: State, player: int, rng: np.random.Generator) -> int:
    """A uniformly random legal action of ``player`` (HOLD when it has none)."""
    legal = state.legal_actions(player)
    return int(legal[rng.integers(len(legal))]) if legal else HOLD


POLICIES = {"doctrine": doctrine_action, "random": random_action}


def play_episode(
    state: CommanderState | FighterState, attackers: str, defenders: str, rng: np.random.Generator
) -> CommanderState | FighterState:
    """Play ``state`` to the end with a policy name per team ("doctrine" or "random")."""
    for name in (attackers, defenders):
        if name not in POLICIES:
            raise ValueError(
                f"combat: unknown scripted policy {name!r}; choose from {list(POLICIES)}"
            )
    team_size = state.game.team_size
    num_players = state.game.info.num_players
    while not state.is_terminal():
        if num_players == 2:
            policy_of = (POLICIES[attackers], POLICIES[defenders])
            joint = [policy_of[p](state, p, rng) for p in range(2)]
        else:
            joint = [
                POLICIES[attackers if p < team_size else defenders](state, p, rng)
                for p in range(num_players)
            ]
        state.apply_actions(joint)
    return state


__all__ = ["DEFENDERS", "doctrine_action", "play_episode", "random_action", "staging_destination"]
