"""The one parallel map (agents/parallel.py): worker processes give the results of the
worker called in-process; a deadline cancels what is left and leaves no worker process;
Ctrl-C ends a map with its workers gone and no semaphore leaked; on Ray (skipped without it)
the same results, a killed actor's piece given to its replacement."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from agents.parallel import WorkerPool


class Napper:
    """A worker object: its pieces sleep, or compute something from the piece alone."""

    def __init__(self, offset: int):
        self.offset = offset

    def square(self, value: int) -> int:
        return value * value + self.offset

    def nap(self, seconds: float) -> int:
        time.sleep(seconds)
        return os.getpid()


def test_worker_processes_give_the_in_process_results_and_close_leaves_none(process_alive):
    pool = WorkerPool(Napper, (7,), workers=2, name="napper")
    try:
        pieces = [(value,) for value in range(9)]
        results = dict(pool.map("square", pieces))
        assert results == {i: Napper(7).square(v) for i, (v,) in enumerate(pieces)}
        workers = pool.process_ids()
        assert len(workers) == 2
        assert dict(pool.map("square", [(3,)])) == {0: 16}  # the same workers serve again
        assert pool.process_ids() == workers
    finally:
        pool.close()
    assert not any(process_alive(pid) for pid in workers)
    pool.close()  # idempotent


def test_a_deadline_cancels_the_pieces_left_and_terminates_busy_workers(process_alive):
    pool = WorkerPool(Napper, (0,), workers=2, name="napper")
    try:
        list(pool.map("nap", [(0.0,), (0.0,)]))  # the workers started
        workers = pool.process_ids()
        pieces = [(0.0,), (60.0,), (60.0,), (0.0,)]
        results = dict(pool.map("nap", pieces, deadline=time.perf_counter() + 1.5))
        # The first piece ended before the deadline; two naps held both workers past it, so
        # the last piece never started and the busy workers were terminated.
        assert list(results) == [0]
        assert not any(process_alive(pid) for pid in workers) and pool.process_ids() == []
        # The next map starts fresh workers.
        assert dict(pool.map("square", [(2,)])) == {0: 4}
    finally:
        pool.close()


def test_an_error_in_a_piece_reaches_the_caller_and_the_workers_go():
    pool = WorkerPool(Napper, (0,), workers=1, name="napper")
    with pytest.raises(TypeError):
        list(pool.map("square", [("not a number",)]))
    assert pool.process_ids() == []


def test_ctrl_c_ends_a_map_with_no_worker_left_and_no_semaphore_leaked(tmp_path, process_alive):
    script = tmp_path / "interrupted_map.py"
    script.write_text(
        textwrap.dedent(
            """
            import sys

            sys.path.insert(0, sys.argv[1])
            from agents.parallel import WorkerPool
            from test_parallel import Napper

            if __name__ == "__main__":  # spawn re-imports this file in each worker
                pool = WorkerPool(Napper, (0,), workers=2, name="napper")
                try:
                    for done, _ in enumerate(pool.map("nap", [(0.0,), (0.0,), (60.0,), (60.0,)])):
                        if done == 1:  # both first pieces ended: the naps hold both workers
                            print("workers", *pool.process_ids(), flush=True)
                except KeyboardInterrupt:
                    print("interrupted", flush=True)
                print("workers_left", *pool.process_ids(), flush=True)
            """
        )
    )
    tests = str(Path(__file__).parent)
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(tests).parent), tests])}
    process = subprocess.Popen(
        [sys.executable, str(script), tests],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
    )
    first = process.stdout.readline().split()
    assert first[:1] == ["workers"], process.communicate(timeout=60)
    workers = [int(pid) for pid in first[1:]]
    time.sleep(0.5)  # both workers are napping 60 s
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    assert stdout.split("\n")[:2] == ["interrupted", "workers_left"], stdout
    assert len(workers) == 2 and not any(process_alive(pid) for pid in workers)
    assert "leaked" not in stderr, stderr


ray = pytest.importorskip("ray", reason='Ray pools need Ray: pip install -e ".[distributed]"')


@pytest.mark.slow  # a local Ray start-up: a minute or more on 2 loaded cores
def test_ray_actors_give_the_in_process_results_and_replay_a_killed_actors_piece():
    from ray import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # Ray's workers lack tests/
    pool = WorkerPool(Napper, (3,), workers=2, ray_address="local", name="napper")
    try:
        pieces = [(value,) for value in range(20)]
        results, killed = {}, []
        for index, value in pool.map("square", pieces):
            results[index] = value
            if not killed:
                ray.kill(ray.get_actor("napper-0-0"), no_restart=True)
                killed.append(index)
        assert results == {i: v * v + 3 for i, (v,) in enumerate(pieces)}
        assert pool.actor_pool.replacements == 1
    finally:
        pool.close()
    assert not ray.is_initialized(), "the pool stops the local Ray it started"
