"""One parallel map: pieces of work over worker processes (``spawn``) or Ray actors, with a
deadline.

A :class:`WorkerPool` holds ``workers`` copies of one worker object,
``worker_class(*worker_arguments)``, each built once in its own process (or Ray actor) and
kept as long as the pool, so what a worker builds (a game tree, a network, agents) is built
once, not per piece. :meth:`WorkerPool.map` calls one of its methods on each piece,
``getattr(worker, method)(*piece)``, and yields ``(index, result)`` as the pieces finish, in
any order; which worker plays which piece is not fixed, so a piece's result must depend on
the piece alone (seed it from the piece). Pieces and results travel pickled: send numpy
arrays, not torch tensors (``multiprocessing`` passes a tensor's storage by file descriptor
through its resource sharer, whose handshake a terminated worker breaks, noisily).

Where the workers run:

- ``ray_address=None``: processes of ``multiprocessing``'s ``spawn`` context (no forked
  torch or OpenMP state); they ignore Ctrl-C, which the caller handles.
- ``ray_address="local"``: Ray actors on a Ray of the pool's own on this machine;
  ``"auto"`` or ``host:port`` (of ``ray start --head``): actors on that cluster, one
  machine or many (:class:`agents.actor_pool.ActorPool`). A piece whose actor dies (a
  crash, ``ray.kill``, a lost node) is given again to the slot's replacement.

The deadline (a ``time.perf_counter()`` time) ends a map: pieces not started are cancelled,
pieces running get ``STOP_SECONDS`` to end (the caller passes the deadline inside the piece,
see :func:`unix_deadline`, so a worker stops its own work), and workers still busy then are
terminated; the results of pieces not finished by the deadline are dropped. Ctrl-C, an
exception in a piece, or a caller that stops reading the map terminates the workers at once
(:meth:`WorkerPool.close`): no worker process and no semaphore outlives the pool. The next
map after a termination starts fresh workers.
"""

from __future__ import annotations

import multiprocessing
import signal
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any

import numpy as np

# Past a deadline the running pieces get this long to notice it before their workers go.
STOP_SECONDS = 2.0

_WORKER: Any = None  # this worker process's worker object


def unix_deadline(deadline: float | None) -> float | None:
    """A ``time.perf_counter()`` deadline as a ``time.time()`` one, to send to a worker
    (another process, or a Ray actor on another machine: clocks agree to well under a second)."""
    return None if deadline is None else time.time() + (deadline - time.perf_counter())


def local_deadline(unix: float | None) -> float | None:
    """:func:`unix_deadline`'s answer back as this process's ``time.perf_counter()`` time."""
    return None if unix is None else time.perf_counter() + (unix - time.time())


def _start_process_worker(worker_class: type, worker_arguments: tuple) -> None:
    global _WORKER
    # Ctrl-C reaches the whole process group: the caller, not its workers, decides what stops.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _WORKER = worker_class(*worker_arguments)


def _call_process_worker(method: str, piece: tuple) -> Any:
    return getattr(_WORKER, method)(*piece)


class RayWorker:
    """A Ray actor holding one worker object (the pool's actor class)."""

    def __init__(self, worker_class: type, worker_arguments: tuple):
        self.worker = worker_class(*worker_arguments)

    def call(self, method: str, piece: tuple) -> Any:
        return getattr(self.worker, method)(*piece)


def terminate_process_pool(pool: ProcessPoolExecutor) -> None:
    """Shut ``pool`` down without waiting for its running pieces: its worker processes are
    terminated (killed if they linger), so none outlives a cut map, an error or Ctrl-C."""
    # ProcessPoolExecutor (before Python 3.14's terminate_workers) waits for running tasks;
    # its process table is the only handle on them.
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(timeout=STOP_SECONDS)
        if process.is_alive():
            process.kill()
            process.join()
    # Its queues and call-queue semaphores, released now rather than at interpreter exit.
    pool.shutdown(wait=True)


def seeded_shares(
    rng: np.random.Generator, episodes: int, workers: int
) -> list[tuple[list[int], int]]:
    """A self-play step's ``episodes`` seeds drawn from ``rng``, shared out among at most
    ``workers`` pieces: each piece's episode seeds and its own seed (drawn after them)."""
    seeds = [int(seed) for seed in rng.integers(2**31, size=episodes)]
    shares = [share for share in np.array_split(seeds, workers) if len(share)]
    piece_seeds = rng.integers(2**63, size=len(shares))
    return [([int(s) for s in share], int(seed)) for share, seed in zip(shares, piece_seeds)]


