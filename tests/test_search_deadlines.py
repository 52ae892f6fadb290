"""Every search stops inside a move at its deadline: OOS (both backends), MCNFSP's
best-response search (both backups, the recursion of the expectation backup included),
ExIt-OOS's self-play games; the move is then abandoned, never finished past the budget.

The clock is a counter (``agents.search.now`` replaced): each deadline check advances it
by one, so "the deadline passes after n checks" is exact and no test depends on speed."""

import itertools

import numpy as np
import pytest
import torch

import agents.search
import hiddenenvs
from agents.exit_oos import ExItOOS, ExItOOSConfig, SelfPlayer
from agents.mcnfsp import BestResponseSearch, MCNFSPAgent, MCNFSPConfig, architecture_for
from agents.networks import PolicyValueNetwork
from agents.search import DeadlinePassed
from agents.search.oos import OOS


@pytest.fixture
def counting_clock(monkeypatch):
    """``agents.search.now`` as a counter: returns the number of deadline checks so far."""
    checks = itertools.count()
    monkeypatch.setattr(agents.search, "now", lambda: float(next(checks)))
    return checks


@pytest.mark.parametrize("backend", ["tree", "model"])
def test_oos_stops_inside_a_move_at_the_deadline(backend, counting_clock):
    game = hiddenenvs.load_game("leduc_holdem")
    search = OOS(game, 0, seed=0, backend=backend)
    state = game.new_initial_state()
    while state.current_player() != 0:
        state.apply_action(state.legal_actions()[0])
    key = state.information_state_key(0)
    with pytest.raises(DeadlinePassed, match="OOS search"):
        search.search(key, iterations=10**9, deadline=5.0)
    # Five checks passed: one per model iteration, one per compiled chunk of at most 64.
    assert 0 < search.iterations <= 6 * 64
    search.search(key, iterations=100)  # without a deadline the budget is the iterations
    assert search.iterations > 100


def _best_response_search(game, opponent_backup, simulations):
    config = MCNFSPConfig(
        network="mlp",
        hidden_sizes=[8],
        num_simulations=simulations,
        opponent_backup=opponent_backup,
    )
    architecture = architecture_for(game, config)
    torch.manual_seed(0)

    def uniform(state, player):
        return np.asarray(state.legal_actions_mask(player), dtype=np.float64)

    return BestResponseSearch(
        game,
        0,
        PolicyValueNetwork(architecture),
        architecture,
        uniform,
        config,
        np.random.default_rng(0),
    )


@pytest.mark.parametrize("opponent_backup", ["expectation", "sample"])
def test_mcnfsp_search_stops_inside_a_move_at_the_deadline(opponent_backup, counting_clock):
    """One expectation backup on Leduc descends through every reply and chance card: the
    deadline is checked at each node of it, not only between simulations."""
    game = hiddenenvs.load_game("leduc_holdem")
    search = _best_response_search(game, opponent_backup, simulations=10**9)
    view = game.state_from_history((0, 2)).seat_view(0)
    search.deadline = 3.0
    with pytest.raises(DeadlinePassed, match="MCNFSP search"):
        search.policy(view)
    assert next(counting_clock) == 5  # stopped at the fourth check, the first past 3


def test_mcnfsp_agent_answers_with_pi_and_stores_nothing_past_the_deadline():
    game = hiddenenvs.load_game("leduc_holdem")
    config = MCNFSPConfig(network="mlp", hidden_sizes=[8], anticipatory=1.0, num_simulations=50)
    architecture = architecture_for(game, config)
    state = game.state_from_history((0, 2))

    def uniform(state, player):
        return np.asarray(state.legal_actions_mask(player), dtype=np.float64)

    agent = MCNFSPAgent(game, 0, architecture, config, uniform, seed=0)
    agent.search.deadline = 0.0  # long past
    agent.start_episode(0)
    observation = np.asarray(state.information_state_tensor(0), dtype=np.float32)[None]
    mask = np.asarray(state.legal_actions_mask(0), dtype=np.int8)[None]
    actions, probabilities = agent.act_batch(observation, mask, [0], [state.seat_view(0)])
    assert mask[0, actions[0]] == 1 and probabilities[0].sum() == pytest.approx(1.0)
    assert agent.searches == 0 and len(agent.reservoir) == 0


def test_exit_oos_games_stop_inside_a_move_and_none_is_kept(counting_clock):
    """A deadline that passes during a game's searches drops the games in play."""
    config = ExItOOSConfig(hidden_sizes=[8], simulations_per_move=10**9, backend="model", workers=0)
    game = hiddenenvs.load_game("kuhn_poker")
    learner = ExItOOS(game, config, seed=0)
    player = SelfPlayer(game, config, learner.architecture)
    player.set_network(learner.network.state_dict())
    assert player.play_many([1, 2, 3], deadline=50.0) == []


def test_exit_oos_close_stops_its_worker_processes_and_can_be_called_again(process_alive):
    params = dict(hidden_sizes=[8], games_per_iteration=2, simulations_per_move=20, workers=1)
    learner = ExItOOS(hiddenenvs.load_game("kuhn_poker"), ExItOOSConfig(**params), seed=0)
    played = learner._self_play([1, 2], deadline=None)
    assert len(played) == 2
    processes = learner._pool.process_ids()
    assert processes
    learner.close()
    assert not any(process_alive(pid) for pid in processes)
    learner.close()  # idempotent


@pytest.mark.parametrize("max_depth", [None, 1])
def test_rebel_solve_stops_inside_its_cfr_iterations_at_the_deadline(max_depth, counting_clock):
    from agents.rebel.search import ReBeLSearch

    game = hiddenenvs.load_game("kuhn_poker")
    search = ReBeLSearch(game, iterations=10**9, max_depth=max_depth, seed=0)
    search.deadline = 4.0
    state = game.state_from_history((0, 1))
    with pytest.raises(DeadlinePassed, match="ReBeL solve"):
        search.policy(state.seat_view(0))
