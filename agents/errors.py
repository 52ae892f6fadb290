"""The project's own exception for a bad run config, in a module that imports nothing of
ours: trainers raise it from their config checks without importing :mod:`agents.config`
(which imports the trainer catalogue)."""


class ConfigError(ValueError):
    """A config key or value is wrong; the message names it and what is allowed."""
