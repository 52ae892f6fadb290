"""NFSP: its memories, its masking, and that it actually learns Kuhn poker."""

import numpy as np
import pytest
import torch

import hiddenenvs
from agents.loop import train
from agents.nfsp import NFSP, CircularBuffer, NFSPAgent, NFSPConfig, ReservoirBuffer


def test_reservoir_keeps_a_uniform_sample():
    rng = np.random.default_rng(0)
    hits = np.zeros(1000)
    for _ in range(400):
        reservoir = ReservoirBuffer(100, {"item": ((), np.int64)})
        for item in range(1000):
            reservoir.add(rng, item=item)
        assert len(reservoir) == 100 and reservoir.seen == 1000
        hits[reservoir.data["item"][:100]] += 1
    # Each item is kept with probability 100/1000: 40 expected hits out of 400 runs.
    # The first and the last hundred items are the ones a broken sampler would favour.
    assert abs(hits[:100].mean() - 40) < 3 and abs(hits[-100:].mean() - 40) < 3
    assert abs(hits.mean() - 40) < 1e-9


def test_circular_buffer_overwrites_the_oldest():
    buffer = CircularBuffer(5, {"item": ((), np.int64)})
    for item in range(12):
        buffer.add(item=item)
    assert len(buffer) == 5 and sorted(buffer.data["item"][:5].tolist()) == [7, 8, 9, 10, 11]


def test_illegal_actions_get_no_probability_in_either_mode():
    agent = NFSPAgent(4, 3, NFSPConfig(hidden_sizes=[8], anticipatory=0.5), seed=0)
    observations = np.random.default_rng(0).random((64, 4)).astype(np.float32)
    masks = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0], [0, 0, 1]] * 16, dtype=np.int8)
    for episode in range(64):
        agent.start_episode(episode)
    modes = {agent.best_response_mode[e] for e in range(64)}
    assert modes == {True, False}
    actions, probabilities = agent.act_batch(observations, masks, list(range(64)))
    assert np.all(probabilities[masks == 0] == 0)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0)
    assert np.all(masks[np.arange(64), actions] == 1)
    assert len(agent.reservoir) == sum(agent.best_response_mode.values())
    average = agent.policy_probabilities_batch(observations, masks)
    assert np.all(average[masks == 0] == 0)


def test_td_target_maximises_over_legal_next_actions_only():
    config = NFSPConfig(hidden_sizes=[4], batch_size=1, rl_learning_rate=0.0, discount=1.0)
    agent = NFSPAgent(2, 2, config, seed=0)
    with torch.no_grad():  # Q(s, .) = (0, 0) and Q(s', .) = (5, -1) for any s'
        for network in (agent.q_network, agent.target_network):
            network[-1].weight.zero_()
            network[-1].bias.copy_(torch.tensor([5.0, -1.0]))
    from agents.base import Transition

    agent.observe(
        Transition(
            np.zeros(2, np.float32),
            np.array([1, 1], np.int8),
            0,
            0.5,
            np.ones(2, np.float32),
            np.array([0, 1], np.int8),
            False,
        )
    )
    # Target = 0.5 + max over the legal next action {1} of Q' = 0.5 - 1 = -0.5, so the
    # squared error of Q(s, 0) = 5 is 5.5^2 (an unmasked max would give 0.5^2).
    assert agent.rl_step() == pytest.approx(5.5**2)


def test_fused_rl_and_sl_step_equals_the_two_separate_steps():
    # One backward pass through L(Q) + L(Pi) gives each network exactly its own loss's
    # gradient (they share no parameter), and the minibatches are drawn in the same order.
    import copy

    from agents.vector_self_play import play_vector_episodes
    from hiddenenvs.vector import make

    game = hiddenenvs.load_game("leduc_holdem")
    config = NFSPConfig(hidden_sizes=[16], min_buffer_size=10, batch_size=16, target_update_every=3)
    torch.manual_seed(0)
    learner = NFSP(game, config, seed=0)
    play_vector_episodes(make("leduc_holdem", num_envs=32, copy=False), learner.agents, seed=0)
    fused, separate = learner.agents[0], copy.deepcopy(learner.agents[0])
    for _ in range(7):  # past two target-network copies
        rl_loss, sl_loss = fused.rl_and_sl_step()
        assert (rl_loss, sl_loss) == (separate.rl_step(), separate.sl_step())
    for name in ("q_network", "target_network", "policy_network"):
        for left, right in zip(
            getattr(fused, name).parameters(), getattr(separate, name).parameters()
        ):
            assert torch.equal(left, right), name
    assert fused.rl_steps == separate.rl_steps == 7


