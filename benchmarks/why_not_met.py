"""The "Why not met" section of ``comparison.md``: for each cell with a target not met, its
figures by seed, what its learning curves say and where its CPU time goes.

Everything comes from what is on disk: each run's ``metrics.csv`` (the run's own evaluations
during training) and the cell's profile (``<profiles>/<cell>.json``, written by
``python -m benchmarks train --profile``, :mod:`benchmarks.profiling`).

A curve's verdict (:func:`curve_verdict`) looks at the last half of the run against wall
time: the change a least-squares line fits over it, against the noise of one evaluation (a
win rate from ``n`` games: the half-width of its 95% interval, 1.96 sqrt(p (1 - p) / n);
exact exploitability: 5% of its level, as curves of averaged policies wobble that much). A
change within it is *flat*; beyond it, *still improving* or *worse*, with the slope per
minute over the last quarter and, where the curve still improves, the minutes that slope
would take to reach the target. A straight line is a crude model of a learning curve, so
the minutes are an estimate of the order, not a promise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

QUARTERS = (0.25, 0.5, 0.75, 1.0)
EXACT_FLAT_FRACTION = 0.05  # exact exploitability: a change under 5% of its level is flat
Z_95 = 1.959963984540054


@dataclass(frozen=True)
class Unmet:
    """A target of a cell that is not met (or not run): the table row's label, the target as
    the table words it, the verdict (``not met (0/3)``) and each seed's value."""

    label: str
    target: str
    verdict: str
    bound: float
    lower_is_better: bool
    values: Sequence[Any]  # benchmarks.training.Measured or None, one per seed
    # what the run's own curve may be compared with: the opponent of a win-rate target over
    # all seats, "exploitability", or "" (a per-seat score: no curve measures it)
    curve_against: str = ""


def least_squares_slope(points: Sequence[tuple[float, float]]) -> float:
    """The slope of the least-squares line through ``(x, y)`` points (0 for a vertical set)."""
    count = len(points)
    mean_x = sum(x for x, _ in points) / count
    mean_y = sum(y for _, y in points) / count
    spread = sum((x - mean_x) ** 2 for x, _ in points)
    if spread == 0:
        return 0.0
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / spread


def value_at(points: Sequence[tuple[float, float]], seconds: float) -> tuple[float, float]:
    """The last evaluation at or before ``seconds`` (the first one if none is)."""
    before = [point for point in points if point[0] <= seconds]
    return before[-1] if before else points[0]


def _tail(points: Sequence[tuple[float, float]], fraction: float) -> list[tuple[float, float]]:
    """The points in the last ``fraction`` of the run's time (at least the last two)."""
    end = points[-1][0]
    tail = [point for point in points if point[0] >= (1.0 - fraction) * end]
    return tail if len(tail) >= 2 else list(points[-2:])


def evaluation_noise(values: Sequence[float], games: float | None) -> float:
    """What one evaluation's value may move by chance: a win rate's 95% interval half-width
    at the mean of ``values`` over ``games`` games; exact figures: 5% of their level."""
    mean = sum(values) / len(values)
    if games:
        rate = min(max(mean, 0.0), 1.0)
        return Z_95 * math.sqrt(rate * (1.0 - rate) / games)
    return EXACT_FLAT_FRACTION * abs(mean)


def curve_verdict(
    points: Sequence[tuple[float, float]],
    lower_is_better: bool,
    games: float | None = None,
    bound: float | None = None,
) -> str:
    """One phrase on the curve's end: flat, still improving or worse (module docstring).

    ``points``: ``(wall seconds, value)`` in time order; ``games``: games per evaluation for a
    win rate (None: an exact figure); ``bound``: the target, to say how far the slope is."""
    if len(points) < 3:
        return f"too few evaluations ({len(points)}) to tell a trend"
    half, quarter = _tail(points, 0.5), _tail(points, 0.25)
    half_values = [y for _, y in half]
    low, high = min(half_values), max(half_values)
    noise = evaluation_noise(half_values, games)
    half_minutes = (half[-1][0] - half[0][0]) / 60.0
    quarter_minutes = (quarter[-1][0] - quarter[0][0]) / 60.0
    slope_half = least_squares_slope([(x / 60.0, y) for x, y in half])
    slope_quarter = least_squares_slope([(x / 60.0, y) for x, y in quarter])
    better = -1.0 if lower_is_better else 1.0
    shown = ".3f" if games else ".3g"  # win rates to the third decimal, exact figures to 3 digits
    spread = f"{low:{shown}}-{high:{shown}}"
    within = (
        f"one evaluation's 95% interval is +-{noise:.3f} ({games:.0f} games)"
        if games
        else f"a change under {EXACT_FLAT_FRACTION:.0%} of the level counts as flat"
    )
    if abs(slope_half * half_minutes) <= noise:
        return f"flat over the last half ({spread}; {within})"
    if slope_half * better < 0:
        return f"worse over the last half ({spread}, {slope_half:+.3g} per minute)"
    if abs(slope_quarter * quarter_minutes) <= noise or slope_quarter * better < 0:
        return (
            f"improved over the last half ({slope_half:+.3g} per minute), flat over the last "
            f"quarter ({within})"
        )
    text = f"still improving at the end ({slope_quarter:+.3g} per minute over the last quarter)"
    end_value = points[-1][1]
    if bound is not None and (bound - end_value) * better > 0:
        minutes = (bound - end_value) / slope_quarter
        away = "under a minute" if minutes < 1 else f"about {minutes:.0f} more minutes"
        text += f"; at that rate the target {bound:g} is {away} away"
    return text


