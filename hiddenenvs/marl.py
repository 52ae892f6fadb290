"""What the MARL libraries need beyond the PettingZoo API: SuperSuit's vector path.

Every env takes the libraries' own PettingZoo paths once made with the layout they read
(``hiddenenvs/pettingzoo_env.py``): ``observation_layout="flat"`` gives a ``Box``
observation with the mask in ``infos[agent]["action_mask"]``, and an unmasked learner
needs ``illegal_action="lose"`` or, where the game has a no-op (combat), ``"no_op"``.
One piece is missing on the libraries' side, and this module supplies it:

SuperSuit's vector envs (``pettingzoo_env_to_vec_env_v1``, ``concat_vec_envs_v1``, what
Stable-Baselines3 trains on) need a constant set of agents, so an env whose agents leave
early (combat's fighter mode: dead fighters are terminated at once) goes through
``black_death_v3``, which keeps the dead in with zero observations and rewards. In
SuperSuit 3.11.0 (the latest release) that wrapper ends an episode only when every agent
is terminated *and* truncated at once (``(terminations & truncations).all()``; fixed
upstream by SuperSuit pull request 265, not released), so an episode that ends by
termination never ends for it and the next step meets a finished env.
:func:`black_death` is SuperSuit's ``black_death_v3`` with the last step of an episode
reported as both, which is what ``black_death_v3`` reports anyway: it returns one
"done" flag in both places.

>>> import hiddenenvs, supersuit
>>> from hiddenenvs.marl import black_death
>>> env = hiddenenvs.make_parallel("combat", mode="fighter", map="small",
...                                observation_layout="flat", illegal_action="no_op")
>>> vec_env = supersuit.pettingzoo_env_to_vec_env_v1(black_death(env))
>>> vec_env = supersuit.concat_vec_envs_v1(vec_env, 2, base_class="stable_baselines3")
>>> vec_env.num_envs                 # 2 copies of 20 fighters, dead ones kept as zeros
40
"""

from __future__ import annotations

from pettingzoo import ParallelEnv
from pettingzoo.utils.wrappers import BaseParallelWrapper


class EpisodeEndAsTerminatedAndTruncated(BaseParallelWrapper):
    """Reports the step that ends an episode (no agent left) as terminated *and*
    truncated for every agent, for SuperSuit 3.11's ``black_death_v3`` (module docstring)."""

    def step(self, actions):
        observations, rewards, terminations, truncations, infos = self.env.step(actions)
        if not self.env.agents:
            return (
                observations,
                rewards,
                dict.fromkeys(terminations, True),
                dict.fromkeys(truncations, True),
                infos,
            )
        return observations, rewards, terminations, truncations, infos


def black_death(env: ParallelEnv) -> ParallelEnv:
    """SuperSuit's ``black_death_v3`` around ``env``, with episodes that end (module
    docstring). ``env`` needs ``Box`` observations: ``observation_layout="flat"``."""
    import supersuit

    return supersuit.black_death_v3(EpisodeEndAsTerminatedAndTruncated(env))
