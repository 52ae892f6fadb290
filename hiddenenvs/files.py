"""Files written whole or not at all, and files read only when they are regular files.

:func:`atomic_write` writes to a temporary file beside the target, flushes and fsyncs it,
renames it over the target with ``os.replace`` (atomic on POSIX) and fsyncs the directory,
so a reader (or a crash) sees the old file or the new one, never half of one. Used by the
GGP manager's match records and by the trainers' checkpoints (:mod:`agents.checkpoint`).

:func:`read_regular_file` reads a file given by a user (a GDL rule sheet) only when it is
a regular file within a size limit: a symlink to ``/dev/zero`` would read until memory runs
out, a FIFO would block forever.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


def _fsync_directory(directory: Path) -> None:
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def atomic_write(path: str | Path, write: Callable[[BinaryIO], object]) -> None:
    """Call ``write(handle)`` on a temporary file, then rename it over ``path`` atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"
    )
    try:
        with os.fdopen(descriptor, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise
    _fsync_directory(path.parent)


class FileTooLargeError(OSError):
    """A file over the size limit of :func:`read_regular_file`; ``size`` is what it holds
    (at least; reading stops one byte past the limit)."""

    def __init__(self, path: str | Path, size: int, max_bytes: int):
        super().__init__(f"{path}: {size:,} bytes, more than the limit of {max_bytes:,}")
        self.size = size


_FILE_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
)


def read_regular_file(path: str | Path, max_bytes: int) -> bytes:
    """The bytes of ``path`` (symlinks followed) if it is a regular file of at most
    ``max_bytes``; OSError otherwise (:class:`FileTooLargeError` for the size).

    Opened without blocking (opening a FIFO waits for a writer), checked on the open file
    (no window between the check and the read), and read to one byte past the limit, so a
    file that grows meanwhile is refused too."""
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        mode = os.fstat(descriptor).st_mode
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _FILE_KINDS if test(mode)), "not a regular file")
            raise OSError(f"{path} is {kind}, not a regular file")
        size = os.fstat(descriptor).st_size
        if size > max_bytes:
            raise FileTooLargeError(path, size, max_bytes)
        with os.fdopen(descriptor, "rb") as handle:
            descriptor = -1  # closed with the handle
            data = handle.read(max_bytes + 1)
    finally:
        if descriptor >= 0:
            os.close(descriptor)
    if len(data) > max_bytes:
        raise FileTooLargeError(path, len(data), max_bytes)
    return data