def curve_line(
    seed: int,
    rows: list[dict],
    metric: str,
    lower_is_better: bool,
    bound: float | None,
    within_seconds: float | None = None,
) -> str:
    """A seed's curve in one line: its value at about 1/4, 1/2, 3/4 and the end of the run
    (up to ``within_seconds`` where the target is timed and the run went on), the verdict."""
    points = [
        (float(row.get("wall_seconds") or 0.0), float(row[metric]))
        for row in rows
        if row.get(metric) is not None
    ]
    if not points:
        return f"seed {seed}: no evaluation in metrics.csv"
    after = ""
    if within_seconds is not None and points[-1][0] > within_seconds:
        later = points[-1]
        points = [point for point in points if point[0] <= within_seconds] or points[:1]
        after = f"; after the target's {within_seconds / 60:g} min it reaches {later[1]:.3g} at {later[0] / 60:.0f} min"
    end = points[-1][0]
    shown = ".3g" if metric == "exploitability" else ".3f"
    values = " / ".join(f"{value_at(points, q * end)[1]:{shown}}" for q in QUARTERS)
    games = None
    if metric != "exploitability":
        counts = [
            float(row["evaluation_episodes"])
            for row in rows[len(rows) // 2 :]
            if row.get("evaluation_episodes")
        ]
        games = sorted(counts)[len(counts) // 2] if counts else None
    verdict = curve_verdict(points, lower_is_better, games, bound)
    return (
        f"seed {seed}: {values} at 1/4, 1/2, 3/4 and the end ({end / 60:.1f} min): {verdict}{after}"
    )


def shortfall(unmet: Unmet) -> str:
    """Where a win-rate target's point estimates reach it but the interval's lower bound does
    not: how short each seed's lower bound falls (more games, or a slightly stronger agent,
    would settle it). Empty otherwise."""
    done = [value for value in unmet.values if value is not None and value.low is not None]
    if not done or unmet.lower_is_better:
        return ""
    above = [value for value in done if value.value >= unmet.bound]
    if not above:
        return ""
    short = [f"{unmet.bound - value.low:.3f}" for value in done if value.low < unmet.bound]
    return (
        f" The point estimate reaches {unmet.bound:g} on {len(above)} of {len(done)} seeds; the "
        f"lower bound falls short by {', '.join(short)}."
    )


def entry(
    cell: Any,
    unmet: list[Unmet],
    seeds: Sequence[int],
    metrics: Sequence[list[dict]],
    metric: str | None,
    metric_label: str,
    curve_against: str,
    profile: dict | None,
    has_curves: bool,
    profile_link: str,
) -> list[str]:
    """The section's lines for one cell (``metrics``: per seed, [] where the run is missing)."""
    lines = [f"### {cell.trainer} on {cell.env} (`{cell.name}`)", ""]
    for target in unmet:
        figures = "; ".join(
            f"seed {seed} {value.text()}"
            for seed, value in zip(seeds, target.values)
            if value is not None
        )
        lines.append(
            f"- **{target.label}**, {target.target}: {target.verdict}"
            + (f": {figures}." if figures else ".")
            + shortfall(target)
        )
    if cell.yardstick:
        lines.append(f"- **Yardstick**: {cell.yardstick}")
    timed = [t for t in cell.targets if t.within_seconds is not None]
    ran = [(seed, rows) for seed, rows in zip(seeds, metrics) if rows]
    if metric is None or not ran:
        lines.append("- **Curve**: no finished run yet.")
    else:
        lower = metric == "exploitability"
        # the target the curve measures, if one is unmet: how far its slope is from it
        bound = next((t.bound for t in unmet if t.curve_against == curve_against), None)
        within = timed[0].within_seconds if timed and lower else None
        lines.append(f"- **Curve** ({metric_label}, against wall time):")
        lines += [
            "  - " + curve_line(seed, rows, metric, lower, bound, within) for seed, rows in ran
        ]
    if profile is None:
        lines.append(
            f"- **Profile**: no profile yet: run `python -m benchmarks train --profile --cells "
            f"{cell.name}`."
        )
    else:
        from benchmarks.profiling import phase_line

        note = " Only the training process." if profile.get("out_of_process") else ""
        exited = (
            f"; train.py exited {profile['exit_code']}"
            if profile.get("exit_code") not in (0, 130)  # 130: stopped as planned (Ctrl-C)
            else ""
        )
        lines.append(
            f"- **Profile** ({profile['profile_seconds']:g} CPU s of training, seed 0{exited}): "
            f"{phase_line(profile)}.{note} [profile]({profile_link})"
        )
    if has_curves:
        lines.append(
            f"- Curves: {cell.trainer}'s figure under [Learning curves](#learning-curves)."
        )
    lines.append("")
    return lines


def section(entries: list[list[str]], not_run: list[str]) -> list[str]:
    """The whole section: its explanation, each cell's entry, and the cells not run yet."""
    if not entries and not not_run:
        return []
    lines = [
        "## Why not met",
        "",
        "For each cell with a target not met: the figures by seed, the run's own evaluations "
        "during training (`metrics.csv`, its config's evaluation opponent, which may differ "
        "from the target's) at about a quarter, half, three quarters and the end of the run "
        "with a verdict on the last half (flat within the evaluation's noise, still improving "
        "or worse: benchmarks/why_not_met.py), and where the training process spends its CPU "
        "time (`python -m benchmarks train --profile`: cProfile in CPU seconds, one page a "
        "cell).",
        "",
    ]
    for lines_of_cell in entries:
        lines += lines_of_cell
    if not_run:
        lines += [f"Not run yet (no figure, no curve): {', '.join(not_run)}.", ""]
    return lines
