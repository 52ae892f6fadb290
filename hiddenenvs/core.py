"""The game model's vocabulary, below every other module of :mod:`hiddenenvs`.

The node kinds (:data:`CHANCE`, :data:`SIMULTANEOUS`, :data:`TERMINAL`), the enums of a
game's static facts (:class:`Dynamics`, :class:`ChanceMode`, :class:`Information`,
:class:`Utility`), a game's identity (:class:`GameSpec`) and the one weighted draw
(:func:`draw_index`). :mod:`hiddenenvs.game` re-exports all of them (import them from
there); they live apart so that the module the game model calls, the belief sampler
(:mod:`hiddenenvs.beliefs`, which declares what it asks of a game as Protocols), need not
import :mod:`hiddenenvs.game`, and no import runs in a circle, not even for the type
checker (``tests/test_architecture.py``).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

CHANCE = -1
SIMULTANEOUS = -2
TERMINAL = -4


class Dynamics(enum.Enum):
    SEQUENTIAL = "sequential"
    SIMULTANEOUS = "simultaneous"


class ChanceMode(enum.Enum):
    DETERMINISTIC = "deterministic"
    EXPLICIT_STOCHASTIC = "explicit_stochastic"
    # The state draws its own randomness from a generator it carries (cloned with it);
    # the outcome distribution is not enumerable (e.g. hit rolls in a combat sim).
    SAMPLED_STOCHASTIC = "sampled_stochastic"


class Information(enum.Enum):
    PERFECT = "perfect"
    IMPERFECT = "imperfect"


class Utility(enum.Enum):
    ZERO_SUM = "zero_sum"
    CONSTANT_SUM = "constant_sum"
    GENERAL_SUM = "general_sum"
    IDENTICAL = "identical"


@dataclass(frozen=True)
class GameSpec:
    """What identifies a game: its registry name and the parameters given to it.

    ``hiddenenvs.load_game(spec)`` rebuilds the game in any process; games pickle as their
    class and spec. The name is the registry's (``gdl_biased_rps``), never the class's (``gdl``).
    ``params`` holds only what the caller gave (a registry variant's fixed parameters
    come back with the name).
    """

    name: str
    params: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def of(cls, name: str, params: dict[str, Any] | None = None) -> GameSpec:
        return cls(name, tuple(sorted((params or {}).items())))

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "params": dict(self.params)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GameSpec:
        if not isinstance(data, dict) or not isinstance(data.get("name"), str):
            raise ValueError(f"a game spec is {{'name': str, 'params': dict}}, got {data!r}")
        return cls.of(data["name"], data.get("params") or {})

    def __str__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params)
        return f"{self.name}({args})" if args else self.name


def draw_index(weights: Sequence[float] | np.ndarray, rng: np.random.Generator) -> int:
    """An index drawn in proportion to ``weights`` (non-negative, not all zero; one uniform draw).

    Rounding short of the total goes to the last index.
    """
    threshold = rng.random() * sum(weights)
    cumulative = 0.0
    for index, weight in enumerate(weights):
        cumulative += weight
        if threshold < cumulative:
            return index
    return len(weights) - 1