def test_checkpoint_round_trip_restores_everything():
    game = hiddenenvs.load_game("kuhn_poker")
    config = NFSPConfig(hidden_sizes=[8], min_buffer_size=10, learn_every=4, batch_size=8)
    learner = NFSP(game, config, seed=1)
    from agents.loop import play_episodes

    envs = [hiddenenvs.make("kuhn_poker").unwrapped for _ in range(16)]
    agents = dict(zip(envs[0].possible_agents, learner.agents))
    play_episodes(envs, agents, np.arange(16), learn=True)
    learner.update()
    copy = NFSP(game, config, seed=99)
    copy.load_state_dict(learner.state_dict())
    observations = np.eye(11, dtype=np.float32)[:4]
    masks = np.ones((4, 2), dtype=np.int8)
    for player in range(2):
        np.testing.assert_array_equal(
            copy.evaluation_agent(player).policy_probabilities_batch(observations, masks),
            learner.evaluation_agent(player).policy_probabilities_batch(observations, masks),
        )
        assert len(copy.agents[player].replay) == len(learner.agents[player].replay) > 0
        assert copy.agents[player].rng.random() == learner.agents[player].rng.random()


def test_nfsp_learns_kuhn_poker(tmp_path):
    # Uniform random play is 0.458 exploitable; a broken learner stays near it (or worse).
    # The shipped config reaches ~0.03 after 100k episodes; 12k episodes give ~0.12.
    from agents.config import load_config
    from pathlib import Path

    config = load_config(
        Path(__file__).resolve().parent.parent / "configs" / "nfsp_kuhn.yaml",
        [
            "budget.episodes=12000",
            "evaluation.every_episodes=12000",
            f"output_dir={tmp_path}",
            "progress_bar=false",
        ],
    )
    result = train(config)
    assert result["last_evaluation"]["exploitability"] < 0.25


def test_board_shaped_tensors_are_flattened_for_the_mlp():
    # Othello's information-state tensor is (3, S, S); NFSP's MLP reads it flat.
    learner = NFSP(
        hiddenenvs.load_game("othello", board_size=4),
        NFSPConfig(hidden_sizes=[8], min_buffer_size=8, learn_every=4, batch_size=8),
        seed=0,
    )
    from agents.loop import play_episodes

    envs = [hiddenenvs.make("othello", board_size=4).unwrapped for _ in range(4)]
    returns = play_episodes(envs, dict(zip(envs[0].possible_agents, learner.agents)), np.arange(4))
    assert returns.shape == (4, 2) and np.all(returns.sum(axis=1) == 0)
    assert learner.update()["replay_size"] > 0
    assert learner.agents[0].replay.data["observation"].shape[1:] == (48,)


def test_read_only_masks_play_without_a_copy_warning():
    # Goofspiel's masks are made read-only in C; torch cannot share such an array and
    # warns on every call unless the mask is copied first.
    import warnings

    from agents.networks import AveragePolicyAgent, mlp

    game = hiddenenvs.load_game("goofspiel", num_cards=5, imp_info=True)
    state = game.new_initial_state()
    masks = state.legal_actions_masks()
    assert not masks.flags.writeable
    tensors = np.stack([state.information_state_tensor(p) for p in range(2)])
    architecture = {
        "input_size": tensors.shape[1],
        "hidden_sizes": [8],
        "num_actions": masks.shape[1],
    }
    agent = AveragePolicyAgent(mlp(tensors.shape[1], [8], masks.shape[1]), architecture)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        probabilities = agent.policy_probabilities_batch(tensors, masks)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=1e-6)  # float32 softmax
    assert (probabilities[masks == 0] == 0).all()


def test_an_agent_file_declaring_a_huge_network_is_refused_before_allocating(tmp_path):
    # A hostile file: an architecture of a billion hidden units beside the small weights of
    # a real one. Building it would need terabytes; the meta-device check refuses it first.
    from agents.base import load_agent_file
    from agents.networks import AveragePolicyAgent, mlp

    architecture = {"input_size": 4, "hidden_sizes": [8], "num_actions": 3}
    agent = AveragePolicyAgent(mlp(4, [8], 3), architecture)
    path = tmp_path / "agent.pt"
    agent.save(path)
    payload = torch.load(path, weights_only=True)
    payload["state"]["architecture"]["hidden_sizes"] = [10**9]
    torch.save(payload, path)
    with pytest.raises(
        ValueError,
        match=r"do not fit the declared architecture: parameter '0\.bias' is \(8,\) in the file",
    ):
        load_agent_file(path)
