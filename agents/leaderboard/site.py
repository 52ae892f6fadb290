"""The leaderboard as a static site: open ``index.html`` from the file system, no server.

=========================  ====================================================================
Page                       Content
=========================  ====================================================================
``index.html``             every env variant in the store, with its number of matches
``<stem>/index.html``      standings (Elo with 95% interval, mean return, points,
                           exploitability where exact; click a column to sort) and the
                           head-to-head heat map (hover a cell: mean return with its 95%
                           interval, win/draw/loss and the number of games)
``<stem>/agent-<n>.html``  one agent: its spec, file hash, rating, results against each
                           opponent and its matches
``<stem>/match-<id>.html`` one match: seats, seed, returns and, when the store kept its
                           actions, the replay (:mod:`.replay`): step forward and back
                           through the decisions, the true state beside what each seat saw
=========================  ====================================================================

:func:`export_site` writes every page; :class:`LeaderboardServer`
(``hiddenenvs leaderboard serve STORE``) renders each page from the store when it is
asked for, so it is live while an evaluation runs (its index pages reload themselves),
and lets a person play the board's agents (:mod:`.browser_play`).

Everything is computed here, in Python, when the site is written: the replays are
re-simulated and embedded in their pages as JSON, and a few lines of plain JavaScript
(``site_static/site.js``, inlined into each page) step through them, sort the standings and
show the heat map's tooltips. The pages load nothing from the network.
"""

from __future__ import annotations

import functools
import html
import json
import math
import threading
import urllib.parse
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import yaml

from agents.leaderboard.browser_play import HumanGame
from agents.leaderboard.replay import replay
from agents.leaderboard.report import Leaderboard, build_leaderboard
from agents.leaderboard.site_runs import curve_svg, training_run
from agents.leaderboard.specs import HASH_MARK
from agents.leaderboard.store import ResultStore, StoredMatch

STATIC = Path(__file__).resolve().parent / "site_static"


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _number(value: float | None, digits: int = 3) -> str:
    if value is None or not math.isfinite(value):
        return "-"
    return f"{value:.{digits}f}"


def _interval(value: float, low: float, high: float, digits: int = 3) -> str:
    if not (math.isfinite(low) and math.isfinite(high)):
        return f"{value:.{digits}f} (one seed: no interval)"
    return f"{value:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


@functools.cache
def _static(name: str) -> str:
    return (STATIC / name).read_text(encoding="utf-8")


def _page(title: str, body: str, up: str = "") -> str:
    style, script = _static("site.css"), _static("site.js")
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>{_e(title)}</title><style>{style}</style></head><body>"
        f"<nav><a href='{up}index.html'>all boards</a></nav><h1>{_e(title)}</h1>{body}"
        f"<script>{script}</script></body></html>\n"
    )


def _table(header: Sequence[str], rows: Sequence[Sequence[tuple[str, object]]], id_: str) -> str:
    """A sortable table: each cell is ``(html, sort key)``; the key goes in data-sort."""
    head = "".join(f"<th data-column='{i}'>{_e(h)}</th>" for i, h in enumerate(header))
    body = "".join(
        "<tr>" + "".join(f"<td data-sort='{_e(key)}'>{cell}</td>" for cell, key in row) + "</tr>"
        for row in rows
    )
    return f"<table class='sortable' id='{id_}'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


class _Names:
    """Page file names of agents (``agent-<rank>.html``) on one board."""

    def __init__(self, board: Leaderboard):
        self.rank = {name: i + 1 for i, name in enumerate(board.agents)}

    def link(self, agent: str) -> str:
        return f"<a href='agent-{self.rank[agent]}.html'>{_e(agent)}</a>"


