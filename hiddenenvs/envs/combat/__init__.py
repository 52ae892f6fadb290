"""Grid team combat (placeholder docstring, replaced below)."""

from hiddenenvs.envs.combat.env import CombatGame

__all__ = ["CombatGame"]
