"""The results store: one SQLite row per match, written as soon as the match ends.

=================  ==========================================================================
Column             Meaning
=================  ==========================================================================
``env``            registered env name
``params``         the env's parameters (registry-fixed ones left out), canonical JSON
``seats``          JSON list: the agent spec in each seat, seat 0 first
``series_seed``    the ``--seed`` of the evaluation that played the match
``game_index``     0, 1, ... within the pairing: game ``i`` of every seat order of a pairing
                   shares one env seed when duplicate matches are on
``env_seed``       the seed given to ``env.reset``; each seat's agent draws from a child
                   stream of it, so every match replays exactly
``returns``        JSON list: each seat's total return
``seconds``        wall time of the match
``finished_at``    UTC time the match ended (ISO 8601)
``actions``        JSON list: the action given to ``env.step`` at each step of
                   ``env.agent_iter()`` (``null`` for a finished agent's step), so a replay
                   re-simulates the match from ``env_seed`` (:mod:`.replay`); NULL in
                   matches stored before the column existed, which keep their numbers
                   but have no replay
=================  ==========================================================================

A store written before ``actions`` existed gains the column when it is opened
(``ALTER TABLE``); its old rows stay as they were.

``UNIQUE(env, params, seats, series_seed, game_index)`` makes a match impossible to store
twice; re-running an evaluation skips the keys already present (:meth:`ResultStore.stored_keys`).
Every match is its own transaction and the database runs in WAL mode, so a process killed
at any instant loses at most the matches it had not yet written.

A database another process holds locked is waited for: a match's row is retried with a
doubling pause for up to :data:`LOCK_PATIENCE_SECONDS` (each try itself waits
:data:`BUSY_TIMEOUT_SECONDS`); if the lock outlasts that, the played matches that could
not be written go to ``<database>.unsaved.jsonl`` beside it (one JSON object a line,
appended and fsynced) and are added the next time the database is opened, so no played
match is lost.

Exploitability, which needs no matches, is kept per ``(env, params, agent)`` in the
``exploitability`` table so ``evaluate.py --show`` can print it without recomputing.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

BUSY_TIMEOUT_SECONDS = 30.0  # one statement's wait for a lock another process holds
LOCK_PATIENCE_SECONDS = 120.0  # a match's row retried for this long before it is set aside
UNSAVED_SUFFIX = ".unsaved.jsonl"

SCHEMA = """
CREATE TABLE IF NOT EXISTS matches (
    id INTEGER PRIMARY KEY,
    env TEXT NOT NULL,
    params TEXT NOT NULL,
    seats TEXT NOT NULL,
    series_seed INTEGER NOT NULL,
    game_index INTEGER NOT NULL,
    env_seed INTEGER NOT NULL,
    returns TEXT NOT NULL,
    seconds REAL NOT NULL,
    finished_at TEXT NOT NULL,
    actions TEXT,
    UNIQUE (env, params, seats, series_seed, game_index)
);
CREATE TABLE IF NOT EXISTS exploitability (
    env TEXT NOT NULL,
    params TEXT NOT NULL,
    agent TEXT NOT NULL,
    exploitability REAL NOT NULL,
    computed_at TEXT NOT NULL,
    PRIMARY KEY (env, params, agent)
);
CREATE TABLE IF NOT EXISTS rankings (
    env TEXT NOT NULL,
    params TEXT NOT NULL,
    rank_by TEXT NOT NULL,
    PRIMARY KEY (env, params)
);
"""


def canonical_json(value: Any) -> str:
    """One spelling per value, so equal params and seat lists compare equal as text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class MatchKey:
    """What identifies a match; the store holds at most one row per key."""

    env: str
    params: str  # canonical JSON
    seats: tuple[str, ...]
    series_seed: int
    game_index: int


@dataclass(frozen=True)
class MatchResult:
    key: MatchKey
    env_seed: int
    returns: tuple[float, ...]
    seconds: float
    # One entry per step of env.agent_iter() (None: a finished agent's step); None when
    # the match was stored before actions were kept.
    actions: tuple[int | None, ...] | None = None


