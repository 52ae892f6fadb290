"""A TorchRL rollout on the vector Leduc hold'em, drawing actions through the action masks.

``torchrl.envs.GymWrapper`` takes :class:`hiddenenvs.vector.gymnasium_env.SeatedVectorEnv`
as a batched env (``batch_size [num_envs]``, one compiled call per step for all games);
``illegal_action="replace"`` lets TorchRL probe the env with unmasked random actions
when it infers the info specs. Each tensordict carries ``action_mask`` (the learner's
legal actions); a small MLP gives logits and ``MaskedCategorical`` draws only legal
actions. The script checks that no action was replaced and prints the mean reward per
game against the random opponent.

    python examples/torchrl_vector_leduc.py --num-envs 256 --steps 50
"""

import argparse

import torch
from tensordict.nn import TensorDictModule
from torchrl.envs import GymWrapper
from torchrl.modules import MLP, MaskedCategorical, ProbabilisticActor

from hiddenenvs.vector.gymnasium_env import SeatedVectorEnv


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-envs", type=int, default=256)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    torch.manual_seed(args.seed)
    env = GymWrapper(
        SeatedVectorEnv(
            "leduc_holdem", num_envs=args.num_envs, seed=args.seed, illegal_action="replace"
        ),
        categorical_action_encoding=True,
    )
    observation_size = env.observation_spec["observation"].shape[-1]
    num_actions = env.action_spec.space.n
    logits = TensorDictModule(
        MLP(in_features=observation_size, out_features=num_actions, num_cells=[64]),
        in_keys=["observation"],
        out_keys=["logits"],
    )
    policy = ProbabilisticActor(
        logits,
        in_keys={"logits": "logits", "mask": "action_mask"},
        out_keys=["action"],
        distribution_class=MaskedCategorical,
        return_log_prob=True,
    )
    with torch.no_grad():
        rollout = env.rollout(args.steps, policy, break_when_any_done=False)
    replaced = int(rollout["next", "illegal_action"].sum())
    if replaced:
        raise SystemExit(f"{replaced} masked actions were illegal")
    ended = rollout["next", "terminated"].squeeze(-1)
    rewards = rollout["next", "reward"].squeeze(-1)
    games = int(ended.sum())
    print(
        f"{rollout.batch_size[0]} envs x {rollout.batch_size[1]} steps: {games} games, all actions legal, "
        f"mean reward per game {float(rewards.sum()) / max(games, 1):+.3f}"
    )
    return games


if __name__ == "__main__":
    main()
