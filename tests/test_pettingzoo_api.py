"""PettingZoo's own api_test / parallel_api_test / seed_test on every registered env, in
both observation layouts, and on the AEC env turned parallel by PettingZoo's own
``aec_to_parallel``."""

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
    return "no_op" if getattr(hiddenenvs.load_game(name), "NO_OP_ACTION", None) is not None else "lose"


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
    env = hiddenenvs.make_parallel(name, observation_layout="flat", illegal_action=unmasked_rule(name))
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
        lambda: hiddenenvs.make_parallel(name, observation_layout=observation_layout, illegal_action=rule),
        num_cycles=200,
    )
