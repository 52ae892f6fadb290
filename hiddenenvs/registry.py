"""The registry: every game by name, with its parameters and sizes.

A game is registered once, by its module path, so that importing hiddenenvs stays cheap
and a new game touches only its own file and the ``_ENTRIES`` table below. :data:`REGISTRY`
is a :class:`hiddenenvs.registries.Registry` of :class:`EnvEntry` (the rules every registry
of the project shares: one thing per name, one error for an unknown name).
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass, field
from typing import Any

from hiddenenvs.core import GameSpec
from hiddenenvs.game import Game
from hiddenenvs.registries import Registry


@dataclass(frozen=True)
class EnvEntry:
    name: str
    target: str  # "module:GameClass"
    description: str
    fixed_params: dict[str, Any] = field(default_factory=dict)

    def game_class(self) -> type[Game]:
        module_name, class_name = self.target.split(":")
        return getattr(importlib.import_module(module_name), class_name)


_ENTRIES = [
    EnvEntry("kuhn_poker", "hiddenenvs.envs.kuhn_poker:KuhnPokerGame", "Kuhn poker, 3 cards"),
    EnvEntry(
        "leduc_holdem",
        "hiddenenvs.envs.leduc_holdem:LeducHoldemGame",
        "Leduc hold'em, 6 cards, two rounds",
    ),
    EnvEntry(
        "rps",
        "hiddenenvs.envs.matrix_games:MatrixGame",
        "rock-paper-scissors",
        {"matrix": "rps"},
    ),
    EnvEntry(
        "biased_rps",
        "hiddenenvs.envs.matrix_games:MatrixGame",
        "rock-paper-scissors where a decided round with scissors pays 2",
        {"matrix": "biased_rps"},
    ),
    EnvEntry(
        "matching_pennies",
        "hiddenenvs.envs.matrix_games:MatrixGame",
        "matching pennies",
        {"matrix": "matching_pennies"},
    ),
    EnvEntry(
        "combat",
        "hiddenenvs.envs.combat:CombatGame",
        "grid FPS team combat under fog of war: attack/defend a walled compound "
        "(mode='commander' or 'fighter', map='default' or 'small')",
    ),
    EnvEntry(
        "goofspiel",
        "hiddenenvs.envs.goofspiel:GoofspielGame",
        "Goofspiel / II-Goofspiel: simultaneous card bids for point cards",
    ),
    EnvEntry(
        "liars_dice",
        "hiddenenvs.envs.liars_dice:LiarsDiceGame",
        "Liar's Dice: private dice, rising bids, call liar; the top face is wild",
    ),
    EnvEntry(
        "othello",
        "hiddenenvs.envs.othello:OthelloGame",
        "Othello (Reversi) on a 4x4, 6x6 or 8x8 board",
    ),
    EnvEntry(
        "gdl",
        "hiddenenvs.envs.gdl.game:GdlGame",
        "any GDL / GDL-II rule sheet (rules= a path, or sheet= a shipped name)",
    ),
    EnvEntry(
        "monty_hall",
        "hiddenenvs.envs.gdl.game:GdlGame",
        "GDL-II Monty Hall: choose a door, the host opens a goat door, switch or stay",
        {"sheet": "monty_hall"},
    ),
    EnvEntry(
        "meier",
        "hiddenenvs.envs.gdl.game:GdlGame",
        "GDL-II Meier: private dice rolls, rising claims, call the bluff or accept",
        {"sheet": "meier", "max_steps": 63},  # 21 turns of roll, claim, respond at most
    ),
    EnvEntry(
        "blind_tictactoe",
        "hiddenenvs.envs.gdl.game:GdlGame",
        "GDL-II blind tic-tac-toe: simultaneous marks, only told ok/fail; random settles "
        "collisions",
        {"sheet": "blind_tictactoe", "max_steps": 9},  # each player tries each cell once
    ),
    EnvEntry(
        "biased_blind_tictactoe",
        "hiddenenvs.envs.gdl.game:GdlGame",
        "GDL-II blind tic-tac-toe where x always wins a collision",
        {"sheet": "biased_blind_tictactoe", "max_steps": 9},
    ),
    EnvEntry(
        "gdl_biased_rps",
        "hiddenenvs.envs.gdl.game:GdlGame",
        "biased rock-paper-scissors as a GDL-II sheet (goals 50 + 25 * payoff)",
        {"sheet": "biased_rps"},
    ),
    EnvEntry(
        "gdl_tictactoe",
        "hiddenenvs.envs.gdl.game:GdlGame",
        "tic-tac-toe as a GDL-I sheet",
        {"sheet": "tictactoe"},
    ),
]

REGISTRY: Registry[EnvEntry] = Registry("env", {entry.name: entry for entry in _ENTRIES})


def register(entry: EnvEntry) -> None:
    """Add a game under a new name (for user games outside this package); ValueError if the
    name is taken by another entry."""
    REGISTRY.register(entry.name, entry)


def load_game(name: str | GameSpec, **params: Any) -> Game:
    """The game model behind a registered name (or a :class:`GameSpec`), validated.

    The game's ``spec`` records the registered name and the parameters given, so any
    process can rebuild it; games rebuilt from a spec (unpickling) are cached per process,
    since some (GDL sheets) take a while to ground.
    """
    if isinstance(name, GameSpec):
        if params:
            raise ValueError(f"give a GameSpec or parameters, not both: {name} and {params}")
        return _game_for_spec(name)
    entry = REGISTRY[name]  # an unknown name: "unknown env 'x'; registered envs: ..."
    fixed = set(entry.fixed_params) & set(params)
    if fixed:
        raise ValueError(f"{name}: parameter(s) {sorted(fixed)} are fixed by this variant")
    game_class = entry.game_class()
    # Checked here first so that errors name the env asked for (``monty_hall``), not the
    # class behind it (``gdl``), and list only the parameters the variant leaves open.
    game_class.validate_parameters(params, env_name=name, fixed=tuple(entry.fixed_params))
    game = game_class(**entry.fixed_params, **params)
    game.spec = GameSpec.of(name, params)
    return game


@functools.lru_cache(maxsize=32)
def _game_for_spec(spec: GameSpec) -> Game:
    return load_game(spec.name, **dict(spec.params))


def list_envs() -> list[dict[str, Any]]:
    """One row per registered env: name, description, parameters and sizes."""
    rows = []
    for entry in REGISTRY.values():
        game_class = entry.game_class()
        info = game_class(**entry.fixed_params).info
        rows.append(
            {
                "name": entry.name,
                "description": entry.description,
                "parameters": {
                    p.name: p.default
                    for p in game_class.PARAMETERS
                    if p.name not in entry.fixed_params
                },
                "players": info.num_players,
                "actions": info.num_distinct_actions,
                "information_state_shape": info.information_state_tensor_shape,
                "dynamics": info.dynamics.value,
            }
        )
    return rows
