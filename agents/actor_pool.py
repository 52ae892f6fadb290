"""A pool of Ray actors in numbered slots: what ANFSP's actor-learners and evaluate.py's
match players share (``pip install -e ".[distributed]"``).

With ``address=None`` :meth:`ActorPool.start` starts a local Ray with ``local_num_cpus``
CPUs and :meth:`ActorPool.close` stops it; with ``address`` (``"auto"`` or the
``host:port`` of ``ray start --head``) it joins that cluster and leaves it running, so the
same config runs on one machine or on many. Each slot holds one actor, built by
``actor_class(*actor_arguments(slot, generation))`` (``generation`` counts the actors a
slot has had, so a replacement can draw fresh seeds). Calls go to a slot (several may wait
at one actor, which runs them in turn); :meth:`next` returns the first one to finish, in
any order. An actor that dies (``ray.kill``, a crash, a lost node) is replaced in its slot
once, before :meth:`next` reports the first of its calls as lost (each of its calls in
flight is reported lost), so the caller only decides what to resubmit; many deaths in a
row without a finished call mean a broken set-up (the package missing on a node) and raise.
"""

from __future__ import annotations

import math
import socket
from dataclasses import dataclass
from typing import Any, Callable

CONNECT_SECONDS = 10.0
RAY_MISSING = 'Ray is needed here: pip install -e ".[distributed]" (ray>=2.9)'


class ClusterError(RuntimeError):
    """A Ray cluster that cannot serve the pool (none at the address, too few CPUs, actors
    that keep dying), said in one line."""


def import_ray():
    try:
        import ray
    except ImportError:
        raise ImportError(RAY_MISSING) from None
    return ray


@dataclass
class Finished:
    """A call that returned: its slot, the caller's tag and the value."""

    slot: int
    tag: Any
    value: Any


@dataclass
class Lost:
    """A call whose actor died; the slot already holds a fresh actor."""

    slot: int
    tag: Any
    error: Exception