class WorkerPool:
    """``workers`` workers ``worker_class(*worker_arguments)`` in processes or on Ray
    (module docstring); started by the first :meth:`map`, stopped by :meth:`close`."""

    def __init__(
        self,
        worker_class: type,
        worker_arguments: tuple,
        workers: int,
        ray_address: str | None = None,
        name: str = "worker",
        where: str = "ray_address",
        local_num_cpus: int | None = None,
    ):
        if workers < 1:
            raise ValueError(f"{name}s: a worker pool needs at least one worker, got {workers}")
        self.worker_class, self.worker_arguments = worker_class, worker_arguments
        self.workers, self.ray_address = workers, ray_address
        self.name, self.where, self.local_num_cpus = name, where, local_num_cpus
        self._processes: ProcessPoolExecutor | None = None
        self._actors: Any = None  # an agents.actor_pool.ActorPool

    @property
    def on_ray(self) -> bool:
        return self.ray_address is not None

    @property
    def actor_pool(self) -> Any:
        """The running :class:`agents.actor_pool.ActorPool` (Ray), or None."""
        return self._actors

    def process_ids(self) -> list[int]:
        """The worker processes running now (processes only; for tests and diagnostics)."""
        table = getattr(self._processes, "_processes", None) or {}
        return [process.pid for process in table.values() if process.is_alive()]

    def map(
        self, method: str, pieces: Sequence[tuple], deadline: float | None = None
    ) -> Iterator[tuple[int, Any]]:
        """``(index, getattr(worker, method)(*pieces[index]))`` for each piece, as they finish
        (any order); past ``deadline`` the rest are cancelled (module docstring)."""
        if not pieces:
            return
        finished = False
        try:
            if self.on_ray:
                yield from self._map_on_ray(method, pieces, deadline)
            else:
                yield from self._map_in_processes(method, pieces, deadline)
            finished = True
        finally:
            if not finished:  # an error, Ctrl-C or a caller that stopped reading: workers go
                self.close()

    def map_all(
        self, method: str, pieces: Sequence[tuple], deadline: float | None = None
    ) -> list[Any] | None:
        """Every piece's result in piece order, or None when the deadline cut any (or a
        worker answered None: its own deadline passed): a self-play step then keeps nothing."""
        results = dict(self.map(method, pieces, deadline))
        if len(results) < len(pieces) or any(result is None for result in results.values()):
            return None
        return [results[index] for index in range(len(pieces))]

    def _map_in_processes(
        self, method: str, pieces: Sequence[tuple], deadline: float | None
    ) -> Iterator[tuple[int, Any]]:
        if self._processes is None:
            # A worker that fails to start raises BrokenProcessPool here, no hang.
            self._processes = ProcessPoolExecutor(
                self.workers,
                initializer=_start_process_worker,
                initargs=(self.worker_class, self.worker_arguments),
                mp_context=multiprocessing.get_context("spawn"),
            )
        futures: dict[Future, int] = {
            self._processes.submit(_call_process_worker, method, piece): index
            for index, piece in enumerate(pieces)
        }
        pending = set(futures)
        while pending:
            timeout = None if deadline is None else max(0.0, deadline - time.perf_counter())
            done, pending = wait(pending, timeout=timeout, return_when=FIRST_COMPLETED)
            for future in done:
                yield futures[future], future.result()
            if not done:  # the deadline: cancel what has not started; the rest stop
                for future in pending:
                    future.cancel()
                _, late = wait(pending, timeout=STOP_SECONDS)
                if late:  # a worker still busy: the workers go, not the caller
                    self.close()
                return

    def _map_on_ray(
        self, method: str, pieces: Sequence[tuple], deadline: float | None
    ) -> Iterator[tuple[int, Any]]:
        from agents.actor_pool import ActorPool, Finished

        if self._actors is None:
            address = self.ray_address
            self._actors = ActorPool(
                RayWorker,
                lambda slot, generation: (self.worker_class, self.worker_arguments),
                self.workers,
                address=None if address == "local" else address,
                local_num_cpus=self.local_num_cpus,
                name=self.name,
                where=self.where,
            )
            # Actors the cluster cannot place (its CPUs taken) are not waited for past the
            # deadline: their pieces time out below like any late piece.
            self._actors.start(
                None if deadline is None else max(0.0, deadline - time.perf_counter())
            )
        actors = self._actors
        waiting = list(reversed(range(len(pieces))))  # popped from the end: index order

        def give(slot: int) -> None:
            index = waiting.pop()
            actors.submit(slot, "call", method, pieces[index], tag=index)

        for slot in range(min(actors.num_actors, len(waiting))):
            give(slot)
        while actors.in_flight:
            left = None if deadline is None else deadline - time.perf_counter()
            result = actors.next(timeout=None if left is None else max(0.0, left) + STOP_SECONDS)
            if result is None:  # past the deadline and its grace: the actors go
                self.close()
                return
            if isinstance(result, Finished):
                if deadline is None or time.perf_counter() < deadline:
                    yield result.tag, result.value
            else:  # the slot has a fresh actor: the lost piece goes to it again
                waiting.append(result.tag)
            if waiting and (deadline is None or time.perf_counter() < deadline):
                give(result.slot)

    def close(self) -> None:
        """Stop the workers now (pieces running are abandoned), and a local Ray this pool
        started; safe to call again, and after an exception or Ctrl-C."""
        processes, self._processes = self._processes, None
        actors, self._actors = self._actors, None
        if processes is not None:
            terminate_process_pool(processes)
        if actors is not None:
            actors.close()
