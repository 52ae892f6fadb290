"""Run directories and checkpoints: what the loop writes and what agent specs read.

A run directory holds ``checkpoint.pt`` (format :data:`RUN_CHECKPOINT_FORMAT`: the run's
config, the learner's state and the loop's counters and generators). Rebuilding the
learner from it needs only the config and the trainer registry, so the spec resolver
(:func:`agents.specs.load_agent`) and the loop (:mod:`agents.loop`) both import this
module and not each other.
"""

from __future__ import annotations

from typing import Any

import hiddenenvs
from agents.base import Learner
from agents.config import RunConfig, config_from_dict, trainer_class, trainer_config

RUN_CHECKPOINT_FORMAT = "hiddenenvs-run-v1"
CHECKPOINT_NAME = "checkpoint.pt"


def build_learner(config: RunConfig) -> Learner:
    game = hiddenenvs.load_game(config.env.name, **config.env.params)
    return trainer_class(config.trainer.name)(game, trainer_config(config), config.seed)


def learner_from_checkpoint(payload: dict[str, Any]) -> Learner:
    learner = build_learner(config_from_dict(payload["config"]))
    learner.load_state_dict(payload["learner"])
    return learner
