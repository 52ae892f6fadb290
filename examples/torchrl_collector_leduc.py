"""A TorchRL collector on Leduc hold'em, drawing actions through the action masks.

TorchRL's own PettingZoo path: ``PettingZooWrapper(hiddenenvs.make(...), use_mask=True)``,
here with ``player_0`` and ``player_1`` in one group ``"player"`` (one shared network),
hands out per group the ``action_mask`` (legal actions, from our dict observation) and
the ``mask`` (who acts now). A shared MLP gives
logits; ``MaskedCategorical`` draws only legal actions. The collector gathers frames and
the script checks that every acting player's action was legal.

    python examples/torchrl_collector_leduc.py --frames 4000
"""

import argparse

import torch
from tensordict.nn import TensorDictModule
from torch import nn
from torchrl.collectors import Collector
from torchrl.envs import PettingZooWrapper
from torchrl.modules import MLP, MaskedCategorical, ProbabilisticActor

import hiddenenvs


def make_env(seed: int):
    env = hiddenenvs.make("leduc_holdem")
    return PettingZooWrapper(
        env, use_mask=True, seed=seed, group_map={"player": env.possible_agents}
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=4_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    torch.manual_seed(args.seed)
    env = make_env(args.seed)
    observation_key = ("player", "observation", "observation")  # our dict's "observation" entry
    observation_size = env.observation_spec[observation_key].shape[-1]
    num_actions = env.full_action_spec["player", "action"].space.n
    logits = TensorDictModule(
        nn.Sequential(MLP(in_features=observation_size, out_features=num_actions, num_cells=[64])),
        in_keys=[observation_key],
        out_keys=[("player", "logits")],
    )
    policy = ProbabilisticActor(
        logits,
        in_keys={"logits": ("player", "logits"), "mask": ("player", "action_mask")},
        out_keys=[("player", "action")],
        distribution_class=MaskedCategorical,
        return_log_prob=True,
    )
    collector = Collector(
        lambda: make_env(args.seed), policy, frames_per_batch=1_000, total_frames=args.frames
    )
    frames = acting = illegal = 0
    for batch in collector:
        player = batch["player"]
        acts = player["mask"]  # (frames, players): who acted
        chosen = player["action"]
        legal = player["action_mask"].gather(-1, chosen.unsqueeze(-1)).squeeze(-1)
        frames += batch.numel()
        acting += int(acts.sum())
        illegal += int((acts & ~legal).sum())
    collector.shutdown()
    print(f"leduc_holdem: {frames} frames collected, {acting} player decisions, {illegal} illegal")
    return frames, illegal


if __name__ == "__main__":
    main()
