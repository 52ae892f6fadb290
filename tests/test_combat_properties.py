"""Property tests of the combat sim (hypothesis): invariants that hold at every tick."""

import pickle

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hiddenenvs
from hiddenenvs.envs.combat.doctrine import doctrine_action, random_action
from hiddenenvs.envs.combat.maps import CombatMap
from hiddenenvs.envs.combat.simulation import ATTACKERS, DEFENDERS

SMALL_MAP = CombatMap.load("small")
PASSABLE_CELLS = np.flatnonzero(SMALL_MAP.passable)
RUN = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])

episodes = st.fixed_dictionaries(
    {
        "mode": st.sampled_from(["commander", "fighter"]),
        "seed": st.integers(0, 2**31 - 1),
        "team_size": st.integers(1, 10),
        "door_capacity": st.integers(1, 3),
        "sight_range": st.integers(2, 16),  # short sight puts unseen enemies inside the view
        "policies": st.tuples(
            st.sampled_from(["doctrine", "random"]), st.sampled_from(["doctrine", "random"])
        ),
    }
)


def _game(episode):
    return hiddenenvs.load_game(
        "combat",
        mode=episode["mode"],
        map="small",
        team_size=episode["team_size"],
        door_capacity=episode["door_capacity"],
        sight_range=episode["sight_range"],
        fire_range=min(12, episode["sight_range"]),
        decision_interval=1,
        max_ticks=80,
    )  # one tick per decision, so commander-mode checks see every tick


