"""The combat game model: commander mode (two team players) and fighter mode (one player
per fighter). User documentation (rules, actions, observations, parameters, and what is
public): :mod:`hiddenenvs.envs.combat`.

For search, per step (joint move): the public observation is what every player
perceives, ``(tick, attackers alive, defenders alive)`` in commander mode (each team's
observation counts both teams) and ``(tick, result)`` in fighter mode (a fighter sees
only its window, and the result at the end), plus, with ``shaped_rewards``, the step's
health balance (everyone is paid it); each player's private observation is a 64-bit
digest of its own observation after the step and its own action. Steps live in a chain
of :class:`_Step` records shared by clones; keys are read back from it on demand and
grown from the last key read. ``history()`` is the seed followed by the joint actions
(and any later seeds), so it replays the sampled hits exactly; states pickle as the
game's spec plus their per-episode arrays and step log.
"""

from __future__ import annotations

import math

import numpy as np

from hiddenenvs.envs.combat._tick import FighterTick, chain_hashes, fighter_masks, fill_views
from hiddenenvs.envs.combat.maps import (
    DIRECTION_NAMES,
    MAX_DOOR_CAPACITY,
    MAX_TICKS,
    TEAMS,
    WALL,
    CombatMap,
)
from hiddenenvs.envs.combat.simulation import ATTACKERS, DEFENDERS, MAX_HEALTH, Battle, Rules
from hiddenenvs.game import (
    SIMULTANEOUS,
    TERMINAL,
    ChanceMode,
    Dynamics,
    Game,
    GameInfo,
    Information,
    Parameter,
    State,
    Utility,
)

HOLD = 0
FIGHTER_ACTION_NAMES = ("hold", *(f"move {name}" for name in DIRECTION_NAMES), "shoot")
SHOOT = len(FIGHTER_ACTION_NAMES) - 1
# a fighter's mask as a 10-bit number -> its legal actions, so listing them costs one lookup
_MASK_BIT_VALUES = 1 << np.arange(len(FIGHTER_ACTION_NAMES), dtype=np.int64)
_LEGAL_BY_MASK_CODE = [
    tuple(action for action in range(len(FIGHTER_ACTION_NAMES)) if code >> action & 1)
    for code in range(1 << len(FIGHTER_ACTION_NAMES))
]
COMMANDER_AREA_FEATURES = (
    "own fighters",
    "believed enemies",
    "own health",
    "enemies seen now",
    "own fighters on their way here",
)
COMMANDER_GLOBAL_FEATURES = ("I attack", "time used", "own fighters alive", "enemies alive")
# The public observation tensor: what both sides perceive (see the package docstring).
PUBLIC_FEATURES = (
    "time used",
    "attackers' health balance",
    "over",
    "attackers won",
    "defenders won",
)
COMMANDER_PUBLIC_FEATURES = (*PUBLIC_FEATURES, "attackers alive", "defenders alive")
FIGHTER_VIEW_CHANNELS = ("blocked", "door", "friend health", "enemy health (seen)", "own health")


