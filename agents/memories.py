"""Experience memories of the fictitious-play trainers (NFSP, MCNFSP).

- :class:`CircularBuffer`: M_RL, the newest ``capacity`` items (oldest overwritten first);
- :class:`ReservoirBuffer`: M_SL, a uniform sample of everything ever added (Vitter 1985,
  "Random Sampling with a Reservoir", Algorithm R: the n-th item replaces a uniformly
  chosen slot with probability capacity / n).

Both store named numpy columns that grow by doubling up to ``capacity`` rows, so a
memory sized as in the papers (millions of rows) costs only what it holds, and both
checkpoint as their filled rows plus counters.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class _ArrayMemory:
    """Named numpy columns that grow by doubling up to ``capacity`` rows."""

    def __init__(self, capacity: int, columns: dict[str, tuple[tuple[int, ...], Any]]):
        self.capacity = capacity
        self.columns = columns
        self.data = {name: np.zeros((0, *shape), dtype) for name, (shape, dtype) in columns.items()}
        self.size = 0

    def _slot_for_append(self) -> int:
        rows = len(self.data[next(iter(self.data))])
        if self.size == rows:
            grown = min(self.capacity, max(1024, 2 * rows))
            for name, array in self.data.items():
                bigger = np.zeros((grown, *array.shape[1:]), array.dtype)
                bigger[:rows] = array
                self.data[name] = bigger
        return self.size

    def write(self, slot: int, values: dict[str, Any]) -> None:
        for name, value in values.items():
            self.data[name][slot] = value

    def sample(self, batch_size: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        rows = rng.integers(self.size, size=batch_size)
        return {name: array[rows] for name, array in self.data.items()}

    def __len__(self) -> int:
        return self.size

    def state_dict(self) -> dict[str, Any]:
        return {"size": self.size, "data": {k: v[: self.size].copy() for k, v in self.data.items()}}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.size = int(state["size"])
        self.data = {k: np.asarray(v).copy() for k, v in state["data"].items()}


class CircularBuffer(_ArrayMemory):
    """M_RL: the newest ``capacity`` transitions; the oldest is overwritten first."""

    def __init__(self, capacity, columns):
        super().__init__(capacity, columns)
        self.added = 0

    def add(self, **values) -> None:
        slot = self._slot_for_append() if self.size < self.capacity else self.added % self.capacity
        self.write(slot, values)
        self.size = min(self.size + 1, self.capacity)
        self.added += 1

    def state_dict(self):
        return {**super().state_dict(), "added": self.added}

    def load_state_dict(self, state):
        super().load_state_dict(state)
        self.added = int(state["added"])


class ReservoirBuffer(_ArrayMemory):
    """M_SL: a uniform sample of everything ever added (Vitter's Algorithm R)."""

    def __init__(self, capacity, columns):
        super().__init__(capacity, columns)
        self.seen = 0

    def add(self, rng: np.random.Generator, **values) -> None:
        if self.size < self.capacity:
            self.write(self._slot_for_append(), values)
            self.size += 1
        else:
            slot = int(rng.integers(self.seen + 1))  # uniform over 0..seen
            if slot < self.capacity:
                self.write(slot, values)
        self.seen += 1

    def state_dict(self):
        return {**super().state_dict(), "seen": self.seen}

    def load_state_dict(self, state):
        super().load_state_dict(state)
        self.seen = int(state["seen"])
