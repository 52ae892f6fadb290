"""A general game player over HTTP: an agent plays any GDL or GDL-II rule sheet a game
manager sends it.

This module is the protocol; the agent comes from the factory a :class:`GgpPlayer` is
given, ``make_agent(game, player, seconds, seed)`` (``seconds``: the time to move, the
play clock minus the margin). The command that serves the agents of this repository by
spec lives with them (:mod:`agents.ggp_player`)::

    python -m agents.ggp_player --port 9147 --player uct
    python -m agents.ggp_player --port 9149 --player ismcts      # GDL-II matches too

The player answers HTTP POSTs whose body is one KIF message (content type ``text/acl``):

=============================================================  ===========================
message                                                        answer
=============================================================  ===========================
``(info)``                                                     ``((name <name>) (status available))``
``(start <id> <role> (<rules>) <startclock> <playclock>)``     ``ready`` once the sheet is
                                                               read and grounded
``(play <id> nil)``, ``(play <id> (<move> ...))``              a move, e.g. ``(mark 1 1)``
GDL-II: ``(play <id> <turn> <lastmove> <percepts>)``           a move
``(stop <id> ...)`` (either form)                              ``done``
``(abort <id>)``                                               ``aborted``
=============================================================  ===========================

GDL-I PLAY messages carry every role's previous move (``nil`` on the first); GDL-II ones
(the GDL-II protocol of the Dresden GGP server, Thielscher 2010) carry the turn (0 for
the first PLAY, then +1), the move the manager executed for this player last turn, and
this player's percepts from the ``sees`` rules (``nil`` on the first). The player keeps
the true state of a GDL-I match and, for GDL-II, its information-state key
(:mod:`hiddenenvs.envs.gdl.game`), and gives its agent the seat's
:class:`~hiddenenvs.game.SeatView`, as in ``evaluate.py``. An agent with a ``deadline``
attribute gets the instant its move is due (``received + play clock - margin``, by
``time.monotonic()``) before each move.

Rule sheets arrive as user input: the START message's sheet is read, validated and
grounded with the same limits as any sheet (``max_instances``); a sheet that fails
is answered with HTTP 400 and the GDL error, and the match is not started. Messages larger
than :data:`hiddenenvs.ggp.kif.MAX_MESSAGE_BYTES` are refused (413).
"""

from __future__ import annotations

import ctypes
import gc
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, cast

import numpy as np

from hiddenenvs.envs.gdl import GdlError, GdlGroundingLimitError
from hiddenenvs.game import CHANCE, Game, sample_chance_outcome
from hiddenenvs.ggp.fallback import BeliefReasonerMatch, ReasonerMatch, reasoner_match
from hiddenenvs.ggp.kif import MAX_MESSAGE_BYTES, MessageError, is_nil, read_message, to_kif
from hiddenenvs.ggp.rules import Codec, load_sheet_game, own_step_entry, write_sheet

DEFAULT_MARGIN_SECONDS = 0.5
LIVE_STATE_ATTEMPTS = 100  # posterior draws tried before a PLAY is taken to follow the end
# Limits (docs/guides/limits.md): a client that stalls mid-request is cut off; at most
# MAX_MATCHES matches are held and one START reads and grounds its sheet at a time, within
# its start clock; a match that hears nothing for MATCH_IDLE_PLAY_CLOCKS play clocks (and at
# least MATCH_IDLE_SECONDS) is dropped, its memory released as at STOP and ABORT.
READ_TIMEOUT_SECONDS = 10.0
# The share of a START's clock the propnet may take to ground and compile; a sheet it cannot
# build in it is played through the reference reasoner (hiddenenvs.ggp.fallback), which
# needs the rest to read the sheet.
PROPNET_SHARE_OF_START_CLOCK = 0.6
MAX_MATCHES = 4
MATCH_IDLE_PLAY_CLOCKS = 10
MATCH_IDLE_SECONDS = 60.0


def _find_malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None on another C library or system."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None