def _standings(board: Leaderboard, names: _Names) -> str:
    header = ["rank", "agent", "Elo [95% CI]", "mean return", "games", "points", "exploitability"]
    rows = []
    for rank, s in enumerate(board.standings, 1):
        anchored = s.agent == board.ratings.anchor
        elo = f"{round(s.elo)}" + (
            " (anchor)" if anchored else f" [{round(s.elo_low)}, {round(s.elo_high)}]"
        )
        exploitability = s.exploitability
        rows.append(
            [
                (str(rank), rank),
                (names.link(s.agent), s.agent),
                (_e(elo), s.elo),
                (_number(s.mean_return), s.mean_return),
                (str(s.games), s.games),
                (_number(s.points), s.points),
                (_number(exploitability, 4), "" if exploitability is None else exploitability),
            ]
        )
    ranked = "Elo" if board.rank_by == "elo" else "mean return against the field"
    return (
        f"<p>Ranked by {ranked}; Elo anchored at <code>{_e(board.ratings.anchor)}</code> = "
        f"{board.ratings.anchor_elo:.0f}; intervals are 95%. Click a column header to sort. "
        "Exploitability is exact (a best response over the whole game) and shown only "
        "where the game is small enough.</p>" + _table(header, rows, "standings")
    )


def _colour(value: float, limit: float) -> str:
    """A cell's style: red (losing) to white to blue (winning), for a mean return in
    [-limit, limit]."""
    share = max(-1.0, min(1.0, value / limit)) if limit > 0 else 0.0
    fade = int(255 * (1 - abs(share)))
    text = "#fff" if abs(share) > 0.6 else "#000"  # dark cells get white figures
    background = f"rgb({fade},{fade},255)" if share > 0 else f"rgb(255,{fade},{fade})"
    return f"background:{background};color:{text}"


def _heat_map(board: Leaderboard, names: _Names) -> str:
    agents = board.agents
    limit = max((abs(s.mean_return) for s in board.pairings.values()), default=0.0)
    head = "".join(f"<th title='{_e(a)}'>#{names.rank[a]}</th>" for a in agents)
    rows = []
    for agent in agents:
        cells = []
        for opponent in agents:
            summary = board.pairings.get((agent, opponent))
            if summary is None:
                cells.append("<td class='empty'></td>")
                continue
            tip = (
                f"{agent} against {opponent}: mean return "
                f"{_interval(summary.mean_return, summary.mean_return_low, summary.mean_return_high)}"
                f" (95% CI); win {summary.win_rate[0]:.2f}, draw {summary.draw_rate[0]:.2f}, "
                f"loss {summary.loss_rate[0]:.2f}; {summary.games} games"
            )
            cells.append(
                f"<td class='cell' style='{_colour(summary.mean_return, limit)}' "
                f"title='{_e(tip)}' data-tip='{_e(tip)}'>{summary.mean_return:+.2f}</td>"
            )
        rows.append(f"<tr><th>#{names.rank[agent]} {names.link(agent)}</th>{''.join(cells)}</tr>")
    return (
        "<h2>Head to head</h2><p>Mean return of the row agent against the column agent, per "
        "game; hover a cell for its 95% interval and the number of games.</p>"
        f"<table id='heatmap'><thead><tr><th></th>{head}</tr></thead><tbody>{''.join(rows)}"
        "</tbody></table><div id='tooltip' hidden></div>"
    )


def _match_row(match: StoredMatch) -> list[tuple[str, object]]:
    result = match.result
    return [
        (f"<a href='match-{match.id}.html'>{match.id}</a>", match.id),
        (_e(" / ".join(result.key.seats)), " / ".join(result.key.seats)),
        (_e(", ".join(f"{r:+g}" for r in result.returns)), result.returns[0]),
        (
            "yes" if result.actions is not None else "no (stored before replays)",
            result.actions is not None,
        ),
    ]


