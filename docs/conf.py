"""Sphinx configuration: MyST Markdown pages, autodoc + napoleon, the Furo theme.

Build: ``sphinx-build -W -n docs docs/_build/html`` (warnings are errors, every
cross-reference must resolve); ``sphinx-build -W -n -b doctest docs docs/_build/doctest``
runs every ``{testcode}`` block. ``_ext/hiddenenvs_pages.py`` writes the env, trainer
and API pages from the code before the build reads anything.
"""

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS / "_ext"))
sys.path.insert(0, str(DOCS.parent))  # agents/ and the examples are imported from the checkout

project = "hiddenenvs"
author = "hiddenenvs contributors"
copyright = "hiddenenvs contributors"
extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.doctest",
    "mathml_math",  # math as MathML at build time: no script, no CDN (docs/_ext/mathml_math.py)
    "hiddenenvs_pages",
]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build", "trainer_notes", "Thumbs.db", ".DS_Store"]
html_theme = "furo"
html_math_renderer = "mathml"  # docs/_ext/mathml_math.py
html_static_path = ["_static"]
html_css_files = ["hiddenenvs.css"]  # the envs gallery's thumbnails
html_title = "hiddenenvs"
myst_enable_extensions = ["colon_fence", "dollarmath", "deflist", "attrs_inline"]
myst_heading_anchors = 3
default_role = "literal"  # `x` in a docstring is code, as in Markdown

autodoc_member_order = "bysource"
# A method without a docstring of its own shows none: inherited ones would be
# gymnasium's and torch's (their references out of reach offline) or our base class's,
# documented on its own page.
autodoc_inherit_docstrings = False
autodoc_typehints = "description"
autodoc_typehints_format = "short"
# A package's page documents what the package defines; what it re-exports (``__all__``) is
# documented once, in the module that defines it.
# Undocumented members too; module constants, which autodoc leaves out when they carry no
# doc comment, are listed by the API page generator (docstrings refer to limits by name).
autodoc_default_options = {"ignore-module-all": True, "undoc-members": True}
napoleon_google_docstring = True
napoleon_numpy_docstring = False

# The examples run as they are written; doctest's default flags plus tolerance of spacing.
doctest_default_flags = 0
import doctest as _doctest  # noqa: E402

doctest_default_flags = (
    _doctest.ELLIPSIS | _doctest.NORMALIZE_WHITESPACE | _doctest.DONT_ACCEPT_TRUE_FOR_1
)

nitpicky = True
# Third-party types: the build stays offline (no intersphinx inventories to download), so
# references to numpy, torch, gymnasium, PettingZoo, Ray, SB3 and the standard library's
# less common types stay plain text instead of links.
THIRD_PARTY = "np|numpy|torch|nn|gymnasium|gym|spaces|pettingzoo|ray|stable_baselines3|sb3_contrib|yaml|clingo|matplotlib|scipy|tianshou|torchrl"
STANDARD_LIBRARY = "collections|pathlib|enum|abc|typing|dataclasses|concurrent|threading|multiprocessing|random|io|os|subprocess|socket|http|json|argparse|logging|types|contextlib|functools|itertools|queue|datetime|time|math|heapq|pickle|sqlite3|hashlib|signal|copy|struct|tempfile|shutil|warnings|weakref|operator|inspect|string|textwrap|re|bisect|array|numbers|fractions|statistics|secrets|uuid|zlib|gzip|csv|html|urllib|asyncio|selectors|traceback|builtins"
nitpick_ignore_regex = [
    (r"py:.*", rf"({THIRD_PARTY}|{STANDARD_LIBRARY})(\..*)?"),
    # PettingZoo's type variables in the signatures of our AEC and parallel envs.
    (r"py:class", r"AgentID|ObsType|ActionType|ActType|AECEnv|ParallelEnv"),
    # autodoc_typehints_format "short" writes those standard and third-party classes unqualified.
    (
        r"py:class",
        r"Path|Module|Tensor|ndarray|Generator|Callable|Sequence|Iterator|Iterable|Hashable|Mapping",
    ),
]
