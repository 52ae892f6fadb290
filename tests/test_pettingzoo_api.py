"""PettingZoo's own api_test / parallel_api_test / seed_test on every registered env, in
both observation layouts, and on the AEC env turned parallel by PettingZoo's own
``aec_to_parallel``."""

import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test
from pettingzoo.utils.conversions import aec_to_parallel

import hiddenenvs
from hiddenenvs.game import Dynamics

ENV_NAMES = sorted(hiddenenvs.registry.REGISTRY)
PARALLEL_NAMES = [
    name for name in ENV_NAMES if hiddenenvs.load_game(name).info.dynamics is Dynamics.SIMULTANEOUS
]


def unmasked_rule(name):
    """PettingZoo's parallel tests sample actions without masks (always for the flat
    layout): play such actions as the no-op where the game has one, else lose by them."""
    return (
        "no_op" if getattr(hiddenenvs.load_game(name), "NO_OP_ACTION", None) is not None else "lose"
    )


@pytest.mark.parametrize("name", ENV_NAMES)
@pytest.mark.parametrize("observation_type", ["information_state", "observation"])
def test_aec_api(name, observation_type):
    api_test(hiddenenvs.make(name, observation_type=observation_type), num_cycles=200)


@pytest.mark.parametrize("name", ENV_NAMES)
def test_aec_api_flat_layout(name):
    """api_test samples from ``info["action_mask"]`` when the observation is not a dict."""
    api_test(hiddenenvs.make(name, observation_layout="flat"), num_cycles=200)


@pytest.mark.parametrize("name", ENV_NAMES)
@pytest.mark.parametrize("observation_layout", ["dict", "flat"])
def test_aec_seed(name, observation_layout):
    seed_test(lambda: hiddenenvs.make(name, observation_layout=observation_layout), num_cycles=200)


@pytest.mark.parametrize("name", PARALLEL_NAMES)
def test_parallel_api(name):
    parallel_api_test(hiddenenvs.make_parallel(name), num_cycles=200)


@pytest.mark.parametrize("name", PARALLEL_NAMES)
def test_parallel_api_flat_layout(name):
    env = hiddenenvs.make_parallel(
        name, observation_layout="flat", illegal_action=unmasked_rule(name)
    )
    parallel_api_test(env, num_cycles=200)


@pytest.mark.parametrize("name", PARALLEL_NAMES)
def test_aec_to_parallel_round_trip(name):
    """Every live agent acts once per node in the AEC env, so PettingZoo's converter works."""
    parallel_api_test(aec_to_parallel(hiddenenvs.make(name)), num_cycles=200)


@pytest.mark.parametrize("name", PARALLEL_NAMES)
@pytest.mark.parametrize("observation_layout", ["dict", "flat"])
def test_parallel_seed(name, observation_layout):
    rule = unmasked_rule(name)
    parallel_seed_test(
        lambda: hiddenenvs.make_parallel(
            name, observation_layout=observation_layout, illegal_action=rule
        ),
        num_cycles=200,
    )


# ---- PettingZoo's conventions: state(), the registry, metadata -------------------------------
@pytest.mark.parametrize("name", ENV_NAMES)
def test_state_against_pettingzoos_state_test(name):
    """PettingZoo's own state tests: ``state_space`` is a Box, ``state()`` stays inside it
    through random play (its unmasked actions lose, or play the no-op, by ``unmasked_rule``)."""
    from pettingzoo.test.state_test import state_test, test_state, test_state_space

    env = hiddenenvs.make(name, illegal_action=unmasked_rule(name))
    if name in PARALLEL_NAMES:
        state_test(
            env, hiddenenvs.make_parallel(name, illegal_action=unmasked_rule(name)), num_cycles=20
        )
    else:
        test_state_space(env)
        test_state(env, num_cycles=20)


@pytest.mark.parametrize("name", ["leduc_holdem", "goofspiel", "monty_hall"])
def test_state_is_the_full_information_state(name):
    """By default every player's information-state tensor, concatenated; a GDL game's
    true fluents (its own ``state_tensor``); the same on the AEC and the parallel env."""
    env = hiddenenvs.make(name)
    env.reset(seed=3)
    state = env.unwrapped.game_state
    expected = (
        state.game.propnet.state_bits(state.fluents).astype(np.float32)
        if name == "monty_hall"
        else np.concatenate(
            [state.information_state_tensor(p).ravel() for p in range(state.game.info.num_players)]
        )
    )
    np.testing.assert_array_equal(env.state(), expected)
    assert env.state().shape == env.state_space.shape and env.state().dtype == np.float32
    if name in PARALLEL_NAMES:
        parallel = hiddenenvs.make_parallel(name)
        parallel.reset(seed=3)
        np.testing.assert_array_equal(parallel.state(), parallel.game_state.state_tensor())
        assert parallel.state_space == env.state_space


def test_state_before_reset_says_so():
    with pytest.raises(ValueError, match="call reset"):
        hiddenenvs.make_parallel("rps").state()


def test_the_registry_lists_every_env_with_its_dynamics():
    """PETTINGZOO_ENVS names every registered game once; parallel exactly for the
    simultaneous ones."""
    from hiddenenvs.pettingzoo_env import PETTINGZOO_ENVS

    assert sorted(PETTINGZOO_ENVS) == ENV_NAMES
    assert (
        sorted(name for name, (_, simultaneous) in PETTINGZOO_ENVS.items() if simultaneous)
        == PARALLEL_NAMES
    )