def _agent_page(board: Leaderboard, names: _Names, agent: str, matches: list[StoredMatch]) -> str:
    standing = next(s for s in board.standings if s.agent == agent)
    spec, _, file_hash = agent.partition(HASH_MARK)
    facts = [
        ("spec", _e(spec)),
        (
            "file hash (sha256, first 16 hex digits)",
            _e(file_hash) if file_hash else "- (names no file)",
        ),
        ("rank", f"{names.rank[agent]} of {len(board.agents)}"),
        (
            "Elo [95% CI]",
            _e(f"{standing.elo:.0f} [{standing.elo_low:.0f}, {standing.elo_high:.0f}]"),
        ),
        ("mean return per game", _number(standing.mean_return)),
        ("games", str(standing.games)),
        ("exploitability", _number(standing.exploitability, 4)),
    ]
    facts_html = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in facts)
    rows = []
    for opponent in board.agents:
        s = board.pairings.get((agent, opponent))
        if s is None:
            continue
        rows.append(
            [
                (names.link(opponent), names.rank[opponent]),
                (str(s.games), s.games),
                (
                    _e(_interval(s.mean_return, s.mean_return_low, s.mean_return_high)),
                    s.mean_return,
                ),
                (_e(_interval(*s.win_rate, digits=2)), s.win_rate[0]),
                (f"{s.draw_rate[0]:.2f}", s.draw_rate[0]),
                (_e(_interval(*s.loss_rate, digits=2)), s.loss_rate[0]),
            ]
        )
    mine = [m for m in matches if agent in m.result.key.seats]
    return (
        f"<p><a href='index.html'>standings</a></p><table class='facts'>{facts_html}</table>"
        + _training_run(agent)
        + "<h2>Against each opponent</h2>"
        + _table(
            ["opponent", "games", "mean return [95% CI]", "win [95% CI]", "draw", "loss [95% CI]"],
            rows,
            "opponents",
        )
        + f"<h2>Matches ({len(mine)})</h2>"
        + _table(["match", "seats", "returns", "replay"], [_match_row(m) for m in mine], "matches")
    )


def _training_run(agent: str) -> str:
    """The agent's training run (:mod:`.site_runs`): its folder, config and learning curve;
    "" for an agent that came from no run."""
    run = training_run(agent)
    if run is None:
        return ""
    problems = "".join(f"<p class='warning'>{_e(problem)}</p>" for problem in run.problems)
    body = f"<h2>Training run</h2><p>Run directory <code id='run-dir'>{_e(run.directory)}</code>"
    if run.config is not None:
        config = run.config
        body += (
            f": {_e((config.get('trainer') or {}).get('name'))} on "
            f"{_e((config.get('env') or {}).get('name'))}, seed {_e(config.get('seed'))}"
        )
    body += ".</p>" + problems
    if run.points:
        last_x, last_y = run.points[-1]
        body += (
            f"<h3>Learning curve</h3><p>{_e(run.metric.replace('_', ' ') if run.metric else '')} "
            f"against {run.unit}, one point per evaluation (metrics.csv); the last: "
            f"{last_y:.4g} after {last_x:,.0f} {run.unit}.</p>{curve_svg(run)}"
        )
    if run.config is not None:
        text = yaml.safe_dump(run.config, sort_keys=False, default_flow_style=None)
        body += f"<h3>Config</h3><pre id='run-config'>{_e(text)}</pre>"
    return body


def _match_page(board: Leaderboard, names: _Names, match: StoredMatch) -> str:
    result = match.result
    seat_links = ", ".join(f"seat {i}: {names.link(a)}" for i, a in enumerate(result.key.seats))
    facts = (
        f"<p><a href='index.html'>standings</a></p><table class='facts'>"
        f"<tr><th>seats</th><td>{seat_links}</td></tr>"
        f"<tr><th>returns</th><td id='stored-returns'>{_e(', '.join(f'{r:+g}' for r in result.returns))}</td></tr>"
        f"<tr><th>env seed</th><td>{result.env_seed}</td></tr>"
        f"<tr><th>series seed, game</th><td>{result.key.series_seed}, {result.key.game_index}</td></tr>"
        f"<tr><th>finished</th><td>{_e(match.finished_at)} ({result.seconds:.3f} s)</td></tr></table>"
    )
    if result.actions is None:
        return facts + (
            "<p class='warning'>This match was stored before the store kept actions: its "
            "numbers count, but it has no replay.</p>"
        )
    try:
        played = replay(board.env, board.params, result.env_seed, result.actions, result.returns)
    except ValueError as error:  # the env changed since: the stored actions do not fit it
        return facts + f"<p class='warning'>No replay: {_e(error)}</p>"
    data = played.to_json()
    data["seat_agents"] = list(result.key.seats)
    warning = (
        ""
        if played.reproduces
        else "<p class='warning'>The re-simulation ended with returns "
        f"{_e(played.final_returns)}, not the stored ones: the env has changed since the match "
        "was played, so this replay is not that match.</p>"
    )
    note = f"<p class='note'>{_e(played.note)}</p>" if played.note else ""
    # "</" cannot end the script element early inside JSON once its "/" is escaped.
    embedded = json.dumps(data).replace("</", "<\\/")
    return (
        facts + warning + note + "<h2>Replay</h2><div id='replay-controls'>"
        "<button id='first'>|&lt;</button><button id='back'>&lt; back</button>"
        "<span id='position'></span>"
        "<button id='forward'>forward &gt;</button><button id='last'>&gt;|</button>"
        " <small>(arrow keys step too; <code>#end</code> or <code>#step=N</code> after "
        "the address opens a step)</small></div>"
        "<div id='replay'><div class='column'><h3>Moves</h3><ol id='moves'></ol></div>"
        "<div class='column'><h3>True state</h3><img id='picture' alt='the state, drawn' hidden>"
        "<pre id='true-state'></pre>"
        "<h3>Returns so far</h3><pre id='returns'></pre></div>"
        "<div class='column' id='views'></div></div>"
        f"<script type='application/json' id='replay-data'>{embedded}</script>"
    )


