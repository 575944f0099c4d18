"""Per-kernel cache keys: a kernel's key covers exactly the code that shapes its binary (its
template and schedule modules, what they import, the common modules, its own definition), so an
edit rebuilds the kernels it can change and no other.

Keys are computed for every kernel (its first dtype, the default config) with the package source
pointed at an edited copy (``cachekey._PACKAGE``); nothing is built and TVM is not imported."""

import ast
import shutil
from collections import Counter
from dataclasses import replace

import pytest

from sparsegen import cachekey, registry
from sparsegen.cachekey import (COMMON_CODE, CUDA_CODE, OUTSIDE_THE_CLOSURE, KernelKey,
                                kernel_digest, kernel_modules)
from sparsegen.choice import kernel_key
from sparsegen.target import Target
from test_layers import IMPORTS, PACKAGE, SOURCE, module_files

LLVM = Target.from_dict({"kind": "llvm", "mcpu": "x86-64-v3", "mtriple": "x86_64-linux-gnu"})
CUDA = Target.from_dict({"kind": "cuda", "arch": "sm_90", "host": LLVM.as_dict})
TARGETS = {"llvm": LLVM, "cuda": CUDA}
ALL = frozenset(registry.KERNELS)
OPTIM = frozenset(name for name in registry.KERNELS if name.startswith("optim_"))


def keys(target: Target) -> dict[str, str]:
    """Every kernel's cache key for ``target``: its first dtype, the default config."""
    return {name: kernel_key(name, (kernel.dtypes[0],) * len(kernel.dtype_params), target,
                             {}).digest()
            for name, kernel in registry.KERNELS.items()}


def changed(before: dict[str, str], after: dict[str, str]) -> set[str]:
    return {name for name in before if before[name] != after[name]}


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A copy of the package source that the keys read from (forgotten again after the test)."""
    copy = tmp_path / PACKAGE
    shutil.copytree(cachekey._PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cachekey, "_PACKAGE", copy)
    cachekey.forget()
    yield copy
    cachekey.forget()


@pytest.fixture(scope="module")
def original() -> dict[str, dict[str, str]]:
    """The keys of the package itself, per target kind (module scope: set up before a test's
    ``package`` copy)."""
    assert cachekey._PACKAGE == SOURCE
    return {kind: keys(target) for kind, target in TARGETS.items()}


def test_a_copy_of_the_package_keys_as_the_package(package, original):
    assert {kind: keys(target) for kind, target in TARGETS.items()} == original


# (edited file, the kernels whose keys change for llvm, for cuda)
EDITS = [
    ("templates/retain.py", {"retain", "nn_gather", "graph"},
     {"retain", "nn_gather", "graph"}),  # gather and graph import it
    ("templates/nn/sort.py", {"nn_sort"}, {"nn_sort"}),
    ("templates/elemwise/unary.py", {"ew_unary", "astype"}, {"ew_unary", "astype"}),
    ("templates/optim.py", OPTIM, OPTIM),
    ("opnames.py", *[{"ew_dense", "ew_arith", "ew_unary", "ew_rsp", "ew_csr", "cmp_dense",
                      "strided", "astype"}] * 2),
    ("schedules/cpu.py", ALL, set()),
    ("schedules/cuda.py", set(), ALL),
    ("cuda_runtime.py", set(), ALL),
    ("formats.py", ALL, ALL),
    ("compiler.py", ALL, ALL),
    ("target.py", ALL, ALL),
    ("hints.py", ALL, ALL),
    ("kernels.py", set(), set()),  # the front end
    ("storage_rules.py", set(), set()),
    ("ops/elemwise.py", set(), set()),
    ("registry.py", set(), set()),  # a comment: no kernel's definition changes
]


@pytest.mark.parametrize("edited, llvm, cuda", EDITS, ids=[e[0] for e in EDITS])
def test_an_edit_changes_the_keys_of_the_kernels_it_can_change(edited, llvm, cuda, package,
                                                               original):
    with (package / edited).open("a") as source:
        source.write("# edited\n")
    assert changed(original["llvm"], keys(LLVM)) == llvm
    assert changed(original["cuda"], keys(CUDA)) == cuda


def test_a_docstring_line_in_one_template_rebuilds_its_kernels_only(package, original):
    path = package / "templates" / "libsvm.py"
    first, rest = path.read_text().split("\n", 1)
    assert first.startswith('"""')
    path.write_text(f"{first}\nOne more line of documentation.\n{rest}")
    assert changed(original["llvm"], keys(LLVM)) == {"libsvm"}


def test_editing_the_kernel_def_class_changes_every_key(package, original):
    path = package / "registry.py"
    text = path.read_text()
    anchor = "    def symbol(self, dtypes: tuple[str, ...], function: str) -> str:\n"
    assert anchor in text
    path.write_text(text.replace(anchor, "    # edited\n" + anchor))
    assert changed(original["llvm"], keys(LLVM)) == ALL


def test_a_kernel_definition_keys_its_own_kernel_only(monkeypatch, original):
    retain = registry.KERNELS["retain"]
    monkeypatch.setitem(registry.KERNELS, "retain", replace(retain, doc="another doc"))
    assert changed(original["llvm"], keys(LLVM)) == set()  # the doc shapes no binary
    signatures = (*retain.signatures[:-1], ("check", "(req[m] int64, bad[1] int64 WRITTEN)"))
    monkeypatch.setitem(registry.KERNELS, "retain", replace(retain, signatures=signatures))
    assert changed(original["llvm"], keys(LLVM)) == {"retain"}
    schedules = (retain.schedules[0], ("cuda", "sparsegen.schedules.cuda:ROW_ALONE"))
    monkeypatch.setitem(registry.KERNELS, "retain", replace(retain, schedules=schedules))
    assert changed(original["llvm"], keys(LLVM)) == set()  # another target kind's schedule
    assert changed(original["cuda"], keys(CUDA)) == {"retain"}


