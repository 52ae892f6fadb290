"""RLlib PPO with action masking on a hiddenenvs parallel env (default: Goofspiel).

RLlib's own paths: ``ParallelPettingZooEnv`` turns the parallel env into a
``MultiAgentEnv``, and RLlib's example ``ActionMaskingTorchRLModule`` masks the logits. That
module reads a ``Dict`` observation with the keys ``"observations"`` and
``"action_mask"``; ours (the default dict layout) names the first ``"observation"``, as
PettingZoo's classic envs do, so a small wrapper renames it. One module is shared by
all agents. RLlib pins its own gymnasium, so it lives in its own virtual environment
(``.ci/run``)::

    pip install torch==2.13.0 && pip install -e . "ray[rllib]" torch==2.13.0
    python examples/rllib_ppo_masked.py --steps 4000
"""

import argparse

import gymnasium
from pettingzoo.utils.wrappers import BaseParallelWrapper
import ray
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
from ray.tune.registry import register_env

import hiddenenvs
from hiddenenvs.params import parse_params


class RLlibMaskedObservations(BaseParallelWrapper):
    """Our ``{"observation", "action_mask"}`` as RLlib's ``{"observations", "action_mask"}``."""

    def observation_space(self, agent):
        space = self.env.observation_space(agent)
        return gymnasium.spaces.Dict(
            {"observations": space["observation"], "action_mask": space["action_mask"]}
        )

    @staticmethod
    def _renamed(observations):
        return {
            agent: {"observations": o["observation"], "action_mask": o["action_mask"]}
            for agent, o in observations.items()
        }

    def reset(self, seed=None, options=None):
        observations, infos = self.env.reset(seed=seed, options=options)
        return self._renamed(observations), infos

    def step(self, actions):
        observations, *rest = self.env.step(actions)
        return (self._renamed(observations), *rest)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="goofspiel")
    parser.add_argument("--param", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--steps", type=int, default=4_000, help="env steps of training")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--address",
        default="local",
        help="Ray to run on: 'local' (default) starts one of its own; 'auto' or host:port joins "
        "a running cluster",
    )
    args = parser.parse_args(argv)
    params = parse_params(args.param)
    # Without an explicit init, RLlib joins any Ray already started on this machine (another
    # program's cluster, which may stop under it): the default starts this example's own.
    ray.init(address=args.address, include_dashboard=False, ignore_reinit_error=True)

    register_env(
        "hiddenenvs",
        lambda _: ParallelPettingZooEnv(
            RLlibMaskedObservations(hiddenenvs.make_parallel(args.env, **params))
        ),
    )
    config = (
        PPOConfig()
        .environment("hiddenenvs")
        .env_runners(num_env_runners=0)
        .training(train_batch_size_per_learner=500, minibatch_size=100, num_epochs=2)
        .multi_agent(
            policies={"shared"}, policy_mapping_fn=lambda agent_id, *args, **kwargs: "shared"
        )
        .rl_module(
            rl_module_spec=MultiRLModuleSpec(
                rl_module_specs={
                    "shared": RLModuleSpec(
                        module_class=ActionMaskingTorchRLModule,
                        model_config={"fcnet_hiddens": [64, 64]},
                    )
                }
            )
        )
        .debugging(seed=args.seed)
    )
    algorithm = config.build_algo()
    steps = 0
    while steps < args.steps:
        result = algorithm.train()
        steps = int(result["num_env_steps_sampled_lifetime"])
    episode_return = result["env_runners"].get("episode_return_mean")
    print(
        f"{args.env}: RLlib PPO with action masking, {steps} env steps, "
        f"mean episode return (all agents) {episode_return}"
    )
    algorithm.stop()
    ray.shutdown()
    return steps


if __name__ == "__main__":
    main()
