"""hiddenenvs: imperfect-information games as one game model and PettingZoo envs.

>>> import hiddenenvs
>>> env = hiddenenvs.make("leduc_holdem")           # PettingZoo AEC env
>>> game = hiddenenvs.load_game("leduc_holdem")     # the game model, for search
>>> [row["name"] for row in hiddenenvs.list_envs()][:2]
['kuhn_poker', 'leduc_holdem']
"""

__version__ = "0.2.0"  # the package's one version (pyproject.toml reads it); CHANGELOG.md

from hiddenenvs.game import (
    CHANCE,
    SIMULTANEOUS,
    TERMINAL,
    ChanceMode,
    Dynamics,
    Game,
    GameInfo,
    Information,
    Parameter,
    State,
    Utility,
)
from hiddenenvs.pettingzoo_env import make, make_parallel, pettingzoo_id, register_pettingzoo_envs
from hiddenenvs.registry import EnvEntry, list_envs, load_game, register

register_pettingzoo_envs()  # pettingzoo.make("aec", "hiddenenvs/leduc_holdem-v0") and the rest

__all__ = [
    "__version__",
    "CHANCE",
    "SIMULTANEOUS",
    "TERMINAL",
    "ChanceMode",
    "Dynamics",
    "EnvEntry",
    "Game",
    "GameInfo",
    "Information",
    "Parameter",
    "State",
    "Utility",
    "list_envs",
    "load_game",
    "make",
    "make_parallel",
    "pettingzoo_id",
    "register",
]
