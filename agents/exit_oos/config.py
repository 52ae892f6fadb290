"""ExIt-OOS's hyperparameters (:class:`ExItOOSConfig`, a run's ``trainer.params``).

The defaults are the paper's Leduc settings with the search scaled down; the switches that
depart from the paper are explained in :mod:`agents.exit_oos.deviations`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agents.device import check_device_setting
from agents.search.oos import REWEIGHTING, TARGETING

BACKENDS = ("auto", "tree", "model")


@dataclass
class ExItOOSConfig:
    """ExIt-OOS hyperparameters (defaults: the paper's Leduc settings, the search scaled down)."""

    hidden_sizes: list[int] = field(default_factory=lambda: [128])
    games_per_iteration: int = 32
    simulations_per_move: int = 1_000  # the paper: 10,000
    delta: float = 0.9  # OOS targeting probability (Lisý, Lanctot & Bowling 2015)
    epsilon: float = 0.4  # OOS exploration of the update player
    gamma: float = 0.01  # uniform share of the biased sampler at others' nodes
    targeting: str = "pst"
    reweighting: str = "ema"
    # OOS's average strategy weighs its own reach under (1 - t) sigma + t uniform (tree
    # backend; 0: as published, and a decision the search's current strategy does not lead
    # to gets no average, so its target is uniform).
    average_tremble: float = 0.0
    # PST on the tree backend: store the search's answer at every information set of the
    # mover with the current public state (all targeted alike), not only at the one held.
    public_state_targets: bool = False
    # Tree backend: each search's regrets start at prior_regret times the apprentice's
    # probabilities, so OOS's current strategy starts at f_theta (0: from zero, as published).
    prior_regret: float = 0.0
    backend: str = "auto"  # OOS backend: "tree" (compiled, enumerable games), "model" or "auto"
    reservoir_games: int = 32_000
    reservoir_decay: float = 2.0
    train_steps: int = 128  # Adam steps per iteration
    batch_size: int = 128  # the paper does not say
    learning_rate: float = 1e-3
    workers: int = 2  # self-play processes; 0 plays in the training process
    concurrent_games: int = (
        8  # model backend: games a worker plays in lockstep, one forward per round
    )
    ray_address: str | None = (
        None  # "local" or a cluster ("auto", host:port): workers are Ray actors
    )
    # The apprentice's training (auto | cpu | cuda | cuda:N, agents/device.py); the self-play
    # searches run on the CPU of their workers.
    device: str = "auto"

    def __post_init__(self) -> None:
        check_device_setting(self.device)
        self._check_choices()
        self._check_ranges()

    def _check_choices(self) -> None:
        """The named options, and the switches that need others."""
        from agents.config import ConfigError

        for name, allowed in (
            ("targeting", TARGETING),
            ("reweighting", REWEIGHTING),
            ("backend", BACKENDS),
        ):
            if getattr(self, name) not in allowed:
                raise ConfigError(
                    f"trainer.params.{name} must be one of {allowed}, got {getattr(self, name)!r}"
                )
        if self.public_state_targets and (self.targeting != "pst" or self.backend == "model"):
            raise ConfigError(
                "trainer.params.public_state_targets needs targeting: pst and the tree backend"
            )
        if self.ray_address is not None and self.workers < 1:
            raise ConfigError(
                "trainer.params.ray_address plays on `workers` Ray actors: workers must be >= 1"
            )

    def _check_ranges(self) -> None:
        """Probabilities in [0, 1], counts >= 1, rates > 0."""
        from agents.config import ConfigError

        for name in ("delta", "epsilon", "gamma", "average_tremble"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ConfigError(
                    f"trainer.params.{name} must be in [0, 1], got {getattr(self, name)}"
                )
        for name in (
            "games_per_iteration",
            "simulations_per_move",
            "reservoir_games",
            "train_steps",
            "batch_size",
            "concurrent_games",
        ):
            if getattr(self, name) < 1:
                raise ConfigError(f"trainer.params.{name} must be >= 1, got {getattr(self, name)}")
        if self.workers < 0:
            raise ConfigError(f"trainer.params.workers must be >= 0, got {self.workers}")
        if self.prior_regret < 0.0:
            raise ConfigError(f"trainer.params.prior_regret must be >= 0, got {self.prior_regret}")
        if self.reservoir_decay <= 0.0 or self.learning_rate <= 0.0:
            raise ConfigError("trainer.params.reservoir_decay and learning_rate must be > 0")