_MALLOC_TRIM = _find_malloc_trim()


def return_memory_to_the_system() -> None:
    """Hand freed memory back to the system after a match's sheet is dropped or refused.

    Each START reads and grounds its sheet in a thread of its own, and glibc keeps a
    thread's malloc arena once it is freed: 10 STARTs refused by the grounding limit took
    the player from 47 to 167 MB (issue 48 saw 237 to 749 MB over 18), with no Python
    object left behind. ``malloc_trim`` returns it (a no-op elsewhere), after a collection
    of the young generations, where a refused sheet's cycles are.

    Not a full collection: it holds the interpreter for as long as the process is large
    (4.1 s with 3 million objects, at load 20), and every thread of the process waits on
    it; in a test process, the STOP answers of two players came 2 to 7 s late, past the
    manager's play clock plus grace (issue 48's flaky match test). Older cycles are left
    to the interpreter's own full collections."""
    gc.collect(1)
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


# make_agent(game, player, seconds to move, seed) -> an agent with ``act(tensor, mask, view)``
AgentFactory = Callable[[Game, int, float, "int | None"], Any]


class ProtocolError(ValueError):
    """A message this player cannot act on (answered with HTTP 400 and the reason)."""


class BusyError(ProtocolError):
    """A START refused for now: too many matches, or another sheet still grounding (HTTP 503)."""


