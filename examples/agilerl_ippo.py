"""AgileRL IPPO with action masks on a hiddenenvs parallel env (default: Goofspiel).

AgileRL's documented multi-agent on-policy path: ``AsyncPettingZooVecEnv`` over copies of
the parallel env with flat observations (AgileRL reads masks from
``info[agent]["action_mask"]``, where the flat layout puts them) and
``train_multi_agent_on_policy`` with one ``IPPO`` agent (no evolution; AgileRL groups
``player_0`` and ``player_1`` by their prefix, so one policy plays both seats: self-play).
The env is made with ``illegal_action="raise"``, so a single unmasked illegal action
would stop the run.

AgileRL 2.58.0 has two defects this script works around, both on its side:
``agilerl.algorithms`` imports ``peft`` without declaring it (install it), and
``IPPO.extract_action_masks`` tests ``None in masks`` on numpy arrays, which fails for any
mask a vector env stacks ("truth value of an array ... is ambiguous"):
:class:`MaskedIPPO` does the same check by identity. AgileRL pins pettingzoo 1.26 (we run
1.27), so it lives in its own virtual environment (``.ci/run``)::

    pip install torch==2.13.0 && pip install -e . agilerl==2.58.0 peft torch==2.13.0
    python examples/agilerl_ippo.py --steps 4000
"""

import argparse

import numpy as np
import torch
from agilerl.algorithms import IPPO
from agilerl.training.train_multi_agent_on_policy import train_multi_agent_on_policy
from agilerl.vector.pz_async_vec_env import AsyncPettingZooVecEnv

import hiddenenvs
from hiddenenvs.params import parse_params


class MaskedIPPO(IPPO):
    """IPPO whose mask extraction accepts the numpy masks a vector env stacks."""

    def extract_action_masks(self, infos):
        collected = {group: [] for group in self.observation_space}
        for agent_id, info in infos.items():
            if isinstance(info, dict):
                group = self.get_group_id(agent_id) if self.has_grouped_agents() else agent_id
                collected[group].append(info.get("action_mask"))
        masks = {}
        for group, group_masks in collected.items():
            missing = [mask is None for mask in group_masks]
            if all(missing):
                masks[group] = None
            elif any(missing):
                raise ValueError(
                    f"{group}: some agents of the group have action masks and some do not"
                )
            else:
                masks[group] = torch.as_tensor(np.array(group_masks), dtype=torch.float32)
        return masks


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="goofspiel")
    parser.add_argument("--param", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument(
        "--steps", type=int, default=4_000, help="env steps of training (all copies)"
    )
    parser.add_argument("--copies", type=int, default=2, help="env copies in the vector env")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    params = parse_params(args.param)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)

    def make_env():
        return hiddenenvs.make_parallel(
            args.env, observation_layout="flat", illegal_action="raise", **params
        )

    env = AsyncPettingZooVecEnv([make_env for _ in range(args.copies)])
    env.reset(seed=args.seed)
    single = make_env()
    agent = MaskedIPPO(
        observation_spaces=[single.observation_space(a) for a in single.possible_agents],
        action_spaces=[single.action_space(a) for a in single.possible_agents],
        agent_ids=list(single.possible_agents),
        net_config={"encoder_config": {"hidden_size": [64, 64]}},
        learn_step=256,
        batch_size=64,
    )
    population, _ = train_multi_agent_on_policy(
        env,
        args.env,
        "IPPO",
        [agent],
        max_steps=args.steps,
        evo_steps=args.steps,
        eval_loop=1,
        verbose=False,
    )
    env.close()
    steps = population[0].steps
    print(f"{args.env}: AgileRL IPPO with action masks, {steps} env steps, no illegal action")
    return steps


if __name__ == "__main__":
    main()
