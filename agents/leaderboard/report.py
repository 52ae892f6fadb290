"""The leaderboard of one env variant, built from the store, and its renderings.

==================  ========================================================================
Output              Content
==================  ========================================================================
terminal            rich tables: standings (Elo with 95% interval, points, mean return,
                    exploitability, OpenSkill when installed) and head-to-head pairings
``leaderboard.md``  the same two tables in markdown
``standings.csv``   one row per agent
``head_to_head.csv`` one row per (agent, opponent): games, mean return and win/draw/loss
                    rates, each with its 95% interval
``leaderboard.png`` head-to-head matrix of mean returns (row agent's view) and the ranking the
                    board used (Elo or mean return), agents as ``#rank`` with a legend
==================  ========================================================================
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from agents.leaderboard.stats import (
    PairingSummary,
    Ratings,
    fit_elo,
    games_from_seats,
    openskill_ratings,
    pairing_summaries,
)
from agents.leaderboard.store import ResultStore, canonical_json


@dataclass
class Standing:
    agent: str
    elo: float
    elo_low: float
    elo_high: float
    games: int
    points: float  # wins + draws/2 per game, over all its games
    mean_return: float  # per game, over all its games
    exploitability: float | None
    openskill: tuple[float, float] | None


@dataclass
class Leaderboard:
    env: str
    params: dict
    standings: list[Standing]  # best first, by ``rank_by``
    pairings: dict[tuple[str, str], PairingSummary]
    ratings: Ratings
    rank_by: str = "elo"

    @property
    def title(self) -> str:
        """The env and the parameters it sets away from their defaults (the board keeps
        every resolved parameter; a title listing the defaults too reads as noise)."""
        from agents.leaderboard.matches import EnvVariant

        defaults = EnvVariant.resolve(self.env, {}).params
        params = ", ".join(
            f"{k}={v}" for k, v in self.params.items() if k not in defaults or defaults[k] != v
        )
        return f"{self.env}({params})" if params else self.env

    @property
    def file_stem(self) -> str:
        """The env name, plus a digest of the params when they are not the defaults."""
        from agents.leaderboard.matches import EnvVariant

        if self.params == EnvVariant.resolve(self.env, {}).params:
            return self.env
        return f"{self.env}_{hashlib.sha256(canonical_json(self.params).encode()).hexdigest()[:8]}"

    @property
    def agents(self) -> list[str]:
        return [standing.agent for standing in self.standings]


RANK_BY = ("elo", "mean-return")


def build_leaderboard(
    store: ResultStore, env: str, params_json: str, anchor: str | None = None, rank_by: str = "elo"
) -> Leaderboard:
    """Standings ranked by Elo (win/draw/loss) or by mean return against the field.

    Elo counts games won, not by how much: in poker an agent that wins many small pots
    and loses a few big ones can out-rate the one that takes its chips, so for games
    with graded payoffs rank by ``mean-return`` (and read the exploitability column).
    """
    if rank_by not in RANK_BY:
        raise ValueError(f"rank_by must be one of {RANK_BY}, got {rank_by!r}")
    results = store.results(env, params_json)
    if not results:
        raise ValueError(f"the results database {store.path} has no matches of {env} {params_json}")
    games = [games_from_seats(r.key.seats, r.returns, r.env_seed) for r in results]
    names = sorted({g.first for g in games} | {g.second for g in games})
    if anchor is not None and anchor not in names:
        raise ValueError(
            f"--anchor {anchor!r} has no stored match on {env}; agents: {', '.join(names)}"
        )
    if anchor is None:
        anchor = "random" if "random" in names else names[0]
    ratings = fit_elo(games, anchor=anchor)
    summaries = pairing_summaries(games)
    openskill = openskill_ratings(games)
    exploitability = store.exploitability(env, params_json)
    standings = []
    for name in names:
        mine = [s for (agent, _), s in summaries.items() if agent == name]
        total = sum(s.games for s in mine)
        elo, low, high = ratings.interval(name)
        standings.append(
            Standing(
                name,
                float(elo),
                float(low),
                float(high),
                total,
                sum(s.points * s.games for s in mine) / total,
                sum(s.mean_return * s.games for s in mine) / total,
                exploitability.get(name),
                openskill.get(name) if openskill else None,
            )
        )
    standings.sort(key=lambda s: -(s.elo if rank_by == "elo" else s.mean_return))
    return Leaderboard(env, json.loads(params_json), standings, summaries, ratings, rank_by)


# ---- cells ---------------------------------------------------------------------------------
def _number(value: float | None, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.{digits}f}"


def _interval(value: float, low: float, high: float, digits: int = 3) -> str:
    if not math.isfinite(low):
        return f"{value:.{digits}f}"
    return f"{value:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def standings_rows(board: Leaderboard) -> tuple[list[str], list[list[str]]]:
    """One row per agent, best first. The column the ranking used comes right after the
    agent, and the rank column names it, so rank and rating never seem to disagree."""
    elo_header, return_header = "Elo [95% CI]", "mean return"
    ranked_by_elo = board.rank_by == "elo"
    header = [
        f"rank (by {'Elo' if ranked_by_elo else 'mean return'})",
        "agent",
        *((elo_header, return_header) if ranked_by_elo else (return_header, elo_header)),
        "games",
        "points",
        "exploitability",
    ]
    with_openskill = any(s.openskill for s in board.standings)
    if with_openskill:
        header.append("OpenSkill mu ± sigma")
    rows = []
    for rank, s in enumerate(board.standings, 1):
        elo = (
            f"{round(s.elo)}"  # round(): no "-0"
            if s.agent == board.ratings.anchor
            else f"{round(s.elo)} [{round(s.elo_low)}, {round(s.elo_high)}]"
        )
        ratings = (elo, _number(s.mean_return)) if ranked_by_elo else (_number(s.mean_return), elo)
        row = [
            str(rank),
            s.agent,
            *ratings,
            str(s.games),
            _number(s.points),
            _number(s.exploitability, 4),
        ]
        if with_openskill:
            row.append(f"{s.openskill[0]:.1f} ± {s.openskill[1]:.1f}" if s.openskill else "-")
        rows.append(row)
    return header, rows


def head_to_head_rows(board: Leaderboard) -> tuple[list[str], list[list[str]]]:
    header = [
        "agent",
        "opponent",
        "games",
        "mean return [95% CI]",
        "win [95% CI]",
        "draw",
        "loss [95% CI]",
    ]
    rows = []
    order = {name: i for i, name in enumerate(board.agents)}
    for (agent, opponent), s in sorted(
        board.pairings.items(), key=lambda kv: (order[kv[0][0]], order[kv[0][1]])
    ):
        if order[agent] > order[opponent]:
            continue  # each pairing once, from the better-ranked side
        rows.append(
            [
                agent,
                opponent,
                str(s.games),
                _interval(s.mean_return, s.mean_return_low, s.mean_return_high),
                _interval(*s.win_rate, digits=2),
                f"{s.draw_rate[0]:.2f}",
                _interval(*s.loss_rate, digits=2),
            ]
        )
    return header, rows


# ---- renderings ----------------------------------------------------------------------------
def print_leaderboard(board: Leaderboard, console=None) -> None:
    from rich.console import Console
    from rich.table import Table

    if console is None:
        console = Console()
        if not console.is_terminal:  # piped or captured: do not squeeze into 80 columns
            console = Console(width=160)
    standings_title = (
        f"Leaderboard: {board.title} (ranked by {board.rank_by}; Elo anchored at "
        f"{board.ratings.anchor} = {board.ratings.anchor_elo:.0f})"
    )
    for title, (header, rows) in (
        (standings_title, standings_rows(board)),
        (f"Head to head: {board.title}", head_to_head_rows(board)),
    ):
        table = Table(title=title)
        for column in header:
            table.add_column(column, justify="left" if column in ("agent", "opponent") else "right")
        for row in rows:
            table.add_row(*row)
        console.print(table)


def markdown(board: Leaderboard) -> str:
    def table(header, rows):
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines)

    return (
        f"## Leaderboard: {board.title}\n\nRanked by {board.rank_by}; Elo anchored at "
        f"`{board.ratings.anchor}` = {board.ratings.anchor_elo:.0f}; intervals are 95%.\n\n"
        f"{table(*standings_rows(board))}\n\n"
        f"### Head to head\n\n{table(*head_to_head_rows(board))}\n"
    )


def write_outputs(board: Leaderboard, out_dir: str | Path) -> list[Path]:
    """Markdown, two CSV files and the PNG into ``out_dir``; returns their paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = board.file_stem
    paths = [
        out_dir / f"{stem}_leaderboard.md",
        out_dir / f"{stem}_standings.csv",
        out_dir / f"{stem}_head_to_head.csv",
        out_dir / f"{stem}_leaderboard.png",
    ]
    paths[0].write_text(markdown(board))
    with paths[1].open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            [
                "rank",
                "agent",
                "elo",
                "elo_low",
                "elo_high",
                "games",
                "points",
                "mean_return",
                "exploitability",
                "openskill_mu",
                "openskill_sigma",
            ]
        )
        for rank, s in enumerate(board.standings, 1):
            mu, sigma = s.openskill if s.openskill else ("", "")
            writer.writerow(
                [
                    rank,
                    s.agent,
                    s.elo,
                    s.elo_low,
                    s.elo_high,
                    s.games,
                    s.points,
                    s.mean_return,
                    "" if s.exploitability is None else s.exploitability,
                    mu,
                    sigma,
                ]
            )
    with paths[2].open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            [
                "agent",
                "opponent",
                "games",
                "mean_return",
                "mean_return_low",
                "mean_return_high",
                "win_rate",
                "win_low",
                "win_high",
                "draw_rate",
                "draw_low",
                "draw_high",
                "loss_rate",
                "loss_low",
                "loss_high",
            ]
        )
        for (agent, opponent), pairing in sorted(board.pairings.items()):
            writer.writerow(
                [
                    agent,
                    opponent,
                    pairing.games,
                    pairing.mean_return,
                    pairing.mean_return_low,
                    pairing.mean_return_high,
                    *pairing.win_rate,
                    *pairing.draw_rate,
                    *pairing.loss_rate,
                ]
            )
    plot(board, paths[3])
    return paths


