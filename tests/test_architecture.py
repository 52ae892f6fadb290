"""The layers point one way and no modules import each other in a circle.

Read from the source (``ast``), so nothing is imported or run:

- ``hiddenenvs`` (games, envs, exact analysis, adapters, protocols) imports nothing from
  ``agents`` (trainers, search, leaderboard), neither at module level nor inside functions:
  the envs install and import without the trainers;
- the import graph between the modules of ``hiddenenvs/`` and ``agents/`` has no cycle,
  counting module-level imports and imports inside functions alike (a function-level
  import is still a dependency; deferring it only hides the circle).

An import of a package (``import agents.search``, ``from agents.search import x``) is an
edge to its ``__init__``; ``from package import module`` is an edge to that module.
Compiled modules (``.pyx``) are nodes too, with the edges of their Python-level ``import``
lines (``cimport`` is C-level and names no module of ours). The parents a Python import also runs (``hiddenenvs/__init__``) are not edges: every module
would otherwise depend on its package's ``__init__`` and every re-export would be a cycle.
Imports under ``if TYPE_CHECKING:`` are for the type checker only and never run: not edges
for the runtime check, but a second check counts them: no modules may name each other in a
circle even for the type checker (a Protocol the lower module declares, or a dependency
turned around, does instead).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("hiddenenvs", "agents")
# A Cython file's Python-level imports: "import a.b" or "from a.b import (c, d" on one line.
PYX_IMPORT = re.compile(
    r"^\s*(?:from\s+(?P<source>[\w.]+)\s+import\s+\(?(?P<names>[\w, ]*)"
    r"|import\s+(?P<module>[\w.]+))",
    re.MULTILINE,
)


def module_files() -> dict[str, Path]:
    """Every Python module of the two packages by dotted name (``pkg/__init__.py``: ``pkg``)."""
    modules = {}
    for package in PACKAGES:
        for path in sorted([*(ROOT / package).rglob("*.py"), *(ROOT / package).rglob("*.pyx")]):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def runtime_nodes(tree: ast.AST):
    """Every node of ``tree`` but those under ``if TYPE_CHECKING:`` (imports for the type
    checker only: they never run)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                stack.extend(child.orelse)
            else:
                stack.append(child)


def imported_modules(
    name: str, path: Path, known: set[str], type_checking: bool = False
) -> list[tuple[str, int]]:
    """(module, line) for every import of ``path`` naming a module of ``known`` (with
    ``type_checking``, those under ``if TYPE_CHECKING:`` too)."""
    is_package = path.name == "__init__.py"
    found = []
    if path.suffix == ".pyx":
        nodes = []
        text = path.read_text(encoding="utf-8")
        for match in PYX_IMPORT.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            if match["module"]:
                nodes.append(ast.Import([ast.alias(match["module"])], lineno=line))
            else:
                names = [ast.alias(n.strip()) for n in match["names"].split(",") if n.strip()]
                nodes.append(ast.ImportFrom(match["source"], names, 0, lineno=line))
    else:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        nodes = ast.walk(tree) if type_checking else runtime_nodes(tree)
    for node in nodes:
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from the module's package, up node.level - 1 more
                base = name.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            targets = [
                f"{source}.{alias.name}" if f"{source}.{alias.name}" in known else source
                for alias in node.names
            ]
        else:
            continue
        for target in targets:
            while target and target not in known:  # import a.b.c of a function: module a.b
                target = target.rpartition(".")[0]
            if target and target != name:
                found.append((target, node.lineno))
    return found


def import_graph(type_checking: bool = False) -> dict[str, dict[str, int]]:
    """module -> {imported module: first line}, over every module of ``hiddenenvs`` and
    ``agents`` (with ``type_checking``, counting the imports for the type checker too)."""
    modules = module_files()
    known = set(modules)
    graph = {}
    for name, path in modules.items():
        edges: dict[str, int] = {}
        for target, line in imported_modules(name, path, known, type_checking):
            edges.setdefault(target, line)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm)."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    counter = [0]

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def test_the_graph_sees_the_packages():
    graph = import_graph()
    assert "hiddenenvs.game" in graph and "agents.loop" in graph
    assert "hiddenenvs.core" in graph["hiddenenvs.beliefs"]  # known edges are found
    assert "hiddenenvs.game" in graph["hiddenenvs.registry"]


def test_hiddenenvs_imports_nothing_from_agents():
    graph = import_graph()
    offending = [
        f"{name} ({module_files()[name].relative_to(ROOT)}:{line}) imports {target}"
        for name, edges in sorted(graph.items())
        if name.split(".")[0] == "hiddenenvs"
        for target, line in sorted(edges.items())
        if target.split(".")[0] == "agents"
    ]
    assert not offending, (
        "hiddenenvs must not depend on agents (take an agent factory, or put "
        "the wiring in agents/):\n" + "\n".join(offending)
    )


def test_no_import_cycles():
    graph = import_graph()
    found = cycles(graph)
    described = []
    for component in found:
        members = set(component)
        described.append(
            " ; ".join(
                f"{name} -> {target} (line {line})"
                for name in component
                for target, line in sorted(graph[name].items())
                if target in members
            )
        )
    assert not found, "import cycles between modules:\n" + "\n".join(described)


def test_no_import_cycles_even_for_the_type_checker():
    graph = import_graph(type_checking=True)
    found = cycles(graph)
    described = [
        " ; ".join(
            f"{name} -> {target} (line {line})"
            for name in component
            for target, line in sorted(graph[name].items())
            if target in component
        )
        for component in found
    ]
    assert not found, "import cycles, TYPE_CHECKING imports included:\n" + "\n".join(described)


def test_type_checking_imports_are_edges_only_when_asked(tmp_path):
    module = tmp_path / "typed.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "import hiddenenvs.core\n"
        "if TYPE_CHECKING:\n"
        "    from hiddenenvs.game import Game\n"
    )
    known = {"hiddenenvs.core", "hiddenenvs.game"}
    assert imported_modules("typed", module, known) == [("hiddenenvs.core", 2)]
    assert sorted(imported_modules("typed", module, known, type_checking=True)) == [
        ("hiddenenvs.core", 2),
        ("hiddenenvs.game", 4),
    ]


def test_cycle_finder_finds_a_planted_cycle():
    graph = {"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}
    assert cycles(graph) == [["a", "b", "c"]]
