"""Where the tests' GDL reference data is: ``../shared/gdl/ggp-base/`` beside the repository.

That data is read where it is, never copied into the repository (``../shared/README.md``);
without ``../shared/`` the tests that need it are deselected (``conftest.py``).
"""

from __future__ import annotations

from pathlib import Path

SHARED_DIR = Path(__file__).resolve().parent.parent.parent / "shared"
SHARED_GGP_BASE = SHARED_DIR / "gdl" / "ggp-base"


def ggp_base_path(kind: str, name: str) -> Path | None:
    """``kind`` is ``"rulesheets"`` (``NAME.kif``) or ``"traces"`` (``NAME.jsonl``): the
    file in ../shared, or None."""
    filename = f"{name}.kif" if kind == "rulesheets" else f"{name}.jsonl"
    path = SHARED_GGP_BASE / kind / filename
    return path if path.is_file() else None


def ggp_base_traced_sheets() -> list[str]:
    """The sheets with both a rule sheet and a trace in ../shared, sorted."""
    names = {path.stem for path in (SHARED_GGP_BASE / "traces").glob("*.jsonl")}
    return sorted(name for name in names if ggp_base_path("rulesheets", name) is not None)
