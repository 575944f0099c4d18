"""cast_storage: dense <-> row_sparse and dense <-> csr, each data-dependent cast in two phases.

Copies and fills of rows are column loops (templates/columns.py) that the schedules realise; the
non-zero tests of ``mark`` and ``count`` reduce over a row's columns in plain loops (LLVM
vectorizes them; one thread per row on a GPU), as does the compaction of ``dense_to_csr``.
"""

from __future__ import annotations

import tvm
from tvm.script import tirx as T

from . import element_bytes
from .columns import cols
from .scan import offsets


def _nonzero(value: tvm.tirx.PrimExpr, dtype: str) -> tvm.tirx.PrimExpr:
    """``value != 0`` that holds for nan too, as MXNet stores nan; -0.0 is zero.

    For floats this is ``!(value == 0)``, one unordered compare (LLVM's ``fcmp une``). It is
    written as a select on ``value == 0`` because TVM rewrites ``!(a == b)`` to ``a != b``, an
    ordered compare that is false for nan."""
    zero = tvm.tirx.const(0, dtype)
    if dtype.startswith("float"):
        return tvm.tirx.Select(value == zero, tvm.tirx.const(False, "bool"),
                               tvm.tirx.const(True, "bool"))
    return value != zero


@T.macro
def _copy(dst, r, src, s, j):
    dst[r, j] = src[s, j]


@T.macro
def _put(dst, r, j, value):
    dst[r, j] = value


def _clear(zero: tvm.tirx.PrimExpr):
    """The column body ``out[r, j] = zero``."""

    @T.macro
    def clear(out, r, j):
        out[r, j] = zero

    return clear


