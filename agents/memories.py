"""Experience memories of the fictitious-play trainers (NFSP, MCNFSP).

- :class:`CircularBuffer`: M_RL, the newest ``capacity`` items (oldest overwritten first);
- :class:`ReservoirBuffer`: M_SL, a uniform sample of everything ever added (Vitter 1985,
  "Random Sampling with a Reservoir", Algorithm R: the n-th item replaces a uniformly
  chosen slot with probability capacity / n);
- :class:`GameReservoir`: ExIt-OOS's memory of whole games with a "decay ratio" beta:
  the n-th game replaces a random stored game with probability min(1, beta capacity / n)
  (beta = 1 is Algorithm R; beta > 1 keeps more recent games; Kitchen & Benedetti 2018).

Both store named numpy columns that grow by doubling up to ``capacity`` rows, so a
memory sized as in the papers (millions of rows) costs only what it holds, and both
checkpoint as their filled rows plus counters.

Memories live in host memory whatever the trainer's device (a replay memory sized as in
the papers would not fit on a GPU, and self-play writes it row by row from the CPU);
``sample_tensors`` gathers a minibatch there and hands it to the device through pinned
memory (:func:`agents.device.to_device`): the same rows, from the same draws, as ``sample``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from agents.device import tensors_on


class _ArrayMemory:
    """Named numpy columns that grow by doubling up to ``capacity`` rows."""

    def __init__(self, capacity: int, columns: dict[str, tuple[tuple[int, ...], Any]]):
        self.capacity = capacity
        self.columns = columns
        self.data = {name: np.zeros((0, *shape), dtype) for name, (shape, dtype) in columns.items()}
        self.size = 0

    def _grow_to(self, needed: int) -> None:
        """Make room for ``needed`` rows (at most ``capacity``), at least doubling."""
        rows = len(self.data[next(iter(self.data))])
        if needed > rows:
            grown = min(self.capacity, max(1024, 2 * rows, needed))
            for name, array in self.data.items():
                bigger = np.zeros((grown, *array.shape[1:]), array.dtype)
                bigger[:rows] = array
                self.data[name] = bigger

    def _slot_for_append(self) -> int:
        self._grow_to(self.size + 1)
        return self.size

    def write(self, slot: int, values: dict[str, Any]) -> None:
        for name, value in values.items():
            self.data[name][slot] = value

    def sample(self, batch_size: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        rows = rng.integers(self.size, size=batch_size)
        return {name: array.take(rows, axis=0) for name, array in self.data.items()}

    def sample_tensors(
        self, batch_size: int, rng: np.random.Generator, device: torch.device
    ) -> dict[str, torch.Tensor]:
        """:meth:`sample`, each column a tensor on ``device`` (module docstring)."""
        return tensors_on(self.sample(batch_size, rng), device)

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

    def add_batch(self, **columns: np.ndarray) -> None:
        """Add ``n`` items at once (each column ``[n, ...]``): the same memory as ``add`` on
        each row in turn. The ``k``-th item ever added goes to slot ``k % capacity`` (while
        not full, that is the next empty row); of ``n`` > ``capacity`` rows only the last
        ``capacity`` stay, as the earlier ones would be overwritten."""
        count = len(next(iter(columns.values())))
        size = min(self.capacity, self.added + count)
        self._grow_to(size)
        kept = min(count, self.capacity)
        slots = (self.added + np.arange(count - kept, count)) % self.capacity
        for name, value in columns.items():
            self.data[name][slots] = value[count - kept :]
        self.size = size
        self.added += count

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

    def add_batch(self, rng: np.random.Generator, **columns: np.ndarray) -> None:
        """Add ``n`` items at once (each column ``[n, ...]``): the same memory and the same
        draws from ``rng`` as ``add`` on each row in turn. Rows go to the free slots while
        there are any; then the ``k``-th of the rest draws its slot uniformly over
        ``0..seen + k`` (one vectorised draw: numpy's bounded integers consume the stream
        element by element, as the scalar calls do), and where two rows draw the same
        slot the later one stays, as it would have overwritten the earlier."""
        count = len(next(iter(columns.values())))
        free = min(count, self.capacity - self.size)
        if free > 0:
            self._grow_to(self.size + free)
            for name, value in columns.items():
                self.data[name][self.size : self.size + free] = value[:free]
            self.size += free
            self.seen += free
        rest = count - max(free, 0)
        if rest <= 0:
            return
        slots = rng.integers(self.seen + 1 + np.arange(rest))
        rows = np.flatnonzero(slots < self.capacity)
        slots = slots[rows]
        _, last_from_end = np.unique(slots[::-1], return_index=True)
        last = len(slots) - 1 - last_from_end  # each slot's last writer
        for name, value in columns.items():
            self.data[name][slots[last]] = value[free:][rows[last]]
        self.seen += rest

    def state_dict(self):
        return {**super().state_dict(), "seen": self.seen}

    def load_state_dict(self, state):
        super().load_state_dict(state)
        self.seen = int(state["seen"])


class GameReservoir:
    """Whole games (each a dict of equally long numpy columns, one row per move), at most
    ``capacity`` of them, the n-th replacing a random one with probability
    ``min(1, decay * capacity / n)``; minibatches are uniform over the stored moves."""

    def __init__(self, capacity: int, decay: float):
        if capacity < 1 or decay <= 0.0:
            raise ValueError(
                f"GameReservoir needs capacity >= 1 and decay > 0, got {capacity} and {decay}"
            )
        self.capacity, self.decay = capacity, decay
        self.games: list[dict[str, np.ndarray]] = []
        self.seen = 0
        self._rows: dict[str, np.ndarray] | None = (
            None  # the stored moves concatenated, until the next add
        )

    def add(self, rng: np.random.Generator, game: dict[str, np.ndarray]) -> None:
        self.seen += 1
        if len(self.games) < self.capacity:
            self.games.append(game)
        elif rng.random() < min(1.0, self.decay * self.capacity / self.seen):
            self.games[int(rng.integers(self.capacity))] = game
        else:
            return
        self._rows = None

    def sample(self, batch_size: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
        if self._rows is None:
            self._rows = {
                name: np.concatenate([g[name] for g in self.games]) for name in self.games[0]
            }
        picks = rng.integers(self.num_moves, size=batch_size)
        return {name: column[picks] for name, column in self._rows.items()}

    def sample_tensors(
        self, batch_size: int, rng: np.random.Generator, device: torch.device
    ) -> dict[str, torch.Tensor]:
        """:meth:`sample`, each column a tensor on ``device`` (module docstring)."""
        return tensors_on(self.sample(batch_size, rng), device)

    @property
    def num_moves(self) -> int:
        return sum(len(next(iter(g.values()))) for g in self.games)

    def __len__(self) -> int:
        return len(self.games)

    def state_dict(self) -> dict[str, Any]:
        return {"seen": self.seen, "games": [dict(g) for g in self.games]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.seen = int(state["seen"])
        self.games = [{k: np.asarray(v) for k, v in g.items()} for g in state["games"]]
        self._rows = None
