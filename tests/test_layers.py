"""The package's layers, read from source with ``ast`` (nothing is imported): no import cycles,
templates and schedules import only the formats layer, errors, hints, the op vocabularies, the
update rules and their own package, ops do not import the front end, the formats layer
imports only errors, the op vocabularies import nothing, update rules import only errors, and the
call path's kernel cache (``cache.py``, ``choice.py``, ``tuning_records.py``,
``cpu_families.py``) never reaches the tuner (``tune/``), which builds on it.

Every import counts, at module level or inside a function, except those under
``if TYPE_CHECKING:``. ``from X import name`` where ``X.name`` is a module imports ``X.name``;
importing ``a.b.c`` also runs the package ``a.b`` unless the importer is inside it.

``importlib.import_module(name)`` calls are imports too: ``name`` is read statically from string
literals, ``__name__`` and ``__package__`` (the importer's), module-level names bound to a string,
f-strings and ``+`` of those, and ``TABLE[key]`` of a module-level dict literal (every value it
holds); a relative name is resolved against ``package=``. A call whose name cannot be read is
refused unless ``UNREAD`` lists it with its reason.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from sparsegen.cachekey import import_base

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


def _is_import_module(node: ast.AST) -> bool:
    """Whether ``node`` calls ``import_module`` (``importlib.import_module``, under any alias of
    ``importlib``, or the bare name imported from it)."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return name == "import_module"


