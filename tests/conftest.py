"""Shared fixtures: where ../shared/ is (tests that need it skip cleanly without it)."""

from pathlib import Path

import pytest

SHARED_DIR = Path(__file__).resolve().parent.parent.parent / "shared"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED_DIR.is_dir():
        pytest.skip(f"../shared/ not found beside the repository (looked in {SHARED_DIR})")
    return SHARED_DIR
