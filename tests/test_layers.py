"""The package's layers, read from source with ``ast`` (nothing is imported): no import cycles,
templates and schedules import only the formats layer, errors, hints, the op vocabularies and their
own package, ops do not import the front end, the formats layer imports only errors, and the op
vocabularies import nothing.

Every import counts, at module level or inside a function, except those under
``if TYPE_CHECKING:``. ``from X import name`` where ``X.name`` is a module imports ``X.name``;
importing ``a.b.c`` also runs the package ``a.b`` unless the importer is inside it.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = "sparsegen"
SOURCE = Path(__file__).resolve().parents[1] / PACKAGE


@dataclass(frozen=True)
class Import:
    """One import of a package module by another: who, what, and where it is written."""

    source: str
    target: str
    where: str  # file:line of the import statement
    implied: bool = False  # the target is a package the imported module lies in

    def __str__(self) -> str:
        via = " (its package runs first)" if self.implied else ""
        return f"{self.where}: {self.source} imports {self.target}{via}"


def module_files(root: Path, package: str) -> dict[str, Path]:
    """Every module of ``package`` (its sources under ``root``) by dotted name."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    """Whether an ``if`` test is ``TYPE_CHECKING`` (bare or as ``typing.TYPE_CHECKING``)."""
    name = test.attr if isinstance(test, ast.Attribute) else getattr(test, "id", None)
    return name == "TYPE_CHECKING"


def _statements(tree: ast.AST):
    """Every import statement of ``tree``, skipping the bodies of ``if TYPE_CHECKING:``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                yield from _statements(ast.Module(body=[child], type_ignores=[]))
            continue
        yield from _statements(node)


