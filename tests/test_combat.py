"""The combat sim: PettingZoo API in both modes, maps, orders, doctrine, rendering."""

import json
import pickle
from collections import deque

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test

import hiddenenvs
from hiddenenvs.envs.combat.doctrine import doctrine_action, play_episode, random_action
from hiddenenvs.envs.combat.maps import DIRECTIONS, MAPS_DIR, UNREACHABLE, CombatMap, MapError
from hiddenenvs.envs.combat.simulation import ATTACKERS, DEFENDERS

SMALL = {"map": "small", "team_size": 5}


@pytest.mark.parametrize("mode", ["commander", "fighter"])
def test_pettingzoo_api_small_map(mode):
    api_test(hiddenenvs.make("combat", mode=mode, **SMALL), num_cycles=60)
    seed_test(lambda: hiddenenvs.make("combat", mode=mode, **SMALL), num_cycles=60)
    parallel_api_test(hiddenenvs.make_parallel("combat", mode=mode, **SMALL), num_cycles=60)
    # parallel_seed_test samples unmasked actions: illegal orders are played as hold
    parallel_seed_test(
        lambda: hiddenenvs.make_parallel("combat", mode=mode, illegal_action="no_op", **SMALL),
        num_cycles=60,
    )


def test_fighter_mode_default_parameters_build_twenty_agents():
    env = hiddenenvs.make_parallel("combat", mode="fighter")
    observations, _ = env.reset(seed=0)
    assert (
        len(env.agents) == 20 and env.agents[0] == "attacker_0" and env.agents[-1] == "defender_9"
    )
    assert observations["attacker_0"]["observation"].shape == (11, 11, 5)


def _bfs_to_area(combat_map, area):
    """Independent reference: plain breadth-first search with the same move rule."""
    passable = combat_map.passable.reshape(combat_map.height, combat_map.width)
    distance = np.full(passable.shape, UNREACHABLE)
    queue = deque()
    ground = combat_map.codes.ravel() == 0
    for cell in np.flatnonzero((combat_map.area_of_cell == area) & ground):
        distance.flat[cell] = 0
        queue.append(divmod(int(cell), combat_map.width))
    while queue:
        row, col = queue.popleft()
        for d_row, d_col in DIRECTIONS:
            r, c = row + d_row, col + d_col
            if not passable[r, c] or distance[r, c] < UNREACHABLE:
                continue
            if d_row and d_col and not (passable[row + d_row, col] and passable[row, col + d_col]):
                continue
            distance[r, c] = distance[row, col] + 1
            queue.append((r, c))
    return distance.ravel()


def test_distance_fields_match_a_plain_bfs_and_paths_descend():
    combat_map = CombatMap.load("small")
    for index, area in enumerate(combat_map.destination_areas):
        assert np.array_equal(combat_map.distance_fields[index], _bfs_to_area(combat_map, area))
    reachable = combat_map.distance_fields < UNREACHABLE
    steps = combat_map.distance_fields[
        np.arange(len(combat_map.next_cell))[:, None], combat_map.next_cell
    ]
    away = combat_map.distance_fields > 0
    assert np.all(steps[reachable & away] == combat_map.distance_fields[reachable & away] - 1)


def _small_map_data():
    return json.loads((MAPS_DIR / "small.json").read_text())


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda d: d["rows"].__setitem__(5, d["rows"][5][:3] + "x" + d["rows"][5][4:]),
            "unknown cell code 'x' at row 5, column 3",
        ),
        (lambda d: d["rows"].__setitem__(0, "." + d["rows"][0][1:]), "border must be walls"),
        (lambda d: d["rows"].__setitem__(3, d["rows"][3][:-1]), "row 3 has 47 cells"),
        (
            lambda d: d["birth_points"].__setitem__("attackers", [0, 0]),
            "birth point of the attackers .* not passable",
        ),
        (
            lambda d: d["destinations"].append({"name": "far", "area": [9, 9]}),
            "outside the map's areas",
        ),
        (lambda d: d.pop("area_size"), "missing key"),
        (
            lambda d: d.__setitem__("rows", [r.replace("D", "W") for r in d["rows"]]),
            "defenders' birth point cannot be reached",
        ),
    ],
)
def test_bad_maps_are_refused_with_the_place_named(change, message):
    data = _small_map_data()
    change(data)
    with pytest.raises(MapError, match=message):
        CombatMap.from_dict(data, source="broken.json")