class Match:
    """One match in progress: the game, this player's seat and what it knows so far."""

    def __init__(
        self,
        match_id: str,
        role_name: str,
        rules_text: str,
        play_clock: float,
        make_agent: AgentFactory,
        seed: int | None,
        margin: float,
        max_instances: int,
        directory: Path,
        load_seconds: float = 0.0,
    ):
        self.match_id = match_id
        self.directory = Path(tempfile.mkdtemp(prefix="match-", dir=directory))
        self.sheet_path = write_sheet(rules_text, self.directory, match_id)
        self.last_heard = time.monotonic()
        try:
            self.game = load_sheet_game(self.sheet_path, max_instances, load_seconds)
            self.codec = Codec(self.game)
            self.role = self.codec.role_index(role_name)
            if self.role == self.game.random_role:
                raise ProtocolError(
                    "the role 'random' is played by the game manager, not by a player"
                )
        except BaseException:
            self.close()  # a refused sheet or role leaves nothing behind
            raise
        self.player = self.game.player_roles.index(self.role)
        self.play_clock = play_clock
        self.margin = margin
        self.gdl_ii = self.game.propnet.has_sees
        self.state = self.game.new_initial_state()  # GDL-I: the true state
        self.key = self.state.information_state_key(self.player)  # GDL-II: what we know
        self.steps = 0  # GDL steps played so far
        self.previous_key: tuple | None = None  # GDL-II: our key before the last step
        self.last_move: int | None = None  # GDL-II: our move in the last step
        # GDL-I: the moves that ended the game, when a PLAY brought them (it is answered
        # with an error, "expected stop"; the STOP that repeats them is then answered).
        self.final_moves: list | None = None
        self.rng = np.random.default_rng(seed)
        self.agent = make_agent(self.game, self.player, max(0.05, play_clock - margin), seed)
        self.lock = threading.Lock()

    # ---- what the manager tells us -------------------------------------------------------
    def observe_joint_move(self, moves: list) -> None:
        """GDL-I: every role's move of the last step, in role order."""
        net = self.game.propnet
        if len(moves) != len(net.roles):
            raise ProtocolError(f"expected {len(net.roles)} moves (one per role), got {len(moves)}")
        state = self.state
        if state.is_terminal() and moves == self.final_moves:
            return  # the STOP repeats the moves of the PLAY that ended the game
        indices = [self.codec.move_index(role, to_kif(move)) for role, move in enumerate(moves)]
        if state.steps > self.steps:  # the model played this step by itself (nobody chose)
            self.steps += 1
            return
        if self.game.random_role is not None and state.current_player() == CHANCE:
            state.apply_action(indices[self.game.random_role])
        if state.steps == self.steps:
            state.apply_actions([indices[role] for role in self.game.player_roles])
        self.steps += 1
        if state.is_terminal():
            self.final_moves = moves

    def observe_percepts(self, last_move, percepts) -> None:
        """GDL-II: our move of the last step and our percepts."""
        if is_nil(last_move):
            raise ProtocolError("a PLAY after the first must name this player's last move")
        move = self.codec.move_index(self.role, to_kif(last_move))
        seen = () if is_nil(percepts) else percepts
        if isinstance(seen, str):
            raise ProtocolError(f"percepts must be a list or nil, got {seen!r}")
        indices = tuple(self.codec.percept_index(self.role, to_kif(p)) for p in seen)
        entries = ((None, None),) if self.game.random_role is not None else ()
        self.previous_key, self.last_move = self.key, move
        self.key += entries + (own_step_entry(self.game, self.player, move, indices),)
        self.steps += 1

    # ---- our move -------------------------------------------------------------------------
    def choose(self, received: float) -> str:
        """Our move in KIF, decided by ``received + play clock - margin``."""
        state = self._live_state()
        if state.steps > self.steps:  # nobody chooses in this step: the model played it already
            return self.codec.move_text(self.role, state.own_history(self.player)[self.steps][0])
        legal = state.legal_actions(self.player)
        if len(legal) == 1:
            return self.codec.move_text(self.role, legal[0])
        view = state.seat_view(self.player)
        if hasattr(self.agent, "deadline"):
            self.agent.deadline = received + self.play_clock - self.margin
        # The agents here read the view (search) or the mask (random), never the tensor.
        action, _ = self.agent.act(
            np.zeros(1, dtype=np.float32), state.legal_actions_mask(self.player), view
        )
        return self.codec.move_text(self.role, int(action))

    def _live_state(self):
        """The state to search from for this PLAY.

        A PLAY says the game is not over, which a GDL-II key alone may not tell (in blind
        tic-tac-toe the opponent can complete a line unseen), so sampled states that are
        terminal are rejected: a draw from the posterior given the key and "not over".
        """
        for _ in range(LIVE_STATE_ATTEMPTS if self.gdl_ii else 1):
            state = self._sampled_state() if self.gdl_ii else self.state.clone()
            if state.current_player() == CHANCE:  # random moves with us: its entry carries nothing
                state.apply_action(sample_chance_outcome(state, self.rng))
            if state.steps > self.steps or not state.is_terminal():
                return state
        raise ProtocolError(
            "play: the game is over (every state consistent with our moves and "
            "percepts is terminal); expected stop"
        )

    def _sampled_state(self):
        """A state consistent with our GDL-II key, drawn from the belief posterior.

        The model plays a step in which nobody (``random`` included) has a choice by itself,
        so after such a step's predecessor no state has our key: then the state is rebuilt
        from the previous key, our last move and any moves of the others, which plays the
        forced step too; our move in it is forced, the same in every consistent state (a
        GDL-II player knows its legal moves).
        """
        from hiddenenvs.beliefs import sample_history

        try:
            return self.game.state_from_history(
                sample_history(self.game, self.player, self.key, self.rng)
            )
        except ValueError as error:
            if self.previous_key is None:
                raise
            no_state = error
        state = self.game.state_from_history(
            sample_history(self.game, self.player, self.previous_key, self.rng)
        )
        if state.current_player() == CHANCE:
            state.apply_action(sample_chance_outcome(state, self.rng))
        if state.steps < self.steps:  # the previous step: play our move in it
            state.apply_actions(
                [
                    self.last_move
                    if p == self.player
                    else int(self.rng.choice(legal))
                    if (legal := state.legal_actions(p))
                    else -1
                    for p in range(self.game.info.num_players)
                ]
            )
        if state.steps <= self.steps:  # this step is not forced: our key is inconsistent
            raise no_state
        return state

    def close(self) -> None:
        from hiddenenvs.envs.gdl.propnet import forget_sheet

        forget_sheet(self.sheet_path)  # the compiled sheet leaves the cache with the match
        shutil.rmtree(self.directory, ignore_errors=True)


