"""The registry: every game by name, with its parameters and sizes.

A game is registered once, by its module path, so that importing hiddenenvs stays cheap
and a new game touches only its own file and the ``_ENTRIES`` table below. :data:`REGISTRY`
is a :class:`hiddenenvs.registries.Registry` of :class:`EnvEntry` (the rules every registry
of the project shares: one thing per name, one error for an unknown name).

One entry feeds everything that lists games: :func:`load_game`, :func:`list_envs`, the
docs' env pages, PettingZoo's registry (``version`` and ``simultaneous``, read by
:mod:`hiddenenvs.pettingzoo_env`) and the README's env table, which
``python -m hiddenenvs.envs --readme`` writes (``title``, ``players``, ``source``).
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hiddenenvs.core import GameSpec
from hiddenenvs.game import Game
from hiddenenvs.registries import Registry


@dataclass(frozen=True)
class EnvEntry:
    """A registered game: its name, its class, and the facts every listing of games reads.

    ``version`` and ``simultaneous`` make its PettingZoo ids
    (``hiddenenvs/<name>-v<version>``; a parallel env too when its moves are simultaneous):
    the version bumps when the same id with the same parameters would give different
    spaces, observations, legal actions, rewards or dynamics (docs/guides/pettingzoo_ids.md).
    ``title``, ``players`` and ``source`` are the README's env table cells (the description,
    the game's player count and its module's file when left empty).
    """

    name: str
    target: str  # "module:GameClass"
    description: str
    fixed_params: dict[str, Any] = field(default_factory=dict)
    simultaneous: bool = False
    version: int = 0
    title: str = ""  # a short name for the README's table
    players: str = ""  # how many players, in words, where the game's own count varies
    source: str = ""  # the file or folder the README links, relative to the repository

    def game_class(self) -> type[Game]:
        module_name, class_name = self.target.split(":")
        return getattr(importlib.import_module(module_name), class_name)


# Every GDL game is a sheet (its moves simultaneous in GDL's sense: all roles move each turn).
_GDL_PACKAGE = "hiddenenvs/envs/gdl/__init__.py"
_GDL_SHEETS = "hiddenenvs/envs/gdl/games"

_ENTRIES = [
    EnvEntry(
        "kuhn_poker",
        "hiddenenvs.envs.kuhn_poker:KuhnPokerGame",
        "Kuhn poker, 3 cards",
        title="Kuhn poker",
    ),
    EnvEntry(
        "leduc_holdem",
        "hiddenenvs.envs.leduc_holdem:LeducHoldemGame",
        "Leduc hold'em, 6 cards, two rounds",
        title="Leduc hold'em",
    ),
    EnvEntry(
        "rps",
        "hiddenenvs.envs.matrix_games:MatrixGame",
        "rock-paper-scissors",
        {"matrix": "rps"},
        simultaneous=True,
    ),
    EnvEntry(
        "biased_rps",
        "hiddenenvs.envs.matrix_games:MatrixGame",
        "rock-paper-scissors where a decided round with scissors pays 2",
        {"matrix": "biased_rps"},
        simultaneous=True,
        title="RPS, scissors rounds pay 2",
    ),
    EnvEntry(
        "matching_pennies",
        "hiddenenvs.envs.matrix_games:MatrixGame",
        "matching pennies",
        {"matrix": "matching_pennies"},
        simultaneous=True,
    ),
    EnvEntry(
        "combat",
        "hiddenenvs.envs.combat:CombatGame",
        "grid FPS team combat under fog of war: attack/defend a walled compound "
        "(mode='commander' or 'fighter', map='default' or 'small')",
        simultaneous=True,
        title="grid FPS team combat under fog of war",
        players="2 commanders or 2T fighters",
        source="hiddenenvs/envs/combat/__init__.py",
    ),
    EnvEntry(
        "goofspiel",
        "hiddenenvs.envs.goofspiel:GoofspielGame",
        "Goofspiel / II-Goofspiel: simultaneous card bids for point cards",
        simultaneous=True,
        title="Goofspiel / II-Goofspiel",
    ),
    EnvEntry(
        "liars_dice",
        "hiddenenvs.envs.liars_dice:LiarsDiceGame",
        "Liar's Dice: private dice, rising bids, call liar; the top face is wild",
        title="Liar's Dice",
    ),
    EnvEntry(
        "othello",
        "hiddenenvs.envs.othello:OthelloGame",
        "Othello (Reversi) on a 4x4, 6x6 or 8x8 board",
        title="Othello 4x4, 6x6, 8x8",
    ),
    EnvEntry(
        "gdl",
        "hiddenenvs.envs.gdl.game:GdlGame",
        "any GDL / GDL-II rule sheet (rules= a path, or sheet= a shipped name)",
        simultaneous=True,
        title="any GDL / GDL-II rule sheet (`rules=` a path)",
        players="the sheet's roles",
        source=_GDL_PACKAGE,
    ),
    EnvEntry(
        "monty_hall",
        "hiddenenvs.envs.gdl.game:GdlGame",
        "GDL-II Monty Hall: choose a door, the host opens a goat door, switch or stay",
        {"sheet": "monty_hall"},
        simultaneous=True,
        title="GDL-II Monty Hall",
        source=_GDL_SHEETS,
    ),
    EnvEntry(
        "meier",
        "hiddenenvs.envs.gdl.game:GdlGame",
        "GDL-II Meier: private dice rolls, rising claims, call the bluff or accept",
        {"sheet": "meier", "max_steps": 63},  # 21 turns of roll, claim, respond at most
        simultaneous=True,
        title="GDL-II Meier, dice bluffing",
        source=_GDL_SHEETS,
    ),
    EnvEntry(
        "blind_tictactoe",
        "hiddenenvs.envs.gdl.game:GdlGame",
        "GDL-II blind tic-tac-toe: simultaneous marks, only told ok/fail; random settles "
        "collisions",
        {"sheet": "blind_tictactoe", "max_steps": 9},  # each player tries each cell once
        simultaneous=True,
        title="GDL-II blind tic-tac-toe",
        source=_GDL_SHEETS,
    ),
    EnvEntry(
        "biased_blind_tictactoe",
        "hiddenenvs.envs.gdl.game:GdlGame",
        "GDL-II blind tic-tac-toe where x always wins a collision",
        {"sheet": "biased_blind_tictactoe", "max_steps": 9},
        simultaneous=True,
        title="GDL-II blind tic-tac-toe, x wins collisions",
        source=_GDL_SHEETS,
    ),
    EnvEntry(
        "gdl_biased_rps",
        "hiddenenvs.envs.gdl.game:GdlGame",
        "biased rock-paper-scissors as a GDL-II sheet (goals 50 + 25 * payoff)",
        {"sheet": "biased_rps"},
        simultaneous=True,
        title="biased RPS as a GDL-II sheet",
        source=_GDL_SHEETS,
    ),
    EnvEntry(
        "gdl_tictactoe",
        "hiddenenvs.envs.gdl.game:GdlGame",
        "tic-tac-toe as a GDL-I sheet",
        {"sheet": "tictactoe"},
        simultaneous=True,
        title="tic-tac-toe as a GDL-I sheet",
        source=_GDL_SHEETS,
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


# ---- the README's env table ---------------------------------------------------------------
README_TABLE_START = "<!-- envs-table: written by python -m hiddenenvs.envs --readme -->"
README_TABLE_END = "<!-- /envs-table -->"
_ENVS_FOLDER = Path("hiddenenvs", "envs")


def _source_link(root: Path, entry: EnvEntry) -> str:
    """``[kuhn_poker.py](hiddenenvs/envs/kuhn_poker.py)``, ``[combat/](.../__init__.py)``:
    the file (or folder) ``entry.source`` names, else the module defining its game class."""
    path = Path(entry.source) if entry.source else Path(*entry.target.split(":")[0].split("."))
    if not entry.source:
        path = path / "__init__.py" if (root / path).is_dir() else path.with_suffix(".py")
    shown = path.relative_to(_ENVS_FOLDER) if path.is_relative_to(_ENVS_FOLDER) else path
    if shown.name == "__init__.py":
        label = f"{shown.parent.as_posix()}/"
    elif (root / path).is_dir():
        label = f"{shown.as_posix()}/"
    else:
        label = shown.as_posix()
    return f"[{label}]({path.as_posix()})"


def readme_env_table(root: Path) -> str:
    """The README's env table: one row per entry of :data:`REGISTRY`, in its order (the
    player count from the game itself unless the entry says it in words)."""
    players = {row["name"]: row["players"] for row in list_envs()}
    lines = [
        "| name | game | players | parallel API | module |",
        "|------|------|---------|--------------|--------|",
    ]
    for entry in REGISTRY.values():
        lines.append(
            f"| `{entry.name}` | {entry.title or entry.description} | "
            f"{entry.players or players[entry.name]} | {'yes' if entry.simultaneous else 'no'} | "
            f"{_source_link(root, entry)} |"
        )
    return "\n".join(lines)


def with_readme_table(readme: str, table: str) -> str:
    """``readme`` with the text between its env-table markers replaced by ``table``."""
    start, end = readme.index(README_TABLE_START), readme.index(README_TABLE_END)
    return f"{readme[: start + len(README_TABLE_START)]}\n{table}\n{readme[end:]}"
