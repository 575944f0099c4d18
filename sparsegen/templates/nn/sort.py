"""Sorts along an axis (kernel ``nn_sort``): a stable merge sort of each line of a
``(pre, n, post)`` view (one ``rows`` block per line, bottom-up runs merged between the order
and a scratch buffer), then the first ``k`` of each line's order as values and ids, or as a
mask; and a csr's entries sorted by column within each row (the same merge sort on each row's
column ids).

nan orders after every number ascending and before every number descending (numpy's ascending
order, reversed); equal values keep their positions' order in both directions.
"""

from __future__ import annotations

from typing import Any

import tvm
from tvm import tirx
from tvm.script import tirx as T

from .. import element_bytes

Expr = tvm.ir.Expr


def _before(dtype: str, a: Expr, b: Expr, descend: Expr) -> Expr:
    """Whether value ``a`` orders strictly before ``b`` (``descend == 1``: largest first)."""
    if not dtype.startswith("float"):
        return T.Select(descend == T.int64(1), a > b, a < b)
    nan_a, nan_b = tirx.isnan(a), tirx.isnan(b)
    ascending = tirx.Or(a < b, tirx.And(nan_b, tirx.Not(nan_a)))
    descending = tirx.Or(a > b, tirx.And(nan_a, tirx.Not(nan_b)))
    return T.Select(descend == T.int64(1), descending, ascending)


def _merge_sort(dtype: str) -> Any:
    """A macro: a stable bottom-up merge sort of one line of ``n`` values of ``x`` into ``ids``
    (the line's positions ``0..n-1`` in sorted order), runs merged between ``ids`` and
    ``scratch``. Line position ``i`` of the flat buffers is ``base + i * stride``; ``c`` (7) and
    ``w`` (2) are local int64 buffers."""

    @T.macro
    def merge_pass(x, src, dst, base, stride, n, width, c, descend):
        # c: 0 run start, 1 middle, 2 end, 3 left cursor, 4 right cursor, 5 output, 6 take right
        c[0] = T.int64(0)
        while c[0] < n:
            c[1] = T.min(c[0] + width, n)
            c[2] = T.min(c[0] + width * T.int64(2), n)
            c[3] = c[0]
            c[4] = c[1]
            c[5] = c[0]
            while c[5] < c[2]:
                c[6] = T.int64(1)
                if c[3] < c[1]:  # nested: TIR's `and` does not short-circuit the loads
                    c[6] = T.int64(0)
                    if c[4] < c[2]:
                        if _before(dtype, x[base + src[base + c[4] * stride] * stride],
                                   x[base + src[base + c[3] * stride] * stride], descend):
                            c[6] = T.int64(1)
                if c[6] == T.int64(1):
                    dst[base + c[5] * stride] = src[base + c[4] * stride]
                    c[4] = c[4] + T.int64(1)
                else:
                    dst[base + c[5] * stride] = src[base + c[3] * stride]
                    c[3] = c[3] + T.int64(1)
                c[5] = c[5] + T.int64(1)
            c[0] = c[2]

    @T.macro
    def merge_sort(x, ids, scratch, base, stride, n, c, w, descend):
        for i in T.serial(n):
            ids[base + i * stride] = i
        w[0] = T.int64(1)  # run width
        w[1] = T.int64(0)  # passes done
        while w[0] < n:
            if w[1] % T.int64(2) == T.int64(0):
                merge_pass(x, ids, scratch, base, stride, n, w[0], c, descend)
            else:
                merge_pass(x, scratch, ids, base, stride, n, w[0], c, descend)
            w[0] = w[0] * T.int64(2)
            w[1] = w[1] + T.int64(1)
        if w[1] % T.int64(2) == T.int64(1):
            for i in T.serial(n):
                ids[base + i * stride] = scratch[base + i * stride]

    return merge_sort