def _statements(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom | ast.Call]:
    """Every import statement and ``import_module`` call of ``tree``, skipping the bodies of
    ``if TYPE_CHECKING:``."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)) or _is_import_module(node):
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


class Unread(Exception):
    """An ``import_module`` argument the reading cannot resolve to a set of names."""


def _bindings(tree: ast.Module) -> dict[str, ast.expr]:
    """The module-level names bound once to a string literal or a dict literal, with the value
    (a name bound twice is left out: its value depends on the order)."""
    bound: dict[str, list[ast.expr]] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        for target in targets:
            if isinstance(target, ast.Name):
                bound.setdefault(target.id, []).append(value)
    return {name: values[0] for name, values in bound.items() if len(values) == 1
            and isinstance(values[0], (ast.Constant, ast.Dict))}


def _strings(expr: ast.expr | None, module: str, is_package: bool,
             bindings: dict[str, ast.expr]) -> set[str]:
    """Every string ``expr`` can evaluate to in ``module``, read statically (raises ``Unread``)."""
    def read(part: ast.expr | None) -> set[str]:
        return _strings(part, module, is_package, bindings)

    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return {expr.value}
    if isinstance(expr, ast.Name) and expr.id == "__name__":
        return {module}
    if isinstance(expr, ast.Name) and expr.id == "__package__":
        return {module if is_package else module.rpartition(".")[0]}
    if isinstance(expr, ast.Name) and isinstance(bindings.get(expr.id), ast.Constant):
        return read(bindings[expr.id])
    if isinstance(expr, ast.JoinedStr):
        return {"".join(parts) for parts in itertools.product(*map(read, expr.values))}
    if isinstance(expr, ast.FormattedValue) and expr.conversion == -1 and not expr.format_spec:
        return read(expr.value)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        return {a + b for a in read(expr.left) for b in read(expr.right)}
    if (isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Name)
            and isinstance(bindings.get(expr.value.id), ast.Dict)):
        return set().union(*map(read, bindings[expr.value.id].values))
    raise Unread(ast.unparse(expr) if expr is not None else "no argument")


def _imported_names(call: ast.Call, module: str, is_package: bool,
                    bindings: dict[str, ast.expr]) -> set[str]:
    """The absolute module names an ``import_module(name, package=None)`` call can import."""
    arguments = {"name": call.args[0] if call.args else None,
                 "package": call.args[1] if len(call.args) > 1 else None}
    arguments.update((k.arg, k.value) for k in call.keywords if k.arg in arguments)

    def read(argument: ast.expr | None) -> set[str]:
        try:
            return _strings(argument, module, is_package, bindings)
        except Unread:  # name the whole argument, not the part that could not be read
            raise Unread(ast.unparse(argument) if argument else "no argument") from None

    names = read(arguments["name"])
    if not any(name.startswith(".") for name in names):
        return names
    packages = read(arguments["package"])
    found = set()
    for name, package in itertools.product(names, packages):
        relative = name.lstrip(".")
        anchor = package.rsplit(".", len(name) - len(relative) - 1)[0]
        found.add(f"{anchor}.{relative}" if relative else anchor)
    return found


def _targets(node: ast.Import | ast.ImportFrom | ast.Call, module: str, is_package: bool,
             modules: dict[str, Path], bindings: dict[str, ast.expr]) -> list[str]:
    """The package modules one import statement or ``import_module`` call of ``module``
    imports."""
    if isinstance(node, ast.Call):
        names = sorted(_imported_names(node, module, is_package, bindings))
        return [owner for name in names if (owner := _owner(name, modules))]
    if isinstance(node, ast.Import):
        return [owner for alias in node.names if (owner := _owner(alias.name, modules))]
    base = import_base(node, module, is_package)
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


def package_imports(root: Path, package: str,
                    unread: dict[str, str] | None = None) -> list[Import]:
    """Every import by a module of ``package`` of another module of it. An ``import_module``
    call whose name cannot be read goes into ``unread`` (file:line -> its argument), or raises
    ``Unread`` when ``unread`` is None."""
    modules = module_files(root, package)
    found = []
    for module, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        is_package = path.name == "__init__.py"
        bindings = _bindings(tree)
        for node in _statements(tree):
            where = f"{path.relative_to(root.parent)}:{node.lineno}"
            try:
                targets = _targets(node, module, is_package, modules, bindings)
            except Unread as err:
                if unread is None:
                    raise Unread(f"{where}: import_module({err})") from None
                unread[where] = str(err)
                continue
            for target in targets:
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


UNREAD_FOUND: dict[str, str] = {}
IMPORTS = package_imports(SOURCE, PACKAGE, UNREAD_FOUND)
UNREAD = {
    (f"{PACKAGE}.registry", "module"):
        "registry.resolve imports the 'module:attribute' references of the kernel table "
        "(templates and schedules: they import TVM, which the run-time path never loads); "
        "tests/test_registry_storage_rules.py resolves every one",
    (f"{PACKAGE}.bench.suite", "module"):
        "bench.suite.factory imports the 'module:factory' of a benchmark workload id (its "
        "WORKLOADS table), the benchmark harness only",
}
"""The ``import_module`` calls whose module name is data, not read here: (module, argument) ->
why."""
CYCLE_ALLOWED = {
    (f"{PACKAGE}.test_utils", PACKAGE):
        "MXNet's API makes these two name each other: mx.test_utils is the package's attribute "
        "(imported on first use, after the package's own import has finished), and "
        "'from mxnet.test_utils import *' brings mx. test_utils imports the package only to "
        "re-export it as mx; its helpers use the submodules",
}
"""The one import allowed to close a cycle, with why (the cycle test checks it still does)."""
FORMATS = f"{PACKAGE}.formats"
ERRORS = f"{PACKAGE}.errors"
HINTS = f"{PACKAGE}.hints"  # the marks templates leave and schedules realise: their contract
UPDATE_RULES = f"{PACKAGE}.update_rules"  # the update rule language and the built-in rules
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
    assert (f"{PACKAGE}.templates.radix", FORMATS) in known
    assert (f"{PACKAGE}.ops.cast", FORMATS) in known
    # import_module: mx.<name> on first use (the values of __init__'s _ON_FIRST_USE), AttrScope
    assert {(PACKAGE, f"{PACKAGE}.{name}") for name in ("gluon", "test_utils", "attribute")} <= known


def test_every_import_module_call_is_read():
    files = {str(path.relative_to(SOURCE.parent)): name
             for name, path in module_files(SOURCE, PACKAGE).items()}
    found = {(files[where.rpartition(":")[0]], argument): where
             for where, argument in UNREAD_FOUND.items()}
    refused = "\n".join(f"{where}: import_module({argument})"
                        for (module, argument), where in found.items()
                        if (module, argument) not in UNREAD)
    assert not refused, ("import_module calls whose module name is not read statically (build "
                         "it from literals, __name__ or __package__, or list it in UNREAD):\n"
                         + refused)
    assert set(UNREAD) <= set(found), f"UNREAD lists calls that are gone: {set(UNREAD) - set(found)}"


def test_no_import_cycles():
    found = cycles([i for i in IMPORTS if (i.source, i.target) not in CYCLE_ALLOWED])
    assert not found, "import cycles:\n" + "\n\n".join(
        "\n".join(str(edge) for edge in cycle) for cycle in found)
    closing = {(e.source, e.target) for cycle in cycles(IMPORTS) for e in cycle}
    assert set(CYCLE_ALLOWED) <= closing, (
        f"CYCLE_ALLOWED lists imports that close no cycle now: {set(CYCLE_ALLOWED) - closing}")


def _reached(sources: tuple[str, ...], wanted: Callable[[str], bool]) -> list[list[Import]]:
    """For each module ``wanted`` accepts that ``sources`` reach through imports (explicit or a
    package run on the way), one chain of imports that reaches it."""
    graph: dict[str, list[Import]] = {}
    for edge in IMPORTS:
        graph.setdefault(edge.source, []).append(edge)
    chains: dict[str, list[Import]] = {source: [] for source in sources}
    frontier = list(sources)
    while frontier:
        node = frontier.pop(0)
        for edge in graph.get(node, []):
            if edge.target not in chains:
                chains[edge.target] = chains[node] + [edge]
                frontier.append(edge.target)
    return [chain for module, chain in chains.items() if chain and wanted(module)]


def test_the_kernel_cache_does_not_reach_the_tuner():
    call_path = tuple(f"{PACKAGE}.{m}" for m in ("cache", "choice", "tuning_records",
                                                    "cpu_families"))
    tuner = f"{PACKAGE}.tune"
    found = _reached(call_path, lambda module: _in(module, tuner))
    assert not found, "the cache and the config choice reach the tuner (it builds on them):\n" + \
        "\n\n".join("\n".join(str(edge) for edge in chain) for chain in found)


@pytest.mark.parametrize("layer, other", [("templates", "schedules"), ("schedules", "templates")])
def test_templates_and_schedules_import_only_formats_errors_hints_opnames_rules_and_themselves(
        layer, other):
    own = f"{PACKAGE}.{layer}"
    refused = _offending(lambda i: _in(i.source, own)
                         and not _in(i.target, own, FORMATS, ERRORS, HINTS, OPNAMES, UPDATE_RULES))
    assert not refused, (f"{layer}/ imports more than formats, errors, hints, opnames, the update "
                         f"rules and {layer}/ ({other}/ is out):\n{refused}")


def test_update_rules_import_only_errors_and_themselves():
    refused = _offending(lambda i: _in(i.source, UPDATE_RULES)
                         and not _in(i.target, UPDATE_RULES, ERRORS))
    assert not refused, (f"update_rules/ (free of TVM and the front ends, below the registry) "
                         f"imports more than errors and itself:\n{refused}")


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


def test_a_cycle_through_import_module_is_found(tmp_path):
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "a.py").write_text("import importlib\n\n\n"
                               "def f():\n    return importlib.import_module(f'{__package__}.b')\n")
    (root / "b.py").write_text("from .a import f\n")
    found = cycles(package_imports(root, "pkg"))
    assert [[(e.source, e.target, e.where) for e in cycle] for cycle in found] == [
        [("pkg.a", "pkg.b", "pkg/a.py:5"), ("pkg.b", "pkg.a", "pkg/b.py:1")]]


def test_import_module_names_are_read_statically(tmp_path):
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text(
        "import importlib as _il\n"
        "_LAZY = {'x': 'c', 'y': 'sub.d'}\n\n\n"
        "def __getattr__(name):\n"
        "    return _il.import_module(f'{__name__}.{_LAZY[name]}')\n")
    (root / "c.py").write_text(
        "from importlib import import_module\n"
        "PLUGIN = 'pkg.' + 'e'\n"
        "import_module(PLUGIN if False else 'pkg.e')\n"  # a conditional is not read
        "import_module('.e', package=__package__)\n")
    (root / "e.py").write_text("")
    (root / "sub" / "__init__.py").write_text("")
    (root / "sub" / "d.py").write_text("import importlib\n"
                                       "importlib.import_module('..c', __package__)\n"
                                       "importlib.import_module(__name__[:3] + '.e')\n"
                                       "importlib.import_module('pkg' + '.e')\n")
    unread: dict[str, str] = {}
    edges = package_imports(root, "pkg", unread)
    assert {(e.source, e.target, e.implied) for e in edges} == {
        ("pkg", "pkg.c", False), ("pkg", "pkg.sub.d", False), ("pkg", "pkg.sub", True),
        ("pkg.c", "pkg.e", False), ("pkg.sub.d", "pkg.c", False), ("pkg.sub.d", "pkg.e", False)}
    assert unread == {"pkg/c.py:3": "PLUGIN if False else 'pkg.e'",
                      "pkg/sub/d.py:3": "__name__[:3] + '.e'"}
    with pytest.raises(Unread, match="pkg/c.py:3"):
        package_imports(root, "pkg")


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
