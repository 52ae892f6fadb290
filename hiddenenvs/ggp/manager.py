"""A GGP game manager: runs one match between players reachable over HTTP, with clocks,
and stores the match record.

    python -m hiddenenvs.ggp.manager --rules connectFour.kif \\
        --players http://127.0.0.1:9147 http://127.0.0.1:9148 \\
        --start-clock 10 --play-clock 2 --out match.json

Players take the sheet's roles in declaration order (``random`` is played by the manager,
uniformly, from its seeded generator). The manager sends START with the rule sheet and the
clocks, then one PLAY per step to every player at once (GDL-I: every role's previous move;
GDL-II, for sheets with ``sees`` rules: the turn, the player's own last move and its
percepts, as the GDL-II protocol does, see :mod:`hiddenenvs.ggp.player`), and STOP at the
end.

Clocks and failures. A player has the play clock plus ``--grace`` (default 0.2 s, the
network's allowance) to answer; an answer later than that, no answer (a player that died:
connection refused or reset), an HTTP error, text that is not one KIF term, a move the
role can never make, or a move illegal in this state: the manager plays a **random legal
move** for that role (drawn from its seeded generator, as ggp-base's manager does) and
records why. A START that fails is recorded the same way; the manager keeps sending that
player its messages (a player may recover). Every request has its own timeout, so a player
that never answers costs one clock per step, never a hang.

The record (``--out``, JSON, written atomically: a temporary file renamed over the target)
holds the match id, the sheet's path and SHA-256, the roles and their players, the clocks,
the seed, every step (per role: the move played, the player's reply, the seconds it took,
and the fallback reason or null), the final goals, and the start and stop replies.
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np

from hiddenenvs.files import atomic_write
from hiddenenvs.ggp.kif import MessageError, read_message, to_kif
from hiddenenvs.ggp.rules import Codec, load_sheet_game

RECORD_FORMAT = "hiddenenvs-ggp-match-v1"
DEFAULT_GRACE_SECONDS = 0.2
FALLBACK = "random legal move (manager's seeded generator)"


def post(url: str, message: str, timeout: float) -> tuple[str | None, float, str | None]:
    """(reply, seconds, error): POST ``message`` to ``url``, waiting at most ``timeout`` s."""
    parts = urlsplit(url)
    start = time.monotonic()
    if not parts.hostname:
        return None, 0.0, f"no host in the player URL {url!r}"
    connection = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=timeout)
    try:
        body = message.encode("utf-8")
        connection.request(
            "POST",
            parts.path or "/",
            body=body,
            headers={"Content-Type": "text/acl", "Content-Length": str(len(body))},
        )
        response = connection.getresponse()
        text = response.read(1_000_000).decode("utf-8", errors="replace")
        seconds = time.monotonic() - start
        if seconds > timeout:  # the socket timeout bounds each read, not the whole exchange
            return text, seconds, f"answered after {seconds:.3f} s, later than {timeout:.2f} s"
        if response.status != 200:
            return text, seconds, f"HTTP {response.status}: {text[:200]}"
        return text, seconds, None
    except TimeoutError:
        return None, time.monotonic() - start, f"no answer within {timeout:.2f} s"
    except OSError as error:  # refused, reset: the player is gone
        return None, time.monotonic() - start, f"{type(error).__name__}: {error}"
    finally:
        connection.close()


class Manager:
    """One match (module docstring). ``run()`` plays it and returns the record."""

    def __init__(
        self,
        rules: str | Path,
        players: list[str],
        start_clock: float = 10.0,
        play_clock: float = 2.0,
        seed: int = 0,
        grace: float = DEFAULT_GRACE_SECONDS,
        max_steps: int = 1000,
        match_id: str | None = None,
    ):
        if not start_clock > 0 or not play_clock > 0:
            raise ValueError(f"clocks must be positive, got start {start_clock}, play {play_clock}")
        self.rules_path = Path(rules)
        self.rules_text = self.rules_path.read_text(encoding="utf-8")
        self.game = load_sheet_game(self.rules_path)
        self.codec = Codec(self.game)
        self.net = self.game.propnet
        roles = self.game.player_roles
        if len(players) != len(roles):
            raise ValueError(
                f"{self.rules_path.name} has {len(roles)} roles for players "
                f"({[self.codec.role_names[r] for r in roles]}), got {len(players)} URLs"
            )
        for url in players:
            parts = urlsplit(url)
            if parts.scheme != "http" or not parts.hostname:
                raise ValueError(f"player URL {url!r}: expected http://host:port/")
        self.players = dict(zip(roles, players))
        self.start_clock, self.play_clock, self.grace = start_clock, play_clock, grace
        self.max_steps = max_steps
        self.rng = np.random.default_rng(seed)
        self.seed = seed
        self.match_id = match_id or f"hiddenenvs-{uuid.uuid4().hex[:12]}"
        self.gdl_ii = self.net.has_sees

    def _broadcast(self, messages: dict[int, str], timeout: float) -> dict[int, tuple]:
        with ThreadPoolExecutor(max_workers=len(messages)) as pool:
            futures = {
                role: pool.submit(post, self.players[role], text, timeout)
                for role, text in messages.items()
            }
            return {role: future.result() for role, future in futures.items()}

    def _move_of(
        self, role: int, reply: str | None, error: str | None, legal
    ) -> tuple[int, str | None]:
        """(move index, fallback reason or None) for a player's reply."""
        if error is None and reply is not None:  # post() gives a reply whenever no error
            try:
                move = self.codec.move_index(role, to_kif(read_message(reply)))
                if move in legal:
                    return move, None
                error = f"illegal move {reply.strip()!r} here"
            except (MessageError, ValueError) as problem:
                error = f"garbage: {problem}"
        return legal[int(self.rng.integers(len(legal)))], error

    def run(self) -> dict:
        net, codec = self.net, self.codec
        names = codec.role_names
        record = {
            "format": RECORD_FORMAT,
            "match_id": self.match_id,
            "rules": str(self.rules_path),
            "rules_sha256": hashlib.sha256(self.rules_text.encode()).hexdigest(),
            "gdl_ii": self.gdl_ii,
            "roles": names,
            "players": {names[r]: url for r, url in self.players.items()},
            "start_clock": self.start_clock,
            "play_clock": self.play_clock,
            "grace": self.grace,
            "seed": self.seed,
            "fallback": FALLBACK,
            "steps": [],
        }
        rules = " ".join(to_kif(sentence) for sentence in read_message(f"(\n{self.rules_text}\n)"))
        starts = self._broadcast(
            {
                r: f"(start {self.match_id} {names[r]} ({rules}) "
                f"{self.start_clock:g} {self.play_clock:g})"
                for r in self.players
            },
            self.start_clock + self.grace,
        )
        record["start"] = {
            names[r]: _reply_record(reply, seconds, error, "ready")
            for r, (reply, seconds, error) in starts.items()
        }
        state = net.initial_state
        last, percepts = None, None
        for turn in range(self.max_steps + 1):
            info = net.evaluate(state)
            if info.terminal or turn == self.max_steps:
                break
            net.check_playable(state, info)
            messages = {
                r: self._play_message("play", turn, r, last, percepts) for r in self.players
            }
            replies = self._broadcast(messages, self.play_clock + self.grace)
            joint, step = [0] * len(names), {}
            for role, (reply, seconds, error) in replies.items():
                joint[role], reason = self._move_of(role, reply, error, info.legal[role])
                step[names[role]] = {
                    "move": codec.move_text(role, joint[role]),
                    "reply": reply,
                    "seconds": round(seconds, 4),
                    "fallback": reason,
                }
            if self.game.random_role is not None:
                legal = info.legal[self.game.random_role]
                joint[self.game.random_role] = legal[int(self.rng.integers(len(legal)))]
                step[names[self.game.random_role]] = {
                    "move": codec.move_text(self.game.random_role, joint[self.game.random_role])
                }
            record["steps"].append({"turn": turn, "moves": step})
            state, percepts = net.transition(state, tuple(joint))
            last = joint
        info = net.evaluate(state)
        record["terminal"] = bool(info.terminal)
        record["goals"] = {
            names[r]: (info.goals[r][0] if len(info.goals[r]) == 1 else None) for r in self.players
        }
        stops = self._broadcast(
            {
                r: self._play_message("stop", len(record["steps"]), r, last, percepts)
                for r in self.players
            },
            self.play_clock + self.grace,
        )
        record["stop"] = {
            names[r]: _reply_record(reply, seconds, error, "done")
            for r, (reply, seconds, error) in stops.items()
        }
        return record

    def _play_message(self, kind: str, turn: int, role: int, last, percepts) -> str:
        codec = self.codec
        if self.gdl_ii:
            if last is None:
                return f"({kind} {self.match_id} {turn} nil nil)"
            seen = codec.percept_texts(role, percepts[role])
            return (
                f"({kind} {self.match_id} {turn} {codec.move_text(role, last[role])} "
                f"{'(' + ' '.join(seen) + ')' if seen else 'nil'})"
            )
        if last is None:
            return f"({kind} {self.match_id} nil)"
        moves = " ".join(codec.move_text(r, m) for r, m in enumerate(last))
        return f"({kind} {self.match_id} ({moves}))"


