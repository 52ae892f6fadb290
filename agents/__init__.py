"""Learning and search agents: CFR family, NFSP and its extensions, baselines.

The interfaces live in :mod:`agents.base` (``Agent``, ``Learner``, ``Transition``), the
common training loop in :mod:`agents.loop`, baselines and the agent-spec resolver
:func:`load_agent` in :mod:`agents.baselines`.
"""

from agents.base import Agent, Learner, Transition, load_agent_file
from agents.baselines import RandomAgent, TabularPolicyAgent, load_agent

__all__ = [
    "Agent",
    "Learner",
    "RandomAgent",
    "TabularPolicyAgent",
    "Transition",
    "load_agent",
    "load_agent_file",
]
