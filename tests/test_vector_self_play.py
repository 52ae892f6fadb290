"""agents.vector_self_play: batched self-play gives the agents what the scalar game says."""

from __future__ import annotations

import numpy as np
import pytest

import hiddenenvs.vector as vector
from agents.base import Agent
from agents.nfsp import NFSP, NFSPConfig
from agents.vector_self_play import play_vector_episodes
from hiddenenvs.game import CHANCE, SIMULTANEOUS
from hiddenenvs.registry import load_game


class RecordingRandomAgent(Agent):
    """Uniform legal actions; records every decision and transition it is given."""

    def __init__(self, num_actions, seed, decisions):
        super().__init__(num_actions, seed)
        self.decisions = (
            decisions  # shared by the seats: (episode_id, observation, action), in play order
        )
        self.transitions = []
        self.started, self.ended = set(), set()

    def policy_probabilities_batch(self, observations, action_masks, views=None):
        masks = np.asarray(action_masks, dtype=np.float64)
        return masks / masks.sum(axis=1, keepdims=True)

    def act_batch(self, observations, action_masks, episode_ids=None, views=None):
        actions, probabilities = super().act_batch(observations, action_masks, episode_ids, views)
        for episode_id, observation, action in zip(episode_ids, observations, actions):
            self.decisions.append((episode_id, np.array(observation), int(action)))
        return actions, probabilities

    def start_episode(self, episode_id=0):
        self.started.add(episode_id)

    def observe(self, transition):
        self.transitions.append(transition)

    def end_episode(self, episode_id=0):
        self.ended.add(episode_id)


@pytest.mark.parametrize(
    "name, params", [("leduc_holdem", {}), ("kuhn_poker", {}), ("goofspiel", {"imp_info": True})]
)
def test_transitions_and_returns_match_the_scalar_game(name, params):
    num_envs, seed = 12, 21
    env = vector.make(name, num_envs=num_envs, seed=0, **params)
    decisions = []
    agents = [
        RecordingRandomAgent(env.num_actions, seed=p, decisions=decisions)
        for p in range(env.num_players)
    ]
    returns = play_vector_episodes(env, agents, seed=seed)
    deals = vector.make(name, num_envs=num_envs, seed=seed, **params)
    deals.reset()
    game = load_game(name, **params)
    for agent in agents:
        assert agent.started == agent.ended == set(range(num_envs))
    for episode_id in range(num_envs):
        state, chance = game.new_initial_state(), list(deals.deals[episode_id])
        seen = {
            p: [] for p in range(env.num_players)
        }  # each player's (tensor, mask, action) in order
        moves = iter(
            [(observation, action) for i, observation, action in decisions if i == episode_id]
        )
        while not state.is_terminal():
            if state.current_player() == CHANCE:
                state.apply_action(int(chance.pop(0)))
                continue
            players = (
                range(env.num_players)
                if state.current_player() == SIMULTANEOUS
                else [state.current_player()]
            )
            joint = []
            for player in players:
                observation, action = next(moves)
                np.testing.assert_array_equal(observation, state.information_state_tensor(player))
                seen[player].append((observation, state.legal_actions_mask(player), action))
                joint.append(action)
            if state.current_player() == SIMULTANEOUS:
                state.apply_actions(joint)
            else:
                state.apply_action(joint[0])
        np.testing.assert_array_equal(returns[episode_id], state.returns())
        for player, agent in enumerate(agents):
            mine = [t for t in agent.transitions if t.episode_id == episode_id]
            assert len(mine) == len(seen[player])
            assert [t.done for t in mine] == [False] * (len(mine) - 1) + [True]
            for k, transition in enumerate(mine):
                np.testing.assert_array_equal(transition.observation, seen[player][k][0])
                np.testing.assert_array_equal(transition.action_mask, seen[player][k][1])
                assert transition.action == seen[player][k][2]
                following = (
                    seen[player][k + 1][0]
                    if k + 1 < len(mine)
                    else state.information_state_tensor(player)
                )
                np.testing.assert_array_equal(transition.next_observation, following)
            assert sum(t.reward for t in mine) == pytest.approx(state.returns()[player])
            assert not mine[-1].next_action_mask.any()


def test_nfsp_plays_and_learns_through_the_vector_env():
    game = load_game("kuhn_poker")
    config = NFSPConfig(
        anticipatory=1.0,
        min_buffer_size=32,
        learn_every=16,
        batch_size=32,
        replay_capacity=1_000,
        reservoir_capacity=1_000,
    )
    learner = NFSP(game, config, seed=0)
    env = vector.make("kuhn_poker", num_envs=64, seed=0)
    returns = play_vector_episodes(env, learner.agents, seed=1)
    assert returns.shape == (64, 2)
    np.testing.assert_array_equal(returns.sum(axis=1), 0)
    metrics = learner.update()
    assert "rl_loss" in metrics and "sl_loss" in metrics


def test_same_seed_same_episodes():
    def run():
        env = vector.make("leduc_holdem", num_envs=16, seed=0)
        agents = [RecordingRandomAgent(3, seed=p, decisions=[]) for p in range(2)]
        return play_vector_episodes(env, agents, seed=5)

    np.testing.assert_array_equal(run(), run())


def test_search_agents_are_refused():
    class SeatViewAgent(RecordingRandomAgent):
        USES_SEAT_VIEW = True

    env = vector.make("kuhn_poker", num_envs=2, seed=0)
    with pytest.raises(ValueError, match="needs seat views or the true state"):
        play_vector_episodes(env, [SeatViewAgent(2, 0, []), RecordingRandomAgent(2, 1, [])], seed=0)