class Site:
    """The site's pages, rendered from the store on demand: :func:`export_site` writes
    them all, ``serve`` renders each as it is asked for (so it is live).

    The boards (standings, fitted Elo) are computed once per ``Site``: a server makes a
    new one per request."""

    def __init__(self, store: ResultStore, anchor: str | None = None, rank_by: str | None = None):
        self.store = store
        self.anchor = anchor
        self.rank_by = rank_by
        self.refresh_seconds: int | None = None  # set: index pages reload themselves
        self.playable = False  # served: a person may play the board's agents
        self._boards: list[tuple[Leaderboard, str, int]] | None = None

    def boards(self) -> list[tuple[Leaderboard, str, int]]:
        """``(board, params_json, number of matches)`` per env variant in the store."""
        if self._boards is not None:
            return self._boards
        boards = []
        for env, params_json, count in self.store.env_variants():
            chosen = self.rank_by or self.store.rank_by(env, params_json) or "elo"
            agents = _agents_of(self.store, env, params_json)
            anchor = self.anchor if self.anchor in agents else None
            board = build_leaderboard(self.store, env, params_json, anchor, chosen)
            boards.append((board, params_json, count))
        self._boards = boards
        return boards

    def paths(self) -> list[str]:
        """Every page's path, relative to the site's root."""
        paths = ["index.html"]
        for board, params_json, _ in self.boards():
            stem = board.file_stem
            paths.append(f"{stem}/index.html")
            paths += [f"{stem}/agent-{rank}.html" for rank in range(1, len(board.agents) + 1)]
            paths += [
                f"{stem}/match-{match.id}.html"
                for match in self.store.stored_matches(board.env, params_json)
            ]
        return paths

    def render(self, path: str) -> str | None:
        """The page at ``path`` (relative to the root), or None if there is none."""
        if path in ("", "index.html"):
            return self._index()
        stem, _, name = path.partition("/")
        found = [(b, p) for b, p, _ in self.boards() if b.file_stem == stem]
        if not found:
            return None
        board, params_json = found[0]
        names = _Names(board)
        if name in ("", "index.html"):
            matches = self.store.stored_matches(board.env, params_json)
            body = _standings(board, names) + _heat_map(board, names)
            if self.playable:
                body += "<p><a id='play' href='play.html'>Play against an agent</a></p>"
            body += f"<h2>Matches ({len(matches)})</h2>" + _table(
                ["match", "seats", "returns", "replay"], [_match_row(m) for m in matches], "matches"
            )
            return self._page(f"Leaderboard: {board.title}", body, "../", self.refresh_seconds)
        number = name.removesuffix(".html").partition("-")[2]
        if not (name.endswith(".html") and number.isdigit()):
            return None
        if name.startswith("agent-") and 1 <= int(number) <= len(board.agents):
            agent = board.agents[int(number) - 1]
            matches = self.store.stored_matches(board.env, params_json)
            body = _agent_page(board, names, agent, matches)
            return self._page(f"{agent} on {board.title}", body, "../")
        if name.startswith("match-"):
            match = self.store.stored_matches(board.env, params_json, match_id=int(number))
            if match:
                body = _match_page(board, names, match[0])
                return self._page(f"Match {number} of {board.title}", body, "../")
        return None

    def _index(self) -> str:
        items = "".join(
            f"<li><a href='{_e(board.file_stem)}/index.html'>{_e(board.title)}</a>: {count} "
            f"matches, {len(board.agents)} agents; best: {_e(board.standings[0].agent)}</li>"
            for board, _, count in self.boards()
        )
        return self._page("Leaderboards", f"<ul id='boards'>{items}</ul>", "", self.refresh_seconds)

    @staticmethod
    def _page(title: str, body: str, up: str, refresh: int | None = None) -> str:
        page = _page(title, body, up)
        if refresh is None:
            return page
        return page.replace("<head>", f"<head><meta http-equiv='refresh' content='{refresh}'>", 1)


