"""Strided copies: a C-contiguous output filled from strided views of flat inputs.

The output is viewed as ``(rows, cols)``: ``cols`` is its last dimension, ``rows`` the product of
the others. Where each operand's element ``[i, j]`` lives comes from a small int64 ``meta`` buffer
the host builds (sparsegen/ops/strided.py; strides in elements, 0 broadcasts, negative flips):

    meta[0:p]        the operands' offsets
    meta[p:2p]       the operands' strides along the last dimension
    meta[2p:]        per outer dimension, innermost first: its size, then each operand's stride

for ``p`` operands. A ``rows`` block decomposes its row index into outer coordinates once (one
division per collapsed outer dimension), then one column loop reads ``x[base + j * step]``; when
every step is 1 the loop reads ``x[base + j]``, so contiguous rows stay plain vector loads.

``copy`` is ``out = x`` through the view; every entry of ``BINARY`` is ``out = f(a, b)`` of two
views (broadcast arithmetic and comparisons, in the element dtype).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import tvm
from tvm.script import tirx as T

from ..opnames import COMPARE_OPS, STRIDED_BINARY_OPS
from . import element_bytes
from .columns import cols
from .compare import compare
from .elemwise.arith import binary

Expr = tvm.ir.Expr

BINARY: dict[str, Callable[[str, Expr, Expr], Expr]] = {
    fn: partial(compare if fn in COMPARE_OPS else binary, fn) for fn in STRIDED_BINARY_OPS
}
"""The binary functions of kernel ``strided`` (``opnames.STRIDED_BINARY_OPS``, in its order):
name -> ``element(dtype, a, b)``. A new broadcast op is its name in ``opnames`` plus its element
expression in elemwise/arith.py (or compare.py)."""


def _copy_function(dtype: str) -> tvm.tirx.PrimFunc:
    """``(x, meta, out)``: ``out[i, j] = x[view of [i, j]]``."""
    align = element_bytes(dtype)

    @T.macro
    def plain(out, i, x, at, j):
        out[i, j] = x[at[1] + j]

    @T.macro
    def strided(out, i, x, at, step, j):
        out[i, j] = x[at[1] + j * step]

    @T.prim_func(s_tir=True)
    def func(x: T.handle, meta: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        t = T.int64()
        r = T.int64()
        c = T.int64()
        X = T.match_buffer(x, (n,), dtype, align=align)
        M = T.match_buffer(meta, (t,), "int64", align=8)
        Out = T.match_buffer(out, (r, c), dtype, align=align)
        for i in T.serial(r):
            with T.sblock("rows"):
                vi = T.axis.spatial(r, i)
                T.reads(X[0:n], M[0:t])
                T.writes(Out[vi, 0:c])
                # at[0]: the row index still to decompose, at[1]: the row's offset in x
                at = T.alloc_buffer((2,), "int64", scope="local")
                at[0] = vi
                at[1] = M[0]
                for k in T.serial((t - 2) // 2):
                    at[1] = at[1] + T.floormod(at[0], M[2 + 2 * k]) * M[3 + 2 * k]
                    at[0] = T.floordiv(at[0], M[2 + 2 * k])
                if M[1] == T.int64(1):
                    cols.each(c, plain, Out, vi, X, at)
                else:
                    cols.each(c, strided, Out, vi, X, at, M[1])

    return func


def _binary_function(element: Callable[[Expr, Expr], Expr], dtype: str) -> tvm.tirx.PrimFunc:
    """``(a, b, meta, out)``: ``out[i, j] = element(a[view of [i, j]], b[view of [i, j]])``."""
    align = element_bytes(dtype)

    @T.macro
    def plain(out, i, a, b, at, j):
        out[i, j] = element(a[at[1] + j], b[at[2] + j])

    @T.macro
    def strided(out, i, a, b, at, step_a, step_b, j):
        out[i, j] = element(a[at[1] + j * step_a], b[at[2] + j * step_b])

    @T.prim_func(s_tir=True)
    def func(a: T.handle, b: T.handle, meta: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        na = T.int64()
        nb = T.int64()
        t = T.int64()
        r = T.int64()
        c = T.int64()
        A = T.match_buffer(a, (na,), dtype, align=align)
        B = T.match_buffer(b, (nb,), dtype, align=align)
        M = T.match_buffer(meta, (t,), "int64", align=8)
        Out = T.match_buffer(out, (r, c), dtype, align=align)
        for i in T.serial(r):
            with T.sblock("rows"):
                vi = T.axis.spatial(r, i)
                T.reads(A[0:na], B[0:nb], M[0:t])
                T.writes(Out[vi, 0:c])
                # at[0]: the row index still to decompose, at[1] / at[2]: the row's offset in a / b
                at = T.alloc_buffer((3,), "int64", scope="local")
                at[0] = vi
                at[1] = M[0]
                at[2] = M[1]
                for k in T.serial((t - 4) // 3):
                    at[1] = at[1] + T.floormod(at[0], M[4 + 3 * k]) * M[5 + 3 * k]
                    at[2] = at[2] + T.floormod(at[0], M[4 + 3 * k]) * M[6 + 3 * k]
                    at[0] = T.floordiv(at[0], M[4 + 3 * k])
                if M[2] == T.int64(1) and M[3] == T.int64(1):
                    cols.each(c, plain, Out, vi, A, B, at)
                else:
                    cols.each(c, strided, Out, vi, A, B, at, M[2], M[3])

    return func


def strided(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``copy`` of one strided view and every ``BINARY`` function of two, in ``dtype``."""
    funcs = {"copy": _copy_function(dtype)}
    funcs.update({fn: _binary_function(partial(element, dtype), dtype)
                  for fn, element in BINARY.items()})
    return funcs
