"""Row gathers by an id table: csr rows (``count`` then ``fill``) and dense rows (``dense``).

The data iterators build every batch this way: the ids are the batch's rows in order (shuffled,
wrapped round the end of the data, repeated), validated on the host before the call."""

from __future__ import annotations

import tvm
from tvm.script import tirx as T

from . import element_bytes
from .columns import cols
from .scan import offsets


def csr_rows(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``count``: ``out_indptr`` as the prefix sum of the lengths of rows ``ids`` of a csr matrix.
    ``fill``: their values and column ids, row after row.
    ``dense``: ``out[r] = x[ids[r]]`` for a dense matrix of rows."""
    itemsize = element_bytes(dtype)

    @T.macro
    def copy(out, r, x, s, j):
        out[r, j] = x[s, j]

    @T.prim_func(s_tir=True)
    def count(indptr: T.handle, ids: T.handle, out_indptr: T.handle):
        T.func_attr({"tirx.noalias": True})
        n1 = T.int64()  # rows + 1: n alone would not be bound by any buffer
        m = T.int64()
        P = T.match_buffer(indptr, (n1,), "int64", align=8)
        Ids = T.match_buffer(ids, (m,), "int64", align=8)
        Q = T.match_buffer(out_indptr, (m + 1,), "int64", align=8)
        for r in T.serial(m):
            with T.sblock("rows"):
                vr = T.axis.spatial(m, r)
                T.reads(P[0:n1], Ids[vr])
                T.writes(Q[vr + 1])
                Q[vr + 1] = P[Ids[vr] + 1] - P[Ids[vr]]
        offsets(Q, m)

    @T.prim_func(s_tir=True)
    def fill(data: T.handle, indices: T.handle, indptr: T.handle, ids: T.handle,
             out_indptr: T.handle, out_data: T.handle, out_indices: T.handle):
        T.func_attr({"tirx.noalias": True})
        n1 = T.int64()
        nnz = T.int64()
        m = T.int64()
        onnz = T.int64()
        Data = T.match_buffer(data, (nnz,), dtype, align=itemsize)
        Idx = T.match_buffer(indices, (nnz,), "int64", align=8)
        P = T.match_buffer(indptr, (n1,), "int64", align=8)
        Ids = T.match_buffer(ids, (m,), "int64", align=8)
        Q = T.match_buffer(out_indptr, (m + 1,), "int64", align=8)
        OData = T.match_buffer(out_data, (onnz,), dtype, align=itemsize)
        OIdx = T.match_buffer(out_indices, (onnz,), "int64", align=8)
        for r in T.serial(m):
            with T.sblock("rows"):
                vr = T.axis.spatial(m, r)
                T.reads(Data[0:nnz], Idx[0:nnz], P[0:n1], Ids[vr], Q[vr : vr + 2])
                T.writes(OData[Q[vr] : Q[vr + 1]], OIdx[Q[vr] : Q[vr + 1]])
                for t in T.serial(Q[vr + 1] - Q[vr]):
                    OData[Q[vr] + t] = Data[P[Ids[vr]] + t]
                    OIdx[Q[vr] + t] = Idx[P[Ids[vr]] + t]

    @T.prim_func(s_tir=True)
    def dense(x: T.handle, ids: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        k = T.int64()
        d = T.int64()
        m = T.int64()
        X = T.match_buffer(x, (k, d), dtype, align=itemsize)
        Ids = T.match_buffer(ids, (m,), "int64", align=8)
        Out = T.match_buffer(out, (m, d), dtype, align=itemsize)
        for r in T.serial(m):
            with T.sblock("rows"):
                vr = T.axis.spatial(m, r)
                T.reads(X[0:k, 0:d], Ids[vr])
                T.writes(Out[vr, 0:d])
                cols.each(d, copy, Out, vr, X, Ids[vr])

    return {"count": count, "fill": fill, "dense": dense}
