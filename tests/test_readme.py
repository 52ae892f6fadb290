"""README.md stays whole: its sections, the CI test command, every env, valid examples.

A rewrite once dropped a whole section without any test noticing; these checks make that
a red run.
"""

import ast
import re
from pathlib import Path

import hiddenenvs

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()

SECTIONS = [
    "Set-up on a fresh machine", "Envs", "The game model", "Exact analysis", "Benchmarks",
    "Goofspiel, Liar's Dice and Othello", "Leaderboard", "Combat simulator",
    "GDL rule sheets we ship", "GDL-II env", "Classic GGP players and the GGP match protocol",
    "Training", "Stable-Baselines3 on any env", "MARL libraries and playing yourself",
    "Play against an agent yourself", "Safety and limits",
]


def test_every_section_is_there():
    headings = re.findall(r"^#{2,3} (.+)$", README, flags=re.MULTILINE)
    missing = [s for s in SECTIONS if not any(h.startswith(s) for h in headings)]
    assert not missing, f"README lost its sections {missing}"


def test_the_ci_test_command_installs_torch_first_and_runs_pytest():
    block = re.search(r"<!-- test-command -->\s*```bash\n(.+?)\n```", README, flags=re.DOTALL)
    assert block, "README has no test command after <!-- test-command -->"
    command = block.group(1)
    assert command.startswith("pip install torch==2.13.0") and "pytest" in command


def test_every_registered_env_has_a_row_in_the_env_table():
    rows = set(re.findall(r"^\| `([a-z_0-9]+)` \|", README, flags=re.MULTILINE))
    missing = sorted(set(hiddenenvs.registry.REGISTRY) - rows)
    assert not missing, f"envs without a README row: {missing}"


def test_python_examples_parse():
    blocks = re.findall(r"```python\n(.+?)```", README, flags=re.DOTALL)
    assert len(blocks) >= 5
    for block in blocks:
        ast.parse(block)
