"""Comparison kernels: ``out[i] = 1 if a[i] <op> b[i] else 0`` over flat buffers, in the element
dtype (MXNet 1.9.1 gives 1 / 0 in the input dtype), against a second buffer or a scalar.

IEEE semantics on every target: nan compares unequal to everything (``not_equal`` is written as
the negation of ``equal``, so no backend's ordered / unordered choice decides it) and ``-0.0``
equals ``0.0``. float16 compares in float32, which is exact. The reflected ``s < x`` is
``x > s``: the caller swaps the op, so there are no reflected functions.
"""

from __future__ import annotations

from collections.abc import Callable

import tvm
from tvm import tirx
from tvm.script import tirx as T

from ..registry import COMPARE_OPS
from . import element_bytes
from .columns import Columns, columns
from .elemwise import BLOCK, _const, _scalar_type

Expr = tvm.ir.Expr

_TESTS: dict[str, Callable[[Expr, Expr], Expr]] = {
    "equal": tirx.EQ,
    "greater": tirx.GT,
    "greater_equal": tirx.GE,
    "lesser": tirx.LT,
    "lesser_equal": tirx.LE,
}


def compare(fn: str, dtype: str, a: Expr, b: Expr) -> Expr:
    """``1`` if ``a <fn> b`` else ``0``, in ``dtype``."""
    if dtype == "float16":
        a, b = T.Cast("float32", a), T.Cast("float32", b)
    one, zero = _const(1, dtype), _const(0, dtype)
    if fn == "not_equal":
        return T.Select(tirx.EQ(a, b), zero, one)
    return T.Select(_TESTS[fn](a, b), one, zero)


def _blocks(cols: Columns):
    """``apply(*args, base, j)`` for every element ``base + j < n`` of a flat map: ``n // BLOCK``
    parallel-safe ``rows`` blocks of ``BLOCK`` elements, then a serial tail."""

    @T.macro
    def blocks(n, apply, *args):
        for i in T.serial(n // BLOCK):
            with T.sblock("rows"):
                vi = T.axis.spatial(n // BLOCK, i)
                cols.each(BLOCK, apply, *args, vi * BLOCK)
        for t in T.serial(n % BLOCK):
            with T.sblock("tail"):
                vt = T.axis.spatial(n % BLOCK, t)
                apply(*args, n - n % BLOCK, vt)

    return blocks


def _arrays_map(fn: str, dtype: str, cols: Columns) -> tvm.tirx.PrimFunc:
    align = element_bytes(dtype)
    blocks = _blocks(cols)

    @T.macro
    def apply(out, a, b, base, j):
        out[base + j] = compare(fn, dtype, a[base + j], b[base + j])

    @T.prim_func(s_tir=True)
    def func(a: T.handle, b: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        A = T.match_buffer(a, (n,), dtype, align=align)
        B = T.match_buffer(b, (n,), dtype, align=align)
        Out = T.match_buffer(out, (n,), dtype, align=align)
        blocks(n, apply, Out, A, B)

    return func


def _scalar_map(fn: str, dtype: str, cols: Columns) -> tvm.tirx.PrimFunc:
    align = element_bytes(dtype)
    scalar_t = _scalar_type(dtype)
    blocks = _blocks(cols)

    @T.macro
    def apply(out, x, s, base, j):
        out[base + j] = compare(fn, dtype, x[base + j], T.Cast(dtype, s))

    @T.prim_func(s_tir=True)
    def func(x: T.handle, s: scalar_t, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        X = T.match_buffer(x, (n,), dtype, align=align)
        Out = T.match_buffer(out, (n,), dtype, align=align)
        blocks(n, apply, Out, X, s)

    return func


def dense(dtype: str, row_threads: int | None = None) -> dict[str, tvm.tirx.PrimFunc]:
    """Flat comparison maps: ``<op> (a, b, out)`` of two buffers and ``<op>_scalar (x, s, out)``
    of a buffer and a scalar; used on dense buffers and on the stored values of sparse ones."""
    cols = columns(1, row_threads)
    funcs = {fn: _arrays_map(fn, dtype, cols) for fn in COMPARE_OPS}
    funcs.update({f"{fn}_scalar": _scalar_map(fn, dtype, cols) for fn in COMPARE_OPS})
    return funcs