def _reply_record(reply, seconds, error, expected) -> dict:
    if error is None and (reply or "").strip().lower() != expected:
        error = f"expected {expected!r}, got {(reply or '')[:80]!r}"
    return {"reply": reply, "seconds": round(seconds, 4), "error": error}


def write_record(record: dict, path: str | Path) -> None:
    """The record as JSON at ``path``, atomically (temporary file, then rename)."""
    data = json.dumps(record, indent=1).encode("utf-8")
    atomic_write(path, lambda stream: stream.write(data))


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rules", required=True, help="the rule sheet (.kif / .gdl)")
    parser.add_argument(
        "--players",
        nargs="+",
        required=True,
        metavar="URL",
        help="one http:// URL per role (random excluded), in role order",
    )
    parser.add_argument("--start-clock", type=float, default=10.0, help="seconds (default 10)")
    parser.add_argument("--play-clock", type=float, default=2.0, help="seconds (default 2)")
    parser.add_argument(
        "--grace",
        type=float,
        default=DEFAULT_GRACE_SECONDS,
        help="network allowance beyond the play clock (default 0.2 s)",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="the manager's generator (fallbacks, random)"
    )
    parser.add_argument("--max-steps", type=int, default=1000, help="steps before the match is cut")
    parser.add_argument("--match-id", default=None)
    parser.add_argument("--out", default=None, help="where to write the JSON record")
    args = parser.parse_args(argv)
    manager = Manager(
        args.rules,
        args.players,
        args.start_clock,
        args.play_clock,
        args.seed,
        args.grace,
        args.max_steps,
        args.match_id,
    )
    record = manager.run()
    if args.out:
        write_record(record, args.out)
    fallbacks = sum(
        move.get("fallback") is not None
        for step in record["steps"]
        for move in step["moves"].values()
    )
    print(
        f"{record['match_id']}: {len(record['steps'])} steps, goals {record['goals']}, "
        f"{fallbacks} fallback moves" + (f", record {args.out}" if args.out else "")
    )
    return record


if __name__ == "__main__":
    main()
