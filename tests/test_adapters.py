"""Behaviour of the generic PettingZoo adapters beyond PettingZoo's own API tests."""

import numpy as np
import pytest

import hiddenenvs
from hiddenenvs.registry import REGISTRY


def _play_to_end(env, choose):
    totals = dict.fromkeys(env.possible_agents, 0.0)
    for agent in env.agent_iter():
        observation, reward, termination, truncation, _ = env.last()
        totals[agent] += reward
        env.step(None if termination or truncation else choose(agent, observation))
    return totals


def test_illegal_action_raises_with_the_legal_ones():
    env = hiddenenvs.make("leduc_holdem")
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"action 0 is illegal for player_0; legal actions: 1 \(call\), 2 \(raise\)"):
        env.step(0)


def test_illegal_action_can_lose_the_game(caplog):
    env = hiddenenvs.make("leduc_holdem", illegal_action="lose")
    env.reset(seed=0)
    env.step(0)
    assert "Illegal move made" in caplog.text
    _, reward, termination, _, _ = env.last()
    assert termination
    assert env.rewards["player_0"] == hiddenenvs.load_game("leduc_holdem").info.min_utility


def test_bad_options_are_named():
    with pytest.raises(ValueError, match="illegal_action must be one of"):
        hiddenenvs.make("kuhn_poker", illegal_action="ignore")
    with pytest.raises(ValueError, match="observation_type must be one of"):
        hiddenenvs.make("kuhn_poker", observation_type="pixels")
    with pytest.raises(ValueError, match="render_mode must be one of"):
        hiddenenvs.make("kuhn_poker", render_mode="rgb_array")
    with pytest.raises(ValueError, match="turn-based; use hiddenenvs.make"):
        hiddenenvs.make_parallel("kuhn_poker")


def test_simultaneous_moves_are_hidden_in_the_aec_env():
    env = hiddenenvs.make("rps")
    env.reset(seed=0)
    assert env.agent_selection == "player_0"
    before = env.observe("player_1")["observation"].copy()
    env.step(2)  # scissors; player_1 must not see it
    assert env.agent_selection == "player_1"
    assert np.array_equal(env.observe("player_1")["observation"], before)
    env.step(0)  # rock beats scissors, which pays 2 only in biased RPS
    assert env.rewards == {"player_0": -1.0, "player_1": 1.0}
    assert all(env.terminations.values())


def test_parallel_env_rewards_and_validation():
    env = hiddenenvs.make_parallel("biased_rps")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="no action given for player_1"):
        env.step({"player_0": 0})
    with pytest.raises(ValueError, match="illegal for player_1"):
        env.step({"player_0": 0, "player_1": 5})
    _, rewards, terminations, _, _ = env.step({"player_0": 0, "player_1": 2})
    assert rewards == {"player_0": 2.0, "player_1": -2.0}
    assert all(terminations.values()) and env.agents == []


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_ansi_rendering(name, capsys):
    env = hiddenenvs.make(name, render_mode="ansi")
    env.reset(seed=1)
    assert isinstance(env.render(), str) and env.render()
    human = hiddenenvs.make(name, render_mode="human")
    human.reset(seed=1)
    human.render()
    assert capsys.readouterr().out.strip()


def test_returns_equal_the_sum_of_rewards_and_are_zero_sum():
    rng = np.random.default_rng(0)
    env = hiddenenvs.make("leduc_holdem")
    for seed in range(50):
        env.reset(seed=seed)
        totals = _play_to_end(env, lambda agent, obs: int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        assert sum(totals.values()) == 0.0
        assert max(abs(v) for v in totals.values()) <= 13


def test_same_seed_same_deal_different_seed_different_deals():
    def deal(seed):
        env = hiddenenvs.make("leduc_holdem")
        env.reset(seed=seed)
        return env.unwrapped.state.private_cards

    assert deal(3) == deal(3)
    assert len({tuple(deal(seed)) for seed in range(30)}) > 3
