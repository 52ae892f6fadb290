"""Files written whole or not at all.

:func:`atomic_write` writes to a temporary file beside the target, flushes and fsyncs it,
renames it over the target with ``os.replace`` (atomic on POSIX) and fsyncs the directory,
so a reader (or a crash) sees the old file or the new one, never half of one. Used by the
GGP manager's match records and by the trainers' checkpoints (:mod:`agents.checkpoint`).
"""

from __future__ import annotations

import os
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