def test_the_key_records_the_tool_versions_and_the_kernel_code():
    record = KernelKey("retain", ("float32",), LLVM, ()).record()
    assert set(record["versions"]) == {"tvm", "tvm_ffi", "sparsegen"}
    assert record["code"] == kernel_digest("retain", "llvm") != kernel_digest("retain", "cuda")
    assert set(cachekey.versions()) == {"tvm", "tvm_ffi", "sparsegen", "codegen"}


def test_the_code_digest_of_all_kernels_changes_with_any_of_them(package):
    before = cachekey.code_digest()
    with (package / "kernels.py").open("a") as source:
        source.write("# the front end changes no binary\n")
    cachekey.forget()
    assert cachekey.code_digest() == before
    with (package / "templates" / "nn" / "sort.py").open("a") as source:
        source.write("# edited\n")
    cachekey.forget()
    assert cachekey.code_digest() != before


# -- the closure --------------------------------------------------------------------------------
def _module(ref: str) -> str:
    return ref.partition(":")[0]


@pytest.mark.parametrize("kind", ["llvm", "cuda"])
def test_each_kernels_closure_holds_everything_its_code_imports(kind):
    """The invariant the key rests on: a kernel's modules hold its template, its schedule, the
    common modules, and every package module any of them imports (as tests/test_layers.py reads
    the imports: every statement of the whole source, inside functions too), and the packages
    they lie in, except the modules declared outside the closure, which change no binary."""
    outside = set(OUTSIDE_THE_CLOSURE) | (set() if kind == "cuda" else set(CUDA_CODE))
    for name, kernel in registry.KERNELS.items():
        modules = kernel_modules(kernel, kind)
        schedule = dict(kernel.schedules)[kind]
        assert {_module(kernel.template), _module(schedule), *COMMON_CODE} <= modules, name
        assert (set(CUDA_CODE) <= modules) == (kind == "cuda"), name
        for edge in IMPORTS:
            if edge.source in modules and edge.target not in modules:
                assert edge.target in outside, (name, str(edge))


def test_the_modules_outside_the_closure_exist_and_shape_no_template_or_schedule():
    modules = module_files(SOURCE, PACKAGE)
    for module in OUTSIDE_THE_CLOSURE:
        assert module in modules, module
        assert not module.startswith((f"{PACKAGE}.templates", f"{PACKAGE}.schedules")), module
    assert set(COMMON_CODE + CUDA_CODE) <= set(modules)


SHAPING = {path for kernel in registry.KERNELS.values() for kind, _ in kernel.schedules
           for path in cachekey.kernel_code(kernel, kind)["modules"]}
"""The package paths of every module that shapes some binary."""


def test_code_that_shapes_binaries_imports_nothing_the_reader_cannot_see():
    """Imports by name (``importlib``, ``__import__``) would reach modules no closure holds: only
    the registry resolves its template and schedule references so, and those are each key's
    roots."""
    for path in sorted(SHAPING):
        tree = ast.parse((SOURCE / path).read_text())
        names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        names |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        modules = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        modules |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        dynamic = names & {"import_module", "__import__", "exec", "eval"}
        assert not dynamic and "importlib" not in modules, (path, dynamic)


def _shape(node: ast.Import | ast.ImportFrom) -> tuple:
    return (type(node).__name__, getattr(node, "module", None) or "", getattr(node, "level", 0),
            tuple((a.name, a.asname or "") for a in node.names))


@pytest.mark.parametrize("path", sorted(SOURCE.rglob("*.py")),
                         ids=lambda p: p.relative_to(SOURCE).as_posix())
def test_the_fast_import_reader_finds_every_import_statement(path):
    """cachekey parses only the lines that start an import (fast): it must find every statement
    a parse of the whole source finds; more only in other modules' docstrings (examples such as
    ``import sparsegen as mx``), where they would at worst widen a closure."""
    source = path.read_bytes()
    whole = Counter(_shape(n) for n in ast.walk(ast.parse(source))
                    if isinstance(n, (ast.Import, ast.ImportFrom)))
    fast = Counter(_shape(n) for n in cachekey.import_statements(source))
    assert fast >= whole
    if path.relative_to(SOURCE).as_posix() in SHAPING:
        assert fast == whole


def test_the_import_reader_follows_relative_and_nested_imports(tmp_path, monkeypatch):
    root = tmp_path / PACKAGE
    (root / "templates" / "sub").mkdir(parents=True)
    for init in ("", "templates/", "templates/sub/"):
        (root / f"{init}__init__.py").write_text("")
    (root / "formats.py").write_text('"""Doc: import this from the formats layer."""\n')
    (root / "errors.py").write_text("")
    (root / "templates" / "a.py").write_text(
        "from . import b\nfrom ..formats import X\n\n\ndef f():\n    from .sub.c import (g,\n"
        "        h)\n    import numpy\n")
    (root / "templates" / "b.py").write_text("from ..errors import E\nfrom .. import formats\n")
    (root / "templates" / "sub" / "c.py").write_text("from ...templates import \\\n    d\n")
    (root / "templates" / "d.py").write_text("")
    cachekey.forget()
    try:
        found = cachekey.closure(root, (f"{PACKAGE}.templates.a",), False)
    finally:
        cachekey.forget()
    assert found == {f"{PACKAGE}.{m}" for m in (
        "templates", "templates.a", "templates.b", "formats", "templates.sub", "templates.sub.c",
        "templates.d")}
