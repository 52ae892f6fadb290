"""Shared fixtures: the GDL reference data (shipped in tests/data/, the full set in
../shared/ when it is beside the repository).

Tests that take the ``shared_dir`` fixture check data that cannot ship with the tests (a
GDL-II sheet and its traces whose licence is not known): where ../shared/ is absent they
are deselected, and the run's header says how many, rather than skipped one by one.
"""

from pathlib import Path

import pytest
from ggp_data import SHARED_DIR, ggp_base_path


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
            pytest.skip(f"ggp-base {kind}/{name}: neither in tests/data/ nor in ../shared/")
        return path

    return find


def pytest_collection_modifyitems(config, items):
    if SHARED_DIR.is_dir():
        return
    needs_shared = [item for item in items if "shared_dir" in getattr(item, "fixturenames", ())]
    if needs_shared:
        config.hook.pytest_deselected(items=needs_shared)
        items[:] = [item for item in items if "shared_dir" not in getattr(item, "fixturenames", ())]


def pytest_report_header(config):
    if not SHARED_DIR.is_dir():
        return (
            f"../shared/ not found beside the repository ({SHARED_DIR}): the extra checks "
            "against its unshippable data are deselected"
        )
    return None