def _open_store(db_path: str | Path) -> ResultStore:
    if not Path(db_path).is_file():
        raise ValueError(f"no results database at {db_path}")
    store = ResultStore(db_path)
    if not store.env_variants():
        store.close()
        raise ValueError(f"the results database {db_path} holds no matches")
    return store


def export_site(
    db_path: str | Path, out_dir: str | Path, anchor: str | None = None, rank_by: str | None = None
) -> Path:
    """Write the whole site for every env variant in the store; the path of its index."""
    out = Path(out_dir)
    with _open_store(db_path) as store:
        site = Site(store, anchor, rank_by)
        for path in site.paths():
            page = site.render(path)
            assert page is not None, path  # paths() lists only pages render() has
            (out / path).parent.mkdir(parents=True, exist_ok=True)
            (out / path).write_text(page, encoding="utf-8")
    return out / "index.html"


def _agents_of(store: ResultStore, env: str, params_json: str) -> set[str]:
    return {seat for result in store.results(env, params_json) for seat in result.key.seats}


class _Handler(BaseHTTPRequestHandler):
    server: LeaderboardServer

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        parts = urllib.parse.urlsplit(self.path)
        path = urllib.parse.unquote(parts.path).lstrip("/")
        query = {k: v[0] for k, v in urllib.parse.parse_qs(parts.query).items()}
        # One connection per request: the evaluation writing the store meanwhile commits
        # each match, and WAL lets this read the latest without waiting for it.
        with ResultStore(self.server.db_path) as store:
            site = Site(store, self.server.anchor, self.server.rank_by)
            site.refresh_seconds = self.server.refresh_seconds
            site.playable = True
            try:
                page = site.render(path) or self._play_page(site, path, query)
            except ValueError as error:  # a bad seat or agent number in a play request
                self._send(400, f"<p>{html.escape(str(error))}</p>")
                return
        if isinstance(page, tuple):  # a redirect
            self.send_response(303)
            self.send_header("Location", page[1])
            self.end_headers()
            return
        self._send(200 if page is not None else 404, page or f"<p>no page {html.escape(path)}</p>")

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path).lstrip("/")
        length = int(self.headers.get("Content-Length") or 0)
        form = urllib.parse.parse_qs(self.rfile.read(length).decode("utf-8"))
        stem, _, name = path.partition("/")
        game = self.server.games.get(_play_id(name) or -1)
        if game is None or "action" not in form or not form["action"][0].lstrip("-").isdigit():
            self._send(400, "<p>no such game, or no action</p>")
            return
        with self.server.lock:
            try:
                game.play(int(form["action"][0]))
            except ValueError as error:
                self._send(400, f"<p>{html.escape(str(error))}</p>")
                return
            if game.finished and game.match_id is None:
                with ResultStore(self.server.db_path) as store:
                    store.patiently(lambda: game.record(store))
        self.send_response(303)
        self.send_header("Location", f"/{stem}/{name}")
        self.end_headers()

    def _play_page(self, site: Site, path: str, query: dict[str, str]):
        """The play pages: ``<stem>/play.html`` (choose), ``<stem>/play-new`` (start;
        a redirect) and ``<stem>/play-<id>.html`` (a game); None for any other path."""
        stem, _, name = path.partition("/")
        found = [(b, p) for b, p, _ in site.boards() if b.file_stem == stem]
        if not found:
            return None
        board, params_json = found[0]
        if name == "play.html":
            return Site._page(f"Play on {board.title}", _play_form(board), "../")
        if name == "play-new":
            number, seat = query.get("agent", ""), query.get("seat", "")
            if not (number.isdigit() and seat.isdigit() and 1 <= int(number) <= len(board.agents)):
                raise ValueError("play-new needs agent=<rank> and seat=<seat>")
            opponent = board.agents[int(number) - 1]
            game = HumanGame(board.env, board.params, params_json, opponent, int(seat))
            with self.server.lock:
                game_id = len(self.server.games) + 1
                self.server.games[game_id] = game
            return ("redirect", f"/{stem}/play-{game_id}.html")
        playing = self.server.games.get(_play_id(name) or -1)
        if playing is None:
            return None
        return Site._page(f"You against {playing.opponent}", _game_body(playing), "../")

    def _send(self, status: int, page: str) -> None:
        body = page.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")  # live: never a stale page
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args) -> None:  # noqa: A002 (http.server's name)
        if self.server.verbose:
            super().log_message(format, *args)


