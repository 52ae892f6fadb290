"""Build step for compiled modules: every .pyx under hiddenenvs/ and agents/ is cythonized.

A rebuild with nothing changed compiles nothing: a module is cythonized again only when
its ``.c`` is missing or older than its ``.pyx`` (or a ``.pxd``/``.pxi`` beside it), and
compiled again only when its built file in the source tree (where ``pip install -e .``
and ``build_ext --inplace`` put it) is older than its ``.c``; otherwise that file is
reused. (Cython's own check counts the numpy headers of pip's fresh build environment as
changed, and setuptools compiles into a new temporary folder on every install: together
they redid all modules every time.) Delete a module's ``.c`` to force both.

A wheel also carries copies of the checkout's ``train.py``, ``evaluate.py`` and
``configs/*.yaml`` under ``agents/_shipped/``, for the ``hiddenenvs`` command
(``agents/cli.py``) outside a checkout.
"""

import os
import re
import shutil
import sys
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py
from setuptools.modified import newer_group

ROOT = Path(__file__).parent
JOBS = os.cpu_count() or 1  # modules cythonized and compiled at once
# Cython's pool of processes needs fork (spawn, the default on macOS and Windows, would
# start setup.py again in each worker).
CYTHON_JOBS = JOBS if sys.platform.startswith("linux") else 0
COMPILER_DIRECTIVES = {"language_level": 3, "boundscheck": False, "wraparound": False}
SHIPPED_FILES = [
    "train.py",
    "evaluate.py",
    *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "configs").glob("*.yaml")),
]


def extension(path: Path, source: Path) -> Extension:
    return Extension(
        ".".join(path.with_suffix("").parts),
        [str(source)],
        include_dirs=[numpy.get_include()],
        extra_compile_args=["/O2"] if sys.platform == "win32" else ["-O3"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )


def cimported_declarations(pyx: Path) -> list[Path]:
    """The ``.pxd`` files of this checkout that ``pyx`` cimports from other folders
    (``from hiddenenvs.envs.combat._tick cimport ...``)."""
    names = re.findall(r"^from\s+((?:hiddenenvs|agents)\.[\w.]+)\s+cimport", pyx.read_text(), re.M)
    paths = (Path(*name.split(".")).with_suffix(".pxd") for name in names)
    return [path for path in paths if path.is_file()]


def needs_cython(pyx: Path) -> bool:
    """Whether ``pyx``'s C file is missing or older than the module's own Cython sources
    (the ``.pxd`` and ``.pxi`` files beside it and those it cimports)."""
    c_file = pyx.with_suffix(".c")
    if not c_file.is_file():
        return True
    sources = [pyx, *pyx.parent.glob("*.pxd"), *pyx.parent.glob("*.pxi")]
    sources += cimported_declarations(pyx)
    return c_file.stat().st_mtime < max(source.stat().st_mtime for source in sources)


def extensions() -> list[Extension]:
    modules = sorted(
        path for package in ("hiddenenvs", "agents") for path in Path(package).rglob("*.pyx")
    )
    stale = [pyx for pyx in modules if needs_cython(pyx)]
    built = (
        cythonize(
            [extension(pyx, pyx) for pyx in stale],
            compiler_directives=COMPILER_DIRECTIVES,
            nthreads=CYTHON_JOBS,
        )
        if stale
        else []
    )
    current = [extension(pyx, pyx.with_suffix(".c")) for pyx in modules if pyx not in stale]
    return built + current


class BuildExtReusingBuiltModules(build_ext):
    """build_ext that copies a module's built file from the source tree instead of
    compiling it again when that file is newer than the module's sources."""

    def build_extension(self, ext):
        built = ROOT / self.get_ext_filename(ext.name)
        if built.is_file() and not newer_group(
            [*ext.sources, *ext.depends], str(built), missing="newer"
        ):
            target = Path(self.get_ext_fullpath(ext.name))
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.resolve() != built.resolve():
                shutil.copyfile(built, target)
            return
        super().build_extension(ext)


class BuildPyWithShippedFiles(build_py):
    """build_py, plus the copies under agents/_shipped/ (not for editable installs, which
    run from the checkout and read the originals)."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        for name in SHIPPED_FILES:
            target = Path(self.build_lib, "agents", "_shipped", name)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / name, target)


setup(
    ext_modules=extensions(),
    cmdclass={"build_ext": BuildExtReusingBuiltModules, "build_py": BuildPyWithShippedFiles},
    options={"build_ext": {"parallel": JOBS}},
)
