"""Templates say what, schedules say how: a template names no target, every mark it leaves is
realised by each target's schedule, and a new schedule module is all a new target needs."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import sparsegen
from sparsegen import registry

TEMPLATES = Path(sparsegen.__file__).parent / "templates"

_TARGET_WORDS = ("lanes", "row_threads", "prefetch", "vectorized", "thread_binding",
                 "call_llvm_intrin", "threadIdx", "blockIdx", "llvm.", "parallel")
"""Names that say how a kernel runs on a target: none belongs in templates/."""


def _names(tree: ast.AST) -> set[str]:
    """Every identifier, attribute and string constant of a module's code (not its docstrings
    and other prose: strings standing as statements)."""
    prose = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.arg):
            found.add(node.arg)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in prose:
                found.add(node.value)
    return found


@pytest.mark.parametrize("path", sorted(TEMPLATES.glob("*.py")), ids=lambda p: p.name)
def test_templates_name_no_target(path: Path) -> None:
    names = _names(ast.parse(path.read_text()))
    offending = sorted(n for n in names for word in _TARGET_WORDS if word in n)
    assert not offending, f"{path.name} says how a kernel runs: {offending}"


def test_the_word_check_can_fail() -> None:
    code = "for ji in T.vectorized(lanes):\n    T.call_llvm_intrin('void', 'llvm.prefetch.p0')\n"
    names = _names(ast.parse(code))
    assert {"vectorized", "lanes", "call_llvm_intrin", "llvm.prefetch.p0"} <= names


def test_templates_take_only_dtypes() -> None:
    import inspect

    for kernel in registry.KERNELS.values():
        template = registry.resolve(kernel.template)
        params = list(inspect.signature(template).parameters)
        assert len(params) == len(kernel.dtype_params), (kernel.name, params)


def _marks(mod: Any) -> list[str]:
    from sparsegen.schedules import marks

    return marks.left(mod)


def _serial(mod: Any, config: Mapping[str, Any]) -> Any:
    """A whole target family's schedule in a few lines: every mark realised as the plainest
    loop, nothing parallel (what a new target's first schedule module looks like)."""
    from tvm import tirx

    from sparsegen.schedules import marks

    mod = marks.without_ahead(mod)
    mod = marks.owned(mod, lambda _j, body: body)

    def plain(width: Any, body: Any) -> Any:
        j = tirx.Var("j", str(width.ty.dtype))
        return marks.loop(j, width, body(j))

    return marks.columns(mod, plain)


@pytest.fixture(scope="module")
def serial_space() -> Any:
    from sparsegen.schedules.space import ScheduleSpace

    return ScheduleSpace(name="test.serial", knobs=(), apply=_serial)


def test_marks_show_in_templates() -> None:
    import tvm

    funcs = registry.KERNELS["dot_csr_dense"].build_template(("float32",))
    assert set(_marks(tvm.IRModule(funcs))) == {"sparsegen.columns", "sparsegen.ahead"}


def test_lower_refuses_a_schedule_that_leaves_marks(monkeypatch: pytest.MonkeyPatch) -> None:
    from sparsegen import compiler
    from sparsegen.errors import SparsegenError
    from sparsegen.schedules.space import ScheduleSpace
    from sparsegen.target import host_cpu

    lazy = ScheduleSpace(name="test.lazy", knobs=(), apply=lambda mod, config: mod)
    monkeypatch.setattr(registry.KernelDef, "space", lambda self, kind: lazy)
    with pytest.raises(SparsegenError, match="test.lazy.*sparsegen.columns.*unrealised"):
        compiler.lower(registry.KERNELS["cast_rsp_dense"], ("float32",), host_cpu(), ())


def test_a_new_schedule_module_serves_every_template(serial_space: Any) -> None:
    """No template changes for a new target: every kernel lowers under a schedule the
    templates have never seen, and two of them compile and run right on the host."""
    import tvm

    from sparsegen import tvm_runtime as runtime
    from sparsegen.target import host_cpu

    lowered = {}
    for kernel in registry.KERNELS.values():
        dtypes = ("float32",) * len(kernel.dtype_params)
        funcs = {name: func.with_attr("global_symbol", name)
                 for name, func in kernel.build_template(dtypes).items()}
        lowered[kernel.name] = serial_space.apply(tvm.IRModule(funcs), {})
        assert not _marks(lowered[kernel.name]), kernel.name
    target = host_cpu().to_tvm()
    with target:
        cast = tvm.compile(lowered["cast_rsp_dense"], target=target)
        dot = tvm.compile(lowered["dot_csr_dense"], target=target)
    rng = np.random.default_rng(0)
    data = rng.standard_normal((3, 5)).astype(np.float32)
    ids = np.array([0, 2, 5], dtype=np.int64)
    out = np.full((6, 5), np.nan, dtype=np.float32)
    runtime.wrap(cast["scatter"])(data, ids, out)
    expected = np.zeros((6, 5), dtype=np.float32)
    expected[ids] = data
    np.testing.assert_array_equal(out, expected)
    values = rng.standard_normal(4).astype(np.float32)
    cols = np.array([1, 3, 0, 1], dtype=np.int64)
    indptr = np.array([0, 2, 2, 4], dtype=np.int64)
    rhs = rng.standard_normal((4, 7)).astype(np.float32)
    prod = np.empty((3, 7), dtype=np.float32)
    runtime.wrap(dot["matmul"])(values, cols, indptr, rhs, prod)
    dense = np.zeros((3, 4), dtype=np.float32)
    for r in range(3):
        for p in range(indptr[r], indptr[r + 1]):
            dense[r, cols[p]] += values[p]
    np.testing.assert_allclose(prod, dense @ rhs, rtol=1e-5, atol=1e-6)
