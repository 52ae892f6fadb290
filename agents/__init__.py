"""Learning and search agents: CFR family, NFSP and its extensions, baselines.

The interfaces live in :mod:`agents.base` (``Agent``, ``Learner``, ``Transition``), the
common training loop in :mod:`agents.loop`, baselines and the agent-spec resolver
:func:`load_agent` in :mod:`agents.baselines`.
"""

import importlib.abc
import sys

# Packages of the "train" extra that the trainers import. When one is not installed, Python's
# finders all miss it and reach this last one, which says which extra to install instead
# of a bare "No module named 'torch'" (hiddenenvs itself never needs them).
_TRAIN_EXTRA_PACKAGES = frozenset({"torch", "stable_baselines3", "sb3_contrib", "tensorboard", "tqdm"})


class _MissingTrainExtra(importlib.abc.MetaPathFinder):
    """The last finder on ``sys.meta_path``: names the extra for a missing training package."""

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in _TRAIN_EXTRA_PACKAGES:
            raise ModuleNotFoundError(
                f"No module named {name!r}: hiddenenvs's trainers need the training extra; "
                "install it with: pip install 'hiddenenvs[train]' (or pip install -e '.[train]' "
                "in a checkout)",
                name=name,
            )
        return None


if not any(isinstance(finder, _MissingTrainExtra) for finder in sys.meta_path):
    sys.meta_path.append(_MissingTrainExtra())

from agents.base import Agent, Learner, Transition, load_agent_file  # noqa: E402
from agents.baselines import RandomAgent, TabularPolicyAgent, load_agent  # noqa: E402

__all__ = [
    "Agent",
    "Learner",
    "RandomAgent",
    "TabularPolicyAgent",
    "Transition",
    "load_agent",
    "load_agent_file",
]
