"""README.md stays short and true: the CI test command, every env, links that resolve,
and Python snippets that run.

Everything else the README once held lives in docs/ (guides, results, generated pages);
tests/test_docs.py checks the site's generator and its links.
"""

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import hiddenenvs

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
PYTHON_BLOCKS = re.findall(r"```python\n(.+?)```", README, flags=re.DOTALL)
MAX_LINES = 200


def test_the_readme_fits_on_two_screens():
    assert len(README.splitlines()) <= MAX_LINES, f"README.md has {len(README.splitlines())} lines"


def test_the_ci_test_command_installs_torch_first_and_runs_pytest():
    # .ci/run reads the first line of the ```bash block after the marker, verbatim.
    block = re.search(r"<!-- test-command -->\s*```bash\n(.+?)\n```", README, flags=re.DOTALL)
    assert block, "README has no test command after <!-- test-command -->"
    command = block.group(1)
    assert command.startswith("pip install torch==2.13.0") and "pytest" in command


def test_the_quickstart_command_is_there():
    assert "python train.py --config configs/quickstart.yaml" in README
    assert (ROOT / "configs" / "quickstart.yaml").is_file()


def test_the_env_table_is_the_registrys():
    """README.md's env table is generated (python -m hiddenenvs.envs --readme): a new game's
    registry entry reaches it without editing the README by hand."""
    from hiddenenvs.registry import readme_env_table, with_readme_table

    assert with_readme_table(README, readme_env_table(ROOT)) == README, (
        "run: python -m hiddenenvs.envs --readme"
    )
    rows = set(re.findall(r"^\| `([a-z_0-9]+)` \|", README, flags=re.MULTILINE))
    assert set(hiddenenvs.registry.REGISTRY) <= rows


def test_every_trainer_has_a_row_in_the_trainer_table():
    from agents.config import TRAINERS

    rows = " ".join(re.findall(r"^\| (`[^|]+`) \|", README, flags=re.MULTILINE))
    missing = sorted(name for name in TRAINERS if f"`{name}`" not in rows)
    assert not missing, f"trainers without a README row: {missing}"


def test_relative_links_point_at_files_of_the_repository():
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README)
    local = [t for t in targets if not re.match(r"[a-z]+://", t)]
    assert local, "the README links no file of the repository"
    missing = [t for t in local if not (ROOT / t).exists()]
    assert not missing, f"README links to missing files: {missing}"


def test_python_snippets_parse():
    assert len(PYTHON_BLOCKS) == 3  # an env loop, a training run, a leaderboard
    for block in PYTHON_BLOCKS:
        ast.parse(block)


@pytest.mark.parametrize("index", range(len(PYTHON_BLOCKS)))
def test_python_snippets_run(index, tmp_path):
    # In a scratch directory that sees the shipped configs, so runs/ lands there.
    (tmp_path / "configs").symlink_to(ROOT / "configs")
    result = subprocess.run(
        [sys.executable, "-c", PYTHON_BLOCKS[index]],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 0, f"README snippet {index} failed:\n{result.stderr[-3000:]}"