def short_labels(names: list[str]) -> list[str]:
    """Labels for the plot's axes, in standings order: ``#1``, ``#2``, ... (the legend
    under the plot maps each to the agent's full name, however long)."""
    return [f"#{rank}" for rank in range(1, len(names) + 1)]


def plot(board: Leaderboard, path: str | Path) -> None:
    """``leaderboard.png``: the head-to-head matrix (row agent's mean return) and the
    ranking the board used (Elo with its 95% interval, or mean return against the field),
    both labelled ``#rank``, with a legend of the agents' full names underneath."""
    import textwrap

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = board.agents
    size = len(names)
    labels = short_labels(names)
    matrix = np.full((size, size), np.nan)
    for (agent, opponent), s in board.pairings.items():
        matrix[names.index(agent), names.index(opponent)] = s.mean_return
    legend_lines = [
        line
        for label, name in zip(labels, names)
        for line in textwrap.wrap(
            f"{label}  {name}",
            width=110,
            subsequent_indent=" " * (len(label) + 2),
            break_on_hyphens=False,
        )
    ]
    panel = max(3.2, 0.45 * size + 1.6)  # inches per panel: cells stay readable
    legend_height = 0.16 * len(legend_lines) + 0.15
    figure = plt.figure(
        figsize=(2 * panel + 2.2, panel + legend_height + 0.6), layout="constrained"
    )
    grid = figure.add_gridspec(2, 2, height_ratios=[panel, legend_height], width_ratios=[1.15, 1])
    left, right, legend = (
        figure.add_subplot(grid[0, 0]),
        figure.add_subplot(grid[0, 1]),
        figure.add_subplot(grid[1, :]),
    )
    limit = np.nanmax(np.abs(matrix)) if np.isfinite(matrix).any() else 0.0
    limit = limit if limit > 0 else 1.0  # all draws: any scale
    image = left.imshow(matrix, cmap="RdBu", vmin=-limit, vmax=limit)
    for i in range(size):
        for j in range(size):
            if np.isfinite(matrix[i, j]):
                dark = abs(matrix[i, j]) > 0.6 * limit
                left.text(
                    j,
                    i,
                    f"{matrix[i, j]:+.2f}",
                    ha="center",
                    va="center",
                    fontsize=9 if size <= 8 else 7,
                    color="white" if dark else "black",
                )
    left.set_xticks(range(size), labels)
    left.set_yticks(range(size), labels)
    left.set_xlabel("opponent")
    left.set_ylabel("agent")
    left.set_title("mean return of the row agent")
    figure.colorbar(image, ax=left, location="right", shrink=0.9)

    positions = np.arange(size)[::-1]  # #1 on top
    if board.rank_by == "elo":
        values = np.array([s.elo for s in board.standings])
        errors = np.array(
            [
                [s.elo - s.elo_low for s in board.standings],
                [s.elo_high - s.elo for s in board.standings],
            ]
        )
        right.barh(positions, values, xerr=errors, color="tab:blue", alpha=0.8, capsize=4)
        right.axvline(board.ratings.anchor_elo, color="grey", linewidth=0.8)
        anchor = board.ratings.anchor
        anchor_label = labels[names.index(anchor)] if anchor in names else anchor
        right.set_xlabel(f"Elo, 95% interval ({anchor_label} = {board.ratings.anchor_elo:.0f})")
    else:
        values = np.array([s.mean_return for s in board.standings])
        right.barh(positions, values, color="tab:blue", alpha=0.8)
        right.axvline(0.0, color="grey", linewidth=0.8)
        right.set_xlabel("mean return against the field, per game")
    right.set_yticks(positions, labels)
    right.set_title(f"ranking (by {'Elo' if board.rank_by == 'elo' else 'mean return'})")

    legend.axis("off")
    legend.text(
        0.0,
        1.0,
        "\n".join(legend_lines),
        ha="left",
        va="top",
        family="monospace",
        fontsize=8,
        transform=legend.transAxes,
    )
    figure.suptitle(board.title)
    figure.savefig(path, dpi=110)
    plt.close(figure)