def test_one_registry_entry_gives_a_game_its_pettingzoo_ids(monkeypatch):
    """A game's version and dynamics live on its EnvEntry alone: registering it makes its
    PettingZoo ids (AEC and, simultaneous, parallel), with no second table to edit."""
    import pettingzoo

    from hiddenenvs import registry
    from hiddenenvs.pettingzoo_env import PETTINGZOO_ENVS, register_pettingzoo_envs
    from hiddenenvs.registries import Registry

    scratch = Registry("env", dict(registry.REGISTRY.items()))
    monkeypatch.setattr(registry, "REGISTRY", scratch)
    target = "hiddenenvs.envs.matrix_games:MatrixGame"
    fixed = {"matrix": "rps"}
    entry = registry.EnvEntry("scratch_rps", target, "RPS", fixed, simultaneous=True, version=2)
    registry.register(entry)
    assert PETTINGZOO_ENVS["scratch_rps"] == (2, True)
    env_id = hiddenenvs.pettingzoo_id("scratch_rps")
    assert env_id == "hiddenenvs/scratch_rps-v2"
    try:
        register_pettingzoo_envs()
        assert pettingzoo.make("parallel", env_id).metadata["name"] == env_id
        assert env_id in pettingzoo.aec_registry
    finally:  # PettingZoo's registries are module-level dicts: leave them as they were
        pettingzoo.aec_registry.pop(env_id, None)
        pettingzoo.parallel_registry.pop(env_id, None)


@pytest.mark.parametrize("name", ENV_NAMES)
def test_pettingzoo_make_finds_every_env_under_its_versioned_id(name):
    import pettingzoo

    env_id = hiddenenvs.pettingzoo_id(name)
    assert env_id == f"hiddenenvs/{name}-v0"
    env = pettingzoo.make("aec", env_id)
    assert env.metadata["name"] == env_id and env.metadata["render_fps"] > 0
    env.reset(seed=0)
    assert env.agents == env.possible_agents
    if name in PARALLEL_NAMES:
        parallel = pettingzoo.make("parallel", env_id)
        assert parallel.metadata["name"] == env_id
    else:
        assert env_id not in pettingzoo.parallel_registry


def test_pettingzoo_make_passes_parameters_and_resolves_unversioned_ids():
    import pettingzoo

    env = pettingzoo.make("aec", "hiddenenvs/othello", board_size=4, observation_layout="flat")
    assert env.observation_space("player_0").shape == (3 * 4 * 4,)
    assert env.metadata["name"] == "hiddenenvs/othello-v0"


@pytest.mark.parametrize(
    "name, params", [("othello", {"board_size": 6}), ("combat", {"map": "small"})]
)
def test_human_rendering_shows_the_picture_in_a_window(name, params, monkeypatch, capsys):
    """Where a game has a picture, ``render_mode="human"`` draws render_rgb()'s array in one
    matplotlib window, redrawn in place; without a window backend it warns once and prints
    the text rendering instead."""
    plt = pytest.importorskip("matplotlib.pyplot")
    from hiddenenvs import pettingzoo_env

    env = hiddenenvs.make(name, render_mode="human", **params)
    picture = hiddenenvs.make(name, render_mode="rgb_array", **params)
    env.reset(seed=2)
    picture.reset(seed=2)
    monkeypatch.setattr(plt, "get_backend", lambda: "agg")
    with pytest.warns(UserWarning, match="draws none"):
        env.render()
    assert capsys.readouterr().out.strip() == str(env.unwrapped.game_state).strip()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per env
        env.render()
    assert capsys.readouterr().out.strip()
    monkeypatch.setattr(pettingzoo_env, "_window_backend", lambda backend: True)
    monkeypatch.setattr(plt, "pause", lambda seconds: None)
    env.render()
    figure, image = env.unwrapped._window
    np.testing.assert_array_equal(image.get_array(), picture.render())
    env.render()
    assert env.unwrapped._window[0] is figure and plt.fignum_exists(figure.number)
    env.close()
    assert not plt.fignum_exists(figure.number)


@pytest.mark.parametrize(
    "name, params",
    [
        ("goofspiel", {"num_cards": 5, "imp_info": True}),
        ("combat", {"mode": "fighter", "map": "small"}),
    ],
)
def test_a_games_fast_paths_equal_the_state_defaults(name, params):
    """A state's own fast paths give what State's player-by-player defaults give."""
    from hiddenenvs.game import SIMULTANEOUS, State

    game = hiddenenvs.load_game(name, **params)
    state = game.new_initial_state(seed=1)
    rng = np.random.default_rng(1)
    for _ in range(6):
        while state.current_player() not in (SIMULTANEOUS,) and not state.is_terminal():
            state.apply_action(int(rng.choice([a for a, _ in state.chance_outcomes()])))
        if state.is_terminal():
            break
        for method in ("information_state_tensors", "observation_tensors"):
            np.testing.assert_array_equal(getattr(state, method)(), getattr(State, method)(state))
        np.testing.assert_array_equal(
            np.asarray(state.legal_actions_masks(), np.int8), State.legal_actions_masks(state)
        )
        if type(state).read_only_legal_actions_masks is not State.read_only_legal_actions_masks:
            np.testing.assert_array_equal(
                state.read_only_legal_actions_masks(), State.read_only_legal_actions_masks(state)
            )
        if type(state).read_only_legal_actions_mask is not State.read_only_legal_actions_mask:
            np.testing.assert_array_equal(
                state.read_only_legal_actions_mask(0), State.read_only_legal_actions_mask(state, 0)
            )
        state.apply_actions(
            [int(rng.choice(state.legal_actions(p) or [-1])) for p in range(game.info.num_players)]
        )