class GgpPlayer:
    """The player's matches and the answer to each message (transport-free, for tests)."""

    def __init__(
        self,
        make_agent: AgentFactory,
        name: str,
        seed: int | None = None,
        margin: float = DEFAULT_MARGIN_SECONDS,
        max_instances: int | None = None,
    ):
        from hiddenenvs.envs.gdl.ground import DEFAULT_MAX_INSTANCES

        self.make_agent = make_agent
        self.seed = seed
        self.margin = margin
        self.max_instances = max_instances or DEFAULT_MAX_INSTANCES
        self.name = name
        self.matches: dict[str, Match | ReasonerMatch] = {}
        self.directory = Path(tempfile.mkdtemp(prefix="hiddenenvs-ggp-"))
        self.lock = threading.Lock()
        self.loading = threading.Lock()  # held while a START's sheet loads, past its answer too

    def handle(self, text: str, received: float | None = None) -> str:
        """The answer to one message; ProtocolError / MessageError / GdlError when it is bad."""
        received = time.monotonic() if received is None else received
        message = read_message(text)
        if isinstance(message, str):
            message = [message]
        if not message or not isinstance(message[0], str):
            raise ProtocolError(
                f"a message starts with its name (info, start, play, stop, abort): {text[:80]!r}"
            )
        kind, arguments = message[0].lower(), message[1:]
        self._drop_idle_matches(received)
        if kind == "info":
            return f"((name {self.name}) (status available))"
        if kind == "start":
            return self._start(arguments, received)
        if kind in ("play", "stop", "abort"):
            if not arguments or not isinstance(arguments[0], str):
                raise ProtocolError(f"{kind}: expected a match id, got {to_kif(message)[:80]!r}")
            with self.lock:
                match = self.matches.get(arguments[0])
            if match is None:
                raise ProtocolError(
                    f"{kind}: no match {arguments[0][:80]!r} here (started: {sorted(self.matches)})"
                )
            match.last_heard = received
            if kind == "abort":
                self._end(match)
                return "aborted"
            with match.lock:
                if kind == "stop":
                    try:
                        self._update(match, kind, arguments[1:])
                    finally:  # a STOP ends the match, whatever its moves say
                        self._end(match)
                    return "done"
                self._update(match, kind, arguments[1:])
                return match.choose(received)
        raise ProtocolError(f"unknown message {kind!r} (expected info, start, play, stop, abort)")

    def _start(self, arguments, received: float) -> str:
        if len(arguments) != 5 or not all(
            isinstance(a, str) for a in (arguments[0], arguments[1], arguments[3], arguments[4])
        ):
            raise ProtocolError(
                "start: expected (start <id> <role> (<rules>) <startclock> <playclock>)"
            )
        match_id, role, rules, start_clock, play_clock = arguments
        try:
            play_seconds, start_seconds = float(play_clock), float(start_clock)
        except ValueError:
            raise ProtocolError(
                f"start: the clocks must be numbers, got {start_clock[:20]!r} and "
                f"{play_clock[:20]!r}"
            ) from None
        if not 0 < play_seconds < 1e6 or not 0 < start_seconds < 1e6:
            raise ProtocolError(
                f"start: the clocks must be positive seconds, got {start_clock[:20]!r} "
                f"and {play_clock[:20]!r}"
            )
        if isinstance(rules, str):
            raise ProtocolError("start: the rules must be a list of sentences")
        with self.lock:
            if match_id not in self.matches and len(self.matches) >= MAX_MATCHES:
                raise BusyError(
                    f"start: {MAX_MATCHES} matches in progress (the limit); stop or abort one first"
                )
        rules_text = "\n".join(to_kif(sentence) for sentence in rules)
        match = self._load_within(
            received + start_seconds - self.margin, match_id, role, rules_text, play_seconds
        )
        with self.lock:
            previous = self.matches.pop(match_id, None)
            self.matches[match_id] = match
        if previous is not None:
            previous.close()
        return "ready"

    def _load_within(
        self, deadline: float, match_id: str, role: str, rules_text: str, play_seconds: float
    ) -> Match | ReasonerMatch:
        """The match, its sheet read and grounded in a thread of its own by ``deadline``
        (the start clock less the margin; the GDL reader stops at it too, its
        ``max_load_seconds``), one START at a time. A load still running at the deadline is
        answered with a ProtocolError; when it ends, its match is closed (nothing kept) and
        the next START may load."""
        if not self.loading.acquire(blocking=False):
            raise BusyError(
                "start: another START's rule sheet is still being read and grounded "
                "(one at a time); try again"
            )
        outcome: dict[str, Any] = {}
        answered = threading.Event()

        def load() -> None:
            result: dict[str, Any] = {}
            try:
                # The propnet gets a share of the start clock; a sheet it cannot ground in
                # it (or within max_instances) is played through the reference reasoner.
                propnet_seconds = PROPNET_SHARE_OF_START_CLOCK * (deadline - time.monotonic())
                result["match"] = Match(
                    match_id,
                    role,
                    rules_text,
                    play_seconds,
                    self.make_agent,
                    self.seed,
                    self.margin,
                    self.max_instances,
                    self.directory,
                    max(0.05, propnet_seconds),
                )
            except GdlGroundingLimitError as error:
                try:
                    result["match"] = reasoner_match(
                        match_id, role, rules_text, play_seconds, self.margin, self.seed
                    )
                except BaseException as fallback_error:  # noqa: BLE001 - as below
                    result["error"] = ProtocolError(
                        f"start: {error}; and the reference reasoner cannot play it "
                        f"either: {fallback_error}"
                    )
            except BaseException as error:  # noqa: BLE001 - handed to the answering thread
                result["error"] = error
            finally:
                with self.lock:
                    late = answered.is_set()
                    if not late:
                        outcome.update(result)
                if late and "match" in result:
                    result["match"].close()
                result.clear()
                if "match" not in outcome:  # refused or late: nothing of it is kept
                    return_memory_to_the_system()
                self.loading.release()

        worker = threading.Thread(target=load, name=f"ggp-start-{match_id[:40]}", daemon=True)
        worker.start()
        worker.join(max(0.0, deadline - time.monotonic()))
        with self.lock:
            answered.set()
            outcome = dict(outcome)
        if not outcome:
            raise ProtocolError(
                f"start: the rule sheet was not read and grounded within the start "
                f"clock less {self.margin:g} s; match {match_id[:80]!r} not started"
            )
        if "error" in outcome:
            raise outcome["error"]
        return outcome["match"]

    def _drop_idle_matches(self, now: float) -> None:
        """Close the matches nothing was heard of for their idle limit (module constants)."""
        with self.lock:
            idle = [
                match
                for match in self.matches.values()
                if now - match.last_heard
                > max(MATCH_IDLE_SECONDS, MATCH_IDLE_PLAY_CLOCKS * match.play_clock)
            ]
        for match in idle:
            self._end(match)

    def _update(self, match: Match | ReasonerMatch, kind: str, arguments: list) -> None:
        if (
            isinstance(match, (Match, BeliefReasonerMatch)) and match.gdl_ii and len(arguments) == 3
        ):  # <turn> <lastmove> <percepts>
            turn = arguments[0]
            if not (isinstance(turn, str) and turn.isdigit()):
                raise ProtocolError(f"{kind}: the turn must be a number, got {to_kif(turn)!r}")
            if int(turn) == match.steps + 1:
                match.observe_percepts(arguments[1], arguments[2])
            elif kind == "stop" and int(turn) == match.steps:
                pass  # the PLAY that ended the game brought this turn already
            elif int(turn) != 0 or match.steps != 0:
                raise ProtocolError(
                    f"{kind}: turn {turn}, but this player has seen {match.steps} turns"
                )
            return
        if len(arguments) != 1:
            raise ProtocolError(
                f"{kind}: expected ({kind} <id> <moves>)"
                + (" or (<id> <turn> <lastmove> <percepts>)" if match.gdl_ii else "")
            )
        if match.gdl_ii:
            if not is_nil(arguments[0]):
                raise ProtocolError(
                    f"{kind}: a GDL-II match sends (<id> <turn> <lastmove> <percepts>)"
                )
            return
        if not is_nil(arguments[0]):
            if isinstance(arguments[0], str):
                raise ProtocolError(f"{kind}: the moves must be a list, got {arguments[0]!r}")
            match.observe_joint_move(arguments[0])

    def _end(self, match: Match | ReasonerMatch) -> None:
        with self.lock:
            self.matches.pop(match.match_id, None)
        match.close()
        return_memory_to_the_system()

    def close(self) -> None:
        for match in list(self.matches.values()):
            self._end(match)
        shutil.rmtree(self.directory, ignore_errors=True)


