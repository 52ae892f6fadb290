"""What the ReBeL search and its parts share without importing each other: the search's
options (:class:`SearchOptions`), the names they take, and a finished solve (``Solved``).

:mod:`agents.rebel.search` builds the search from them; :mod:`agents.rebel.gadget` (safe
re-solving) and :mod:`agents.rebel.beliefs` are its parts and import this module, not the
search, so the package's imports point one way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from hiddenenvs.analysis import GameTree

RESOLVE_MODES = ("frontier", "decision", "gadget")
VALUE_KINDS = ("history", "pbs")
SAMPLERS = ("posterior", "proposal", "evaluation", "particles")
# A finished solve: subgame tree, σ per infoset-action slot, depth, the public states cut,
# the root histories with their beliefs.
Solved = tuple[GameTree, np.ndarray, int, frozenset, list]


@dataclass(frozen=True)
class SearchOptions:
    """The numbers and modes of a :class:`~agents.rebel.search.ReBeLSearch` (the module
    docstring of :mod:`agents.rebel` explains each part).

    Budget per solve: ``iterations`` CFR+ iterations at every depth, deepening while
    ``seconds`` (None: no time limit) allow; ``max_depth`` (None: unlimited) caps the depth
    in public steps. ``blueprint_iterations`` (None: ``iterations``) budgets the first
    subgame of ``resolve="gadget"`` alone (CFR-D's cheap blueprint, re-solved safely).
    ``rollouts``: playouts per frontier history when no value network is given. Beliefs:
    reach under σ mixed with ``tremble`` uniform; enumerated while the root fits in
    ``max_root_nodes``, else ``samples`` histories drawn by ``sampler``; a subgame grows to
    at most ``max_subgame_nodes``. ``resolve``: which decisions get a new subgame.
    """

    iterations: int = 200
    seconds: float | None = None
    max_depth: int | None = None
    rollouts: int = 8
    tremble: float = 1e-6
    max_root_nodes: int = 10_000
    max_subgame_nodes: int = 20_000
    samples: int = 64
    resolve: str = "frontier"
    sampler: str = "posterior"
    blueprint_iterations: int | None = None

    def __post_init__(self):
        if self.iterations < 1:
            raise ValueError(f"iterations must be >= 1, got {self.iterations}")
        if self.blueprint_iterations is not None and self.blueprint_iterations < 1:
            raise ValueError(f"blueprint_iterations must be >= 1, got {self.blueprint_iterations}")
        if self.seconds is not None and self.seconds <= 0:
            raise ValueError(f"seconds must be positive, got {self.seconds}")
        if self.max_depth is not None and self.max_depth < 1:
            raise ValueError(f"max_depth must be >= 1, got {self.max_depth}")
        if self.sampler not in SAMPLERS:
            raise ValueError(f"sampler must be one of {SAMPLERS}, got {self.sampler!r}")
        if self.resolve not in RESOLVE_MODES:
            raise ValueError(f"resolve must be one of {RESOLVE_MODES}, got {self.resolve!r}")
        if not 0.0 < self.tremble < 1.0:
            raise ValueError(f"tremble must be in (0, 1), got {self.tremble}")

    @property
    def blueprint_budget(self) -> int:
        """The CFR+ iterations of the gadget's first subgame."""
        return self.blueprint_iterations or self.iterations

    @classmethod
    def from_config(cls, config: Any, resolve: str = "frontier") -> SearchOptions:
        """The search a ReBeL trainer's config runs (:func:`search_settings`)."""
        return cls(**search_settings(config, resolve))


def search_settings(config: Any, resolve: str = "frontier") -> dict[str, Any]:
    """The :class:`SearchOptions` fields a ReBeL trainer's config
    (:class:`agents.rebel.trainer.ReBeLConfig`) sets, for its self-play
    (``resolve="frontier"``) or its evaluation (``config.resolve``); its agent files hold them."""
    return {"iterations": config.iterations, "max_depth": config.max_depth, "resolve": resolve}
