"""Shared fixtures: a local two-node Ray cluster (the trainers that run on Ray are tested on
one), and the GDL reference data in ../shared/ beside the repository.

That data is read where it is, never copied into the repository (``../shared/README.md``).
Tests that take the ``shared_dir`` or ``ggp_base_file`` fixture are extra checks against it
(ggp-base's traces and sheets, a published GDL-II sheet with its traces): where ../shared/ is
absent, as in a user's clone, they are deselected and the run's header says so, rather than
skipped one by one.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ggp_data import SHARED_DIR, ggp_base_path

SHARED_FIXTURES = {"shared_dir", "ggp_base_file"}  # the fixtures that read ../shared/
ROOT = Path(__file__).resolve().parent.parent


def interrupt_training_with_workers(arguments: list[str], checkpoint: Path) -> None:
    """Run ``train.py arguments`` until it writes ``checkpoint`` (its self-play workers
    then busy), press Ctrl-C (SIGINT), and check the run ends as a user expects: exit 130,
    no traceback, "interrupted (Ctrl-C)" last, and every process it started (workers, their
    resource tracker) gone within 30 s with nothing reported leaked."""
    process = subprocess.Popen(
        [sys.executable, "train.py", *arguments],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 240
    while not checkpoint.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    workers = _descendants(process.pid)
    assert len(workers) >= 2, "the self-play workers run"
    process.send_signal(signal.SIGINT)  # mid-step: the workers are busy
    _, error = process.communicate(timeout=60)
    assert process.returncode == 130 and "Traceback" not in error, error[-2000:]
    assert "interrupted (Ctrl-C)" in error.strip().splitlines()[-1]
    deadline = time.monotonic() + 30
    while [pid for pid in workers if _running(pid)] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in workers if _running(pid)]
    assert "leaked" not in error, error[-2000:]


def _descendants(pid: int) -> set[int]:
    """The processes below ``pid`` (Linux /proc): its workers and their resource tracker."""
    parents = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # ended while read
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _running(pid: int) -> bool:
    """Whether ``pid`` is a process that has not ended (a zombie has)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.fixture
def process_alive():
    """Whether a process id still names a live process (a worker that should be gone)."""

    def alive(pid: int) -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True

    return alive


@pytest.fixture
def two_node_cluster():
    """Two Ray nodes (raylets) of one CPU each on this machine, joined by this process."""
    ray = pytest.importorskip("ray", reason='Ray is needed: pip install -e ".[distributed]"')
    from ray.cluster_utils import Cluster

    cluster = Cluster(
        initialize_head=True,
        head_node_args={
            "num_cpus": 1,
            "include_dashboard": False,
            "object_store_memory": 100 * 1024**2,
        },
    )
    cluster.add_node(num_cpus=1, object_store_memory=100 * 1024**2)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False)
    try:
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED_DIR.is_dir():  # only when a test is selected by name (deselected otherwise)
        pytest.skip(f"../shared/ not found beside the repository (looked in {SHARED_DIR})")
    return SHARED_DIR


@pytest.fixture(scope="session")
def ggp_base_file():
    """``ggp_base_file("rulesheets", "tictactoe")``: a ggp-base rule sheet or trace."""

    def find(kind: str, name: str) -> Path:
        path = ggp_base_path(kind, name)
        if path is None:
            pytest.skip(f"ggp-base {kind}/{name}: not in ../shared/gdl/ggp-base/")
        return path

    return find


def pytest_collection_modifyitems(config, items):
    if SHARED_DIR.is_dir():
        return

    def needs_shared(item) -> bool:
        return bool(SHARED_FIXTURES.intersection(getattr(item, "fixturenames", ())))

    deselected = [item for item in items if needs_shared(item)]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if not needs_shared(item)]


def pytest_report_header(config):
    if not SHARED_DIR.is_dir():
        return (
            f"../shared/ not found beside the repository ({SHARED_DIR}): the extra checks "
            "against its data are deselected"
        )
    return None