@dataclass(frozen=True)
class StoredMatch:
    """A match as the store holds it: its row id and end time beside the result."""

    id: int
    result: MatchResult
    finished_at: str


def _actions_json(actions: tuple[int | None, ...] | None) -> str | None:
    return None if actions is None else json.dumps([None if a is None else int(a) for a in actions])


def _actions_from_json(text: str | None) -> tuple[int | None, ...] | None:
    return None if text is None else tuple(json.loads(text))


def _utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class ResultStore:
    """An SQLite file of match results (see the module docstring)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.connection = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None
            )
            self.connection.execute("PRAGMA journal_mode=WAL")
            # In WAL mode NORMAL keeps every committed transaction across a process kill
            # (not across power loss), at a fraction of FULL's fsync cost.
            self.connection.execute("PRAGMA synchronous=NORMAL")
            self.connection.executescript(SCHEMA)
            self._migrate()
        except sqlite3.DatabaseError as error:
            raise ValueError(f"results database {self.path}: {error}") from error
        self.lock_patience_seconds = LOCK_PATIENCE_SECONDS
        self.unsaved_path = self.path.with_name(self.path.name + UNSAVED_SUFFIX)
        self.recovered = self._add_unsaved() if str(path) != ":memory:" else 0

    def _migrate(self) -> None:
        """Bring a store written by an older version up to :data:`SCHEMA`."""
        columns = {row[1] for row in self.connection.execute("PRAGMA table_info(matches)")}
        if "actions" not in columns:  # stores from before replays: their rows keep NULL
            self.connection.execute("ALTER TABLE matches ADD COLUMN actions TEXT")

    def close(self) -> None:
        self.connection.close()

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    # ---- matches --------------------------------------------------------------------
    def add(self, result: MatchResult) -> bool:
        """Store one match in its own transaction; False if its key was already stored."""
        key = result.key
        with self._transaction():
            cursor = self.connection.execute(
                "INSERT OR IGNORE INTO matches (env, params, seats, series_seed, game_index, "
                "env_seed, returns, seconds, finished_at, actions) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key.env,
                    key.params,
                    json.dumps(list(key.seats)),
                    key.series_seed,
                    key.game_index,
                    result.env_seed,
                    json.dumps([float(r) for r in result.returns]),
                    float(result.seconds),
                    _utc_now(),
                    _actions_json(result.actions),
                ),
            )
        return cursor.rowcount == 1

    def add_patiently(self, result: MatchResult) -> bool | None:
        """:meth:`add`, retried with a doubling pause while another process holds the
        database locked; None when it stayed locked for ``lock_patience_seconds``."""
        return self.patiently(lambda: self.add(result))

    def patiently(self, write: Callable[[], Any]) -> Any:
        """``write()``, retried with a doubling pause while another process holds the
        database locked; None when it stayed locked for ``lock_patience_seconds``."""
        deadline = time.monotonic() + self.lock_patience_seconds
        pause = 0.25
        while True:
            try:
                return write()
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) and "busy" not in str(error):
                    raise
                if time.monotonic() + pause > deadline:
                    return None
            time.sleep(pause)
            pause = min(2 * pause, 8.0)

    def set_aside(self, results: list[MatchResult]) -> Path:
        """Append ``results`` to the unsaved file beside the database (fsynced), to be
        added the next time the database is opened; its path."""
        with open(self.unsaved_path, "a", encoding="utf-8") as handle:
            for result in results:
                key = result.key
                row = {
                    "key": [key.env, key.params, list(key.seats), key.series_seed, key.game_index],
                    "env_seed": result.env_seed,
                    "returns": [float(r) for r in result.returns],
                    "seconds": float(result.seconds),
                    "actions": json.loads(_actions_json(result.actions) or "null"),
                }
                handle.write(json.dumps(row) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        return self.unsaved_path

    def _add_unsaved(self) -> int:
        """Add the matches an earlier run set aside (a locked database); their count. The
        file goes once every one is stored (a line cut by a crash is skipped)."""
        if not self.unsaved_path.is_file():
            return 0
        added = 0
        for line in self.unsaved_path.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
                env, params, seats, series_seed, game_index = row["key"]
                result = MatchResult(
                    MatchKey(env, params, tuple(seats), series_seed, game_index),
                    row["env_seed"],
                    tuple(row["returns"]),
                    row["seconds"],
                    None if row.get("actions") is None else tuple(row["actions"]),
                )
            except (ValueError, KeyError, TypeError):
                continue
            if self.add_patiently(result) is None:
                return added  # still locked: the file stays for the next time
            added += 1
        self.unsaved_path.unlink()
        return added

    def stored_keys(self, env: str, params: str) -> set[MatchKey]:
        rows = self.connection.execute(
            "SELECT seats, series_seed, game_index FROM matches WHERE env = ? AND params = ?",
            (env, params),
        )
        return {
            MatchKey(env, params, tuple(json.loads(seats)), series_seed, game_index)
            for seats, series_seed, game_index in rows
        }

    def results(self, env: str | None = None, params: str | None = None) -> list[MatchResult]:
        """Every stored match (of one env and params when given), in insertion order."""
        return [match.result for match in self.stored_matches(env, params)]

    def stored_matches(
        self, env: str | None = None, params: str | None = None, match_id: int | None = None
    ) -> list[StoredMatch]:
        """:meth:`results` with each match's row id and end time (one match: ``match_id``)."""
        query = (
            "SELECT id, env, params, seats, series_seed, game_index, env_seed, returns, seconds, "
            "finished_at, actions FROM matches"
        )
        arguments: list[Any] = []
        clauses = []
        for column, value in (("env", env), ("params", params), ("id", match_id)):
            if value is not None:
                clauses.append(f"{column} = ?")
                arguments.append(value)
        if clauses:
            query += " WHERE " + " AND ".join(clauses)
        query += " ORDER BY id"
        return [
            StoredMatch(
                row[0],
                MatchResult(
                    MatchKey(row[1], row[2], tuple(json.loads(row[3])), row[4], row[5]),
                    row[6],
                    tuple(json.loads(row[7])),
                    row[8],
                    _actions_from_json(row[10]),
                ),
                row[9],
            )
            for row in self.connection.execute(query, arguments)
        ]

    def env_variants(self) -> list[tuple[str, str, int]]:
        """``(env, params, number of matches)`` for every env variant in the store."""
        return list(
            self.connection.execute(
                "SELECT env, params, COUNT(*) FROM matches "
                "GROUP BY env, params ORDER BY env, params"
            )
        )

    # ---- exploitability -------------------------------------------------------------
    def set_exploitability(self, env: str, params: str, agent: str, value: float) -> None:
        with self._transaction():
            self.connection.execute(
                "INSERT OR REPLACE INTO exploitability VALUES (?, ?, ?, ?, ?)",
                (env, params, agent, float(value), _utc_now()),
            )

    def exploitability(self, env: str, params: str) -> dict[str, float]:
        rows = self.connection.execute(
            "SELECT agent, exploitability FROM exploitability WHERE env = ? AND params = ?",
            (env, params),
        )
        return dict(rows)

    # ---- the ranking a run chose ("elo" or "mean-return"), which --show keeps ---------
    def set_rank_by(self, env: str, params: str, rank_by: str) -> None:
        with self._transaction():
            self.connection.execute(
                "INSERT OR REPLACE INTO rankings VALUES (?, ?, ?)", (env, params, rank_by)
            )

    def rank_by(self, env: str, params: str) -> str | None:
        """The ranking the last evaluation of this variant used (None: none recorded)."""
        row = self.connection.execute(
            "SELECT rank_by FROM rankings WHERE env = ? AND params = ?", (env, params)
        ).fetchone()
        return None if row is None else row[0]

    def _transaction(self):
        return _Transaction(self.connection)


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on error) on an autocommit connection."""

    def __init__(self, connection: sqlite3.Connection):
        self.connection = connection

    def __enter__(self):
        self.connection.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type, exc, traceback):
        self.connection.execute("ROLLBACK" if exc_type else "COMMIT")
        return False