class CombatGame(Game):
    NAME = "combat"
    RENDER_MODES = ("ansi", "human", "rgb_array")
    PARAMETERS = (
        Parameter(
            "mode", str, "commander", "who the players are", choices=("commander", "fighter")
        ),
        Parameter("map", str, "default", "'default', 'small' or a path to a .json map file"),
        Parameter("team_size", int, 10, "fighters per team", minimum=1, maximum=200),
        Parameter(
            "decision_interval",
            int,
            10,
            "ticks between commander decisions",
            minimum=1,
            maximum=MAX_TICKS,
        ),
        Parameter(
            "max_ticks", int, 0, "time limit in ticks (0: the map's)", minimum=0, maximum=MAX_TICKS
        ),
        Parameter(
            "door_capacity",
            int,
            0,
            "most fighters in one door (0: the map's)",
            minimum=0,
            maximum=MAX_DOOR_CAPACITY,
        ),
        Parameter(
            "sight_range", int, 16, "how far a fighter sees, in cells", minimum=1, maximum=64
        ),
        Parameter(
            "fire_range", int, 12, "how far a fighter shoots, in cells", minimum=1, maximum=64
        ),
        Parameter(
            "hit_probability",
            float,
            0.5,
            "chance to hit at point-blank range",
            minimum=0.0,
            maximum=1.0,
        ),
        Parameter("damage", int, 25, "health one hit costs", minimum=1, maximum=MAX_HEALTH),
        Parameter(
            "shaped_rewards", bool, True, "per-step rewards from health inflicted minus lost"
        ),
        Parameter(
            "view_radius",
            int,
            5,
            "fighter mode: half-width of the egocentric view",
            minimum=1,
            maximum=32,
        ),
        Parameter(
            "render_visibility",
            str,
            "none",
            "rgb_array: shade what this team sees",
            choices=("none", "attackers", "defenders"),
        ),
    )
    TENSOR_BOUNDS = (0.0, 1.0)
    NO_OP_ACTION = (
        HOLD  # illegal_action="no_op" plays an illegal action as "hold" (MAgent convention)
    )

    def __init__(self, **params):
        super().__init__(**params)
        params = self.params
        if params["fire_range"] > params["sight_range"]:
            raise ValueError(
                f"{self.NAME}: parameter 'fire_range' ({params['fire_range']}) must not exceed "
                f"'sight_range' ({params['sight_range']}): a fighter only shoots what it sees"
            )
        self.map = CombatMap.load(params["map"])
        self.rules = Rules(
            team_size=params["team_size"],
            door_capacity=params["door_capacity"] or self.map.door_capacity,
            max_ticks=params["max_ticks"] or self.map.max_ticks,
            sight_range=params["sight_range"],
            fire_range=params["fire_range"],
            hit_probability=params["hit_probability"],
            damage=params["damage"],
        )
        self.mode = params["mode"]
        self.team_size = params["team_size"]
        self.map.spawn_cells(ATTACKERS, self.team_size)  # fails early when the map is too small
        self.map.spawn_cells(DEFENDERS, self.team_size)
        utility_bound = 2.0 if params["shaped_rewards"] else 1.0
        num_fighters = 2 * self.team_size
        if self.mode == "commander":
            area_count = self.map.num_areas
            self.num_orders_per_area = self.map.num_destinations * self.team_size
            observation_shape = (
                area_count * len(COMMANDER_AREA_FEATURES) + len(COMMANDER_GLOBAL_FEATURES),
            )
            self.info = GameInfo(
                short_name=self.NAME,
                long_name="grid team combat (commander mode)",
                num_players=2,
                num_distinct_actions=1 + area_count * self.num_orders_per_area,
                max_chance_outcomes=0,
                dynamics=Dynamics.SIMULTANEOUS,
                chance_mode=ChanceMode.SAMPLED_STOCHASTIC,
                information=Information.IMPERFECT,
                utility=Utility.ZERO_SUM,
                min_utility=-utility_bound,
                max_utility=utility_bound,
                max_game_length=math.ceil(self.rules.max_ticks / params["decision_interval"]),
                information_state_tensor_shape=observation_shape,
                observation_tensor_shape=observation_shape,
                player_names=TEAMS,
                public_observation_tensor_shape=(len(COMMANDER_PUBLIC_FEATURES),),
            )
        else:
            side = 2 * params["view_radius"] + 1
            observation_shape = (side, side, len(FIGHTER_VIEW_CHANNELS))
            self.info = GameInfo(
                short_name=self.NAME,
                long_name="grid team combat (fighter mode)",
                num_players=num_fighters,
                num_distinct_actions=len(FIGHTER_ACTION_NAMES),
                max_chance_outcomes=0,
                dynamics=Dynamics.SIMULTANEOUS,
                chance_mode=ChanceMode.SAMPLED_STOCHASTIC,
                information=Information.IMPERFECT,
                utility=Utility.ZERO_SUM,
                min_utility=-utility_bound,
                max_utility=utility_bound,
                max_game_length=self.rules.max_ticks,
                information_state_tensor_shape=observation_shape,
                observation_tensor_shape=observation_shape,
                player_names=tuple(
                    f"{team[:-1]}_{index}" for team in TEAMS for index in range(self.team_size)
                ),
                public_observation_tensor_shape=(len(PUBLIC_FEATURES),),
            )
            self.padded_codes = np.pad(self.map.codes, params["view_radius"], constant_values=WALL)
            self.fighter_tick = FighterTick(
                self.map,
                self.rules,
                self.padded_codes,
                params["view_radius"],
                params["shaped_rewards"],
                _HASH_COEFFICIENTS,
                int(_MIX_A),
                int(_MIX_B),
            )

    def new_initial_state(self, seed=None):
        """The first tick. ``seed`` (a non-negative int) seeds the hit rolls; ``None``
        draws one from the operating system, so every episode's history names its seed."""
        if seed is None:
            seed = int(np.random.SeedSequence().entropy)
        seed = _checked_seed(seed, "new_initial_state")
        battle = Battle(self.map, self.rules, seed)
        if self.mode == "commander":
            return CommanderState(self, battle, seed)
        return FighterState(self, battle, seed)

    def action_to_string(self, player, action):
        if self.mode == "fighter":
            return FIGHTER_ACTION_NAMES[action]
        if action == HOLD:
            return "hold"
        source, destination, count = self.decode_order(action)
        name = self.map.destination_names[destination]
        return f"send {count} from area {source} to {name} (area {self.map.destination_areas[destination]})"

    def describe_step(self, player, public, private):
        """A key step in words: the tick and what both sides perceive (commander mode: the
        fighters alive on each side; fighter mode: the result once it is known; the health
        balance with shaped rewards). What a side sees of the map is its private digest,
        not words: it is not shown."""
        if self.mode == "commander":
            tick, attackers, defenders, *balance = public
            text = f"tick {tick}: attackers {attackers} alive, defenders {defenders} alive"
        else:
            tick, result, *balance = public
            outcome = {None: "", 0: ", attackers won", 1: ", defenders won", -1: ", a draw"}
            text = f"tick {tick}{outcome[result]}"
        if balance:
            text += f"; health balance (attackers' view) {balance[0]:+g}"
        return text

    def describe_view(self, state, player):
        """What ``player``'s units see, in text, for a person and the leaderboard's replays:
        a commander's grid of areas (its fighters, enemies seen now and believed), a
        fighter's window (:mod:`hiddenenvs.envs.combat.render`)."""
        from hiddenenvs.envs.combat.render import commander_seat_ansi, fighter_seat_ansi

        if self.mode == "commander":
            return commander_seat_ansi(state, player)
        return fighter_seat_ansi(state, player)

    # ---- commander orders ------------------------------------------------------------
    def encode_order(self, source_area: int, destination: int, count: int) -> int:
        """The action "send ``count`` of my fighters from area ``source_area`` to destination
        ``destination``" (count from 1 to team_size)."""
        return 1 + source_area * self.num_orders_per_area + destination * self.team_size + count - 1

    def decode_order(self, action: int) -> tuple[int, int, int]:
        source, rest = divmod(action - 1, self.num_orders_per_area)
        destination, count_minus_one = divmod(rest, self.team_size)
        return source, destination, count_minus_one + 1

    def order_structure(self) -> dict:
        """What a factored order head (:class:`agents.networks.FactoredOrderHead`) needs to
        read the commander's orders and observations: the order grid (areas x destinations x
        counts, as :meth:`encode_order` lays it out), the per-area features at the start of
        the observation and which of them is the own fighters' share (feature 0), and each
        destination's area."""
        if self.mode != "commander":
            raise ValueError(
                f"{self.NAME}: only commander mode has orders; fighter mode has "
                f"{self.info.num_distinct_actions} per-fighter actions"
            )
        return {
            "num_areas": self.map.num_areas,
            "num_destinations": self.map.num_destinations,
            "team_size": self.team_size,
            "area_features": len(COMMANDER_AREA_FEATURES),
            "count_feature": 0,
            "destination_areas": [int(area) for area in self.map.destination_areas],
        }


