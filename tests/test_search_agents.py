"""Search agents: they get their seat's view (key, legal actions, game), never the state.

A search agent plays through the training loop, the leaderboard's matches and the SB3
wrapper; each decision it receives is the seat's own information-state key, and nothing
reachable from a view is a game state.
"""

from __future__ import annotations

import gc
import types

import numpy as np
import pytest

import hiddenenvs
from agents.base import SearchAgent, tabular_policy_of_agents
from agents.baselines import RandomAgent
from agents.leaderboard.matches import EnvVariant, MatchKey, MatchPlayer
from agents.loop import play_episodes
from agents.sb3 import single_agent_env
from hiddenenvs.analysis import GameTree, expected_returns
from hiddenenvs.beliefs import sample_state
from hiddenenvs.game import Game, SeatView, State


class BeliefProbe(SearchAgent):
    """Samples a state consistent with its view each move, then plays uniformly.

    It records every view, so the tests can compare them with the true state.
    """

    def __init__(self, num_actions: int, seed: int | None = None):
        super().__init__(num_actions, seed)
        self.views: list[SeatView] = []

    def search_policy(self, view):
        self.views.append(view)
        sampled = sample_state(view.game, view.player, view.information_state_key, self.rng)
        assert sampled.information_state_key(view.player) == view.information_state_key
        probabilities = np.zeros(self.num_actions)
        probabilities[list(view.legal_actions)] = 1.0 / len(view.legal_actions)
        return probabilities


def _reachable_objects(root, limit=200_000):
    """Everything reachable from ``root`` by references (modules, classes and code excluded)."""
    seen, stack, found = {id(root)}, [root], []
    skip = (types.ModuleType, type, types.FunctionType, types.CodeType, types.BuiltinFunctionType)
    while stack and len(found) < limit:
        obj = stack.pop()
        found.append(obj)
        for ref in gc.get_referents(obj):
            if id(ref) not in seen and not isinstance(ref, skip):
                seen.add(id(ref))
                stack.append(ref)
    return found


@pytest.mark.parametrize(
    "name", ["kuhn_poker", "leduc_holdem", "goofspiel", "monty_hall", "combat"]
)
def test_no_state_is_reachable_from_a_seat_view(name):
    env = hiddenenvs.make(name, **({"map": "small"} if name == "combat" else {}))
    env.reset(seed=3)
    agent = env.agent_selection
    view = env.unwrapped.seat_view(agent)
    reachable = _reachable_objects(view)
    assert not [obj for obj in reachable if isinstance(obj, State)]
    assert any(isinstance(obj, Game) for obj in reachable)  # the rules are there


def test_hidden_information_does_not_change_the_view():
    """Kuhn: player 1's view is the same whatever card player 0 holds."""
    game = hiddenenvs.load_game("kuhn_poker")
    views = {game.state_from_history([card, 1, 1]).seat_view(1) for card in (0, 2)}
    assert len(views) == 1
    assert len({game.state_from_history([card, 1, 1]).seat_view(0) for card in (0, 2)}) == 2


def test_search_agents_play_in_the_loop_with_their_own_views():
    envs = [hiddenenvs.make("leduc_holdem").unwrapped for _ in range(4)]
    probe = BeliefProbe(3, seed=0)
    seats = {"player_0": probe, "player_1": RandomAgent(3, seed=1)}
    play_episodes(envs, seats, np.arange(4), learn=False)
    assert probe.views and all(view.player == 0 for view in probe.views)
    assert all(len(view.information_state_key) >= 2 for view in probe.views)


def test_search_agents_play_leaderboard_matches_and_the_sb3_wrapper():
    variant = EnvVariant.resolve("kuhn_poker", {})

    def make_agent(spec, env_name, seat, params):
        return BeliefProbe(2) if spec == "probe" else RandomAgent(2)

    player = MatchPlayer(variant, make_agent)
    for index in range(20):
        player.play(
            MatchKey("kuhn_poker", variant.params_json, ("probe", "random"), 0, index), index
        )
    probe = player.agent("probe", 0)
    assert len(probe.views) >= 20 and {v.player for v in probe.views} == {0}

    opponent = BeliefProbe(2, seed=0)
    env = single_agent_env("kuhn_poker", seat=0, opponents=opponent, seed=0)
    observation, _ = env.reset(seed=0)
    done = False
    while not done:
        legal = np.flatnonzero(env.action_masks())
        observation, _, done, _, _ = env.step(int(legal[0]))
    assert opponent.views and {v.player for v in opponent.views} == {1}


def test_exact_policy_of_a_search_agent_reads_every_information_set_through_views():
    tree = GameTree.build(hiddenenvs.load_game("kuhn_poker"))
    probes = [BeliefProbe(2), BeliefProbe(2)]
    policy = tabular_policy_of_agents(tree, probes.__getitem__)
    assert len(probes[0].views) + len(probes[1].views) == tree.num_infosets
    np.testing.assert_allclose(expected_returns(tree, policy), [0.125, -0.125])


def test_a_search_agent_without_views_says_what_it_needs():
    with pytest.raises(ValueError, match="searches from the seat's view"):
        BeliefProbe(2).act(np.zeros(11), np.ones(2, dtype=np.int8))
