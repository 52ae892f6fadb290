"""The episode runner (agents/episodes.py): a game-model walk draws chance as the AEC env
does (the same generator gives the same deal), plays joint actions at simultaneous nodes, and
suspends where its policy suspends."""

import random

import numpy as np
import pytest

import hiddenenvs
from agents.episodes import model_episode, play_episodes


def _first_legal(state, movers, joint):
    """A policy that never suspends: each mover's first legal action."""
    return [state.legal_actions(mover if joint is not None else None)[0] for mover in movers]
    yield  # a generator, as model_episode asks


class _FirstLegal:
    """The same policy as an agent of the AEC env."""

    USES_SEAT_VIEW = False
    USES_TRUE_STATE = False  # the episode runner reads both (declared on agents.base.Agent)

    def start_episode(self, episode_id):
        pass

    def end_episode(self, episode_id):
        pass

    def act_batch(self, observations, masks, episode_ids, views=None):
        actions = np.array([int(np.flatnonzero(mask)[0]) for mask in masks])
        return actions, None


def _run(generator):
    try:
        while True:
            next(generator)
    except StopIteration as stop:
        return stop.value


@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_holdem", "liars_dice"])
def test_a_model_walk_draws_the_chance_outcomes_of_the_env(name):
    env = hiddenenvs.make(name).unwrapped
    agents = dict.fromkeys(env.possible_agents, _FirstLegal())
    game = hiddenenvs.load_game(name)
    for seed in range(12):
        play_episodes([env], agents, np.array([seed]), learn=False)
        rng = random.Random(seed)
        rng.getrandbits(31)  # the env's reset draws a state seed first (unused by these games)
        state = _run(model_episode(game.new_initial_state(), _first_legal, rng))
        assert state.is_terminal() and state.history() == env.game_state.history()


def test_a_model_walk_plays_joint_actions_and_suspends_with_its_policy():
    game = hiddenenvs.load_game("goofspiel", num_cards=4, imp_info=True)
    asked = []

    def suspending(state, movers, joint):
        asked.append(list(movers))
        answer = yield "waiting"  # as a search waits for a batched network call
        return [state.legal_actions(mover)[answer] for mover in movers]

    walk = model_episode(game.new_initial_state(), suspending, np.random.default_rng(0))
    suspensions = 0
    request = next(walk)
    try:
        while True:
            assert request == "waiting"
            suspensions += 1
            request = walk.send(0)  # each mover's first legal card
    except StopIteration as stop:
        state = stop.value
    assert state.is_terminal() and suspensions == len(asked) == 4 - 1  # the last card is forced
    assert all(movers == [0, 1] for movers in asked)
    assert list(state.returns()) == [0.0, 0.0]  # both played the same cards in the same order