def dense_to_row_sparse(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """Phase ``mark``: ``pos[i+1] - pos[i]`` is 1 where row i has a non-zero, as a prefix sum.
    Phase ``fill``: copy each marked row to ``data[pos[i]]`` and write ``indices[pos[i]] = i``."""
    itemsize = element_bytes(dtype)

    @T.prim_func(s_tir=True)
    def mark(x: T.handle, pos: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        d = T.int64()
        X = T.match_buffer(x, (n, d), dtype, align=itemsize)
        P = T.match_buffer(pos, (n + 1,), "int64", align=8)
        for i in T.serial(n):
            with T.sblock("rows"):
                vi = T.axis.spatial(n, i)
                T.reads(X[vi, 0:d])
                T.writes(P[vi + 1])
                acc = T.alloc_buffer((1,), "int32", scope="local")
                acc[0] = 0
                for j in T.serial(d):
                    acc[0] = acc[0] | T.Cast("int32", _nonzero(X[vi, j], dtype))
                P[vi + 1] = T.Cast("int64", acc[0])
        offsets(P, n)

    @T.prim_func(s_tir=True)
    def fill(x: T.handle, pos: T.handle, data: T.handle, indices: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        d = T.int64()
        k = T.int64()
        X = T.match_buffer(x, (n, d), dtype, align=itemsize)
        P = T.match_buffer(pos, (n + 1,), "int64", align=8)
        Data = T.match_buffer(data, (k, d), dtype, align=itemsize)
        Idx = T.match_buffer(indices, (k,), "int64", align=8)
        for i in T.serial(n):
            with T.sblock("rows"):
                vi = T.axis.spatial(n, i)
                T.reads(X[vi, 0:d], P[vi : vi + 2])
                T.writes(Data[P[vi], 0:d], Idx[P[vi]])
                if P[vi + 1] > P[vi]:
                    Idx[P[vi]] = vi  # every thread of the row writes this same value
                    cols.each(d, _copy, Data, P[vi], X, vi)

    return {"mark": mark, "fill": fill}


def row_sparse_to_dense(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``scatter``: ``out`` becomes zeros with ``out[indices[r]] = data[r]``."""
    clear = _clear(tvm.tirx.const(0, dtype))
    itemsize = element_bytes(dtype)

    @T.prim_func(s_tir=True)
    def scatter(data: T.handle, indices: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        d = T.int64()
        k = T.int64()
        Data = T.match_buffer(data, (k, d), dtype, align=itemsize)
        Idx = T.match_buffer(indices, (k,), "int64", align=8)
        Out = T.match_buffer(out, (n, d), dtype, align=itemsize)
        for i in T.serial(n):
            with T.sblock("rows_zero"):
                vi = T.axis.spatial(n, i)
                T.reads()
                T.writes(Out[vi, 0:d])
                cols.each(d, clear, Out, vi)
        for r in T.serial(k):
            with T.sblock("rows_scatter"):
                vr = T.axis.spatial(k, r)
                T.reads(Data[vr, 0:d], Idx[vr])
                T.writes(Out[Idx[vr], 0:d])
                cols.each(d, _copy, Out, Idx[vr], Data, vr)

    return {"scatter": scatter}


def dense_to_csr(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """Phase ``count``: ``indptr`` as the prefix sum of each row's non-zero count.
    Phase ``fill``: each row's non-zeros and their column ids, in column order."""
    itemsize = element_bytes(dtype)

    @T.prim_func(s_tir=True)
    def count(x: T.handle, indptr: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        d = T.int64()
        X = T.match_buffer(x, (n, d), dtype, align=itemsize)
        P = T.match_buffer(indptr, (n + 1,), "int64", align=8)
        for i in T.serial(n):
            with T.sblock("rows"):
                vi = T.axis.spatial(n, i)
                T.reads(X[vi, 0:d])
                T.writes(P[vi + 1])
                acc = T.alloc_buffer((1,), "int64", scope="local")
                acc[0] = T.int64(0)
                for j in T.serial(d):
                    acc[0] = acc[0] + T.Cast("int64", _nonzero(X[vi, j], dtype))
                P[vi + 1] = acc[0]
        offsets(P, n)

    @T.prim_func(s_tir=True)
    def fill(x: T.handle, indptr: T.handle, data: T.handle, indices: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        d = T.int64()
        nnz = T.int64()
        X = T.match_buffer(x, (n, d), dtype, align=itemsize)
        P = T.match_buffer(indptr, (n + 1,), "int64", align=8)
        Data = T.match_buffer(data, (nnz,), dtype, align=itemsize)
        Idx = T.match_buffer(indices, (nnz,), "int64", align=8)
        for i in T.serial(n):
            with T.sblock("rows"):
                vi = T.axis.spatial(n, i)
                T.reads(X[vi, 0:d], P[vi])
                T.writes(Data[P[vi] : P[vi + 1]], Idx[P[vi] : P[vi + 1]])
                c = T.alloc_buffer((1,), "int64", scope="local")
                c[0] = P[vi]
                for j in T.serial(d):
                    if _nonzero(X[vi, j], dtype):
                        Data[c[0]] = X[vi, j]
                        Idx[c[0]] = j
                        c[0] = c[0] + T.int64(1)

    return {"count": count, "fill": fill}


def csr_to_dense(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``scatter``: each output row is zeroed, then receives its row's stored values (each
    value stored by the thread that zeroed its column)."""
    clear = _clear(tvm.tirx.const(0, dtype))
    itemsize = element_bytes(dtype)

    @T.prim_func(s_tir=True)
    def scatter(data: T.handle, indices: T.handle, indptr: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        d = T.int64()
        nnz = T.int64()
        Data = T.match_buffer(data, (nnz,), dtype, align=itemsize)
        Idx = T.match_buffer(indices, (nnz,), "int64", align=8)
        P = T.match_buffer(indptr, (n + 1,), "int64", align=8)
        Out = T.match_buffer(out, (n, d), dtype, align=itemsize)
        for i in T.serial(n):
            with T.sblock("rows"):
                vi = T.axis.spatial(n, i)
                T.reads(Data[P[vi] : P[vi + 1]], Idx[P[vi] : P[vi + 1]], P[vi : vi + 2])
                T.writes(Out[vi, 0:d])
                cols.each(d, clear, Out, vi)
                for p in T.serial(P[vi + 1] - P[vi]):
                    cols.owned(Idx[P[vi] + p], _put, Out, vi, Idx[P[vi] + p], Data[P[vi] + p])

    return {"scatter": scatter}
