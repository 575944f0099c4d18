"""``where(cond, x, y)`` (kernel ``where``): ``x`` where ``cond`` is non-zero (nan included),
else ``y``; ``cond`` has a dtype of its own. The condition is dense and of the values' shape
(``dense``), one value per row (``rows``), or csr (``csr``: the caller fills ``out`` with ``y``
first and the kernel writes ``x`` at the stored non-zero conditions, parallel over rows)."""

from __future__ import annotations

import tvm
from tvm.script import tirx as T

from .. import element_bytes
from ..columns import cols
from ..flat import each_element
from .arith import nonzero


def _true(ctype: str, c: tvm.ir.Expr) -> tvm.ir.Expr:
    if ctype == "float16":
        c = T.Cast("float32", c)
    return nonzero("float32" if ctype == "float16" else ctype, c)


def _dense(dtype: str, ctype: str) -> tvm.tirx.PrimFunc:
    align, calign = element_bytes(dtype), element_bytes(ctype)

    @T.macro
    def apply(out, c, x, y, base, j):
        out[base + j] = T.Select(_true(ctype, c[base + j]), x[base + j], y[base + j])

    @T.prim_func(s_tir=True)
    def func(cond: T.handle, x: T.handle, y: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        C = T.match_buffer(cond, (n,), ctype, align=calign)
        X = T.match_buffer(x, (n,), dtype, align=align)
        Y = T.match_buffer(y, (n,), dtype, align=align)
        Out = T.match_buffer(out, (n,), dtype, align=align)
        each_element(n, apply, Out, C, X, Y)

    return func


def _rows(dtype: str, ctype: str) -> tvm.tirx.PrimFunc:
    align, calign = element_bytes(dtype), element_bytes(ctype)

    @T.macro
    def pick(out, i, take, x, y, j):
        out[i, j] = T.Select(take, x[i, j], y[i, j])

    @T.prim_func(s_tir=True)
    def func(cond: T.handle, x: T.handle, y: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        m = T.int64()
        d = T.int64()
        C = T.match_buffer(cond, (m,), ctype, align=calign)
        X = T.match_buffer(x, (m, d), dtype, align=align)
        Y = T.match_buffer(y, (m, d), dtype, align=align)
        Out = T.match_buffer(out, (m, d), dtype, align=align)
        for i in T.serial(m):
            with T.sblock("rows"):
                vi = T.axis.spatial(m, i)
                T.reads(C[vi], X[vi, 0:d], Y[vi, 0:d])
                T.writes(Out[vi, 0:d])
                cols.each(d, pick, Out, vi, _true(ctype, C[vi]), X, Y)

    return func


def _csr(dtype: str, ctype: str) -> tvm.tirx.PrimFunc:
    align, calign = element_bytes(dtype), element_bytes(ctype)

    @T.prim_func(s_tir=True)
    def func(data: T.handle, indices: T.handle, indptr: T.handle, x: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        m = T.int64()
        d = T.int64()
        nnz = T.int64()
        D = T.match_buffer(data, (nnz,), ctype, align=calign)
        I = T.match_buffer(indices, (nnz,), "int64", align=8)
        P = T.match_buffer(indptr, (m + 1,), "int64", align=8)
        X = T.match_buffer(x, (m, d), dtype, align=align)
        Out = T.match_buffer(out, (m, d), dtype, align=align)
        for i in T.serial(m):
            with T.sblock("rows"):
                vi = T.axis.spatial(m, i)
                T.reads(D[P[vi] : P[vi + 1]], I[P[vi] : P[vi + 1]], P[vi : vi + 2], X[vi, 0:d])
                T.writes(Out[vi, 0:d])
                for q in T.serial(P[vi + 1] - P[vi]):
                    if _true(ctype, D[P[vi] + q]):
                        Out[vi, I[P[vi] + q]] = X[vi, I[P[vi] + q]]

    return func


def where(dtype: str, ctype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``dense``, ``rows`` and ``csr`` selections of ``dtype`` values by a ``ctype`` condition."""
    return {"dense": _dense(dtype, ctype), "rows": _rows(dtype, ctype), "csr": _csr(dtype, ctype)}
