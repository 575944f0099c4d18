"""Finding and rewriting the marks templates leave (sparsegen/hints.py): the shared part of every
target's realisation of column loops, owned columns and gather hints."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import tvm
import tvm_ffi
from tvm import tirx

from .. import hints

Stmt = Any
Expr = Any


def substitute(stmt: Stmt, var: Any, value: Expr) -> Stmt:
    """``stmt`` with every use of ``var`` replaced by ``value``."""
    return tvm_ffi.structural_map(stmt, [(tirx.Var, lambda v: value if v.same_as(var) else v)])


def const(value: int, like: Expr) -> Expr:
    """``value`` as a constant of ``like``'s integer dtype."""
    return tirx.const(value, str(like.ty.dtype))


def seq(stmts: list[Stmt]) -> Stmt:
    """``stmts`` in order (one statement as itself: TVM refuses a sequence of one)."""
    return stmts[0] if len(stmts) == 1 else tirx.SeqStmt(stmts)


def loop(var: Any, extent: Expr, body: Stmt, kind: Any = tirx.ForKind.SERIAL) -> Stmt:
    """``for var in range(extent)`` of ``kind``."""
    return tirx.For(var, const(0, var), extent, kind, body)


def lane_loop(name: str, lanes: int, body: Callable[[Expr], Stmt], dtype: str,
              kind: Any = tirx.ForKind.SERIAL) -> Stmt:
    """``for v in range(lanes)`` (an ``int32`` loop) of ``kind``, ``body`` given ``v`` as
    ``dtype``."""
    var = tirx.Var(name, "int32")
    return tirx.For(var, tirx.const(0, "int32"), tirx.const(lanes, "int32"), kind,
                    body(tirx.Cast(dtype, var)))


def thread_loop(name: str, extent: int, tag: str, body: Callable[[Any], Stmt]) -> Stmt:
    """``for t in T.thread_binding(extent, thread=tag): body(t)``."""
    t = tirx.Var(name, "int32")
    binding = tirx.IterVar(None, tirx.Var("iter", "int32"), 1, tag)
    return tirx.For(t, tirx.const(0, "int32"), tirx.const(extent, "int32"),
                    tirx.ForKind.THREAD_BINDING, body(t), thread_binding=binding)


def columns(mod: Any, realise: Callable[[Expr, Callable[[Expr], Stmt]], Stmt]) -> Any:
    """Every ``hints.COLUMNS`` loop ``for j in range(width): body(j)`` of ``mod`` replaced by
    ``realise(width, body)``, ``body`` a function of the column expression."""

    def visit(node: Any) -> Any:
        if hints.COLUMNS not in node.annotations:
            return node
        return realise(node.extent, lambda j: substitute(node.body, node.loop_var, j))

    return _distinct_definitions(tvm_ffi.structural_map(mod, [(tirx.For, visit)]))


def _distinct_definitions(mod: Any) -> Any:
    """``mod`` with variables defined twice (a body realised twice, as vector steps and as a
    tail, defines its inner loops twice) renamed, function by function (across functions TVM
    would also rename the blocks)."""
    return tvm.IRModule({
        gvar: tirx.transform.ConvertSSA()(tvm.IRModule({gvar: func}))[gvar]
        for gvar, func in mod.functions.items()
    })


def has_loop(stmt: Stmt) -> bool:
    """Whether ``stmt`` holds a loop of its own."""
    found = []
    tvm_ffi.structural_walk(stmt, [((tirx.For, tirx.While), found.append)])
    return bool(found)


def attributes(mod: Any, key: str, realise: Callable[[Any, Expr, Stmt], Stmt]) -> Any:
    """Every attribute ``key`` of ``mod`` replaced by ``realise(node, value, body)``."""

    def visit(node: Any) -> Any:
        return realise(node.node, node.value, node.body) if node.attr_key == key else node

    return tvm_ffi.structural_map(mod, [(tirx.AttrStmt, visit)])


def owned(mod: Any, realise: Callable[[Expr, Stmt], Stmt]) -> Any:
    """Every ``hints.OWNED`` write to column ``j`` replaced by ``realise(j, body)``."""
    return attributes(mod, hints.OWNED, lambda _node, j, body: realise(j, body))


def without_ahead(mod: Any) -> Any:
    """``mod`` with its gather hints dropped (a target that does not prefetch)."""
    return attributes(mod, hints.AHEAD, lambda _node, _at, body: body)


def ahead_rows(node: Any, at: Expr, distance: int) -> list[tuple[Any, Expr, int]]:
    """The (buffer, row, written) of a gather hint for the entry ``distance`` after ``at``
    (the last entry where that is past the end)."""
    var, bound, *rows = node
    later = tirx.min(at + const(distance, at), bound - const(1, bound))
    return [(buffer, substitute(row, var, later), int(written)) for buffer, row, written in rows]


def left(mod: Any) -> list[str]:
    """The marks still in ``mod`` (none, once a schedule has realised them all)."""
    keys = {hints.COLUMNS, hints.OWNED, hints.AHEAD}
    found: list[str] = []

    def loop(node: Any) -> None:
        found.extend(key for key in node.annotations if key in keys)

    def attribute(node: Any) -> None:
        if node.attr_key in keys:
            found.append(node.attr_key)

    tvm_ffi.structural_walk(mod, [(tirx.For, loop), (tirx.AttrStmt, attribute)])
    return found


def on_stack(mod: Any) -> Any:
    """``mod`` with its ``local`` scratch buffers of constant shape in ``global`` scope: on the
    CPU TVM serves a ``local`` allocation from its workspace pool (a heap pointer, so LLVM keeps
    every write of a parser's state in memory) and a small ``global`` one from the stack (kept
    in registers)."""
    swaps: list[tuple[Any, Any]] = []

    def visit(var: Any) -> Any:
        if not tirx.buffer.is_buffer_var(var) or var.ty.storage_scope != "local" \
                or not all(isinstance(d, tirx.IntImm) for d in var.shape):
            return var
        for old, new in swaps:
            if old.same_as(var):
                return new
        swaps.append((var, tirx.decl_buffer(var.shape, var.dtype, var.name)))
        return swaps[-1][1]

    return tvm_ffi.structural_map(mod, [(tirx.Var, visit)])


def element_bytes(buffer: Any) -> int:
    """Bytes per element of ``buffer``."""
    return tvm.DataType(str(buffer.dtype)).bits // 8