def test_unreachable_door_and_bad_map_names_are_refused(tmp_path):
    data = _small_map_data()
    rows = [list(row) for row in data["rows"]]
    for row in range(14, 20):  # box the north door in with walls on its outside
        for col in range(25, 31):
            if rows[row][col] == ".":
                rows[row][col] = "W"
    data["rows"] = ["".join(row) for row in rows]
    with pytest.raises(MapError, match=r"door \d at row 16, column 27 cannot be reached"):
        CombatMap.from_dict(data, source="boxed.json")
    with pytest.raises(MapError, match="map must be one of"):
        hiddenenvs.make("combat", map="nowhere")
    path = tmp_path / "not_json.json"
    path.write_text("{")
    with pytest.raises(MapError, match="not valid JSON"):
        CombatMap.load(str(path))
    with pytest.raises(ValueError, match="fire_range.*must not exceed"):
        hiddenenvs.make("combat", fire_range=20, sight_range=10)


def test_order_encoding_and_legal_orders_by_brute_force():
    game = hiddenenvs.load_game("combat", **SMALL)
    state = game.new_initial_state(seed=0)
    for player in (ATTACKERS, DEFENDERS):
        counts = state.own_counts(player)
        expected = [0] + [
            game.encode_order(area, destination, n)
            for area in range(game.map.num_areas)
            for destination in range(game.map.num_destinations)
            for n in range(1, counts[area] + 1)
        ]
        assert state.legal_actions(player) == expected
        for action in expected[1:]:
            assert game.encode_order(*game.decode_order(action)) == action
    source = int(np.flatnonzero(state.own_counts(ATTACKERS))[0])
    state.apply_actions([game.encode_order(source, 0, 3), 0])
    assert (state.orders[:5] == 0).sum() == 3 and (state.orders[5:] == -1).all()
    assert "send 3 from area" in game.action_to_string(0, game.encode_order(source, 0, 3))


def test_door_admits_at_most_its_capacity_and_lets_everyone_through():
    game = hiddenenvs.load_game(  # short sight: nobody stops to shoot
        "combat", map="small", team_size=10, decision_interval=1, sight_range=1, fire_range=1
    )
    state = game.new_initial_state(seed=0)
    north_inside = game.map.destination_names.index("north door inside")
    source = int(np.flatnonzero(state.own_counts(ATTACKERS))[0])
    state.apply_actions([game.encode_order(source, north_inside, 10), 0])
    peak = 0
    for _ in range(150):
        if state.is_terminal():
            break
        peak = max(peak, state.battle.door_occupancy().max())
        assert state.battle.door_occupancy().max() <= game.rules.door_capacity
        state.apply_actions([0, 0])
    assert peak == game.rules.door_capacity  # the queue really pressed on the door
    assert (game.map.distance_fields[north_inside][state.battle.positions[:10]] == 0).all()


