"""The training run an agent on the board came from: its config and learning curve.

An agent spec that names a file was trained by ``train.py`` when that file is in a *run
directory* (one that holds ``checkpoint.pt`` or ``metrics.csv``, as :mod:`agents.loop`
writes them): the spec is the run directory itself, its ``checkpoint.pt``, or an
exported ``policy_player<p>.pt``. :func:`training_run` traces a board's agent identity
(``<spec>#sha256:<hash>``, :func:`agents.leaderboard.specs.agent_identity`) to that
directory and reads

- the run's config, from ``checkpoint.pt`` (the config the run was started or last
  resumed with; read with :func:`agents.checkpoint.load_checkpoint`, data only, which
  needs torch);
- its learning curve, from ``metrics.csv``: the run's metric (exact exploitability when
  the run had it, else the mean return against random) against episodes (iterations for a
  run of no episodes, such as CFR's), one point per evaluation row, as ``metrics.png``
  plots it.

A spec is a path relative to where ``evaluate.py`` ran, so the site must be exported from
the same folder to find it; a run directory not found, or a file whose content no longer
has the stored hash (the run went on, or was replaced, after the matches), is said on the
agent's page (:attr:`TrainingRun.problems`) rather than hidden.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.leaderboard.specs import HASH_MARK, _content_hash, _named_file

RUN_MARKERS = ("checkpoint.pt", "metrics.csv")  # what makes a folder a run directory
METRICS = ("exploitability", "return_vs_random", "return_vs_opponent")  # the curve, by preference


@dataclass
class TrainingRun:
    directory: Path
    config: dict[str, Any] | None = None  # the run's config (checkpoint.pt), if readable
    metric: str | None = None  # the curve's y: a column of metrics.csv
    unit: str = "episodes"  # the curve's x: episodes, or iterations for a run of none
    points: list[tuple[float, float]] = field(default_factory=list)  # (unit, metric)
    problems: list[str] = field(default_factory=list)  # what could not be read, and why


def run_directory(spec: str) -> Path | None:
    """The run directory a spec names (see the module docstring), or None: not a path,
    no such file, or a file that is not in a run directory."""
    path = Path(spec)
    if path.is_dir():
        return path if any((path / marker).is_file() for marker in RUN_MARKERS) else None
    if _named_file(spec) is None:
        return None
    folder = path.parent
    return folder if any((folder / marker).is_file() for marker in RUN_MARKERS) else None


def training_run(identity: str) -> TrainingRun | None:
    """The run the agent ``identity`` came from, or None when it names no run directory."""
    spec, _, stored_hash = identity.partition(HASH_MARK)
    directory = run_directory(spec)
    if directory is None:
        return None
    run = TrainingRun(directory)
    named = _named_file(spec)
    now = _content_hash(named) if stored_hash and named is not None else stored_hash
    if now != stored_hash:
        run.problems.append(
            f"{named} has changed since these matches were played (content hash now {now}, "
            f"the matches' agent {stored_hash}): the run went on or was replaced, so the "
            "config and curve below may reach past this agent"
        )
    _read_config(run)
    _read_curve(run)
    return run


def _read_config(run: TrainingRun) -> None:
    checkpoint = run.directory / "checkpoint.pt"
    if not checkpoint.is_file():
        run.problems.append(f"no {checkpoint}: the run's config is not known")
        return
    try:
        from agents.checkpoint import load_checkpoint
    except ImportError as error:  # a base install, without the train extra
        run.problems.append(f"the run's config is in {checkpoint}, which needs {error.name}")
        return
    try:
        payload = load_checkpoint(checkpoint)
    except ValueError as error:  # damaged, or not data only
        run.problems.append(f"the run's config could not be read: {error}")
        return
    config = payload.get("config") if isinstance(payload, dict) else None
    if isinstance(config, dict):
        run.config = config
    else:
        run.problems.append(f"{checkpoint} is not a run checkpoint: it holds no config")


def _number(text: str | None) -> float | None:
    try:
        value = float(text) if text not in (None, "") else None
    except ValueError:
        return None
    return value if value is not None and math.isfinite(value) else None


def _read_curve(run: TrainingRun) -> None:
    path = run.directory / "metrics.csv"
    if not path.is_file():
        run.problems.append(f"no {path}: no learning curve")
        return
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    episodes = [_number(row.get("episodes")) or 0.0 for row in rows]
    run.unit = "episodes" if any(episodes) else "iterations"
    for metric in METRICS:
        points = []
        for row in rows:
            x, y = _number(row.get(run.unit)), _number(row.get(metric))
            if x is not None and y is not None:
                points.append((x, y))
        if points:
            run.metric, run.points = metric, points
            return
    run.problems.append(f"{path} has no evaluation rows yet: no learning curve")


# ---- the curve as inline SVG ---------------------------------------------------------------------
def _ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About ``count`` round values spanning [low, high]."""
    if high <= low:
        return [low]
    raw = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    first = math.ceil(low / step) * step
    return [first + i * step for i in range(int((high - first) / step + 1e-9) + 1)]