class ActorPool:
    """``num_actors`` Ray actors of ``actor_class`` (module docstring)."""

    def __init__(
        self,
        actor_class: type,
        actor_arguments: Callable[[int, int], tuple],
        num_actors: int,
        actor_num_cpus: float = 1.0,
        address: str | None = None,
        local_num_cpus: int | None = None,
        name: str = "actor",
        where: str = "address",
    ):
        self.actor_class, self.actor_arguments = actor_class, actor_arguments
        self.num_actors, self.actor_num_cpus = num_actors, actor_num_cpus
        self.address, self.name, self.where = address, name, where
        self.local_num_cpus = local_num_cpus or max(
            1, math.ceil(num_actors * actor_num_cpus - 1e-9)
        )
        self.generations = [0] * num_actors  # actors started in each slot, ever
        self.replacements = 0
        self.actors: list[Any] = []
        self._in_flight: dict[Any, tuple[int, Any, Any]] = {}  # object ref -> (slot, tag, actor)
        self._started_ray = False
        self._deaths_in_a_row = 0

    @property
    def running(self) -> bool:
        return bool(self.actors)

    def start(self, ready_timeout: float | None = None) -> None:
        """Start (or join) Ray and one actor per slot, waiting up to ``ready_timeout``
        seconds (None: as long as it takes) for them to be built; a no-op when running."""
        if self.actors:
            return
        ray = import_ray()
        if not ray.is_initialized():
            if self.address is None:
                # "local": a Ray of our own even where RAY_ADDRESS or a `ray start` cluster
                # on this machine would otherwise be joined (and refuse num_cpus).
                ray.init(
                    address="local",
                    num_cpus=self.local_num_cpus,
                    include_dashboard=False,
                    object_store_memory=200 * 1024**2,
                    log_to_driver=False,
                )
            else:
                self._check_reachable(self.address)
                try:
                    ray.init(address=self.address, log_to_driver=False)
                except (ConnectionError, RuntimeError, ValueError) as error:
                    raise ClusterError(
                        f"{self.where}={self.address!r}: no Ray cluster there ({error}); "
                        f"start one with `ray start --head` and pass its address"
                    ) from None
            self._started_ray = True
        available = ray.cluster_resources().get("CPU", 0.0)
        needed = self.num_actors * self.actor_num_cpus
        if available + 1e-9 < needed:
            raise ClusterError(
                f"the Ray cluster has {available:g} CPUs, the {self.num_actors} {self.name}s "
                f"need {needed:g} ({self.actor_num_cpus} each); add nodes or use fewer"
            )
        self.actors = [None] * self.num_actors
        for slot in range(self.num_actors):
            self._start_actor(slot)
        # Every actor built before the first call: on a loaded cluster one node's worker can
        # take many seconds to start, and the caller would otherwise run on the others alone.
        # A construction that fails shows as the slot's first lost call, as any death does.
        ready = [actor.__ray_ready__.remote() for actor in self.actors]
        ray.wait(ready, num_returns=len(ready), timeout=ready_timeout)

    def _check_reachable(self, address: str) -> None:
        """Fail in seconds on a host:port nobody listens at (Ray itself retries for minutes)."""
        if address == "auto":
            return
        host, _, port = address.removeprefix("ray://").rpartition(":")
        if not host or not port.isdigit():
            raise ClusterError(
                f"{self.where}={self.address!r}: expected 'auto' or host:port of `ray start --head`"
            )
        try:
            socket.create_connection((host, int(port)), timeout=CONNECT_SECONDS).close()
        except OSError as error:
            raise ClusterError(
                f"{self.where}={self.address!r}: no Ray cluster there ({error}); start one "
                f"with `ray start --head` and pass its address"
            ) from None

    def _start_actor(self, slot: int) -> None:
        ray = import_ray()
        generation = self.generations[slot]
        self.generations[slot] += 1
        self.actors[slot] = (
            ray.remote(self.actor_class)
            .options(
                num_cpus=self.actor_num_cpus,
                name=f"{self.name}-{slot}-{generation}",
            )
            .remote(*self.actor_arguments(slot, generation))
        )

    def submit(self, slot: int, method: str, *arguments, tag: Any = None) -> None:
        """Call ``method(*arguments)`` on the slot's actor; :meth:`next` reports it."""
        reference = getattr(self.actors[slot], method).remote(*arguments)
        self._in_flight[reference] = (slot, tag, self.actors[slot])

    @property
    def in_flight(self) -> int:
        return len(self._in_flight)

    def next(self, timeout: float | None = None) -> Finished | Lost | None:
        """The first call in flight to end (there must be one); None when none ends within
        ``timeout`` seconds (the calls stay in flight)."""
        ray = import_ray()
        ready, _ = ray.wait(list(self._in_flight), num_returns=1, timeout=timeout)
        if not ready:
            return None
        (reference,) = ready
        slot, tag, actor = self._in_flight.pop(reference)
        try:
            value = ray.get(reference)
        except ray.exceptions.RayActorError as error:  # killed, crashed or its node lost
            if (
                actor is not self.actors[slot]
            ):  # another call to that actor told us: replaced already
                return Lost(slot, tag, error)
            self._deaths_in_a_row += 1
            if self._deaths_in_a_row > 2 * self.num_actors:  # not a fault: a broken set-up
                raise ClusterError(
                    f"{self.name}s keep dying ({self._deaths_in_a_row} in a row without a "
                    f"result; is this package installed on every Ray node?); last error: "
                    f"{error}"
                ) from None
            self.replacements += 1
            self._start_actor(slot)
            return Lost(slot, tag, error)
        self._deaths_in_a_row = 0
        return Finished(slot, tag, value)

    def close(self) -> None:
        """Stop the actors now (calls in flight are dropped), and the local Ray if this pool
        started it; safe to call again, and after an exception or Ctrl-C."""
        if not self.actors and not self._started_ray:
            return
        ray = import_ray()
        actors, self.actors, self._in_flight = self.actors, [], {}
        started_ray, self._started_ray = self._started_ray, False
        try:
            for actor in actors:
                if actor is not None:
                    ray.kill(actor, no_restart=True)
        finally:
            if started_ray:
                ray.shutdown()
