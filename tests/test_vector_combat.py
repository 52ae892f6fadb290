"""hiddenenvs.vector's combat fighter mode against the scalar game model: B scalar states
seeded with the vector env's game seeds (``deals``) and fed the same joint actions give
the same views, masks, rewards and terminations, hit rolls included, through whole
episodes and the automatic reset."""

from __future__ import annotations

import numpy as np
import pytest

import hiddenenvs.vector as vector
from hiddenenvs.envs.combat.env import SHOOT
from hiddenenvs.game import SIMULTANEOUS
from hiddenenvs.registry import load_game

CASES = [
    # the small map's rules as they ship: random fire at 50% from afar, games to the limit
    pytest.param({"map": "small"}, 3, 230, id="small"),
    # the default map: games to a win and to the time limit (600 ticks), and the next ones
    pytest.param({}, 2, 610, id="default"),
    # sure, deadly hits and unshaped rewards: eliminations, draws and short games
    pytest.param(
        {
            "map": "small",
            "team_size": 3,
            "hit_probability": 1.0,
            "damage": 100,
            "max_ticks": 40,
            "shaped_rewards": False,
        },
        4,
        160,
        id="deadly",
    ),
    # many fighters crowding the doors, a narrow view
    pytest.param({"map": "small", "team_size": 20, "view_radius": 2}, 2, 120, id="crowded"),
]


def shoot_first_policy(seed: int):
    """Shoot when a fighter may, else a uniform legal action (-1 for the dead)."""
    random_legal = vector.RandomLegalPolicy(seed=seed)

    def act(masks: np.ndarray) -> np.ndarray:
        return np.where(masks[..., SHOOT] == 1, SHOOT, random_legal(masks))

    return act


def storming_policy(game, seed: int):
    """As :func:`shoot_first_policy`, but the attackers who cannot shoot step towards the
    compound's centre where they may (so the teams meet, on the default map too); reads
    each env's positions from its scalar mirror, ``act(masks, states)``."""
    shoot_first = shoot_first_policy(seed)
    combat_map, size = game.map, game.team_size
    centre = combat_map.destination_names.index("centre")

    def act(masks: np.ndarray, states) -> np.ndarray:
        actions = shoot_first(masks)
        for row, state in enumerate(states):
            cells = state.battle.positions[:size]
            toward = combat_map.move_target[:, cells] == combat_map.next_cell[centre, cells]
            legal = toward & (masks[row, :size, 1:SHOOT].T == 1)
            marching = legal.any(axis=0) & (actions[row, :size] != SHOOT)
            actions[row, :size][marching] = 1 + legal.argmax(axis=0)[marching]
        return actions

    return act


def assert_state_matches(state, step, row: int, where: str) -> None:
    np.testing.assert_array_equal(
        step.observations[row], state.observation_tensors(), err_msg=f"views, {where}"
    )
    np.testing.assert_array_equal(
        step.legal_action_masks[row], state.read_only_legal_actions_masks(), err_msg=where
    )
    assert step.current_players[row] == SIMULTANEOUS


@pytest.mark.parametrize("params, num_envs, steps", CASES)
def test_vector_combat_matches_the_scalar_game(params, num_envs, steps):
    env = vector.make("combat", num_envs=num_envs, seed=7, mode="fighter", **params)
    game = load_game("combat", mode="fighter", **params)
    step = env.reset()
    seeds = env.deals[:, 0]
    states = [game.new_initial_state(seed=int(seed)) for seed in seeds]
    for row, state in enumerate(states):
        assert_state_matches(state, step, row, f"env {row} at the start")
    policy = storming_policy(game, seed=3)
    episodes = np.zeros(num_envs, dtype=int)
    damage_seen = False
    for tick in range(steps):
        actions = policy(step.legal_action_masks, states)
        step = env.step(actions)
        assert not step.truncated.any()
        for row, state in enumerate(states):
            where = f"env {row}, step {tick}, episode {episodes[row]}"
            state.apply_actions(actions[row].tolist())
            np.testing.assert_array_equal(
                step.rewards[row], state.rewards().astype(np.float32), err_msg=where
            )
            assert bool(step.terminated[row]) == state.is_terminal(), where
            if state.is_terminal():
                np.testing.assert_array_equal(
                    step.final_observations[row], state.observation_tensors(), err_msg=where
                )
                episodes[row] += 1
                assert env.deals[row, 0] != seeds[row], where
                seeds[row] = env.deals[row, 0]
                state = states[row] = game.new_initial_state(seed=int(seeds[row]))
            elif step.rewards[row].any():
                damage_seen = True
            assert_state_matches(state, step, row, where)
    assert (episodes >= 1).all(), "every env finished a game and restarted"
    assert damage_seen or not game.params["shaped_rewards"], "hits were compared"


def test_same_seed_same_games_and_rows_differ():
    params = {"map": "small", "team_size": 2}
    first = vector.make("combat", num_envs=3, seed=11, mode="fighter", **params)
    second = vector.make("combat", num_envs=3, seed=11, mode="fighter", **params)
    a, b = first.reset(), second.reset()
    np.testing.assert_array_equal(first.deals, second.deals)
    assert len(set(first.deals[:, 0].tolist())) == 3
    other = vector.make("combat", num_envs=3, seed=12, mode="fighter", **params)
    other.reset()
    assert (first.deals != other.deals).all()
    policy = shoot_first_policy(seed=5)
    for _ in range(60):
        actions = policy(a.legal_action_masks)
        a, b = first.step(actions), second.step(actions)
        for field in ("observations", "legal_action_masks", "rewards", "terminated"):
            np.testing.assert_array_equal(getattr(a, field), getattr(b, field))


def test_inactive_envs_keep_their_battle():
    env = vector.make("combat", num_envs=2, seed=0, mode="fighter", map="small", team_size=2)
    game = env.game
    step = env.reset()
    states = [game.new_initial_state(seed=int(seed)) for seed in env.deals[:, 0]]
    policy = shoot_first_policy(seed=1)
    for tick in range(40):
        active = np.array([True, tick % 3 == 0])
        actions = policy(step.legal_action_masks)
        step = env.step(actions, active=active)
        for row in np.flatnonzero(active):
            states[row].apply_actions(actions[row].tolist())
        for row, state in enumerate(states):
            assert_state_matches(state, step, row, f"env {row}, step {tick}")
            if not active[row]:
                assert not step.rewards[row].any() and not step.terminated[row]


def test_illegal_action_and_commander_mode_are_clear_errors():
    env = vector.make("combat", num_envs=2, seed=0, mode="fighter", map="small")
    step = env.reset()
    actions = np.zeros((2, env.num_players), dtype=np.int64)
    blocked = np.argwhere(step.legal_action_masks[1] == 0)
    player, action = blocked[0]
    actions[1, player] = action
    with pytest.raises(ValueError, match=f"illegal action in env 1: player {player} played"):
        env.step(actions)
    np.testing.assert_array_equal(env.step(np.zeros_like(actions)).current_players, SIMULTANEOUS)
    with pytest.raises(ValueError, match="only fighter mode has a vector kernel"):
        vector.make("combat", num_envs=2, map="small")