def _label(value: float) -> str:
    if value != 0 and (abs(value) >= 1e5 or abs(value) < 1e-3):
        return f"{value:.0e}"
    return f"{value:,.4g}"


def curve_svg(run: TrainingRun, width: int = 560, height: int = 260) -> str:
    """The learning curve as an SVG element (no script, no network); "" with no points.

    Exploitability, when every point is above 0, is drawn on a log scale (as
    ``metrics.png`` does): it falls by orders of magnitude."""
    if not run.points or run.metric is None:
        return ""
    left, right, top, bottom = 64, 16, 12, 40
    xs = [x for x, _ in run.points]
    ys = [y for _, y in run.points]
    log = run.metric == "exploitability" and min(ys) > 0
    scale = math.log10 if log else (lambda v: v)
    x_low, x_high = min(xs), max(xs)
    y_low, y_high = scale(min(ys)), scale(max(ys))
    if x_high == x_low:
        x_high = x_low + 1
    if y_high == y_low:
        y_low, y_high = y_low - 0.5, y_high + 0.5
    if log:
        y_low, y_high = math.floor(y_low), math.ceil(y_high)

    def px(x: float) -> float:
        return left + (x - x_low) / (x_high - x_low) * (width - left - right)

    def py(y: float) -> float:
        return height - bottom - (scale(y) - y_low) / (y_high - y_low) * (height - top - bottom)

    parts = [
        f"<svg class='curve' width='{width}' "
        f"height='{height}' viewBox='0 0 {width} {height}' role='img' "
        f"aria-label='{run.metric} against {run.unit}'>",
        f"<rect x='{left}' y='{top}' width='{width - left - right}' "
        f"height='{height - top - bottom}' fill='#fff' stroke='#999'/>",
    ]
    for x in _ticks(x_low, x_high):
        parts.append(
            f"<text x='{px(x):.1f}' y='{height - bottom + 16}' text-anchor='middle' "
            f"font-size='11'>{_label(x)}</text>"
        )
    y_ticks = [10.0**p for p in range(int(y_low), int(y_high) + 1)] if log else None
    for y in y_ticks or _ticks(y_low, y_high):
        parts.append(
            f"<text x='{left - 6}' y='{py(y) + 4:.1f}' text-anchor='end' "
            f"font-size='11'>{_label(y)}</text>"
        )
    line = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in run.points)
    parts += [
        f"<polyline points='{line}' fill='none' stroke='#1f5fbf' stroke-width='1.5'/>",
        *(
            f"<circle cx='{px(x):.1f}' cy='{py(y):.1f}' r='2' fill='#1f5fbf'/>"
            for x, y in run.points
        ),
        f"<text x='{(left + width - right) / 2:.0f}' y='{height - 6}' text-anchor='middle' "
        f"font-size='12'>{run.unit}</text>",
        f"<text x='14' y='{(top + height - bottom) / 2:.0f}' text-anchor='middle' font-size='12' "
        f"transform='rotate(-90 14 {(top + height - bottom) / 2:.0f})'>"
        f"{run.metric.replace('_', ' ')}{' (log scale)' if log else ''}</text>",
        "</svg>",
    ]
    return "".join(parts)