def _play_id(name: str) -> int | None:
    number = name.removeprefix("play-").removesuffix(".html")
    return int(number) if name.startswith("play-") and number.isdigit() else None


def _play_form(board: Leaderboard) -> str:
    from agents.leaderboard.matches import EnvVariant

    num_players = EnvVariant(board.env, board.params).game().info.num_players
    agents = "".join(
        f"<option value='{rank}'>{_e(agent)}</option>" for rank, agent in enumerate(board.agents, 1)
    )
    seats = "".join(f"<option value='{s}'>seat {s}</option>" for s in range(num_players))
    return (
        "<p><a href='index.html'>standings</a></p><form action='play-new' method='get'>"
        f"<label>opponent <select name='agent'>{agents}</select></label> "
        f"<label>your seat <select name='seat'>{seats}</select></label> "
        "<button id='start'>start</button></form><p>You see only what your seat may see. "
        "The game is stored as a match of <code>human</code> against the agent when it ends.</p>"
    )


def _game_body(game: HumanGame) -> str:
    steps = "".join(f"<li>{_e(step)}</li>" for step in game.view() if step)
    board = game.board()
    body = (
        f"<p>You are {_e(game.human)}; the agent is {_e(game.opponent)}.</p>"
        "<h3>What you have seen</h3>"
        + ("" if board is None else f"<pre class='board' id='your-board'>{_e(board)}</pre>")
        + f"<ol id='your-view'>{steps}</ol>"
        f"<p>Your reward so far: <span id='your-reward'>{game.totals[game.human]:+g}</span></p>"
    )
    if not game.finished:
        buttons = "".join(
            f"<button name='action' value='{action}'>{_e(name)}</button> "
            for action, name in game.legal().items()
        )
        return body + f"<form method='post' id='actions'><h3>Your move</h3>{buttons}</form>"
    returns = ", ".join(f"{name}: {value:+g}" for name, value in game.totals.items())
    link = (
        f" <a id='match' href='match-{game.match_id}.html'>its replay</a>"
        if game.match_id is not None
        else ""
    )
    return (
        body
        + f"<p id='result'>Game over. Returns: {_e(returns)}. Recorded as match {game.match_id}.{link}</p>"
    )


class LeaderboardServer(ThreadingHTTPServer):
    """The site's pages from a local HTTP server, rendered from the store at each request,
    so standings and matches appear as an evaluation writes them.

    A thread per connection (a browser holds idle connections open, which would stall a
    one-thread server); each request opens its own store connection, and the games
    people play are changed under ``lock``."""

    daemon_threads = True

    def __init__(
        self,
        db_path: str | Path,
        host: str = "127.0.0.1",
        port: int = 8000,
        anchor: str | None = None,
        rank_by: str | None = None,
        refresh_seconds: int | None = 10,
        verbose: bool = False,
    ):
        _open_store(db_path).close()  # a missing or empty store: a clear error now
        self.db_path = Path(db_path)
        self.anchor = anchor
        self.rank_by = rank_by
        self.refresh_seconds = refresh_seconds
        self.verbose = verbose
        self.games: dict[int, HumanGame] = {}  # games people are playing, by id
        self.lock = threading.Lock()
        super().__init__((host, port), _Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}/"