def _owner(name: str, modules: dict[str, Path]) -> str | None:
    """The module ``name`` lies in (itself, or its longest prefix that is a module)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool,
             modules: dict[str, Path]) -> list[str]:
    """The package modules one import statement of ``module`` imports."""
    if isinstance(node, ast.Import):
        return [owner for alias in node.names if (owner := _owner(alias.name, modules))]
    base = node.module or ""
    if node.level:
        anchor = module if is_package else module.rpartition(".")[0]
        for _ in range(node.level - 1):
            anchor = anchor.rpartition(".")[0]
        base = f"{anchor}.{base}" if base else anchor
    found = []
    for alias in node.names:
        submodule = f"{base}.{alias.name}"
        owner = submodule if submodule in modules else _owner(base, modules)
        if owner:
            found.append(owner)
    return found


def _packages_run(target: str, source: str) -> list[str]:
    """The packages importing ``target`` runs on the way that ``source`` does not lie in."""
    parts = target.split(".")
    packages = (".".join(parts[:n]) for n in range(1, len(parts)))
    return [p for p in packages if not (source == p or source.startswith(p + "."))]


def package_imports(root: Path, package: str) -> list[Import]:
    """Every import by a module of ``package`` of another module of it."""
    modules = module_files(root, package)
    found = []
    for module, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        is_package = path.name == "__init__.py"
        for node in _statements(tree):
            where = f"{path.relative_to(root.parent)}:{node.lineno}"
            for target in _targets(node, module, is_package, modules):
                if target != module:
                    found.append(Import(module, target, where))
                found += [Import(module, p, where, implied=True)
                          for p in _packages_run(target, module)]
    return list(dict.fromkeys(found))  # one per statement, however many names it imports


def cycles(edges: list[Import]) -> list[list[Import]]:
    """One cycle through each strongly connected group of modules, as the imports that close it."""
    graph: dict[str, list[Import]] = {}
    for edge in edges:
        graph.setdefault(edge.source, []).append(edge)
        graph.setdefault(edge.target, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def connect(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        for edge in graph[node]:
            if edge.target not in index:
                connect(edge.target)
                low[node] = min(low[node], low[edge.target])
            elif edge.target in stack:
                low[node] = min(low[node], index[edge.target])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return [_cycle_in(sorted(group), graph) for group in groups]


def _cycle_in(group: list[str], graph: dict[str, list[Import]]) -> list[Import]:
    """The imports of a shortest cycle from the first module of a strongly connected ``group``."""
    start, members = group[0], set(group)
    paths: dict[str, list[Import]] = {start: []}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for edge in graph[node]:
                if edge.target == start:
                    return paths[node] + [edge]
                if edge.target in members and edge.target not in paths:
                    paths[edge.target] = paths[node] + [edge]
                    following.append(edge.target)
        frontier = following
    raise AssertionError(f"{group} is not strongly connected")


IMPORTS = package_imports(SOURCE, PACKAGE)
FORMATS = f"{PACKAGE}.formats"
ERRORS = f"{PACKAGE}.errors"
HINTS = f"{PACKAGE}.hints"  # the marks templates leave and schedules realise: their contract
OPNAMES = f"{PACKAGE}.opnames"  # the op vocabularies: which functions the op templates generate
FRONT_END = (f"{PACKAGE}.ndarray", f"{PACKAGE}.optimizer", f"{PACKAGE}.interop")


def _in(module: str, *packages: str) -> bool:
    """Whether ``module`` is one of ``packages`` or lies inside one."""
    return any(module == p or module.startswith(p + ".") for p in packages)


def _offending(rule: Callable[[Import], bool]) -> str:
    """The explicit imports ``rule(import)`` refuses, one a line."""
    return "\n".join(str(i) for i in IMPORTS if not i.implied and rule(i))


def test_the_graph_holds_the_known_imports():
    known = {(i.source, i.target) for i in IMPORTS}
    assert (f"{PACKAGE}", f"{PACKAGE}.ndarray") in known
    assert (f"{PACKAGE}.templates.index", FORMATS) in known
    assert (f"{PACKAGE}.ops.cast", FORMATS) in known


def test_no_import_cycles():
    found = cycles(IMPORTS)
    assert not found, "import cycles:\n" + "\n\n".join(
        "\n".join(str(edge) for edge in cycle) for cycle in found)


@pytest.mark.parametrize("layer, other", [("templates", "schedules"), ("schedules", "templates")])
def test_templates_and_schedules_import_only_formats_errors_hints_opnames_and_themselves(
        layer, other):
    own = f"{PACKAGE}.{layer}"
    refused = _offending(lambda i: _in(i.source, own)
                         and not _in(i.target, own, FORMATS, ERRORS, HINTS, OPNAMES))
    assert not refused, (f"{layer}/ imports more than formats, errors, hints, opnames and "
                         f"{layer}/ ({other}/ is out):\n{refused}")


def test_hints_import_nothing():
    refused = _offending(lambda i: _in(i.source, HINTS))
    assert not refused, f"hints.py, the templates' contract with the schedules, imports:\n{refused}"


def test_opnames_import_nothing():
    refused = _offending(lambda i: _in(i.source, OPNAMES))
    assert not refused, f"opnames.py, the op vocabularies every layer reads, imports:\n{refused}"


def test_ops_do_not_import_the_front_end():
    ops = f"{PACKAGE}.ops"
    refused = _offending(lambda i: _in(i.source, ops)
                         and (i.target == PACKAGE or _in(i.target, *FRONT_END)))
    assert not refused, f"ops/ imports the front end:\n{refused}"


def test_formats_import_only_errors():
    refused = _offending(lambda i: _in(i.source, FORMATS) and not _in(i.target, FORMATS, ERRORS))
    assert not refused, f"the formats layer imports more than errors:\n{refused}"


def test_a_cycle_of_two_modules_is_found(tmp_path):
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "a.py").write_text("def f():\n    from . import b\n")
    (root / "b.py").write_text("from typing import TYPE_CHECKING\nfrom .a import f\n"
                               "if TYPE_CHECKING:\n    from pkg import c\n")
    (root / "c.py").write_text("import pkg.b\n")
    edges = package_imports(root, "pkg")
    assert {(e.source, e.target) for e in edges} == {("pkg.a", "pkg.b"), ("pkg.b", "pkg.a"),
                                                      ("pkg.c", "pkg.b")}
    found = cycles(edges)
    assert [[(e.source, e.target, e.where) for e in cycle] for cycle in found] == [
        [("pkg.a", "pkg.b", "pkg/a.py:2"), ("pkg.b", "pkg.a", "pkg/b.py:2")]]


def test_importing_a_module_runs_its_package(tmp_path):
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "sub" / "__init__.py").write_text("from ..a import f\n")
    (root / "sub" / "m.py").write_text("")
    (root / "a.py").write_text("from .sub.m import g\n")
    found = cycles(package_imports(root, "pkg"))
    assert [[(e.source, e.target, e.implied) for e in cycle] for cycle in found] == [
        [("pkg.a", "pkg.sub", True), ("pkg.sub", "pkg.a", False)]]
