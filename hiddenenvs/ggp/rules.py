"""What the GGP player and manager share: a game built from a rule sheet's text, and the
translation between the protocol's KIF moves and percepts and the game model's indices.

The sheet is user input (a START message carries it): it is written to a file of its own
and read by the same GDL reader, validator and grounder as any sheet, with the same
limits (``max_instances``; :mod:`hiddenenvs.envs.gdl.validate`), so a hostile sheet ends
in a :class:`~hiddenenvs.envs.gdl.GdlError` naming the rule, never a hang or a crash.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import hiddenenvs
from hiddenenvs.envs.gdl.ground import DEFAULT_MAX_INSTANCES
from hiddenenvs.ggp.kif import normalise

MATCH_MAX_STEPS = 10_000  # the model's own cut; a manager cuts matches itself (--max-steps)


def write_sheet(rules_text: str, directory: Path, name: str) -> Path:
    """``rules_text`` in ``directory`` under a file name made safe from ``name``."""
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:60].lstrip(".") or "match"
    digest = hashlib.sha256(rules_text.encode()).hexdigest()[:12]
    path = Path(directory) / f"{stem}-{digest}.kif"
    path.write_text(rules_text, encoding="utf-8")
    return path


def load_sheet_game(
    path: Path, max_instances: int = DEFAULT_MAX_INSTANCES, max_load_seconds: float = 0.0
):
    """The GDL game of the sheet at ``path``, never cut by the model's step limit; grounding
    and compiling it may take ``max_load_seconds`` (0: no limit; the player's start clock).
    A terminal state with several goal values for a role gives the lowest (the manager
    scores the match, not us; refusing the sheet would forfeit it, as refusing published
    GDL-II sheets like a Kriegspiel tic-tac-toe did)."""
    return hiddenenvs.load_game(
        "gdl",
        rules=str(path),
        max_steps=MATCH_MAX_STEPS,
        max_instances=max_instances,
        max_load_seconds=max_load_seconds,
        goal_conflicts="lowest",
    )


class Codec:
    """KIF text <-> indices of one game's roles, moves and percepts (case and spacing blind)."""

    def __init__(self, game):
        self.game = game
        net = game.propnet
        self.role_names = [str(role) for role in net.sheet.roles()]
        self._roles = {name.lower(): index for index, name in enumerate(self.role_names)}
        self._moves = [
            {normalise(text): k for k, text in enumerate(moves)} for moves in net.move_names
        ]
        self._percepts = (
            [{normalise(text): k for k, text in enumerate(names)} for names in net.percept_names]
            if net.has_sees
            else None
        )

    def role_index(self, name: str) -> int:
        index = self._roles.get(name.lower())
        if index is None:
            raise ValueError(f"no role {name!r} in this game; roles: {self.role_names}")
        return index

    def move_index(self, role: int, text: str) -> int:
        """The index of move ``text`` of ``role``; ValueError naming it when it is none."""
        index = self._moves[role].get(normalise(text))
        if index is None:
            raise ValueError(f"{text!r} is not a move role {self.role_names[role]} can ever make")
        return index

    def move_text(self, role: int, index: int) -> str:
        return self.game.propnet.move_names[role][index]

    def percept_index(self, role: int, text: str) -> int:
        index = self._percepts[role].get(normalise(text)) if self._percepts else None
        if index is None:
            raise ValueError(f"{text!r} is not a percept role {self.role_names[role]} can get")
        return index

    def percept_texts(self, role: int, indices) -> list[str]:
        names = self.game.propnet.percept_names[role]
        return [names[k] for k in indices]


def own_step_entry(game, player: int, move: int, percepts: tuple[int, ...]):
    """The key entry ``(public, (own move, private percepts))`` of one GDL-II step, from
    what ``player`` alone receives (its own move and percepts), as ``GdlGame.step_entries``
    builds it from the whole joint move: a percept is public by its name, the same for
    every role (``game.public_index``)."""
    if not game.public_percept_names:
        return (), (move, tuple(sorted(percepts)))
    index = game.public_index[player]
    public = tuple(sorted(index[k] for k in percepts if index[k] >= 0))
    return public, (move, tuple(sorted(k for k in percepts if index[k] < 0)))
