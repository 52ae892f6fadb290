"""Replays of stored matches: re-simulate from the env seed and the stored actions.

A match row holds ``env_seed`` and the action given at each step of ``env.agent_iter()``
(:mod:`.store`); the env deals the same chance outcomes from the same seed, so stepping it
with those actions reaches the very end the match reached, without the agents. The final
state's :meth:`~hiddenenvs.game.State.history` (chance outcomes, actions and joint actions,
one entry per decision) is then walked on the game model from the root, and each entry
becomes a :class:`Frame`: who decided what (in the game's own words,
``State.action_to_string``), the true state (``str(state)``, the env's text rendering, a
GDL sheet's fluents as grids, and
for an env that draws, its picture from ``render_rgb`` as a PNG data URI),
what each seat saw at that moment (its information-state key, each step in words by
``Game.describe_step``, as ``python -m agents.play`` shows a human, and where the game
draws a seat's view, ``Game.describe_view``: blind tic-tac-toe's board of own marks and
cells found taken, combat's grid of what a side's units see) and the returns so far.
A key that is not the one before it plus new steps, or a walk that does not end where the
env did, is a :class:`ValueError` (the site shows it in place of the replay).

:func:`replay` checks itself: the returns the re-simulation ends with must equal the
stored ones (:attr:`Replay.reproduces`), so a replay that drifted (a changed env, an agent
file replaced) says so instead of showing a different game.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

import hiddenenvs
from hiddenenvs.core import CHANCE


@dataclass(frozen=True)
class Frame:
    """The game after one more decision (the first frame is the start)."""

    move: str  # who decided what, in the game's words ("" for the start)
    chance: bool  # the decision was a chance outcome
    state: str  # the true state, as the env renders it in text
    seen: list[int]  # per seat: how many steps of its view (Replay.views) it had seen
    # Per seat: its view drawn in the game's terms (Game.describe_view: blind tic-tac-toe's
    # board, combat's grid of what a side's units see), None where the game has none.
    boards: list[str | None]
    returns: list[float]  # per seat, so far
    picture: str | None  # the env's own drawing (render_rgb) as a PNG data URI, if it draws


@dataclass(frozen=True)
class Replay:
    seats: list[str]  # the env's agent names, seat 0 first
    # Per seat, its information-state key at the end, step by step in words. Keys have
    # perfect recall (each extends the one before), so a frame needs only how many of
    # these steps its seat had seen: the page grows with the game, not its square.
    views: list[list[str]]
    frames: list[Frame]
    final_returns: list[float]  # what the re-simulation ended with
    reproduces: bool  # the re-simulation ended with the stored returns
    note: str  # why the frames are coarser than one per decision, or ""

    def to_json(self) -> dict[str, Any]:
        return {
            "seats": self.seats,
            "views": self.views,
            "frames": [asdict(frame) for frame in self.frames],
            "final_returns": self.final_returns,
            "reproduces": self.reproduces,
            "note": self.note,
        }


def _move_text(state, entry, seats: Sequence[str]) -> tuple[str, bool]:
    player = state.current_player()
    if isinstance(entry, (tuple, list)):  # a joint action at a simultaneous node
        parts = [
            f"{seats[p]}: {state.action_to_string(p, int(a))}"
            for p, a in enumerate(entry)
            if int(a) >= 0
        ]
        return "; ".join(parts) or "(nobody moves)", False
    if player == CHANCE:
        return f"chance: {state.action_to_string(CHANCE, int(entry))}", True
    if 0 <= player < len(seats):
        return f"{seats[player]}: {state.action_to_string(player, int(entry))}", False
    # A SAMPLED_STOCHASTIC game lists the seed of its draws as an int entry (State.history).
    return f"chance: draws seeded with {entry!r}", True


def _views(state, num_players: int) -> list[list[str]]:
    game = state.game
    return [
        [
            game.describe_step(p, public, private)
            for public, private in state.information_state_key(p)
        ]
        for p in range(num_players)
    ]


def _boards(state, num_players: int) -> list[str | None]:
    describe_view = getattr(state.game, "describe_view", None)
    if describe_view is None:
        return [None] * num_players
    return [describe_view(state, p) for p in range(num_players)]


def _state_text(state) -> str:
    """The true state in text: ``str(state)``, and for a GDL sheet its fluents as a person
    reads them (``(cell 1 2 x)`` fluents as a grid, :func:`~hiddenenvs.envs.gdl.game.grid_text`,
    as the docs' pictures show them)."""
    from hiddenenvs.envs.gdl.game import GdlGame, grid_text

    if not isinstance(state.game, GdlGame):
        return str(state)
    text = f"step {state.steps}\n" + grid_text(state.game.propnet.state_fluents(state.fluents))
    if state.is_terminal():
        text += f"\nterminal, returns {[float(r) for r in state.returns()]}"
    return text


def _frame(state, move: str, chance: bool, views: list[list[str]], draw: Callable | None) -> Frame:
    return Frame(
        move,
        chance,
        _state_text(state),
        [len(view) for view in views],
        _boards(state, len(views)),
        [float(r) for r in np.asarray(state.returns(), dtype=float)],
        None if draw is None else draw(state),
    )


def _drawer(env) -> Callable | None:
    """``state -> PNG data URI`` of the env's picture (``render_rgb``, as the docs'
    pictures), or None for an env that renders only text or without Pillow."""
    if "rgb_array" not in env.metadata.get("render_modes", ()):
        return None
    try:
        from PIL import Image
    except ImportError:
        return None

    def draw(state) -> str:
        buffer = io.BytesIO()
        Image.fromarray(np.asarray(state.render_rgb(), dtype=np.uint8)).save(
            buffer, format="PNG", optimize=True
        )
        return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")

    return draw


def _extends(earlier: list[list[str]], later: list[list[str]]) -> bool:
    return all(new[: len(old)] == old for old, new in zip(earlier, later))


def replay(
    env_name: str,
    params: dict[str, Any],
    env_seed: int,
    actions: Sequence[int | None],
    stored_returns: Sequence[float],
) -> Replay:
    """Re-simulate one stored match and describe it decision by decision."""
    env = hiddenenvs.make(env_name, **params)
    env.reset(seed=env_seed)
    seats = list(env.possible_agents)
    totals = dict.fromkeys(seats, 0.0)
    steps = iter(actions)
    for _ in env.agent_iter():
        try:
            action = next(steps)
        except StopIteration:
            raise ValueError(
                f"{env_name}: the stored actions ({len(actions)}) end before the match does"
            ) from None
        env.step(action)
        for rewarded, reward in env.rewards.items():
            totals[rewarded] += reward
    if next(steps, "end") != "end":
        raise ValueError(f"{env_name}: the match ended before its {len(actions)} stored actions")
    final_returns = [float(totals[name]) for name in seats]
    reproduces = bool(np.allclose(final_returns, list(stored_returns)))
    end = env.unwrapped.game_state
    num_players = len(seats)
    final_views = _views(end, num_players)
    draw = _drawer(env)
    try:
        history = end.history()
    except NotImplementedError:
        # No decision list to walk: show the end only.
        note = f"{env_name} does not record its history: only the final state is shown"
        frame = _frame(end, "(final state)", False, final_views, draw)
        return Replay(seats, final_views, [frame], final_returns, reproduces, note)
    # Walk the decisions from the root (State._replay applies one history entry, as
    # Game.state_from_history does).
    state = end.game.new_initial_state()
    views = _views(state, num_players)
    frames = [_frame(state, "", False, views, draw)]
    for entry in history:
        move, chance = _move_text(state, entry, seats)
        state._replay(entry)
        next_views = _views(state, num_players)
        if not _extends(views, next_views):
            raise ValueError(
                f"{env_name}: a seat's information-state key lost steps after {move!r} "
                "(keys should have perfect recall); no replay"
            )
        views = next_views
        frames.append(_frame(state, move, chance, views, draw))
    if views != final_views:
        raise ValueError(f"{env_name}: walking the history did not reach the final state's views")
    return Replay(seats, final_views, frames, final_returns, reproduces, "")