def _order(dtype: str) -> tvm.tirx.PrimFunc:
    """``order``: each line's merge sort, on flat views of the ``(pre, n, post)`` buffers."""
    itemsize = element_bytes(dtype)
    merge_sort = _merge_sort(dtype)

    @T.prim_func(s_tir=True)
    def order(x: T.handle, descend: T.int64, ids: T.handle, scratch: T.handle):
        T.func_attr({"tirx.noalias": True})
        pre = T.int64()
        n = T.int64()
        post = T.int64()
        X = T.match_buffer(x, (pre, n, post), dtype, align=itemsize)
        Ids = T.match_buffer(ids, (pre, n, post), "int64", align=8)
        S = T.match_buffer(scratch, (pre, n, post), "int64", align=8)
        Xf = T.decl_buffer((pre * n * post,), dtype, data=X.data)
        Idsf = T.decl_buffer((pre * n * post,), "int64", data=Ids.data)
        Sf = T.decl_buffer((pre * n * post,), "int64", data=S.data)
        for line in T.serial(pre * post):
            with T.sblock("rows"):
                vl = T.axis.spatial(pre * post, line)
                T.reads(X[vl // post, 0:n, vl % post])
                T.writes(Ids[vl // post, 0:n, vl % post], S[vl // post, 0:n, vl % post])
                c = T.alloc_buffer((7,), "int64", scope="local")
                w = T.alloc_buffer((2,), "int64", scope="local")
                merge_sort(Xf, Idsf, Sf, vl // post * n * post + vl % post, post, n, c, w,
                           descend)

    return order


def _csr_rows(dtype: str) -> tvm.tirx.PrimFunc:
    """``csr_rows``: each csr row's entries in ascending column order (a stable merge sort of
    the row's column ids, then its ids and values gathered in that order)."""
    itemsize = element_bytes(dtype)
    merge_sort = _merge_sort("int64")

    @T.prim_func(s_tir=True)
    def csr_rows(indices: T.handle, indptr: T.handle, data: T.handle, out_indices: T.handle,
                 out_data: T.handle, order: T.handle, scratch: T.handle):
        T.func_attr({"tirx.noalias": True})
        rows = T.int64()  # indptr entries: n + 1
        nnz = T.int64()
        Idx = T.match_buffer(indices, (nnz,), "int64", align=8)
        P = T.match_buffer(indptr, (rows,), "int64", align=8)
        Data = T.match_buffer(data, (nnz,), dtype, align=itemsize)
        OutIdx = T.match_buffer(out_indices, (nnz,), "int64", align=8)
        OutData = T.match_buffer(out_data, (nnz,), dtype, align=itemsize)
        Order = T.match_buffer(order, (nnz,), "int64", align=8)
        S = T.match_buffer(scratch, (nnz,), "int64", align=8)
        for r in T.serial(rows - 1):
            with T.sblock("rows"):
                vr = T.axis.spatial(rows - 1, r)
                T.reads(P[vr : vr + 2], Idx[P[vr] : P[vr + 1]], Data[P[vr] : P[vr + 1]])
                T.writes(OutIdx[P[vr] : P[vr + 1]], OutData[P[vr] : P[vr + 1]],
                         Order[P[vr] : P[vr + 1]], S[P[vr] : P[vr + 1]])
                c = T.alloc_buffer((7,), "int64", scope="local")
                w = T.alloc_buffer((2,), "int64", scope="local")
                merge_sort(Idx, Order, S, P[vr], T.int64(1), P[vr + 1] - P[vr], c, w,
                           T.int64(0))
                for i in T.serial(P[vr + 1] - P[vr]):
                    OutIdx[P[vr] + i] = Idx[P[vr] + Order[P[vr] + i]]
                    OutData[P[vr] + i] = Data[P[vr] + Order[P[vr] + i]]

    return csr_rows


def _select(dtype: str) -> tvm.tirx.PrimFunc:
    """``select``: the first ``k`` positions of each line's order and their values."""
    itemsize = element_bytes(dtype)

    @T.prim_func(s_tir=True)
    def select(x: T.handle, ids: T.handle, values: T.handle, first: T.handle):
        T.func_attr({"tirx.noalias": True})
        pre = T.int64()
        n = T.int64()
        post = T.int64()
        k = T.int64()
        X = T.match_buffer(x, (pre, n, post), dtype, align=itemsize)
        Ids = T.match_buffer(ids, (pre, n, post), "int64", align=8)
        V = T.match_buffer(values, (pre, k, post), dtype, align=itemsize)
        F = T.match_buffer(first, (pre, k, post), "int64", align=8)
        for line in T.serial(pre * post):
            with T.sblock("rows"):
                vl = T.axis.spatial(pre * post, line)
                T.reads(X[vl // post, 0:n, vl % post], Ids[vl // post, 0:k, vl % post])
                T.writes(V[vl // post, 0:k, vl % post], F[vl // post, 0:k, vl % post])
                for i in T.serial(k):
                    F[vl // post, i, vl % post] = Ids[vl // post, i, vl % post]
                    V[vl // post, i, vl % post] = X[vl // post, Ids[vl // post, i, vl % post],
                                                    vl % post]

    return select


def _mask(dtype: str) -> tvm.tirx.PrimFunc:
    """``mask``: 1 at the first ``k`` positions of each line's order, 0 elsewhere."""
    itemsize = element_bytes(dtype)
    one, zero = tvm.tirx.const(1, dtype), tvm.tirx.const(0, dtype)

    @T.prim_func(s_tir=True)
    def mask(ids: T.handle, k: T.int64, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        pre = T.int64()
        n = T.int64()
        post = T.int64()
        Ids = T.match_buffer(ids, (pre, n, post), "int64", align=8)
        Out = T.match_buffer(out, (pre, n, post), dtype, align=itemsize)
        for line in T.serial(pre * post):
            with T.sblock("rows"):
                vl = T.axis.spatial(pre * post, line)
                T.reads(Ids[vl // post, 0:n, vl % post])
                T.writes(Out[vl // post, 0:n, vl % post])
                for i in T.serial(n):
                    Out[vl // post, Ids[vl // post, i, vl % post], vl % post] = T.Select(
                        i < k, one, zero)

    return mask


def sort(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``order (x[pre,n,post], descend, ids[pre,n,post], scratch[pre,n,post])``: ``ids`` along
    each line the positions of its values in sorted order (``scratch`` is overwritten);
    ``select (x, ids, values[pre,k,post], first[pre,k,post])``: the first ``k`` positions of
    each line's order and their values; ``mask (ids, k, out[pre,n,post])``: 1 at the first
    ``k`` positions of each line's order, 0 elsewhere; ``csr_rows (indices, indptr, data,
    out_indices, out_data, order, scratch)``: a csr's entries sorted by column within each row."""
    return {"order": _order(dtype), "select": _select(dtype), "mask": _mask(dtype),
            "csr_rows": _csr_rows(dtype)}