def _joint(state, episode, rng):
    policies = {"doctrine": doctrine_action, "random": random_action}
    team_size = state.game.team_size
    players = range(state.game.info.num_players)
    if state.game.mode == "commander":
        return [policies[episode["policies"][p]](state, p, rng) for p in players]
    return [policies[episode["policies"][p // team_size]](state, p, rng) for p in players]


def _play(episode, check=lambda before, after: None):
    game = _game(episode)
    state = game.new_initial_state(seed=episode["seed"])
    rng = np.random.default_rng(episode["seed"])
    trajectory = []
    while not state.is_terminal():
        before = state.clone()
        state.apply_actions(_joint(state, episode, rng))
        check(before, state)
        trajectory.append(
            (state.battle.positions.copy(), state.battle.health.copy(), state.rewards().copy())
        )
    return state, trajectory


def _sees(battle, viewer_cells, cell):
    """Independent of the simulator's bookkeeping: does any of these cells see ``cell``?"""
    if len(viewer_cells) == 0:
        return False
    return bool(battle.line_of_sight(viewer_cells, np.full(len(viewer_cells), cell)).any())


@RUN
@given(episodes)
def test_fighters_stay_on_passable_cells_doors_hold_their_capacity_and_health_never_rises(episode):
    capacity = episode["door_capacity"]

    def check(before, after):
        battle = after.battle
        assert SMALL_MAP.passable[battle.positions].all()
        assert battle.door_occupancy().max(initial=0) <= capacity
        assert (battle.health <= before.battle.health).all() and (battle.health >= 0).all()
        rows, cols = np.divmod(battle.positions, SMALL_MAP.width)
        rows_before, cols_before = np.divmod(before.battle.positions, SMALL_MAP.width)
        assert max(np.abs(rows - rows_before).max(), np.abs(cols - cols_before).max()) <= 1

    _play(episode, check)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(PASSABLE_CELLS), st.sampled_from(PASSABLE_CELLS), st.integers(1, 20))
def test_line_of_sight_is_symmetric(cell_a, cell_b, radius):
    battle = hiddenenvs.load_game("combat", map="small").new_initial_state(seed=0).battle
    forward = battle.line_of_sight(np.array([cell_a]), np.array([cell_b]), radius)
    backward = battle.line_of_sight(np.array([cell_b]), np.array([cell_a]), radius)
    assert forward[0] == backward[0]


def test_line_of_sight_known_cases():
    battle = hiddenenvs.load_game("combat", map="small").new_initial_state(seed=0).battle
    width = SMALL_MAP.width

    def cell(row, col):
        return row * width + col

    # the compound's west wall (column 16) stands between (20, 10) and (20, 22)
    assert not battle.line_of_sight(cell(20, 10), cell(20, 22))
    # through the open west door at rows 27-28
    assert battle.line_of_sight(cell(27, 10), cell(27, 22))
    # neighbours always see each other; out of range never
    assert battle.line_of_sight(cell(5, 5), cell(6, 6))
    assert not battle.line_of_sight(cell(5, 5), cell(5, 30), radius=10)


@RUN
@given(episodes)
def test_observations_never_show_an_enemy_no_friend_can_see(episode):
    def check(_, state):
        battle = state.battle
        size = state.game.team_size
        alive = battle.alive
        for team in (ATTACKERS, DEFENDERS):
            friends = battle.positions[battle.team_slice(team)][alive[battle.team_slice(team)]]
            enemies = np.arange(2 * size)[battle.team_slice(1 - team)]
            truly_seen = [alive[e] and _sees(battle, friends, battle.positions[e]) for e in enemies]
            assert list(battle.seen_enemies(team)) == truly_seen
            if state.is_terminal():
                continue
            if state.game.mode == "commander":
                areas = SMALL_MAP.area_of_cell[battle.positions[enemies[truly_seen]]]
                expected = np.bincount(areas, minlength=SMALL_MAP.num_areas) / size
                observation = state.observation_tensor(team)
                assert np.allclose(observation[3 : 5 * SMALL_MAP.num_areas : 5], expected)
            else:
                radius = state.game.params["view_radius"]
                for fighter in np.arange(2 * size)[battle.team_slice(team)][
                    alive[battle.team_slice(team)]
                ]:
                    rows, cols = np.nonzero(state.observation_tensor(fighter)[..., 3])
                    row, col = divmod(int(battle.positions[fighter]), SMALL_MAP.width)
                    for r, c in zip(rows, cols):
                        cell = (row + r - radius) * SMALL_MAP.width + col + c - radius
                        assert _sees(battle, friends, cell)

    _play(episode, check)


@RUN
@given(episodes, st.integers(0, 10**6))
def test_moving_an_unseen_enemy_to_an_unseen_cell_changes_no_observation(episode, pick):
    """What a team perceives depends only on what it has seen: relocating an enemy that
    nobody of the team sees, to a cell nobody of the team sees, leaves its observations,
    beliefs and masks as they were."""
    game = _game(episode)
    state = game.new_initial_state(seed=episode["seed"])
    rng = np.random.default_rng(episode["seed"])
    for _ in range(5 + pick % 20):
        if state.is_terminal():
            return
        state.apply_actions(_joint(state, episode, rng))
    battle = state.battle
    size = game.team_size
    for team in (ATTACKERS, DEFENDERS):
        friends = battle.positions[battle.team_slice(team)][battle.alive[battle.team_slice(team)]]
        hidden = [
            e
            for e in np.arange(2 * size)[battle.team_slice(1 - team)]
            if battle.alive[e] and not _sees(battle, friends, battle.positions[e])
        ]
        if not hidden:
            continue
        enemy = hidden[pick % len(hidden)]
        unseen_cells = [c for c in PASSABLE_CELLS[pick % 7 :: 7] if not _sees(battle, friends, c)]
        if not unseen_cells:
            continue
        moved = state.clone()
        moved.battle.positions[enemy] = unseen_cells[pick % len(unseen_cells)]
        moved.battle._update_sight()
        if game.mode == "fighter":
            moved._refresh_views(game, moved.battle)
        players = (
            [team]
            if game.mode == "commander"
            else list(np.arange(2 * size)[battle.team_slice(team)])
        )
        for player in players:
            if battle.alive[player] or game.mode == "commander":
                assert np.array_equal(
                    moved.observation_tensor(player), state.observation_tensor(player)
                )
        assert np.array_equal(moved.battle.belief_cells[team], battle.belief_cells[team])


@RUN
@given(episodes)
def test_a_fixed_seed_replays_identically(episode):
    final_a, trajectory_a = _play(episode)
    final_b, trajectory_b = _play(episode)
    assert len(trajectory_a) == len(trajectory_b)
    for (pos_a, health_a, reward_a), (pos_b, health_b, reward_b) in zip(trajectory_a, trajectory_b):
        assert np.array_equal(pos_a, pos_b) and np.array_equal(health_a, health_b)
        assert np.array_equal(reward_a, reward_b)
    assert np.array_equal(final_a.returns(), final_b.returns())
    assert final_a.information_state_key(0) == final_b.information_state_key(0)
    assert final_a.public_state_key() == final_b.public_state_key()


@RUN
@given(episodes, st.integers(0, 10**6))
def test_history_and_pickle_give_back_the_state_at_any_tick(episode, pick):
    """Replaying ``history()`` (seeds and joint actions) or unpickling rebuilds the battle,
    keys, tensors and returns, and the rebuilt state draws the same hits from then on."""
    game = _game(episode)
    state = game.new_initial_state(seed=episode["seed"])
    rng = np.random.default_rng(episode["seed"])
    for _ in range(pick % 40):
        if state.is_terminal():
            break
        state.apply_actions(_joint(state, episode, rng))
    if pick % 3 == 0:
        state.reseed(pick)
    copies = [game.state_from_history(state.history()), pickle.loads(pickle.dumps(state))]
    for _ in range(3):
        for copy in copies:
            assert copy.history() == state.history()
            assert copy.public_state_key() == state.public_state_key()
            assert np.array_equal(
                copy.public_observation_tensor(), state.public_observation_tensor()
            )
            assert np.array_equal(copy.battle.health, state.battle.health)
            assert np.array_equal(copy.battle.positions, state.battle.positions)
            assert np.array_equal(copy.battle.belief_cells, state.battle.belief_cells)
            assert np.array_equal(copy.returns(), state.returns())
            for player in range(game.info.num_players):
                assert copy.information_state_key(player) == state.information_state_key(player)
                assert np.array_equal(
                    copy.observation_tensor(player), state.observation_tensor(player)
                )
                if not state.is_terminal():
                    assert copy.legal_actions(player) == state.legal_actions(player)
        if state.is_terminal():
            break
        joint = _joint(state, episode, rng)
        for copy in (state, *copies):
            copy.apply_actions(joint)
