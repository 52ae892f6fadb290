"""Build step for compiled modules: every .pyx under hiddenenvs/ and agents/ is cythonized."""

from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

ROOT = Path(__file__).parent
extensions = [
    Extension(
        ".".join(path.with_suffix("").parts),
        [str(path)],
        include_dirs=[numpy.get_include()],
        extra_compile_args=["-O3"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )
    for package in ("hiddenenvs", "agents")
    for path in sorted(Path(package).rglob("*.pyx"))
]

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives={"language_level": 3, "boundscheck": False, "wraparound": False},
    )
)
