"""PettingZoo's own api_test / parallel_api_test / seed_test on every registered env."""

import pytest
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, seed_test

import hiddenenvs
from hiddenenvs.game import Dynamics

ENV_NAMES = sorted(hiddenenvs.registry.REGISTRY)
PARALLEL_NAMES = [
    name for name in ENV_NAMES if hiddenenvs.load_game(name).info.dynamics is Dynamics.SIMULTANEOUS
]


@pytest.mark.parametrize("name", ENV_NAMES)
@pytest.mark.parametrize("observation_type", ["information_state", "observation"])
def test_aec_api(name, observation_type):
    api_test(hiddenenvs.make(name, observation_type=observation_type), num_cycles=200)


@pytest.mark.parametrize("name", ENV_NAMES)
def test_aec_seed(name):
    seed_test(lambda: hiddenenvs.make(name), num_cycles=200)


@pytest.mark.parametrize("name", PARALLEL_NAMES)
def test_parallel_api(name):
    parallel_api_test(hiddenenvs.make_parallel(name), num_cycles=200)


@pytest.mark.parametrize("name", PARALLEL_NAMES)
def test_parallel_seed(name):
    parallel_seed_test(lambda: hiddenenvs.make_parallel(name), num_cycles=200)
