"""Tianshou DQN on Leduc hold'em against a masked random opponent.

Tianshou's own PettingZoo path, unchanged: ``tianshou.env.PettingZooEnv`` reads the
default dict observation (``observation``, ``action_mask``) of ``hiddenenvs.make``, and a
``MultiAgentOffPolicyAlgorithm`` seats a DQN learner and Tianshou's masked random player.
Illegal actions never reach the env: the masks go into the Q-value argmax.

    python examples/tianshou_dqn_leduc.py --steps 50000
"""

import argparse
import logging

import numpy as np
import torch
from tianshou.algorithm import (
    DQN,
    MARLRandomDiscreteMaskedOffPolicyAlgorithm,
    MultiAgentOffPolicyAlgorithm,
)
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Collector, CollectStats, VectorReplayBuffer
from tianshou.env import DummyVectorEnv
from tianshou.env.pettingzoo_env import PettingZooEnv
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net

import hiddenenvs


def make_env():
    return PettingZooEnv(hiddenenvs.make("leduc_holdem"))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50_000, help="env steps of training")
    parser.add_argument("--test-episodes", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    logging.getLogger("tianshou").setLevel(logging.ERROR)  # per-epoch statistics chatter
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    env = make_env()
    net = Net(
        state_shape=env.observation_space["observation"].shape,
        action_shape=env.action_space.n,
        hidden_sizes=[64, 64],
    )
    policy = DiscreteQLearningPolicy(
        model=net, action_space=env.action_space, eps_training=0.1, eps_inference=0.0
    )
    learner = DQN(
        policy=policy, optim=AdamOptimizerFactory(lr=1e-3), gamma=1.0, target_update_freq=200
    )
    opponent = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[learner, opponent], env=env)

    train_envs = DummyVectorEnv([make_env for _ in range(4)])
    test_envs = DummyVectorEnv([make_env for _ in range(2)])
    train_envs.seed(args.seed)
    test_envs.seed(args.seed + 1000)
    train_collector = Collector[CollectStats](
        algorithm, train_envs, VectorReplayBuffer(20_000, 4), exploration_noise=True
    )
    test_collector = Collector[CollectStats](algorithm, test_envs)

    def learner_return(rewards: np.ndarray) -> np.ndarray:
        return rewards[:, 0]  # player_0 is the learner

    epoch_steps = min(args.steps, 5_000)
    algorithm.run_training(
        OffPolicyTrainerParams(
            training_collector=train_collector,
            test_collector=test_collector,
            max_epochs=max(1, args.steps // epoch_steps),
            epoch_num_steps=epoch_steps,
            collection_step_num_env_steps=40,
            test_step_num_episodes=20,
            batch_size=64,
            update_step_num_gradient_steps_per_sample=0.25,
            test_in_training=False,
            multi_agent_return_reduction=learner_return,
            show_progress=False,
            verbose=False,
        )
    )
    result = test_collector.collect(n_episode=args.test_episodes, reset_before_collect=True)
    mean_return = float(result.returns[:, 0].mean())
    print(
        f"leduc_holdem: DQN as player_0 after {args.steps} steps, mean return against "
        f"random over {args.test_episodes} episodes: {mean_return:+.3f} chips"
    )
    return mean_return


if __name__ == "__main__":
    main()
