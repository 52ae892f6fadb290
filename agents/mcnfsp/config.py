"""MCNFSP's hyperparameters (:class:`MCNFSPConfig`) and the networks' architecture.

The options by which it departs from the paper are explained, all in one place, in
:mod:`agents.mcnfsp.deviations`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agents.catalogue import POSITIVE, RANGE
from agents.device import check_device_setting
from agents.errors import ConfigError
from hiddenenvs.game import Game, State

# fn(state, player) -> probabilities over num_distinct_actions (a hiddenenvs.beliefs policy)
OpponentPolicy = Callable[[State, int], np.ndarray]
# Gumbel root search, sigma(q) = (C_VISIT + max_b N(b)) * C_SCALE * q (Danihelka et al. 2022, eq. 8)
GUMBEL_C_VISIT = 50.0
GUMBEL_C_SCALE = 1.0
GUMBEL_TARGET_WIDTH = (
    128  # entries of the improved policy stored per search (combat: at most 91 legal)
)
# Root histories drawn per call of the belief sampler: one posterior set-up serves a whole
# search of ordinary size, and a search of millions of simulations is never drawn up front.
MAX_HISTORY_BATCH = 1024
# A self-play worker's memories hold a piece's searches whole (they grow as they fill).
MAX_PIECE_ROWS = 2**62


@dataclass
class MCNFSPConfig:
    """MCNFSP hyperparameters (defaults: the paper's Othello settings where it gives them)."""

    network: str = "auto"  # "mlp", "conv", or "auto": conv for (C, H, W) tensors (boards)
    conv_channels: list[int] = field(default_factory=lambda: [32, 32])
    flatten_size: int = 120  # the paper's 120-d vector after the convolutions
    hidden_sizes: list[int] = field(default_factory=lambda: [128])
    # "flat": one linear logit per action; "factored": FactoredOrderHead (agents.networks) for
    # games whose actions are orders "send n from area s to destination d" (combat, commander mode)
    order_head: str = "flat"
    order_embedding_size: int = 16  # the factored head's area keys and destination queries
    anticipatory: float = 0.1  # eta: probability of acting with the search, per action
    num_simulations: int = 50  # PUCT simulations per search
    c_puct: float = 1.5
    # "expectation": the others' moves and chance are summed over, weighted by Pi and the
    # chance probabilities (small branching); "sample": one is drawn per simulation (the paper's way)
    opponent_backup: str = "expectation"
    temperature: float = 1.0  # the played pi ∝ N^(1/temperature)
    # f_BR's policy target (PUCT): "played" is the pi the search plays; "visits" is N
    # normalised (the paper's improved policy, AlphaZero's target), whatever the temperature.
    # A sharpened target feeds back: f_BR's prior steers a few simulations' visits, the
    # sharpened visits train the prior, and the prior locks onto one action (deviations.py)
    policy_target: str = "played"
    # f_BR's value target: "return" is the paper's z (what the player went on to earn, its
    # later moves mostly Pi's); "search" is the value of the search's policy target at the
    # root, sum_a target(a) Q(a) (our deviation: a best response's value, agents.mcnfsp.deviations)
    value_target: str = "return"
    # Leaf evaluation: 0 is the paper's (f_BR's value); n > 0 first plays n of the searcher's
    # decisions with the game's no-op (combat: hold, so standing orders play out), the others
    # by their policies, then adds f_BR's value where the rollout stopped (our deviation)
    rollout_decisions: int = 0
    # "puct": the paper's (every simulation picks the root action by PUCT, pi ∝ N); "gumbel":
    # Gumbel root search (Danihelka et al. 2022) for few simulations among many actions
    root_selection: str = "puct"
    gumbel_actions: int = 16  # gumbel: m, root actions sampled without replacement
    replay_capacity: int = 4_000_000  # M_RL, circular: (s, pi, z)
    reservoir_capacity: int = 400_000  # M_SL, reservoir: (s, a) of the search's actions
    learn_every_episodes: int = 100  # episodes between gradient updates
    rl_steps: int = 20  # f_BR gradient steps per update
    sl_steps: int = 20  # Pi gradient steps per update
    # Replay ratios (our deviation, off at 0): gradient samples per pair ever stored in M_RL
    # (resp. M_SL). When > 0 an update takes the steps that bring the memory's total samples
    # to ratio * pairs stored, replacing rl_steps (sl_steps): learning keeps pace with the
    # data however many searches an update's episodes held (see the module docstring)
    rl_replay_ratio: float = 0.0
    sl_replay_ratio: float = 0.0
    batch_size: int = 256
    min_buffer_size: int = 256  # no learning from a memory holding fewer
    rl_learning_rate: float = 0.01
    sl_learning_rate: float = 0.005
    # Where the best-response search starts: "beliefs" samples histories consistent with the
    # seat's information (self-play on imperfect information, as the paper's poker and
    # Othello); "true_state" starts from the true state, for games whose chance is drawn inside
    # the state and so have no belief sampler (combat). That search sees what its seat does
    # not, as in the paper's FPS test bed; the average policy Pi still acts on observations.
    search_from: str = "beliefs"
    # Seats held by a fixed opponent instead of a trained player, e.g. {1: "scripted:doctrine"}:
    # combat attackers learning against the doctrine's defenders (the paper's set-up).
    opponents: dict = field(default_factory=dict)
    device: str = "auto"  # auto | cpu | cuda | cuda:N (agents/device.py)
    # Self-play processes (engineering, not the paper): 1 plays in the training process; more,
    # or a ray_address, play each step's episodes in that many workers (module docstring)
    workers: int = field(default=1, metadata={RANGE: POSITIVE})
    # "local" or a cluster ("auto", host:port; train.py --address): the workers are Ray actors
    ray_address: str | None = None

    def __post_init__(self):
        check_device_setting(self.device)
        self._check_choices()
        self._check_numbers()

    def _check_choices(self) -> None:
        if self.search_from not in ("beliefs", "true_state"):
            raise ConfigError(
                f"trainer.params.search_from must be 'beliefs' or 'true_state', got {self.search_from!r}"
            )
        for seat, spec in self.opponents.items():
            if (
                not isinstance(seat, int)
                or isinstance(seat, bool)
                or seat < 0
                or not isinstance(spec, str)
            ):
                raise ConfigError(
                    f"trainer.params.opponents maps seats (integers) to agent specs, "
                    f"e.g. {{1: scripted:doctrine}}; got {seat!r}: {spec!r}"
                )

        if self.network not in ("auto", "mlp", "conv"):
            raise ConfigError(
                f"trainer.params.network must be 'auto', 'mlp' or 'conv', got {self.network!r}"
            )
        if self.order_head not in ("flat", "factored"):
            raise ConfigError(
                f"trainer.params.order_head must be 'flat' or 'factored', got {self.order_head!r}"
            )
        if self.root_selection not in ("puct", "gumbel"):
            raise ConfigError(
                f"trainer.params.root_selection must be 'puct' or 'gumbel', got {self.root_selection!r}"
            )
        if self.policy_target not in ("played", "visits"):
            raise ConfigError(
                f"trainer.params.policy_target must be 'played' or 'visits', got {self.policy_target!r}"
            )
        if self.policy_target == "visits" and self.root_selection == "gumbel":
            raise ConfigError(
                "trainer.params.policy_target 'visits' is for root_selection 'puct'; the Gumbel "
                "root trains f_BR on its improved policy (leave policy_target: played)"
            )
        if self.value_target not in ("return", "search"):
            raise ConfigError(
                f"trainer.params.value_target must be 'return' or 'search', got {self.value_target!r}"
            )
        if self.opponent_backup not in ("expectation", "sample"):
            raise ConfigError(
                f"trainer.params.opponent_backup must be 'expectation' or 'sample', "
                f"got {self.opponent_backup!r}"
            )

    def _check_numbers(self) -> None:
        if not 0.0 <= self.anticipatory <= 1.0:
            raise ConfigError(
                f"trainer.params.anticipatory must be in [0, 1], got {self.anticipatory}"
            )
        for name in ("rl_replay_ratio", "sl_replay_ratio"):
            if not getattr(self, name) >= 0:
                raise ConfigError(
                    f"trainer.params.{name} must be >= 0 (0: fixed steps per update), "
                    f"got {getattr(self, name)}"
                )
        for name in ("c_puct", "temperature", "rl_learning_rate", "sl_learning_rate"):
            if not getattr(self, name) > 0:
                raise ConfigError(f"trainer.params.{name} must be > 0, got {getattr(self, name)}")
        for name in (
            "num_simulations",
            "replay_capacity",
            "reservoir_capacity",
            "learn_every_episodes",
            "batch_size",
            "flatten_size",
            "order_embedding_size",
            "gumbel_actions",
        ):
            if getattr(self, name) < 1:
                raise ConfigError(f"trainer.params.{name} must be >= 1, got {getattr(self, name)}")
        for name in ("rl_steps", "sl_steps", "min_buffer_size", "rollout_decisions"):
            if getattr(self, name) < 0:
                raise ConfigError(f"trainer.params.{name} must be >= 0, got {getattr(self, name)}")


def architecture_for(game: Game, config: MCNFSPConfig) -> dict[str, Any]:
    """The networks' architecture for ``game`` (conv when ``auto`` sees a board tensor; the
    factored order head when ``order_head`` asks for it and the game has orders)."""
    shape = list(game.info.information_state_tensor_shape)
    kind = config.network
    if kind == "auto":
        kind = "conv" if len(shape) == 3 else "mlp"
    architecture = {
        "kind": kind,
        "input_shape": shape,
        "num_actions": game.info.num_distinct_actions,
        "conv_channels": list(config.conv_channels),
        "flatten_size": config.flatten_size,
        "hidden_sizes": list(config.hidden_sizes),
    }
    if config.order_head == "factored":
        structure = game.order_structure()
        if structure is None:
            raise ConfigError(
                f"trainer.params.order_head 'factored' needs a game whose actions are orders "
                f"(combat in commander mode); {game.spec} has none: use order_head: flat"
            )
        architecture["order_head"] = {
            **structure,
            "embedding_size": config.order_embedding_size,
        }
    return architecture


def utility_scale(game: Game) -> float:
    """The largest absolute return: values and targets are divided by it (into [-1, 1])."""
    return max(abs(game.info.min_utility), abs(game.info.max_utility), 1e-9)
