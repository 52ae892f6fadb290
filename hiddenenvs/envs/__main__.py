"""``python -m hiddenenvs.envs --readme``: rewrite README.md's env table from the registry
(:func:`hiddenenvs.registry.readme_env_table`); without ``--readme``, print it."""

import argparse
from pathlib import Path

from hiddenenvs.registry import readme_env_table, with_readme_table

parser = argparse.ArgumentParser(description="The README's env table, from the registry.")
parser.add_argument("--readme", action="store_true", help="rewrite README.md's env table in place")
arguments = parser.parse_args()
repository = Path(__file__).resolve().parent.parent.parent
if arguments.readme:
    readme = repository / "README.md"
    readme.write_text(with_readme_table(readme.read_text(), readme_env_table(repository)))
else:
    print(readme_env_table(repository))