_HASH_COEFFICIENTS = np.random.default_rng(20261121).integers(
    1, 2**63, size=1 << 16, dtype=np.uint64
) | np.uint64(1)
_MIX_A, _MIX_B = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xBF58476D1CE4E5B9)


def _chain_hashes(keys: np.ndarray, observations: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """Extend each player's 64-bit hash ``keys[p]`` by one (action, observation) step;
    with zero keys, each player's digest of the step alone (the private key entries).

    ``observations`` is (players, ...) float32; hashing all players in one compiled pass
    keeps perfect-recall keys cheap enough to maintain every tick for 160 fighters. With
    ``w`` the observation's float32 bits as uint32 words and all arithmetic modulo 2**64:
    ``h = sum_k w[k] * C[k]``, ``m = (key ^ h) * A``, ``m ^= m >> 31``,
    ``key' = (m + action + 1) * B`` (``tests/test_combat.py`` checks it against numpy).
    """
    words = np.ascontiguousarray(observations).reshape(len(keys), -1).view(np.uint32)
    out = np.empty(len(keys), dtype=np.uint64)
    chain_hashes(
        np.ascontiguousarray(keys, dtype=np.uint64),
        words,
        _HASH_COEFFICIENTS,
        np.ascontiguousarray(actions, dtype=np.int64),
        int(_MIX_A),
        int(_MIX_B),
        out,
    )
    return out


def _checked_seed(seed, where: str) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(
            f"combat: {where} takes a non-negative int seed, got {seed!r} ({type(seed).__name__})"
        )
    return int(seed)


class _Step:
    """One transition of an episode, linked to the one before: clones share these, so
    ``apply_actions`` and ``clone`` cost the same at any depth, and keys and the history
    are read back from the chain only when asked."""

    __slots__ = ("previous", "seed", "joint", "public", "private")

    def __init__(self, previous, seed, joint, public, private):
        self.previous = previous  # the step before, None for the first
        self.seed = seed  # the seed set since the step before (reseed or episode seed), or None
        self.joint = joint  # the joint action played, as history() lists it
        self.public = public  # (tick, attackers alive, defenders alive[, health balance])
        self.private = (
            private  # (players,) uint64: each one's digest of its observation and own action
        )


def _steps_after(last: _Step | None, earlier: _Step | None) -> list[_Step]:
    """The steps after ``earlier`` (an ancestor of ``last``, or None) up to ``last``, in order."""
    steps = []
    while last is not earlier:
        assert last is not None  # earlier is on last's chain: the walk meets it before the start
        steps.append(last)
        last = last.previous
    steps.reverse()
    return steps


class _CombatState(State):
    """What both modes share: the battle, rewards, terminal test, keys, history, pickling."""

    __slots__ = (
        "battle",
        "_winner",
        "_rewards",
        "_returns",
        "_health_balance",
        "_last",
        "_pending_seed",
        "_public_cache",
        "_information_cache",
    )
    game: CombatGame
    _winner: int | None  # Battle.winner(): None while the battle goes on
    _last: _Step | None  # None before the first step
    _pending_seed: int | None  # None once a step has used it
    # (last step, key) when last asked: a key grows from there, never rebuilt whole
    _public_cache: tuple[_Step | None, tuple]
    _information_cache: dict[int, tuple[_Step | None, tuple]]  # the same, per player

    def _init_common(self, game: CombatGame, battle: Battle, seed: int) -> None:
        self.game = game
        self.battle = battle
        self._winner = None
        num_players = game.info.num_players
        self._rewards = np.zeros(num_players)
        self._returns = np.zeros(num_players)
        self._health_balance = 0  # attackers' health inflicted minus lost, so far
        self._last = None
        self._pending_seed = seed
        self._public_cache = (None, ())
        self._information_cache = {}

    def _copy_common(self, other: _CombatState) -> None:
        other.game = self.game
        other.battle = self.battle.clone()
        other._winner = self._winner
        other._rewards = self._rewards.copy()
        other._returns = self._returns.copy()
        other._health_balance = self._health_balance
        other._last = self._last
        other._pending_seed = self._pending_seed
        other._public_cache = self._public_cache
        other._information_cache = dict(self._information_cache)

    def current_player(self):
        return TERMINAL if self._winner is not None else SIMULTANEOUS

    def _run_ticks(self, fires: np.ndarray, wanted_cells, engage: bool, ticks: int) -> np.ndarray:
        """Advance up to ``ticks`` ticks; returns health inflicted minus lost per team."""
        battle = self.battle
        balance = np.zeros(2)
        for _ in range(ticks):
            cells = wanted_cells() if callable(wanted_cells) else wanted_cells
            battle.step(fires, cells, engage=engage)
            dealt = battle.damage_dealt
            balance += (dealt[0] - dealt[1], dealt[1] - dealt[0])
            self._winner = battle.winner()
            if self._winner is not None:
                break
        return balance

    def _team_rewards(self, balance: np.ndarray) -> np.ndarray:
        """Per-team reward of a transition: shaped part plus, at the end, +-1."""
        rewards = np.zeros(2)
        if self.game.params["shaped_rewards"]:
            rewards += balance / (MAX_HEALTH * self.game.team_size)
        if self._winner in (ATTACKERS, DEFENDERS):
            rewards[self._winner] += 1.0
            rewards[1 - self._winner] -= 1.0
        return rewards

    def _record(self, joint: list[int], balance: int, digests: np.ndarray | None = None) -> None:
        """Append the step just played: its public observation and everyone's digest
        (``digests``, or hashed here from the observations)."""
        public: tuple[int | None, ...]
        if self.game.mode == "commander":  # each team's observation counts both teams
            public = (self.battle.tick, *self.battle.alive_counts())
        else:  # a fighter sees only its window, and the result when the battle ends
            public = (self.battle.tick, self._winner)
        if self.game.params["shaped_rewards"]:  # both teams are paid the balance: it is public
            self._health_balance += balance
            public += (balance,)
        if (
            digests is None
        ):  # each step's digest stands alone (zero keys): the key's tuple chains them
            zero_keys = np.zeros(len(joint), dtype=np.uint64)
            digests = _chain_hashes(
                zero_keys, self._all_observations(), np.asarray(joint, dtype=np.int64)
            )
        self._last = _Step(self._last, self._pending_seed, tuple(joint), public, digests)
        self._pending_seed = None

    def returns(self):
        return self._returns.copy()

    def rewards(self):
        return self._rewards.copy()

    def public_state_key(self):
        """One entry per step: commander mode ``(tick, attackers alive, defenders alive)``,
        fighter mode ``(tick, result)``, plus the step's attackers' health balance with
        ``shaped_rewards`` (see the package docstring)."""
        cached_step, key = self._public_cache
        if cached_step is not self._last:
            key += tuple(step.public for step in _steps_after(self._last, cached_step))
            self._public_cache = (self._last, key)
        return key

    def information_state_key(self, player):
        """One ``(public, private)`` entry per step: ``private`` is a 64-bit digest of the
        player's observation after the step and its own action in it (perfect recall up to
        64-bit hash collisions)."""
        num_players = self.game.info.num_players
        if not 0 <= player < num_players:
            raise ValueError(f"{self.game.NAME}: player {player!r} is not in 0..{num_players - 1}")
        cached_step, key = self._information_cache.get(player, (None, ()))
        if cached_step is not self._last:
            steps = _steps_after(self._last, cached_step)
            key += tuple((step.public, int(step.private[player])) for step in steps)
            self._information_cache[player] = (self._last, key)
        return key

    def public_observation_tensor(self):
        """``PUBLIC_FEATURES`` (commander mode: ``COMMANDER_PUBLIC_FEATURES``), all in
        [0, 1]: a function of the public key (its last entry and the sum of its balances),
        so equal public keys give equal tensors."""
        battle = self.battle
        size = self.game.team_size
        shaped = self.game.params["shaped_rewards"]
        features = [
            min(1.0, battle.tick / battle.rules.max_ticks),
            0.5 + self._health_balance / (2 * MAX_HEALTH * size) if shaped else 0.5,
            self._winner is not None,
            self._winner == ATTACKERS,
            self._winner == DEFENDERS,
        ]
        if self.game.mode == "commander":
            features += [count / size for count in battle.alive_counts()]
        return np.array(features, dtype=np.float32)

    def history(self):
        """The episode seed, then one joint action per step; a :meth:`reseed` adds its
        seed where it was called. ``game.state_from_history`` replays it exactly."""
        entries = []
        for step in _steps_after(self._last, None):
            if step.seed is not None:
                entries.append(step.seed)
            entries.append(step.joint)
        if self._pending_seed is not None:
            entries.append(self._pending_seed)
        return tuple(entries)

    def _replay(self, entry):
        if isinstance(entry, (tuple, list)):
            self.apply_actions(entry)
        else:
            self.reseed(entry)

    def reseed(self, seed):
        """Draw the hit rolls from now on from a generator seeded with ``seed``.

        ``clone()`` copies the generator (the copy replays the same hits); a search gives
        each copy fresh randomness with ``copy.reseed(int(rng.integers(2**63)))``. Keys are
        unchanged (nobody observes the generator); ``history()`` records the seed.
        """
        seed = _checked_seed(seed, "reseed()")
        self.battle.reseed(seed)
        self._pending_seed = seed  # replaces an unused earlier seed: no roll came from it

    def __reduce__(self):
        # The game travels as its spec (its map tables stay in the receiving process); the
        # state as its per-episode arrays and the step log, flattened.
        steps = _steps_after(self._last, None)
        log = {
            "history": self.history(),
            "public": [step.public for step in steps],
            "private": np.array([step.private for step in steps], dtype=np.uint64).reshape(
                len(steps), self.game.info.num_players
            ),
        }
        data = {
            "battle": self.battle.snapshot(),
            "winner": self._winner,
            "rewards": self._rewards,
            "returns": self._returns,
            "health_balance": self._health_balance,
            "log": log,
            **self._mode_snapshot(),
        }
        return (_restore_state, (self.game, type(self), data))

    def _mode_snapshot(self) -> dict:
        return {}

    def _restore(self, game: CombatGame, data: dict) -> None:
        self.game = game
        self.battle = Battle.restore(game.map, game.rules, data["battle"])
        self._winner = data["winner"]
        self._rewards = data["rewards"]
        self._returns = data["returns"]
        self._health_balance = data["health_balance"]
        self._public_cache = (None, ())
        self._information_cache = {}
        log = data["log"]
        publics, privates = iter(log["public"]), iter(log["private"])
        self._last, self._pending_seed = None, None
        for entry in log["history"]:
            if isinstance(entry, tuple):
                self._last = _Step(
                    self._last, self._pending_seed, entry, next(publics), next(privates)
                )
                self._pending_seed = None
            else:
                self._pending_seed = entry

    def information_state_tensor(self, player):
        return self.observation_tensor(player)

    def _all_observations(self) -> np.ndarray:
        return np.stack([self.observation_tensor(p) for p in range(self.game.info.num_players)])

    def render_rgb(self):
        from hiddenenvs.envs.combat.render import render_rgb

        visibility = self.game.params["render_visibility"]
        return render_rgb(
            self.battle, visibility_team=None if visibility == "none" else TEAMS.index(visibility)
        )

    def __str__(self):
        from hiddenenvs.envs.combat.render import render_ansi

        return render_ansi(self.battle, self._winner)


def _restore_state(game: CombatGame, state_class: type[_CombatState], data: dict) -> _CombatState:
    state = state_class.__new__(state_class)
    state._restore(game, data)
    return state


class CommanderState(_CombatState):
    """Two players, ``attackers`` and ``defenders``, each giving one order every K ticks."""

    __slots__ = ("orders", "_legal_cache")
    _legal_cache: dict[int, list[int]]  # player -> legal actions, until the next order

    def __init__(self, game: CombatGame, battle: Battle, seed: int):
        # orders[f]: destination index fighter f walks to, -1 to stay
        self.orders = np.full(2 * game.team_size, -1, dtype=np.int64)
        self._legal_cache = {}
        self._init_common(game, battle, seed)

    def clone(self):
        other = CommanderState.__new__(CommanderState)
        self._copy_common(other)
        other.orders = self.orders.copy()
        other._legal_cache = self._legal_cache
        return other

    def _mode_snapshot(self):
        return {"orders": self.orders}

    def _restore(self, game, data):
        super()._restore(game, data)
        self.orders = data["orders"]
        self._legal_cache = {}

    def own_counts(self, player: int) -> np.ndarray:
        battle = self.battle
        team = battle.team_slice(player)
        cells = battle.positions[team][battle.alive[team]]
        return np.bincount(self.game.map.area_of_cell[cells], minlength=self.game.map.num_areas)

    def legal_actions(self, player=None):
        if self._winner is not None:
            return []
        if player is None:
            raise ValueError(f"{self.game.NAME}: simultaneous node; name the player")
        if player not in self._legal_cache:
            game = self.game
            counts = self.own_counts(player)
            areas = np.flatnonzero(counts)
            per_destination = np.arange(game.map.num_destinations)[:, None] * game.team_size
            blocks = [np.zeros(1, dtype=np.int64)]
            for area in areas:
                block = per_destination + np.arange(counts[area])[None, :]
                blocks.append(1 + area * game.num_orders_per_area + block.ravel())
            self._legal_cache[player] = np.concatenate(blocks).tolist()
        return self._legal_cache[player]

    def _apply_actions(self, joint):
        game = self.game
        battle = self.battle
        for player, action in enumerate(joint):
            if action <= HOLD:
                continue
            source, destination, count = game.decode_order(action)
            team = battle.team_slice(player)
            areas = game.map.area_of_cell[battle.positions[team]]
            members = np.flatnonzero(battle.alive[team] & (areas == source))
            orders = self.orders[team][members]
            busy = (orders >= 0) & (game.map.destination_areas[np.maximum(orders, 0)] != source)
            members = members[np.argsort(busy, kind="stable")]  # idle fighters first
            self.orders[team.start + members[:count]] = destination
        next_cell = game.map.next_cell
        fires = np.ones(2 * game.team_size, dtype=bool)

        def wanted_cells():
            positions = battle.positions
            return np.where(
                self.orders >= 0, next_cell[np.maximum(self.orders, 0), positions], positions
            )

        balance = self._run_ticks(
            fires, wanted_cells, engage=True, ticks=game.params["decision_interval"]
        )
        self._rewards = self._team_rewards(balance)
        self._returns += self._rewards
        self._legal_cache = {}
        self._record(joint, int(balance[ATTACKERS]))

    def observation_tensor(self, player):
        """Per area (row-major) 5 values, then 4 global values; see the package docstring."""
        game = self.game
        battle = self.battle
        combat_map = game.map
        size = game.team_size
        area_count = combat_map.num_areas
        own, enemy = battle.team_slice(player), battle.team_slice(1 - player)
        alive = battle.alive
        own_cells = battle.positions[own][alive[own]]
        areas = combat_map.area_of_cell
        features = np.zeros((area_count, len(COMMANDER_AREA_FEATURES)), dtype=np.float32)
        features[:, 0] = np.bincount(areas[own_cells], minlength=area_count) / size
        beliefs = battle.belief_cells[player]
        features[:, 1] = np.bincount(areas[beliefs[beliefs >= 0]], minlength=area_count) / size
        features[:, 2] = np.bincount(
            areas[own_cells], weights=battle.health[own][alive[own]], minlength=area_count
        ) / (MAX_HEALTH * size)
        seen = battle.seen_enemies(player)
        features[:, 3] = (
            np.bincount(areas[battle.positions[enemy][seen]], minlength=area_count) / size
        )
        # The standing orders: without them the tensor forgets where fighters were sent.
        orders = self.orders[own][alive[own]]
        ordered = orders >= 0
        destinations = combat_map.destination_areas[orders[ordered]]
        on_the_way = destinations != areas[own_cells[ordered]]
        features[:, 4] = np.bincount(destinations[on_the_way], minlength=area_count) / size
        global_features = np.array(
            [
                player == ATTACKERS,
                min(1.0, battle.tick / battle.rules.max_ticks),
                len(own_cells) / size,
                alive[enemy].sum() / size,
            ],
            dtype=np.float32,
        )
        return np.concatenate([features.ravel(), global_features])


class FighterState(_CombatState):
    """One player per fighter, acting every tick; dead fighters leave the game early."""

    __slots__ = ("_views", "_masks", "_legal_lists", "_movers")

    def __init__(self, game: CombatGame, battle: Battle, seed: int):
        self._refresh_views(game, battle)
        self._init_common(game, battle, seed)

    def clone(self):
        other = FighterState.__new__(FighterState)
        self._copy_common(other)
        other._views = self._views  # recomputed after each tick, never modified in place
        other._masks = self._masks
        other._legal_lists = self._legal_lists
        other._movers = self._movers
        return other

    def _restore(self, game, data):
        super()._restore(game, data)
        self._refresh_views(game, self.battle)

    def finished_players(self):
        if self._winner is not None:
            return []
        return (~self.battle.alive).nonzero()[0].tolist()

    def legal_actions(self, player=None):
        if self._winner is not None:
            return []
        if player is None:
            raise ValueError(f"{self.game.NAME}: simultaneous node; name the player")
        if self._legal_lists is None:  # all players at once: the adapters ask for every one
            codes = self._masks.astype(np.int64) @ _MASK_BIT_VALUES
            self._legal_lists = [_LEGAL_BY_MASK_CODE[code] for code in codes.tolist()]
        return list(self._legal_lists[player])

    def movers(self):
        if self._winner is not None:
            return []
        return self._movers

    def legal_actions_mask(self, player=None):
        if self._winner is not None:
            return np.zeros(len(FIGHTER_ACTION_NAMES), dtype=np.int8)
        return self._masks[player].astype(np.int8)

    def legal_actions_masks(self):
        """Every fighter's action mask in one (players, actions) bool array (read-only,
        shared with clones)."""
        return self._masks.view(bool)

    def read_only_legal_actions_masks(self):
        """The same masks as read-only int8, as the parallel env hands them out (no copy)."""
        return self._masks

    def apply_actions(self, joint):
        """As :meth:`State.apply_actions`, validated for all fighters at once."""
        if self._winner is not None:
            raise ValueError(f"{self.game.NAME}: apply_actions() needs a simultaneous node")
        num_players = self.game.info.num_players
        if len(joint) != num_players:
            raise ValueError(
                f"{self.game.NAME}: joint action needs {num_players} entries, got {len(joint)}"
            )
        actions = np.asarray(joint, dtype=np.int64)
        masks = self._masks
        choices = masks.sum(axis=1)
        in_range = (actions >= 0) & (actions < masks.shape[1])
        legal = np.zeros(num_players, dtype=bool)
        legal[in_range] = masks[np.flatnonzero(in_range), actions[in_range]]
        illegal = np.flatnonzero((choices > 1) & ~legal)
        if len(illegal):
            player = int(illegal[0])
            raise ValueError(
                f"{self.game.NAME}: action {joint[player]!r} is illegal for player {player}; "
                f"legal actions: {self._describe(player, self.legal_actions(player))}"
            )
        forced = np.where(choices == 1, masks.argmax(axis=1), -1)
        self._apply_actions(np.where(choices > 1, actions, forced).tolist())

    def _apply_actions(self, joint):
        """One tick in one compiled call (``FighterTick``), into fresh arrays it allocates:
        clones and callers may hold the previous ones."""
        (self._winner, self._movers, self._views, self._masks, digests, self._rewards, balance) = (
            self.game.fighter_tick.tick(joint, self.battle, self._returns)
        )
        self._legal_lists = None
        self._record(joint, balance, digests)

    def _refresh_views(self, game: CombatGame, battle: Battle) -> None:
        """Egocentric views and action masks of every fighter from the battle as it stands
        (the first tick, unpickling; later ticks get them from ``FighterTick``)."""
        combat_map = game.map
        radius = game.params["view_radius"]
        side = 2 * radius + 1
        count = 2 * game.team_size
        positions = battle.positions
        alive = battle.alive
        views = np.empty((count, side, side, len(FIGHTER_VIEW_CHANNELS)), dtype=np.float32)
        seen = np.stack(battle.seen).view(np.uint8)
        fill_views(
            views,
            positions,
            battle.health,
            alive.view(np.uint8),
            seen,
            game.padded_codes,
            combat_map.cell_rows,
            combat_map.cell_cols,
            radius,
            game.team_size,
        )
        self._views = views

        masks = np.empty((count, len(FIGHTER_ACTION_NAMES)), dtype=np.int8)
        self._movers = fighter_masks(
            masks.view(np.uint8),
            positions,
            alive.view(np.uint8),
            combat_map.move_target,
            combat_map.door_of_cell,
            combat_map.num_doors,
            battle.rules.door_capacity,
            battle.targets(),
        )
        masks.flags.writeable = False
        self._masks = masks
        self._legal_lists = None

    def _all_observations(self):
        return self._views

    def observation_tensor(self, player):
        """The fighter's (side, side, 5) egocentric view; see the package docstring."""
        return self._views[player]

    def observation_tensors(self):
        """Every fighter's view in one (players, side, side, 5) array, for the parallel env
        (shared with clones and with the rows handed out: never modify it)."""
        return self._views

    information_state_tensors = observation_tensors  # a fighter's information state is its view
