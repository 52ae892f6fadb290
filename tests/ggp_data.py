"""Where the tests' GDL reference data is: shipped in tests/data/ggp-base/, or (the full
set, an extra check) in ../shared/gdl/ggp-base/ beside the repository when it is there."""

from __future__ import annotations

from pathlib import Path

SHIPPED_GGP_BASE = Path(__file__).resolve().parent / "data" / "ggp-base"
SHARED_DIR = Path(__file__).resolve().parent.parent.parent / "shared"
SHARED_GGP_BASE = SHARED_DIR / "gdl" / "ggp-base"


def ggp_base_path(kind: str, name: str) -> Path | None:
    """``kind`` is ``"rulesheets"`` (``NAME.kif``) or ``"traces"`` (``NAME.jsonl``): the
    shipped file, else the one in ../shared, else None."""
    filename = f"{name}.kif" if kind == "rulesheets" else f"{name}.jsonl"
    for root in (SHIPPED_GGP_BASE, SHARED_GGP_BASE):
        if (root / kind / filename).is_file():
            return root / kind / filename
    return None


def ggp_base_traced_sheets() -> list[str]:
    """The sheets with both a rule sheet and a trace available, sorted."""
    names = {
        path.stem
        for root in (SHIPPED_GGP_BASE, SHARED_GGP_BASE)
        for path in (root / "traces").glob("*.jsonl")
    }
    return sorted(name for name in names if ggp_base_path("rulesheets", name) is not None)
