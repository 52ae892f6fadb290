"""Progress that suits where it goes: a tqdm bar on a terminal, plain lines in a log.

A tqdm bar redraws itself with ``\\r`` many times a second; written to a file or a pipe
(``train.py ... > run.log``, a CI job, a Ray worker's log) that is thousands of updates a
minute in one endless line. :func:`progress_bar` gives the bar only when the stream is a
terminal, and otherwise a :class:`PlainProgress` that writes one line every
``every_seconds`` (and one at the end), such as::

    matches: 1200/4000 match (30%), 61 s, exploitability=0.0312

Both take tqdm's arguments and have the methods the training loop and the leaderboard use
(``update``, ``set_postfix``, ``close``, ``n``, iteration over ``iterable``).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TextIO

# Seconds between two plain progress lines when the output is not a terminal.
PLAIN_LINE_EVERY_SECONDS = 30.0


def progress_bar(
    iterable: Iterable | None = None,
    *,
    file: TextIO | None = None,
    every_seconds: float = PLAIN_LINE_EVERY_SECONDS,
    **tqdm_arguments: Any,
):
    """A tqdm bar when ``file`` (default: standard error) is a terminal, else a
    :class:`PlainProgress` with the same total, unit and description."""
    stream = sys.stderr if file is None else file
    if _is_terminal(stream):
        from tqdm import tqdm

        return tqdm(iterable, file=stream, **tqdm_arguments)
    return PlainProgress(
        iterable,
        file=stream,
        every_seconds=every_seconds,
        total=tqdm_arguments.get("total"),
        initial=tqdm_arguments.get("initial", 0),
        unit=tqdm_arguments.get("unit", "it"),
        desc=tqdm_arguments.get("desc"),
    )


def end_at_reached(progress: Any) -> None:
    """Close ``progress`` (a tqdm bar or a :class:`PlainProgress`) at what was reached: a run
    that stops before the bar's total (an episode budget spent first under a bar that counts
    seconds) ends its bar full at its count, not frozen at ``50% 35/70 s``."""
    reached = round(progress.n)
    if progress.total and 0 < reached < progress.total:
        progress.total = progress.n = reached
        progress.refresh()
    progress.close()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class PlainProgress:
    """Progress as a plain line every ``every_seconds`` and one at :meth:`close`."""

    def __init__(
        self,
        iterable: Iterable | None = None,
        *,
        file: TextIO,
        every_seconds: float,
        total: float | None = None,
        initial: float = 0,
        unit: str = "it",
        desc: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.iterable = iterable
        self.file = file
        self.every_seconds = every_seconds
        self.total = total
        self.n = initial
        self.unit = unit
        self.desc = desc
        self.postfix: dict[str, Any] = {}
        self.clock = clock
        self.started = self.last_line = clock()
        self.closed = False

    def __iter__(self) -> Iterator:
        if self.iterable is None:
            raise TypeError("PlainProgress: nothing to iterate (made without an iterable)")
        for item in self.iterable:
            yield item
            self.update(1)
        self.close()

    def update(self, amount: float = 1) -> None:
        self.n += amount
        if self.clock() - self.last_line >= self.every_seconds:
            self._write_line()

    def refresh(self) -> None:
        """tqdm's redraw; a plain line is written at :meth:`close` and on its period."""

    def set_postfix(self, values: dict[str, Any] | None = None, **more: Any) -> None:
        self.postfix = {**(values or {}), **more}

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._write_line()

    def line(self) -> str:
        """The progress as one line: done/total unit (percent), elapsed seconds, postfix."""
        done = f"{self.n:.0f}" if float(self.n).is_integer() else f"{self.n:.1f}"
        text = f"{done}/{self.total:.0f} {self.unit}" if self.total else f"{done} {self.unit}"
        if self.total:
            text += f" ({100 * self.n / self.total:.0f}%)"
        text += f", {self.clock() - self.started:.0f} s elapsed"
        text += "".join(f", {key}={value}" for key, value in self.postfix.items())
        return f"{self.desc}: {text}" if self.desc else text

    def _write_line(self) -> None:
        self.last_line = self.clock()
        print(self.line(), file=self.file, flush=True)
