"""Terminal and forced states in every adapter: a game over at reset, or whose moves are
all forced, ends cleanly with its returns as rewards (AEC, parallel, human play, GGP).

Small GDL sheets are generated here: roles with one move (forced) or several
(simultaneous choices), an optional ``random`` role, and a game that ends after 0 to 3
steps (0: terminal at its initial state). Each goes through PettingZoo's own API tests
and a random game through each adapter, whose rewards must add up to the state's returns.
"""

from __future__ import annotations

import io
import random
import warnings
from contextlib import redirect_stdout
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pettingzoo.test import api_test, parallel_api_test

import hiddenenvs
import hiddenenvs.play
from hiddenenvs.ggp.player import GgpPlayer

# t2.kif of issue 48: terminal at its initial state, two roles with two moves each.
OVER_AT_RESET = """(role a) (role b) (init s)
(<= (legal ?r (m 1)) (role ?r))
(<= (legal ?r (m 2)) (role ?r))
(<= (next s) (true s))
(<= terminal (true s))
(<= (goal ?r 50) (role ?r))
"""


def sheet(moves_per_role: list[int], length: int, with_random: bool) -> str:
    """Roles r0.. with ``moves_per_role[i]`` moves each; over after ``length`` steps; a role
    whose last move was (m 1) scores 100, else 10 * its index."""
    roles = [f"r{i}" for i in range(len(moves_per_role))] + (["random"] if with_random else [])
    lines = [" ".join(f"(role {r})" for r in roles), "(init (step 0))"]
    lines += [f"(succ {k} {k + 1})" for k in range(3)]
    for role, count in zip(roles, moves_per_role + ([2] if with_random else [])):
        lines += [f"(legal {role} (m {m}))" for m in range(1, count + 1)]
    lines += [
        "(<= (next (step ?y)) (true (step ?x)) (succ ?x ?y))",
        "(<= (next (played ?r ?m)) (does ?r ?m))",
        f"(<= terminal (true (step {length})))",
    ]
    for i, role in enumerate(roles[: len(moves_per_role)]):
        lines += [
            f"(<= (goal {role} 100) (true (played {role} (m 1))))",
            f"(<= (goal {role} {10 * i}) (not (true (played {role} (m 1)))))",
        ]
    return "\n".join(lines) + "\n"


sheets = st.builds(
    sheet,
    st.lists(st.integers(1, 3), min_size=1, max_size=4),
    st.integers(0, 3),
    st.booleans(),
)


def _random_parallel_game(env, seed: int) -> dict[str, float]:
    rng = random.Random(seed)
    observations, _ = env.reset(seed=seed)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    while env.agents:
        actions = {}
        for agent in env.agents:
            legal = np.flatnonzero(observations[agent]["action_mask"]).tolist()
            actions[agent] = rng.choice(legal) if legal else 0  # nothing to choose: ignored
        observations, rewards, *_ = env.step(actions)
        for agent, reward in rewards.items():
            totals[agent] += reward
    return totals


def _random_aec_game(env, seed: int) -> dict[str, float]:
    rng = random.Random(seed)
    env.reset(seed=seed)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        observation, reward, termination, truncation, _ = env.last()
        totals[agent] += reward
        legal = np.flatnonzero(observation["action_mask"]).tolist()
        env.step(None if termination or truncation or not legal else rng.choice(legal))
    return totals


class _RandomOpponent:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def act_in_env(self, env, agent, observation):
        return self.rng.choice(np.flatnonzero(observation["action_mask"]).tolist())


def _returns(env) -> dict[str, float]:
    state = env.unwrapped.game_state
    return dict(zip(env.possible_agents, state.returns().tolist()))


def check_every_adapter(path: str, seed: int = 0) -> None:
    """API tests, then a random game through each adapter, paid the state's returns."""
    with warnings.catch_warnings(), redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")  # PettingZoo's advice on observation spaces
        api_test(hiddenenvs.make("gdl", rules=path), num_cycles=20)
        api_test(hiddenenvs.make("gdl", rules=path, illegal_action="lose"), num_cycles=20)
        parallel_api_test(hiddenenvs.make_parallel("gdl", rules=path), num_cycles=20)
    parallel = hiddenenvs.make_parallel("gdl", rules=path)
    assert _random_parallel_game(parallel, seed) == _returns(parallel)
    aec = hiddenenvs.make("gdl", rules=path)
    assert _random_aec_game(aec, seed) == _returns(aec)
    human = aec.possible_agents[0]
    opponents = {agent: _RandomOpponent(seed) for agent in aec.possible_agents[1:]}
    # The human answers with its first legal action.
    with (
        redirect_stdout(io.StringIO()),
        mock.patch.object(hiddenenvs.play, "choose", lambda lines, legal: min(legal)),
    ):
        totals = hiddenenvs.play.play_game(aec, human, opponents, seed)
    assert totals == _returns(aec)


def test_the_issues_sheet_over_at_reset_pays_its_returns_in_every_env(tmp_path):
    """Issue 48: the parallel env's first step killed the process (exit 139); the AEC env
    and play paid 0/0 while the returns were [50, 50]."""
    path = tmp_path / "t2.kif"
    path.write_text(OVER_AT_RESET)
    parallel = hiddenenvs.make_parallel("gdl", rules=str(path))
    observations, _ = parallel.reset(seed=0)
    assert parallel.agents == ["a", "b"]  # PettingZoo: nobody is terminated by reset
    assert not observations["a"]["action_mask"].any()  # nothing to choose
    _, rewards, terminations, truncations, _ = parallel.step({"a": 0, "b": 0})
    assert rewards == {"a": 50.0, "b": 50.0} and all(terminations.values())
    assert parallel.agents == []
    aec = hiddenenvs.make("gdl", rules=str(path))
    aec.reset(seed=0)
    assert not any(aec.terminations.values())
    assert aec.last()[1] == 0.0
    aec.step(None)  # whatever the action: the game was over
    seen = {}
    for agent in aec.agent_iter():
        _, reward, termination, _, _ = aec.last()
        assert termination
        seen[agent] = reward
        aec.step(None)
    assert seen == {"a": 50.0, "b": 50.0}
    check_every_adapter(str(path))


@pytest.mark.parametrize("with_random", [False, True])
def test_a_game_of_forced_moves_to_the_end_pays_at_its_first_step(tmp_path, with_random):
    path = tmp_path / "forced.kif"
    path.write_text(sheet([1, 1, 1], 3, with_random))
    parallel = hiddenenvs.make_parallel("gdl", rules=str(path))
    parallel.reset(seed=1)
    _, rewards, *_ = parallel.step({})
    assert rewards == {"r0": 100.0, "r1": 100.0, "r2": 100.0}
    check_every_adapter(str(path), seed=1)


def test_ggp_player_answers_a_start_for_a_game_over_at_reset_and_its_stop():
    player = GgpPlayer(lambda game, p, seconds, seed: None, "tester")
    try:
        assert player.handle(f"(start m a ({OVER_AT_RESET}) 10 5)") == "ready"
        assert player.handle("(stop m nil)") == "done"
        assert not player.matches
    finally:
        player.close()


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=sheets, seed=st.integers(0, 2**32))
def test_generated_sheets_end_cleanly_in_every_adapter(tmp_path, text, seed):
    path = tmp_path / f"sheet{abs(hash(text))}.kif"
    path.write_text(text)
    check_every_adapter(str(path), seed)
