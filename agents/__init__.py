"""Learning and search agents: CFR family, NFSP and its extensions, baselines.

The interfaces live in :mod:`agents.base` (``Agent``, ``Learner``, ``Transition``), the
common training loop in :mod:`agents.loop`, baselines in :mod:`agents.baselines` and the
agent-spec resolver :func:`load_agent` in :mod:`agents.specs`.
"""

import importlib
import importlib.abc
import sys
from typing import Any

# Packages of the "train" extra that the trainers import. When one is not installed, Python's
# finders all miss it and reach this last one, which says which extra to install instead
# of a bare "No module named 'torch'" (hiddenenvs itself never needs them).
_TRAIN_EXTRA_PACKAGES = frozenset(
    {"torch", "stable_baselines3", "sb3_contrib", "tensorboard", "tqdm"}
)


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

# Imported on first use (PEP 562), so that ``agents.config`` and ``agents.capabilities`` (read
# before a run starts, e.g. to refuse a trainer that does not fit an env) load without torch.
_LAZY = {
    "Agent": "agents.base",
    "Learner": "agents.base",
    "Transition": "agents.base",
    "load_agent_file": "agents.base",
    "RandomAgent": "agents.baselines",
    "TabularPolicyAgent": "agents.baselines",
    "load_agent": "agents.specs",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'agents' has no attribute {name!r}")
    return getattr(importlib.import_module(_LAZY[name]), name)


__all__ = [
    "Agent",
    "Learner",
    "RandomAgent",
    "TabularPolicyAgent",
    "Transition",
    "load_agent",
    "load_agent_file",
]
