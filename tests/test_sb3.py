"""The single-seat gymnasium wrapper: API, masks, opponents, and MaskablePPO learning on it."""

import numpy as np
import pytest
import torch
from gymnasium.utils.env_checker import check_env

from agents import RandomAgent
from agents.sb3 import FrozenSB3Agent, single_agent_env
from hiddenenvs.analysis import GameTree, TabularPolicy, expected_returns

sb3_contrib = pytest.importorskip("sb3_contrib")


def test_wrapper_passes_gymnasium_checks_and_masks_actions():
    # The checker steps with unmasked random actions: the "lose" rule ends such episodes.
    check_env(
        single_agent_env("leduc_holdem", seat=1, seed=0, illegal_action="lose"),
        skip_render_check=True,
    )
    env = single_agent_env("leduc_holdem", seat=1, opponents="random", seed=0)
    for reset_seed in range(50):  # a position where some action is illegal (not facing a raise)
        observation, info = env.reset(seed=reset_seed)
        mask = env.action_masks()
        if not mask.all():
            break
    assert info["seat"] == "player_1" and observation.shape == (32,)
    assert mask.dtype == bool and mask.any() and not mask.all()
    illegal = int(np.flatnonzero(~mask)[0])
    with pytest.raises(ValueError, match="illegal"):
        env.step(illegal)
    losing = single_agent_env("leduc_holdem", seat=1, seed=0, illegal_action="lose")
    losing.reset(seed=reset_seed)
    _, reward, terminated, _, info = losing.step(illegal)
    assert terminated and reward == -13.0 and info["illegal"] and not losing.action_masks().any()
    with pytest.raises(ValueError, match="seat must be"):
        single_agent_env("kuhn_poker", seat=2)
    with pytest.raises(ValueError, match="agent spec"):
        single_agent_env("kuhn_poker", opponents="nobody")


def test_episode_returns_are_the_seats_game_returns():
    # Against random play in a zero-sum game, the seat's mean return over many episodes
    # with random actions is the game's value for uniform play (exactly computable).
    env = single_agent_env("kuhn_poker", seat="alternate", opponents="random", seed=1)
    rng = np.random.default_rng(0)
    totals = {"player_0": [], "player_1": []}
    for _ in range(2000):
        _, info = env.reset()
        total, done = 0.0, False
        while not done:
            _, reward, done, _, _ = env.step(rng.choice(np.flatnonzero(env.action_masks())))
            total += reward
        totals[info["seat"]].append(total)
    tree = GameTree.build(env.aec_env.unwrapped.game)
    exact = expected_returns(tree, TabularPolicy.uniform(tree))
    for player, name in enumerate(("player_0", "player_1")):
        assert np.mean(totals[name]) == pytest.approx(exact[player], abs=0.12)


def test_maskable_ppo_learns_to_beat_random_on_kuhn():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    env = single_agent_env("kuhn_poker", opponents="random", seed=0)
    tree = GameTree.build(env.aec_env.unwrapped.game)
    uniform = RandomAgent(2)

    def value_against_random(model) -> float:
        learner = FrozenSB3Agent(model)
        seats = [learner, uniform]

        def policy(player, tensors, masks):
            return seats[player].policy_probabilities_batch(tensors, masks)

        return expected_returns(tree, TabularPolicy.from_tensor_function(tree, policy))[0]

    model = sb3_contrib.MaskablePPO(
        "MlpPolicy", env, seed=0, n_steps=256, batch_size=64, n_epochs=4
    )
    before = value_against_random(model)
    model.learn(3000)
    after = value_against_random(model)
    # Uniform vs uniform is worth 0.125 to player 0; a best response to uniform 0.5.
    assert before < 0.2 and after > before + 0.15, (before, after)


def test_self_play_against_a_refreshed_frozen_copy():
    from agents.sb3 import RefreshFrozenOpponent

    torch.set_num_threads(1)
    env = single_agent_env("kuhn_poker", seat="alternate", seed=0)
    model = sb3_contrib.MaskablePPO("MlpPolicy", env, seed=0, n_steps=64, batch_size=32, n_epochs=1)
    env.set_opponents(FrozenSB3Agent(model))
    first = env.opponents["player_1"]
    model.learn(200, callback=RefreshFrozenOpponent(every_steps=64))
    refreshed = env.opponents["player_1"]
    assert refreshed is not first and isinstance(refreshed, FrozenSB3Agent)
    # The refreshed copy plays weights from during training, not the initial ones.
    observation = np.eye(11, dtype=np.float32)[[1, 2]].sum(axis=0)[None]
    mask = np.ones((1, 2), dtype=np.int8)
    assert not np.allclose(
        refreshed.policy_probabilities_batch(observation, mask),
        first.policy_probabilities_batch(observation, mask),
        atol=1e-5,
    )
