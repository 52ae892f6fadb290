"""Grid FPS team combat: attack or defend a walled compound under fog of war.

| Import        | ``hiddenenvs.make("combat")`` (AEC), ``hiddenenvs.make_parallel("combat")``; ``mode="fighter"`` for one agent per fighter |
|---------------|---------------------------------------------------------------------------------|
| Agents        | commander: ``attackers``, ``defenders``; fighter: ``attacker_0`` .. ``attacker_{T-1}``, ``defender_0`` .. |
| Actions       | commander: ``Discrete(1 + areas * destinations * T)`` masked orders (12961 on the default map); fighter: ``Discrete(10)`` |
| Observation   | commander: ``Box(0, 1, (5 * areas + 4,), float32)`` (724 default, 184 small); fighter: ``Box(0, 1, (11, 11, 5), float32)`` |
| Parallel API  | yes, both modes                                                                  |
| Chance        | sampled: hit rolls come from a generator the state carries (``new_initial_state(seed)``, cloned with the state, ``reseed(seed)`` for fresh draws) |
| Public state  | per step: ticks played, then live attackers and defenders (commander) or the result (fighter), + the health balance with shaped rewards; ``public_observation_tensor()`` ``(7,)`` commander, ``(5,)`` fighter |

The test bed of the NFSP-extension research (MCNFSP/ANFSP, the FPS team battle): two
teams of ``team_size`` fighters (10) on a closed map of square areas (default: 12 x 12
areas of 20 x 20 cells; the paper's map is 255 x 255, we use 240 = 12 x 20). Green
ground, grey obstacles (rocks, fences) that block movement and sight, and a walled
compound with a door in the middle of each wall that holds at most ``door_capacity``
fighters at once (3 on the default map, 2 on the small one). Attackers are born at A
(top-left, outside), defenders at B (the compound's centre). The attackers must break in
and kill every defender; the defenders win when every attacker is dead or when the time
limit comes (mutual elimination in one tick is a draw). Every fighter has 100 health.

Each tick every fighter may fire at its target (the nearest live enemy it sees itself
within ``fire_range``) and hits with probability ``hit_probability * (1 - d / (fire_range
+ 1))`` at Euclidean distance ``d``, costing ``damage`` health; fighters that do not fire
may step to one of their 8 neighbour cells (no squeezing between two blocked corners).
Sight is symmetric Bresenham line of sight within ``sight_range``; a team sees an enemy
when one of its live fighters does (fog of war). Full rules, the door rule and the belief
rule: :mod:`hiddenenvs.envs.combat.simulation`; the map format and its validation:
:mod:`hiddenenvs.envs.combat.maps`.

**Commander mode** (the research setting, default): the players are the two teams. Every
``decision_interval`` ticks both give one order at once (a simultaneous node), then the
simulation runs that many ticks. An order is an action

    ``a = 1 + (source_area * num_destinations + destination) * team_size + (n - 1)``

meaning "send ``n`` of my fighters now in area ``source_area`` (row-major area index) to
destination ``destination``", and ``a = 0`` is *hold* (no new order). It is legal when I
have at least ``n`` live fighters in that area; the fighters chosen are first those
without a pending order elsewhere, then by index. A fighter with an order walks the
shortest path into its destination area and stays there; a fighter with a target stops
and shoots instead of walking. ``game.encode_order(area, destination, n)`` and
``game.decode_order(a)`` convert. The nine destinations (``game.map.destination_names``):
0 centre, 1-4 north/south/west/east door inside, 5-8 the same doors outside.

Commander observation (``5 * num_areas + 4`` floats in [0, 1]; the information-state
tensor is the same vector, while ``information_state_key`` keeps the whole history of
observations and own orders, see *Search* below):

| index | meaning |
|-------|---------|
| ``5 * area + 0`` | my live fighters in the area / team_size |
| ``5 * area + 1`` | enemies I believe are in the area / team_size (last sightings, see below) |
| ``5 * area + 2`` | my fighters' health in the area / (100 * team_size) |
| ``5 * area + 3`` | enemies in the area that my fighters see now / team_size |
| ``5 * area + 4`` | my live fighters on their way to the area (ordered there, not yet in it) / team_size: my standing orders |
| ``5 * num_areas + 0`` | 1 if I am the attackers |
| ``5 * num_areas + 1`` | ticks played / max_ticks |
| ``5 * num_areas + 2`` | my live fighters / team_size |
| ``5 * num_areas + 3`` | live enemies / team_size (a team knows its kills) |

Belief rule: a team remembers, per enemy, the cell where it last saw it; the memory is
refreshed while the enemy is seen and dropped when the enemy dies or when one of the
team's live fighters sees the remembered cell empty of it. The believed count of an area
is the number of remembered cells in it.

**Fighter mode** (MAgent-style MARL): one player per fighter, acting every tick. Actions:
0 hold, 1-8 move north, south, west, east, north-west, north-east, south-west,
south-east, 9 shoot (at the target). The mask allows hold always, a move onto a
passable cell (not into a full door), and shoot when the fighter has a target. Dead
fighters are terminated at once (``finished_players()``; the AEC env asks them for one
``step(None)``, the parallel env drops them from ``agents`` after that step). With
``illegal_action="no_op"`` an illegal action from the action space is played as *hold*
(MAgent's convention) and reported in ``infos`` (the default raises); with
``observation_layout="flat"`` and ``hiddenenvs.marl.black_death`` the fighters take
SuperSuit's vector envs. Observation: an egocentric ``(2r+1, 2r+1, 5)`` window (``r = view_radius``):

| channel | meaning |
|---------|---------|
| 0 | 1 where an obstacle or wall (or the outside of the map) is |
| 1 | 1 on door cells |
| 2 | health / 100 of friendly fighters there (highest if several; not myself) |
| 3 | health / 100 of enemies there that my team sees now (others are not shown) |
| 4 | my health / 100 (the whole plane) |

**Rewards** (both modes; fighters share their team's): with ``shaped_rewards`` each
transition pays (health the team inflicted - health it lost) / (100 * team_size), and the
end pays +1 to the winner and -1 to the loser; zero-sum; ``returns()`` is the running sum.

**Search: public and private observations, history, randomness, pickling.**

``public_state_key()`` has one entry per step (joint move), ``()`` at the start (whose
spawn the map fixes): what every player perceives of the step. Time is common to all.
In commander mode each team's observation counts its live fighters and the live
enemies (a team knows its losses and its kills), so both counts are public: the entry is
``(tick, attackers alive, defenders alive)``. In fighter mode a fighter sees only its
window, so neither count is public, only the result once the battle ends: the entry is
``(tick, result)``, ``result`` ``None`` while it goes on, then 0 (attackers won), 1
(defenders won) or -1 (draw). With ``shaped_rewards`` everyone is paid the step's health
balance, so it is public too: the entry ends with the health the attackers inflicted
minus the health they lost in the step. Orders, moves, positions, health and what a
side sees are private. ``information_state_key(p)`` has one ``(public, private)`` entry
per step: ``private`` is a 64-bit digest of ``p``'s observation after the step and its
own action in it (so keys are perfect recall up to hash collisions). Keys extend by
prefix; they are read back from a step chain that clones share, grown from the last key
read, so stepping and cloning cost the same at any depth. ``public_observation_tensor()``
(floats in [0, 1], a function of the public key; ``PUBLIC_FEATURES``, 5 values in
fighter mode, ``COMMANDER_PUBLIC_FEATURES``, 7, in commander mode):

| index | meaning |
|-------|---------|
| 0 | ticks played / max_ticks |
| 1 | 0.5 + attackers' health inflicted minus lost so far / (200 * team_size) (0.5 without ``shaped_rewards``) |
| 2 | 1 once the episode is over |
| 3 | 1 if the attackers won |
| 4 | 1 if the defenders won (2 without 3 and 4: mutual elimination, a draw) |
| 5 | commander mode: live attackers / team_size |
| 6 | commander mode: live defenders / team_size |

``history()`` is the episode's seed (an int; an unseeded ``new_initial_state()`` draws one
from the operating system, so every history names it) followed by one joint action (a
tuple) per step, with the seed of every ``reseed(seed)`` where it was called (a reseed
replacing another before any step keeps only the last). ``game.state_from_history(h)``
replays it exactly: same hits, keys, tensors and returns. ``clone()`` copies the
generator, so a clone replays the same hits; ``state.reseed(seed)`` gives a state fresh
draws from there on (for independent search rollouts: ``copy = state.clone();
copy.reseed(int(rng.integers(2**63)))``); keys do not change (nobody observes the
generator). Games pickle as their spec; a state pickles as the spec, its per-episode
arrays (positions, health, beliefs, generator state, orders, rewards) and its step log,
never the map tables, which every process loads once per map: after 20 steps on the
default map a commander state pickles to 2.2 KB and a fighter state (20 fighters) to
5.8 KB, a whole 600-tick fighter episode to 128 KB (the log: 8 bytes per player and step
for the digests, plus the joint actions); the map tables alone are 8.7 MB.

Parameters (``hiddenenvs.make("combat", **parameters)``):

| name | default | meaning |
|------|---------|---------|
| ``mode`` | ``"commander"`` | ``"commander"`` (two team players) or ``"fighter"`` (one per fighter) |
| ``map`` | ``"default"`` | ``"default"``, ``"small"`` (6 x 6 areas of 8 cells) or a path to a ``.json`` map |
| ``team_size`` | 10 | fighters per team |
| ``decision_interval`` | 10 | ticks between commander decisions (K), at most 1,000,000 |
| ``max_ticks`` | 0 | time limit in ticks, at most 1,000,000; 0 takes the map's (600 default, 200 small) |
| ``door_capacity`` | 0 | most fighters in one door at once, at most 1,024; 0 takes the map's |
| ``sight_range`` | 16 | cells a fighter sees |
| ``fire_range`` | 12 | cells a fighter shoots (at most ``sight_range``) |
| ``hit_probability`` | 0.5 | chance to hit at distance 0 |
| ``damage`` | 25 | health one hit costs |
| ``shaped_rewards`` | True | pay the per-transition health balance, not only the result |
| ``view_radius`` | 5 | fighter mode: half-width of the egocentric view |
| ``render_visibility`` | ``"none"`` | ``rgb_array``: darken what ``"attackers"`` or ``"defenders"`` do not see |

Rendering: ``render_mode="rgb_array"`` draws the map, fighters in team colours with their
health, doors, destination areas and optionally one team's fog; ``"ansi"`` (and
``"human"`` in the generic adapters) prints a summary with fighters per area;
:func:`hiddenenvs.envs.combat.render.show` opens a matplotlib window when a display
exists; ``python -m hiddenenvs.envs.combat.record`` writes an episode as a GIF or PNG strip.
What one seat's units see, in text (``game.describe_view(state, player)``, shown by
``hiddenenvs play`` and the leaderboard's replays): a commander's grid of areas with its
own fighters (``a3``), the enemies it sees now (``d2``) and those it believes are there
from earlier sightings (``d1?``), read back from its observation; a fighter's window
(``@`` itself, ``f`` friends, ``E`` enemies seen, ``#`` blocked, ``+`` doors).

Scripted opponents: :mod:`hiddenenvs.envs.combat.doctrine` (doctrine and random, both modes).
"""

from hiddenenvs.envs.combat.env import CombatGame, CommanderState, FighterState

__all__ = ["CombatGame", "CommanderState", "FighterState"]
