"""cast_storage: dense <-> row_sparse and dense <-> csr, each data-dependent cast in two phases.

Column loops are ``d // lanes`` vector steps plus a scalar tail (``lanes`` is a schedule knob,
see schedules/cpu.py for why templates realise it).
"""

from __future__ import annotations

import tvm
from tvm.script import tirx as T

from . import element_bytes


def _nonzero(value: tvm.tirx.PrimExpr, dtype: str) -> tvm.tirx.PrimExpr:
    """``value != 0`` that holds for nan too, as MXNet stores nan (TVM's ``!=`` on floats is an
    ordered compare, false for nan)."""
    zero = tvm.tirx.const(0, dtype)
    if dtype.startswith("float"):
        return tvm.tirx.Or(value != zero, tvm.tirx.isnan(value))
    return value != zero


def dense_to_row_sparse(dtype: str, lanes: int = 16) -> dict[str, tvm.tirx.PrimFunc]:
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
                acc = T.alloc_buffer((lanes,), "int32", scope="local")
                for ji in T.vectorized(lanes):
                    acc[ji] = 0
                for jo in T.serial(d // lanes):
                    for ji in T.vectorized(lanes):
                        acc[ji] = acc[ji] | T.Cast("int32", _nonzero(X[vi, jo * lanes + ji], dtype))
                for jt in T.serial(d % lanes):
                    acc[0] = acc[0] | T.Cast("int32", _nonzero(X[vi, d - d % lanes + jt], dtype))
                for ji in T.serial(1, lanes):
                    acc[0] = acc[0] | acc[ji]
                P[vi + 1] = T.Cast("int64", acc[0])
        with T.sblock("scan"):
            T.reads(P[0 : n + 1])
            T.writes(P[0 : n + 1])
            P[0] = T.int64(0)
            for i in T.serial(n):
                P[i + 1] = P[i + 1] + P[i]

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
                    Idx[P[vi]] = vi
                    for jo in T.serial(d // lanes):
                        for ji in T.vectorized(lanes):
                            Data[P[vi], jo * lanes + ji] = X[vi, jo * lanes + ji]
                    for jt in T.serial(d % lanes):
                        Data[P[vi], d - d % lanes + jt] = X[vi, d - d % lanes + jt]

    return {"mark": mark, "fill": fill}


def row_sparse_to_dense(dtype: str, lanes: int = 16) -> dict[str, tvm.tirx.PrimFunc]:
    """``scatter``: ``out`` becomes zeros with ``out[indices[r]] = data[r]``."""
    zero = tvm.tirx.const(0, dtype)
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
                for jo in T.serial(d // lanes):
                    for ji in T.vectorized(lanes):
                        Out[vi, jo * lanes + ji] = zero
                for jt in T.serial(d % lanes):
                    Out[vi, d - d % lanes + jt] = zero
        for r in T.serial(k):
            with T.sblock("rows_scatter"):
                vr = T.axis.spatial(k, r)
                T.reads(Data[vr, 0:d], Idx[vr])
                T.writes(Out[Idx[vr], 0:d])
                for jo in T.serial(d // lanes):
                    for ji in T.vectorized(lanes):
                        Out[Idx[vr], jo * lanes + ji] = Data[vr, jo * lanes + ji]
                for jt in T.serial(d % lanes):
                    Out[Idx[vr], d - d % lanes + jt] = Data[vr, d - d % lanes + jt]

    return {"scatter": scatter}


def dense_to_csr(dtype: str, lanes: int = 16) -> dict[str, tvm.tirx.PrimFunc]:
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
                acc = T.alloc_buffer((lanes,), "int64", scope="local")
                for ji in T.vectorized(lanes):
                    acc[ji] = T.int64(0)
                for jo in T.serial(d // lanes):
                    for ji in T.vectorized(lanes):
                        acc[ji] = acc[ji] + T.Cast("int64", _nonzero(X[vi, jo * lanes + ji], dtype))
                for jt in T.serial(d % lanes):
                    acc[0] = acc[0] + T.Cast("int64", _nonzero(X[vi, d - d % lanes + jt], dtype))
                for ji in T.serial(1, lanes):
                    acc[0] = acc[0] + acc[ji]
                P[vi + 1] = acc[0]
        with T.sblock("scan"):
            T.reads(P[0 : n + 1])
            T.writes(P[0 : n + 1])
            P[0] = T.int64(0)
            for i in T.serial(n):
                P[i + 1] = P[i + 1] + P[i]

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


def csr_to_dense(dtype: str, lanes: int = 16) -> dict[str, tvm.tirx.PrimFunc]:
    """``scatter``: each output row is zeroed, then receives its row's stored values."""
    zero = tvm.tirx.const(0, dtype)
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
                for jo in T.serial(d // lanes):
                    for ji in T.vectorized(lanes):
                        Out[vi, jo * lanes + ji] = zero
                for jt in T.serial(d % lanes):
                    Out[vi, d - d % lanes + jt] = zero
                for p in T.serial(P[vi + 1] - P[vi]):
                    Out[vi, Idx[P[vi] + p]] = Data[P[vi] + p]

    return {"scatter": scatter}