def test_clone_is_independent_and_replays_the_same_hits():
    game = hiddenenvs.load_game("combat", **SMALL)
    state = game.new_initial_state(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(4):
        state.apply_actions([random_action(state, p, rng) for p in range(2)])
    copy = state.clone()
    snapshot = state.battle.positions.copy(), state.battle.health.copy()
    probe = state.clone()
    probe.apply_actions([random_action(probe, p, rng) for p in range(2)])
    assert np.array_equal(state.battle.positions, snapshot[0]) and np.array_equal(
        state.battle.health, snapshot[1]
    )
    joint = [random_action(state, p, rng) for p in range(2)]
    for _ in range(6):
        if copy.is_terminal():
            break
        copy.apply_actions(joint)
        state.apply_actions(joint)
        joint = [0, 0]
    assert np.array_equal(copy.battle.health, state.battle.health)
    assert np.array_equal(copy.battle.positions, state.battle.positions)
    assert copy.information_state_key(0) == state.information_state_key(0)
    restored = game.new_initial_state(seed=3)
    for _ in range(4):
        restored.apply_actions([0, 0])
    assert not np.array_equal(restored.battle.positions, copy.battle.positions)  # the copy moved on


def _battle_in_contact(game, seed=1):
    """A state where the teams exchange fire (some fighter has lost health)."""
    state = game.new_initial_state(seed=seed)
    rng = np.random.default_rng(seed)
    while (state.battle.health == 100).all():
        state.apply_actions([doctrine_action(state, p, rng) for p in range(game.info.num_players)])
    assert not state.is_terminal()
    return state


def _trace(state, joints):
    """Health of everyone after each joint action (fewer when the battle ends)."""
    health = []
    for joint in joints:
        if state.is_terminal():
            break
        state.apply_actions(joint)
        health.append(state.battle.health.copy())
    return np.array(health)


def test_reseeded_clones_draw_fresh_hits_and_equal_seeds_the_same():
    game = hiddenenvs.load_game("combat", **SMALL)
    state = _battle_in_contact(game)
    holds = [[0, 0]] * 4  # engaged fighters keep shooting while they hold
    same = _trace(state.clone(), holds)
    assert np.array_equal(_trace(state.clone(), holds), same)  # clone: exact replay
    reseeded = {}
    for seed in (11, 11, 12):
        copy = state.clone()
        copy.reseed(seed)
        reseeded.setdefault(seed, []).append(_trace(copy, holds))
        assert (
            game.state_from_history(copy.history()).battle.health.tolist()
            == copy.battle.health.tolist()
        )
    assert np.array_equal(*reseeded[11])
    assert not np.array_equal(reseeded[11][0], reseeded[12][0])
    assert not np.array_equal(reseeded[11][0], same)
    # the generator is nobody's observation: reseeding leaves every key and the history's steps alone
    copy = state.clone()
    copy.reseed(5)
    copy.reseed(6)  # no roll came from 5: the history keeps only 6
    assert copy.history() == (*state.history(), 6)
    assert copy.public_state_key() == state.public_state_key()
    assert copy.information_state_key(0) == state.information_state_key(0)


@pytest.mark.parametrize("bad", [-1, 1.5, True, "7"])
def test_bad_seeds_are_refused_with_the_input_named(bad):
    game = hiddenenvs.load_game("combat", **SMALL)
    with pytest.raises(ValueError, match=r"reseed\(\) takes a non-negative int seed, got"):
        game.new_initial_state(seed=0).reseed(bad)
    with pytest.raises(ValueError, match="new_initial_state takes a non-negative int seed"):
        game.new_initial_state(seed=bad)


def test_bad_history_entries_are_named():
    game = hiddenenvs.load_game("combat", **SMALL)
    with pytest.raises(
        ValueError,
        match=r"history entry 1 \(\(99999, 0\)\): .*action 99999 is illegal for player 0",
    ):
        game.state_from_history([0, (99999, 0)])
    with pytest.raises(
        ValueError, match=r"history entry 0 \('x'\): .*reseed\(\) takes a non-negative int seed"
    ):
        game.state_from_history(["x"])


@pytest.mark.parametrize("mode", ["commander", "fighter"])
def test_history_and_pickle_rebuild_a_state_that_plays_on_identically(mode):
    game = hiddenenvs.load_game("combat", mode=mode, **SMALL)
    unseeded = game.new_initial_state()  # still names its seed, so it replays
    assert (
        game.state_from_history(unseeded.history()).battle.rng.random()
        == unseeded.battle.rng.random()
    )
    state = _battle_in_contact(game)
    rng = np.random.default_rng(2)
    state.reseed(99)
    health_before = state.battle.health.sum()
    history = state.history()
    assert (
        history[0] == 1
        and history[-1] == 99
        and all(isinstance(entry, tuple) for entry in history[1:-1])
    )
    copies = [game.state_from_history(history), pickle.loads(pickle.dumps(state))]
    while not state.is_terminal():
        joint = [doctrine_action(state, p, rng) for p in range(game.info.num_players)]
        for copy in (state, *copies):
            copy.apply_actions(joint)
        for copy in copies:
            assert np.array_equal(copy.battle.health, state.battle.health)
            assert np.array_equal(copy.battle.positions, state.battle.positions)
            assert np.array_equal(copy.battle.belief_cells, state.battle.belief_cells)
            assert copy.information_state_key(1) == state.information_state_key(1)
            assert np.array_equal(copy.observation_tensor(0), state.observation_tensor(0))
            assert np.array_equal(copy.rewards(), state.rewards())
    for copy in copies:
        assert copy.history() == state.history() and np.array_equal(copy.returns(), state.returns())
    assert state.battle.health.sum() < health_before  # hits were drawn after the copies were made


@pytest.mark.parametrize("mode", ["commander", "fighter"])
def test_states_on_the_default_map_pickle_without_the_map_tables(mode):
    game = hiddenenvs.load_game("combat", mode=mode)
    state = game.new_initial_state(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(20):
        state.apply_actions([random_action(state, p, rng) for p in range(game.info.num_players)])
    assert len(pickle.dumps(game)) < 300
    assert len(pickle.dumps(state)) < 20_000  # the map tables alone are megabytes
    restored = pickle.loads(pickle.dumps(state))
    assert restored.game.spec == game.spec
    assert restored.battle.map is game.map  # loaded once per process, shared by every game


def _public_tensor_from_key(mode, shaped, key, team_size, max_ticks):
    """The documented public tensor, computed from the public key alone."""
    balance = sum(entry[-1] for entry in key) if shaped else 0
    balance_feature = 0.5 + balance / (200 * team_size)
    if mode == "fighter":
        tick, result = key[-1][:2] if key else (0, None)
        results = {None: [0, 0, 0], -1: [1, 0, 0], ATTACKERS: [1, 1, 0], DEFENDERS: [1, 0, 1]}
        return [tick / max_ticks, balance_feature, *results[result]]
    tick, attackers, defenders = key[-1][:3] if key else (0, team_size, team_size)
    attackers_won = defenders == 0 and attackers > 0
    defenders_won = (
        attackers == 0 and defenders > 0 or tick >= max_ticks and attackers and defenders
    )
    over = attackers == 0 or defenders == 0 or tick >= max_ticks
    return [
        tick / max_ticks,
        balance_feature,
        float(over),
        float(attackers_won),
        float(defenders_won),
        attackers / team_size,
        defenders / team_size,
    ]


@pytest.mark.parametrize("mode", ["commander", "fighter"])
@pytest.mark.parametrize("shaped", [True, False])
def test_public_entries_are_what_every_player_perceives(mode, shaped):
    game = hiddenenvs.load_game("combat", mode=mode, shaped_rewards=shaped, **SMALL)
    state = game.new_initial_state(seed=4)
    rng = np.random.default_rng(4)
    assert state.public_state_key() == () and state.information_state_key(0) == ()
    steps = 0
    while True:
        public = state.public_state_key()
        assert len(public) == steps
        expected = _public_tensor_from_key(mode, shaped, public, 5, game.rules.max_ticks)
        assert state.public_observation_tensor().tolist() == pytest.approx(expected)
        if state.is_terminal():
            break
        state.apply_actions([doctrine_action(state, p, rng) for p in range(game.info.num_players)])
        steps += 1
        entry = state.public_state_key()[-1]
        if mode == "commander":  # both teams' observations count both teams
            assert entry[:3] == (state.battle.tick, *state.battle.alive_counts())
        else:  # a fighter's window shows neither count, the end shows the result
            assert entry[:2] == (state.battle.tick, state._winner)
        assert len(entry) == (3 if mode == "commander" else 2) + shaped
        if shaped:  # the balance is the shaped part of the reward everyone is paid
            end = {None: 0.0, -1: 0.0, ATTACKERS: 1.0, DEFENDERS: -1.0}[state._winner]
            assert entry[-1] / 500 == pytest.approx(state.rewards()[0] - end)
    with pytest.raises(ValueError, match=f"player {game.info.num_players} is not in 0.."):
        state.information_state_key(game.info.num_players)


def test_an_order_is_private_to_the_team_that_gives_it():
    """Before contact, sending fighters instead of holding changes only the sender's key."""
    game = hiddenenvs.load_game("combat", **SMALL)
    root = game.new_initial_state(seed=0)
    for player in (ATTACKERS, DEFENDERS):
        order = root.legal_actions(player)[-1]  # all of the team to the last destination
        joint = [0, 0]
        joint[player] = order
        moved, held = (
            game.state_from_history([0, tuple(joint)]),
            game.state_from_history([0, (0, 0)]),
        )
        assert not np.array_equal(moved.battle.positions, held.battle.positions)
        assert moved.public_state_key() == held.public_state_key()
        assert np.array_equal(moved.public_observation_tensor(), held.public_observation_tensor())
        assert moved.information_state_key(1 - player) == held.information_state_key(1 - player)
        assert moved.information_state_key(player) != held.information_state_key(player)


def test_a_fighters_move_is_private_to_those_who_see_it():
    """Fighter mode: one attacker stepping instead of holding changes its own key, never
    the public key or tensor, nor the key of a defender (far away, in the compound)."""
    game = hiddenenvs.load_game("combat", mode="fighter", **SMALL)
    root = game.new_initial_state(seed=0)
    step = next(action for action in root.legal_actions(0) if 0 < action < 9)
    holds = (0,) * 10
    moved = game.state_from_history([0, (step, *holds[1:])])
    held = game.state_from_history([0, holds])
    assert moved.battle.positions[0] != held.battle.positions[0]
    assert moved.public_state_key() == held.public_state_key()
    assert np.array_equal(moved.public_observation_tensor(), held.public_observation_tensor())
    assert moved.information_state_key(0) != held.information_state_key(0)
    for defender in range(5, 10):
        assert moved.information_state_key(defender) == held.information_state_key(defender)


def test_returns_are_zero_sum_sums_of_rewards_and_shaping_switches_off():
    for shaped in (True, False):
        game = hiddenenvs.load_game("combat", shaped_rewards=shaped, **SMALL)
        state = game.new_initial_state(seed=5)
        rng = np.random.default_rng(5)
        total = np.zeros(2)
        while not state.is_terminal():
            state.apply_actions([doctrine_action(state, 0, rng), random_action(state, 1, rng)])
            total += state.rewards()
            if not shaped and not state.is_terminal():
                assert not state.rewards().any()
        assert np.allclose(total, state.returns()) and abs(state.returns().sum()) < 1e-9
        assert game.info.min_utility <= state.returns()[0] <= game.info.max_utility
        assert abs(state.returns()[0]) >= (1.0 if not shaped else 0.0)


def test_doctrine_attackers_beat_random_defenders_on_the_small_map():
    game = hiddenenvs.load_game("combat", map="small")
    wins = 0
    for seed in range(20):
        state = play_episode(
            game.new_initial_state(seed=seed), "doctrine", "random", np.random.default_rng(seed)
        )
        wins += state.returns()[ATTACKERS] > 0
    assert wins >= 14, f"doctrine attackers won only {wins} of 20"


def test_fighter_doctrine_attackers_beat_random_defenders_on_the_small_map():
    game = hiddenenvs.load_game("combat", mode="fighter", map="small")
    wins = 0
    for seed in range(10):
        state = play_episode(
            game.new_initial_state(seed=seed), "doctrine", "random", np.random.default_rng(seed)
        )
        wins += state.returns()[ATTACKERS] > 0
    assert wins >= 7, f"doctrine attackers won only {wins} of 10"


def test_dead_fighters_are_terminated_individually_in_both_envs():
    parameters = {
        "mode": "fighter",
        "map": "small",
        "team_size": 5,
        "hit_probability": 1.0,
        "damage": 100,
    }
    env = hiddenenvs.make_parallel("combat", **parameters)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    removed = []
    while env.agents:
        before = list(env.agents)
        actions = {
            a: doctrine_action(env.unwrapped.game_state, env.unwrapped.agent_to_player[a], rng)
            for a in before
        }
        _, _, terminations, _, _ = env.step(actions)
        assert set(terminations) == set(before)
        dead = [a for a in before if terminations[a]]
        if env.agents:
            assert set(env.agents) == set(before) - set(dead)
            removed += dead
    assert removed, "some fighter should have died before the end"

    aec = hiddenenvs.make("combat", **parameters)
    aec.reset(seed=0)
    dead_steps = 0
    for agent in aec.agent_iter(max_iter=20000):
        _, _, termination, _, _ = aec.last()
        if termination:
            dead_steps += len(aec.agents) > 1 and not all(aec.terminations.values())
            aec.step(None)
            assert agent not in aec.agents
        else:
            state = aec.unwrapped.game_state
            aec.step(doctrine_action(state, aec.unwrapped.agent_to_player[agent], rng))
    assert dead_steps > 0


def test_rendering_draws_teams_fog_and_a_summary():
    env = hiddenenvs.make("combat", render_mode="rgb_array", **SMALL)
    env.reset(seed=0)
    image = env.render()
    assert image.shape == (480, 480, 3) and image.dtype == np.uint8
    colours = {tuple(c) for c in image.reshape(-1, 3)[::7]}
    assert (230, 80, 30) in colours and (40, 90, 230) in colours
    fogged = hiddenenvs.make(
        "combat", render_mode="rgb_array", render_visibility="attackers", **SMALL
    )
    fogged.reset(seed=0)
    assert fogged.render().mean() < image.mean()
    text = str(env.unwrapped.game_state)
    assert "attackers: 5/5 alive" in text and "a5" in text and "d5" in text


def test_beliefs_follow_last_sightings_and_clear_when_the_cell_is_seen_empty():
    game = hiddenenvs.load_game("combat", map="small", team_size=1)
    battle = game.new_initial_state(seed=0).battle
    width = game.map.width

    def place(attacker, defender):
        battle.positions[:] = [attacker[0] * width + attacker[1], defender[0] * width + defender[1]]
        battle._update_sight()

    place((5, 5), (5, 12))  # in the open, 7 cells apart: seen
    assert battle.seen_enemies(ATTACKERS)[0] and battle.belief_cells[ATTACKERS, 0] == 5 * width + 12
    place((44, 5), (6, 40))  # the attacker walks off; nobody sees (5, 12) now
    assert not battle.seen_enemies(ATTACKERS)[0]
    assert battle.belief_cells[ATTACKERS, 0] == 5 * width + 12  # remembered
    place((5, 8), (6, 40))  # the attacker sees (5, 12) again and the defender is gone
    assert battle.belief_cells[ATTACKERS, 0] == -1
    observation = game.new_initial_state(seed=0).observation_tensor(ATTACKERS)
    assert observation[1 : 5 * game.map.num_areas : 5].sum() == 0  # nothing believed at the start


def test_the_commanders_observation_holds_its_standing_orders_until_the_fighters_arrive():
    """Feature 4 of an area: my live fighters ordered there and not yet in it / team_size."""
    game = hiddenenvs.load_game("combat", **SMALL, hit_probability=0.0)  # nobody dies on the way
    state = game.new_initial_state(seed=0)
    areas = game.map.num_areas

    def per_area(player):
        return state.observation_tensor(player)[: 5 * areas].reshape(areas, 5)

    assert per_area(ATTACKERS)[:, 4].sum() == 0 and per_area(DEFENDERS)[:, 4].sum() == 0
    birth = int(np.flatnonzero(state.own_counts(ATTACKERS))[0])
    destination = game.map.destination_names.index(
        "north door outside"
    )  # out of the defenders' sight
    target = int(game.map.destination_areas[destination])
    assert target != birth
    state.apply_actions([game.encode_order(birth, destination, 3), 0])
    assert per_area(ATTACKERS)[target, 4] == pytest.approx(3 / 5)  # three of five on their way
    assert per_area(ATTACKERS)[:, 4].sum() == pytest.approx(3 / 5)
    assert per_area(DEFENDERS)[:, 4].sum() == 0  # the enemy's orders are not seen
    while per_area(ATTACKERS)[target, 4] > 0:
        state.apply_actions([0, 0])
    assert not state.is_terminal()
    assert per_area(ATTACKERS)[target, 0] == pytest.approx(
        3 / 5
    )  # arrived, so no longer on their way


def test_fighter_view_is_the_map_window_around_the_fighter():
    game = hiddenenvs.load_game("combat", mode="fighter", map="small", team_size=3, view_radius=4)
    state = game.new_initial_state(seed=0)
    rng = np.random.default_rng(1)
    for _ in range(30):
        state.apply_actions([random_action(state, p, rng) for p in range(6)])
    codes = np.pad(game.map.codes, 4, constant_values=2)
    for fighter in range(6):
        row, col = divmod(int(state.battle.positions[fighter]), game.map.width)
        window = codes[row : row + 9, col : col + 9]
        view = state.observation_tensor(fighter)
        assert np.array_equal(view[..., 0], np.isin(window, (1, 2)).astype(np.float32))
        assert np.array_equal(view[..., 1], (window == 3).astype(np.float32))
        assert np.all(view[..., 4] == state.battle.health[fighter] / 100)


def test_record_writes_a_png_strip_and_a_gif(tmp_path):
    from PIL import Image

    from hiddenenvs.envs.combat.record import main

    main(["--map", "small", "--out", str(tmp_path / "strip.png"), "--frames", "3", "--every", "5"])
    assert Image.open(tmp_path / "strip.png").size == (3 * 480, 480)
    main(["--mode", "fighter", "--out", str(tmp_path / "episode.gif"), "--every", "50"])
    assert Image.open(tmp_path / "episode.gif").n_frames >= 2


def test_show_needs_a_display(monkeypatch):
    from hiddenenvs.envs.combat.render import show

    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    state = hiddenenvs.load_game("combat", **SMALL).new_initial_state(seed=0)
    with pytest.raises(RuntimeError, match="no display for a window"):
        show(state)


@pytest.mark.parametrize("gap", [1, 6, 11])
def test_hit_rate_falls_with_distance_as_documented(gap):
    game = hiddenenvs.load_game("combat", map="small", team_size=1, hit_probability=0.8, damage=1)
    battle = game.new_initial_state(seed=gap).battle
    width = game.map.width
    start = np.array([5 * width + 5, 5 * width + 5 + gap], dtype=np.int32)  # open ground, row 5
    shots = hits = 0
    for _ in range(60):
        battle.positions = start.copy()
        battle.health[:] = 100
        battle.alive[:] = True
        battle._update_sight()
        for _ in range(50):
            before = battle.health.sum()
            battle.step(np.array([True, True]), start.copy())
            shots += 2
            hits += before - battle.health.sum()
    expected = 0.8 * (1 - gap / (game.rules.fire_range + 1))
    assert abs(hits / shots - expected) < 4 * np.sqrt(expected * (1 - expected) / shots)


def test_mutual_elimination_in_one_tick_is_a_draw():
    game = hiddenenvs.load_game("combat", map="small", team_size=1, hit_probability=1.0, damage=100)
    state = game.new_initial_state(seed=0)
    width = game.map.width
    state.battle.positions[:] = [5 * width + 5, 5 * width + 7]
    state.battle._update_sight()
    state.apply_actions([0, 0])
    assert state.is_terminal() and state.battle.winner() == -1
    assert state.returns().tolist() == [0.0, 0.0]


def test_stored_maps_are_what_the_documented_builder_writes():
    from hiddenenvs.envs.combat.map_builder import RECIPES, build

    for recipe in RECIPES:
        assert build(recipe) == json.loads((MAPS_DIR / f"{recipe.name}.json").read_text()), (
            recipe.name
        )


def test_compiled_history_hashes_equal_the_numpy_formula():
    from hiddenenvs.envs.combat import env as combat_env

    rng = np.random.default_rng(5)
    keys = rng.integers(0, 2**63, size=7, dtype=np.uint64) * np.uint64(3)  # top bits set too
    observations = rng.random((7, 11, 11, 5), dtype=np.float32) * (rng.random((7, 11, 11, 5)) < 0.3)
    actions = rng.integers(-1, 10, size=7)
    # the formula written out in numpy (uint64 arithmetic wraps modulo 2**64)
    words = observations.reshape(7, -1).view(np.uint32).astype(np.uint64)
    observation_hash = (words * combat_env._HASH_COEFFICIENTS[: words.shape[1]]).sum(
        axis=1, dtype=np.uint64
    )
    mixed = (keys ^ observation_hash) * combat_env._MIX_A
    mixed ^= mixed >> np.uint64(31)
    expected = (mixed + actions.astype(np.uint64) + np.uint64(1)) * combat_env._MIX_B
    np.testing.assert_array_equal(combat_env._chain_hashes(keys, observations, actions), expected)
    with pytest.raises(ValueError, match="as many"):
        combat_env._chain_hashes(keys, observations, actions[:3])


def test_compiled_fighter_masks_and_intents_equal_the_numpy_formulas():
    from hiddenenvs.envs.combat._tick import fighter_intents, fighter_masks
    from hiddenenvs.envs.combat.env import HOLD, SHOOT

    combat_map = hiddenenvs.load_game("combat", map="small", mode="fighter", team_size=12).map
    rng = np.random.default_rng(11)
    doors = np.flatnonzero(combat_map.door_of_cell >= 0)
    cells = np.flatnonzero(combat_map.passable)
    assert len(doors) and combat_map.num_doors > 1
    blocked_by_a_full_door = 0
    for trial in range(40):
        count = 24
        # a third of the fighters crowd the doorways, so some doors are full
        positions = np.where(
            rng.random(count) < 0.35, rng.choice(doors, count), rng.choice(cells, count)
        )
        positions = positions.astype(np.int32)
        alive = rng.random(count) < 0.8
        target_of = np.where(rng.random(count) < 0.4, rng.integers(0, count, count), -1).astype(
            np.int64
        )
        capacity = int(rng.integers(1, 4))
        # the numpy formula the kernel replaced
        occupancy = np.bincount(
            combat_map.door_of_cell[positions[alive]][
                combat_map.door_of_cell[positions[alive]] >= 0
            ],
            minlength=combat_map.num_doors,
        )
        move_targets = combat_map.move_target[:, positions].T
        target_doors = combat_map.door_of_cell[np.maximum(move_targets, 0)]
        entering_full_door = (
            (target_doors >= 0)
            & (target_doors != combat_map.door_of_cell[positions][:, None])
            & (occupancy >= capacity)[np.maximum(target_doors, 0)]
        )
        expected = np.zeros((count, SHOOT + 1), dtype=bool)
        expected[:, HOLD] = True
        expected[:, 1:SHOOT] = (move_targets >= 0) & ~entering_full_door
        expected[:, SHOOT] = target_of >= 0
        expected[~alive] = False
        blocked_by_a_full_door += int(entering_full_door[alive].sum())
        masks = np.empty((count, SHOOT + 1), dtype=bool)
        movers = fighter_masks(
            masks.view(np.uint8),
            positions,
            alive.view(np.uint8),
            combat_map.move_target,
            combat_map.door_of_cell,
            combat_map.num_doors,
            capacity,
            target_of,
        )
        np.testing.assert_array_equal(masks, expected, err_msg=f"trial {trial}")
        assert movers == np.flatnonzero(expected.sum(axis=1) > 1).tolist()

        actions = rng.integers(-1, SHOOT + 1, count)
        moves = (actions > HOLD) & (actions < SHOOT)
        targets = combat_map.move_target[actions[moves] - 1, positions[moves]]
        expected_cells = positions.copy()
        expected_cells[moves] = np.where(targets >= 0, targets, positions[moves])
        wanted, fires = np.empty(count, dtype=np.int32), np.empty(count, dtype=bool)
        fighter_intents(actions, positions, combat_map.move_target, wanted, fires.view(np.uint8))
        np.testing.assert_array_equal(wanted, expected_cells)
        np.testing.assert_array_equal(fires, actions == SHOOT)
    assert blocked_by_a_full_door > 0  # the door rule was exercised
    with pytest.raises(ValueError, match="need a"):
        fighter_masks(
            masks[:3].view(np.uint8),
            positions,
            alive.view(np.uint8),
            combat_map.move_target,
            combat_map.door_of_cell,
            combat_map.num_doors,
            1,
            target_of,
        )
    with pytest.raises(ValueError, match="as many"):
        fighter_intents(
            actions[:3], positions, combat_map.move_target, wanted, fires.view(np.uint8)
        )


def test_the_view_kernel_refuses_a_views_array_of_the_wrong_shape():
    from hiddenenvs.envs.combat._tick import fill_views

    game = hiddenenvs.load_game("combat", mode="fighter", map="small", team_size=3)
    battle, combat_map = game.new_initial_state(seed=0).battle, game.map
    with pytest.raises(ValueError, match=r"need a \(6, 11, 11, 5\) array, got \(6, 11, 11, 4\)"):
        fill_views(
            np.empty((6, 11, 11, 4), np.float32),
            battle.positions,
            battle.health,
            battle.alive.view(np.uint8),
            np.stack(battle.seen).view(np.uint8),
            game.padded_codes,
            combat_map.cell_rows,
            combat_map.cell_cols,
            5,
            3,
        )
