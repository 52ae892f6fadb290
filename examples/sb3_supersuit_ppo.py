"""PPO (Stable-Baselines3) on a hiddenenvs parallel env through SuperSuit's vector envs.

One policy is shared by every agent (SuperSuit's ``pettingzoo_env_to_vec_env_v1`` makes
each agent one slot of a vector env); PPO does not mask, so the env is made with flat
observations and an illegal-action rule: ``lose`` (an illegal bid ends the game at the
minimum utility) or, for combat, ``no_op`` (an illegal order is held and reported in
``infos``, counted below). Fighters that die stay in as zeros (``hiddenenvs.marl.black_death``).

    python examples/sb3_supersuit_ppo.py --env goofspiel --steps 20000
    python examples/sb3_supersuit_ppo.py --env combat --param mode=fighter --param map=small --steps 20000
"""

import argparse

import supersuit as ss
from stable_baselines3 import PPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.utils import set_random_seed

import hiddenenvs
from hiddenenvs.marl import black_death
from hiddenenvs.params import parse_params


class IllegalActionCount(BaseCallback):
    """Counts the agent-steps whose action the env replaced by its no-op or lost by."""

    def __init__(self):
        super().__init__()
        self.illegal = self.total = 0

    def _on_step(self) -> bool:
        infos = self.locals["infos"]
        self.total += len(infos)
        self.illegal += sum("illegal_action" in info for info in infos)
        return True


def make_vec_env(name: str, params: dict, copies: int):
    game = hiddenenvs.load_game(name, **params)
    rule = "no_op" if getattr(game, "NO_OP_ACTION", None) is not None else "lose"
    env = hiddenenvs.make_parallel(name, observation_layout="flat", illegal_action=rule, **params)
    env = black_death(env)  # agents that leave early (dead fighters) stay as zeros
    env = ss.pettingzoo_env_to_vec_env_v1(env)
    return ss.concat_vec_envs_v1(env, copies, num_cpus=0, base_class="stable_baselines3")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", default="goofspiel")
    parser.add_argument("--param", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--steps", type=int, default=20_000, help="agent-steps of training")
    parser.add_argument("--copies", type=int, default=2, help="env copies in the vector env")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    vec_env = make_vec_env(args.env, parse_params(args.param), args.copies)
    # SuperSuit's vector env has no seed() for PPO(seed=...) to call: seed torch and numpy
    # here and the envs through their reset; PPO's own reset() then continues their streams.
    set_random_seed(args.seed)
    vec_env.venv.reset(seed=args.seed)
    model = PPO("MlpPolicy", vec_env, n_steps=128, batch_size=128, verbose=0)
    counter = IllegalActionCount()
    model.learn(total_timesteps=args.steps, callback=counter)
    share = counter.illegal / max(counter.total, 1)
    print(
        f"{args.env}: {counter.total} agent-steps, {vec_env.num_envs} agents in the vector env, "
        f"illegal actions {share:.1%} (held or lost, reported in infos)"
    )
    vec_env.close()
    return model, share


if __name__ == "__main__":
    main()
