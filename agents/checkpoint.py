"""Atomic checkpoint files and generator states.

A checkpoint is written to a temporary file in the target's directory, flushed to disk,
then renamed over the target with ``os.replace`` (atomic on POSIX), so a process killed
at any moment leaves either the previous checkpoint or the new one, never half a file.
"""

from __future__ import annotations

import os
import random
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import torch


def atomic_torch_save(payload: Any, path: str | Path) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "wb") as handle:
            torch.save(payload, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise


def load_checkpoint(path: str | Path) -> Any:
    return torch.load(path, map_location="cpu", weights_only=False)


def global_rng_state() -> dict[str, Any]:
    """The process-wide generators: Python's ``random``, numpy's legacy one, torch's."""
    return {
        "python": random.getstate(),
        "numpy": np.random.get_state(),
        "torch": torch.get_rng_state(),
    }


def set_global_rng_state(state: dict[str, Any]) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