class _Handler(BaseHTTPRequestHandler):
    player: GgpPlayer
    timeout = READ_TIMEOUT_SECONDS  # per connection: a stalled client is cut off

    def do_POST(self):  # noqa: N802 (the http.server API)
        received = time.monotonic()
        declared = self.headers.get("Content-Length", "0").strip()
        if not declared.isdigit() or not declared.isascii():
            self.close_connection = True  # the body's end is unknown
            self._answer(
                400, f"Content-Length must be a non-negative integer, got {declared[:40]!r}"
            )
            return
        length = int(declared[:12]) if len(declared) <= 12 else MAX_MESSAGE_BYTES + 1
        if length > MAX_MESSAGE_BYTES:
            self.close_connection = True
            self._answer(413, f"message of {length:,} bytes; the limit is {MAX_MESSAGE_BYTES:,}")
            return
        try:
            body = self.rfile.read(length)
        except OSError:  # TimeoutError: the client stalled; nobody waits for an answer
            self.close_connection = True
            return
        try:
            text = body.decode("utf-8")
            self._answer(200, self.player.handle(text, received))
        except BusyError as error:
            self._answer(503, str(error))
        except (UnicodeDecodeError, MessageError, ProtocolError) as error:
            self._answer(400, str(error))
        except (GdlError, ValueError) as error:  # a bad sheet, move or percept
            self._answer(400, f"{type(error).__name__}: {str(error)[:2000]}")
        except Exception as error:  # a search that failed: the manager plays for us
            self._answer(500, f"{type(error).__name__}: {str(error)[:2000]}")

    def _answer(self, status: int, body: str) -> None:
        data = body.encode("utf-8")
        try:
            self.send_response(status)
            self.send_header("Content-Type", "text/acl")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Access-Control-Allow-Origin", "*")
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # BrokenPipeError, ConnectionResetError, TimeoutError
            self.close_connection = True  # the manager stopped waiting (past the clock) or stalled

    def log_message(self, format, *args):  # noqa: A002 (the http.server API): quiet
        pass


def serve(player: GgpPlayer, host: str = "127.0.0.1", port: int = 9147) -> ThreadingHTTPServer:
    """An HTTP server for ``player`` (``port=0``: a free port, ``server.server_address``)."""
    handler = type("Handler", (_Handler,), {"player": player})
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    return server


def run_server(player: GgpPlayer, host: str, port: int) -> None:
    """Serve ``player`` until interrupted (Ctrl-C), then close it."""
    server = serve(player, host, port)
    bound_host, bound_port = cast(tuple[str, int], server.server_address[:2])  # AF_INET
    print(f"{player.name} listening on http://{bound_host}:{bound_port}/", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        player.close()
        sys.stdout.flush()


if __name__ == "__main__":
    sys.exit("the GGP player command serves the agents by spec: python -m agents.ggp_player --help")
