"""Gathers and scatters by id (kernel ``nn_gather``): take (of dense and row_sparse rows), pick,
gather_nd, scatter_nd, one_hot, csr take, a 2-D transpose, and the range check of ids.

Ids arrive as int64 (the front end casts them with kernel ``astype``). Every function keeps its
reads and writes in bounds whatever the ids hold: ``take`` and ``pick`` clip or wrap them (the
``wrap`` flag), ``gather_nd`` and ``scatter_nd`` skip an entry whose id is out of range and
write its position to ``bad[0]`` (-1 when every id is in range), ``one_hot`` compares them only.
"""

from __future__ import annotations

import tvm
from tvm import tirx
from tvm.script import tirx as T

from .. import element_bytes
from ..cast import _clear, _copy
from ..columns import cols
from ..flat import scalar_type
from ..retain import find_row
from ..scan import offsets

Expr = tvm.ir.Expr


def fixed(i: Expr, n: Expr, wrap: Expr) -> Expr:
    """Id ``i`` on an axis of length ``n > 0``: wrapped (``wrap == 1``) or clipped into
    ``[0, n)``."""
    return T.Select(wrap == T.int64(1), tirx.floormod(i, n),
                    T.max(T.min(i, n - T.int64(1)), T.int64(0)))


@T.macro
def _copy3(out, p, r, x, s, j):
    out[p, r, j] = x[p, s, j]


@T.macro
def _flat_row(row, ids, dims, m, y, rows):
    """``row[0]``: the row of entry ``y`` of an (m, y) id table over the axes ``dims`` (ids in
    ``[-d, d)``, negative ones counted from the end); ``row[1]`` is 1 when an id is out of range
    or the row is not in ``[0, rows)`` (dims that do not multiply to ``rows``): ``row[0]`` is
    then 0."""
    row[0] = T.int64(0)
    row[1] = T.int64(0)
    for k in T.serial(m):
        if ids[k, y] < -dims[k] or ids[k, y] >= dims[k]:
            row[1] = T.int64(1)
        row[0] = row[0] * dims[k] + T.Select(ids[k, y] < T.int64(0), ids[k, y] + dims[k],
                                             ids[k, y])
    if row[0] < T.int64(0) or row[0] >= rows:
        row[1] = T.int64(1)
    if row[1] == T.int64(1):
        row[0] = T.int64(0)


def _take(dtype: str) -> tvm.tirx.PrimFunc:
    """``take``: ``out[p, i] = x[p, ids[i]]``, ids clipped or wrapped."""
    itemsize = element_bytes(dtype)

    @T.prim_func(s_tir=True)
    def take(x: T.handle, ids: T.handle, wrap: T.int64, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        pre = T.int64()
        n = T.int64()
        post = T.int64()
        m = T.int64()
        X = T.match_buffer(x, (pre, n, post), dtype, align=itemsize)
        Ids = T.match_buffer(ids, (m,), "int64", align=8)
        Out = T.match_buffer(out, (pre, m, post), dtype, align=itemsize)
        for r in T.serial(pre * m):
            with T.sblock("rows"):
                vr = T.axis.spatial(pre * m, r)
                T.reads(X[vr // m, 0:n, 0:post], Ids[vr % m])
                T.writes(Out[vr // m, vr % m, 0:post])
                if n > T.int64(0):  # an empty axis has nothing to take (the front end refuses)
                    cols.each(post, _copy3, Out, vr // m, vr % m, X, fixed(Ids[vr % m], n, wrap))

    return take


def _take_rsp(dtype: str) -> tvm.tirx.PrimFunc:
    """``take_rsp``: ``out[i]`` the row ``ids[i]`` (clipped or wrapped into ``[0, n)``) of a
    row_sparse array of ``n`` rows, found in its sorted ``indices`` (zeros when not stored)."""
    itemsize = element_bytes(dtype)
    clear = _clear(tvm.tirx.const(0, dtype))

    @T.prim_func(s_tir=True)
    def take_rsp(data: T.handle, indices: T.handle, ids: T.handle, n: T.int64, wrap: T.int64,
                 out: T.handle):
        T.func_attr({"tirx.noalias": True})
        k = T.int64()
        d = T.int64()
        m = T.int64()
        Data = T.match_buffer(data, (k, d), dtype, align=itemsize)
        Idx = T.match_buffer(indices, (k,), "int64", align=8)
        Ids = T.match_buffer(ids, (m,), "int64", align=8)
        Out = T.match_buffer(out, (m, d), dtype, align=itemsize)
        for r in T.serial(m):
            with T.sblock("rows"):
                vr = T.axis.spatial(m, r)
                T.reads(Data[0:k, 0:d], Idx[0:k], Ids[vr])
                T.writes(Out[vr, 0:d])
                at = T.alloc_buffer((3,), "int64", scope="local")
                at[2] = T.int64(0)
                if n > T.int64(0):  # no row to clip or wrap into (the front end refuses)
                    find_row(at, Idx, k, fixed(Ids[vr], n, wrap))
                if at[2] == T.int64(1):
                    cols.each(d, _copy, Out, vr, Data, at[0])
                else:
                    cols.each(d, clear, Out, vr)

    return take_rsp


def _pick(dtype: str) -> tvm.tirx.PrimFunc:
    """``pick``: ``out[p, q] = x[p, ids[p, q], q]``, ids clipped or wrapped."""
    itemsize = element_bytes(dtype)

    @T.macro
    def pick_one(out, p, x, ids, n, wrap, j):
        out[p, j] = x[p, fixed(ids[p, j], n, wrap), j]

    @T.prim_func(s_tir=True)
    def pick(x: T.handle, ids: T.handle, wrap: T.int64, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        pre = T.int64()
        n = T.int64()
        post = T.int64()
        X = T.match_buffer(x, (pre, n, post), dtype, align=itemsize)
        Ids = T.match_buffer(ids, (pre, post), "int64", align=8)
        Out = T.match_buffer(out, (pre, post), dtype, align=itemsize)
        for p in T.serial(pre):
            with T.sblock("rows"):
                vp = T.axis.spatial(pre, p)
                T.reads(X[vp, 0:n, 0:post], Ids[vp, 0:post])
                T.writes(Out[vp, 0:post])
                if n > T.int64(0):
                    cols.each(post, pick_one, Out, vp, X, Ids, n, wrap)

    return pick


def _gather_nd(dtype: str) -> tvm.tirx.PrimFunc:
    """``gather_nd``: each column of ``ids`` names a row of ``x`` (its first axes flattened)."""
    itemsize = element_bytes(dtype)
    clear = _clear(tvm.tirx.const(0, dtype))

    @T.prim_func(s_tir=True)
    def gather_nd(x: T.handle, ids: T.handle, dims: T.handle, out: T.handle, bad: T.handle):
        T.func_attr({"tirx.noalias": True})
        r = T.int64()
        post = T.int64()
        m = T.int64()
        y = T.int64()
        X = T.match_buffer(x, (r, post), dtype, align=itemsize)
        Ids = T.match_buffer(ids, (m, y), "int64", align=8)
        Dims = T.match_buffer(dims, (m,), "int64", align=8)
        Out = T.match_buffer(out, (y, post), dtype, align=itemsize)
        Bad = T.match_buffer(bad, (1,), "int64", align=8)
        with T.sblock("init"):
            Bad[0] = T.int64(-1)
        for e in T.serial(y):
            with T.sblock("rows"):
                ve = T.axis.spatial(y, e)
                T.reads(X[0:r, 0:post], Ids[0:m, ve], Dims[0:m])
                T.writes(Out[ve, 0:post], Bad[0])
                row = T.alloc_buffer((2,), "int64", scope="local")
                _flat_row(row, Ids, Dims, m, ve, r)
                if row[1] == T.int64(1):
                    Bad[0] = ve
                    cols.each(post, clear, Out, ve)
                else:
                    cols.each(post, _copy, Out, ve, X, row[0])

    return gather_nd


def _scatter_nd(dtype: str) -> tvm.tirx.PrimFunc:
    """``scatter_nd``: zeros (in parallel), then each row of ``data`` at its row, serially."""
    itemsize = element_bytes(dtype)
    clear = _clear(tvm.tirx.const(0, dtype))

    @T.prim_func(s_tir=True)
    def scatter_nd(data: T.handle, ids: T.handle, dims: T.handle, out: T.handle, bad: T.handle):
        T.func_attr({"tirx.noalias": True})
        r = T.int64()
        post = T.int64()
        m = T.int64()
        y = T.int64()
        Data = T.match_buffer(data, (y, post), dtype, align=itemsize)
        Ids = T.match_buffer(ids, (m, y), "int64", align=8)
        Dims = T.match_buffer(dims, (m,), "int64", align=8)
        Out = T.match_buffer(out, (r, post), dtype, align=itemsize)
        Bad = T.match_buffer(bad, (1,), "int64", align=8)
        for i in T.serial(r):
            with T.sblock("rows_zero"):
                vi = T.axis.spatial(r, i)
                T.reads()
                T.writes(Out[vi, 0:post])
                cols.each(post, clear, Out, vi)
        with T.sblock("scatter"):
            T.reads(Data[0:y, 0:post], Ids[0:m, 0:y], Dims[0:m])
            T.writes(Out[0:r, 0:post], Bad[0])
            Bad[0] = T.int64(-1)
            row = T.alloc_buffer((2,), "int64", scope="local")
            for e in T.serial(y):
                _flat_row(row, Ids, Dims, m, e, r)
                if row[1] == T.int64(1):
                    Bad[0] = e
                else:
                    for j in T.serial(post):
                        Out[row[0], j] = Data[e, j]

    return scatter_nd


def _one_hot(dtype: str) -> tvm.tirx.PrimFunc:
    """``one_hot``: ``on`` where the column is the row's id, else ``off``."""
    itemsize = element_bytes(dtype)
    scalar_t = scalar_type(dtype)

    @T.macro
    def hot(out, r, ids, on, off, j):
        out[r, j] = T.Select(ids[r] == j, T.Cast(dtype, on), T.Cast(dtype, off))

    @T.prim_func(s_tir=True)
    def one_hot(ids: T.handle, on: scalar_t, off: scalar_t, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        m = T.int64()
        depth = T.int64()
        Ids = T.match_buffer(ids, (m,), "int64", align=8)
        Out = T.match_buffer(out, (m, depth), dtype, align=itemsize)
        for i in T.serial(m):
            with T.sblock("rows"):
                vi = T.axis.spatial(m, i)
                T.reads(Ids[vi])
                T.writes(Out[vi, 0:depth])
                cols.each(depth, hot, Out, vi, Ids, on, off)

    return one_hot


def _csr_count(dtype: str) -> tvm.tirx.PrimFunc:
    """``csr_count``: the sizes of the csr rows ``ids`` as a prefix sum."""

    @T.prim_func(s_tir=True)
    def csr_count(indptr: T.handle, ids: T.handle, wrap: T.int64, out_indptr: T.handle):
        T.func_attr({"tirx.noalias": True})
        n1 = T.int64()  # rows + 1 (a shape of n + 1 would leave n undefined)
        m = T.int64()
        P = T.match_buffer(indptr, (n1,), "int64", align=8)
        Ids = T.match_buffer(ids, (m,), "int64", align=8)
        Q = T.match_buffer(out_indptr, (m + 1,), "int64", align=8)
        for i in T.serial(m):
            with T.sblock("rows"):
                vi = T.axis.spatial(m, i)
                T.reads(P[0:n1], Ids[vi])
                T.writes(Q[vi + 1])
                Q[vi + 1] = T.int64(0)
                if n1 > T.int64(1):
                    Q[vi + 1] = (P[fixed(Ids[vi], n1 - T.int64(1), wrap) + 1]
                                 - P[fixed(Ids[vi], n1 - T.int64(1), wrap)])
        offsets(Q, m)

    return csr_count


def _csr_fill(dtype: str) -> tvm.tirx.PrimFunc:
    """``csr_fill``: the entries of the csr rows ``ids`` at the offsets ``csr_count`` wrote."""
    itemsize = element_bytes(dtype)

    @T.prim_func(s_tir=True)
    def csr_fill(data: T.handle, indices: T.handle, indptr: T.handle, ids: T.handle,
                 wrap: T.int64, out_indptr: T.handle, out_data: T.handle, out_indices: T.handle):
        T.func_attr({"tirx.noalias": True})
        n1 = T.int64()
        nnz = T.int64()
        m = T.int64()
        k = T.int64()
        Data = T.match_buffer(data, (nnz,), dtype, align=itemsize)
        Idx = T.match_buffer(indices, (nnz,), "int64", align=8)
        P = T.match_buffer(indptr, (n1,), "int64", align=8)
        Ids = T.match_buffer(ids, (m,), "int64", align=8)
        Q = T.match_buffer(out_indptr, (m + 1,), "int64", align=8)
        OData = T.match_buffer(out_data, (k,), dtype, align=itemsize)
        OIdx = T.match_buffer(out_indices, (k,), "int64", align=8)
        for i in T.serial(m):
            with T.sblock("rows"):
                vi = T.axis.spatial(m, i)
                T.reads(Data[0:nnz], Idx[0:nnz], P[0:n1], Ids[vi], Q[vi : vi + 2])
                T.writes(OData[Q[vi] : Q[vi + 1]], OIdx[Q[vi] : Q[vi + 1]])
                for e in T.serial(T.Select(n1 > T.int64(1), Q[vi + 1] - Q[vi], T.int64(0))):
                    OData[Q[vi] + e] = Data[P[fixed(Ids[vi], n1 - T.int64(1), wrap)] + e]
                    OIdx[Q[vi] + e] = Idx[P[fixed(Ids[vi], n1 - T.int64(1), wrap)] + e]

    return csr_fill


def _transpose(dtype: str) -> tvm.tirx.PrimFunc:
    """``transpose``: ``out[j, i] = x[i, j]``."""
    itemsize = element_bytes(dtype)

    @T.macro
    def swap(out, r, x, j):
        out[r, j] = x[j, r]

    @T.prim_func(s_tir=True)
    def transpose(x: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        d = T.int64()
        X = T.match_buffer(x, (n, d), dtype, align=itemsize)
        Out = T.match_buffer(out, (d, n), dtype, align=itemsize)
        for i in T.serial(d):
            with T.sblock("rows"):
                vi = T.axis.spatial(d, i)
                T.reads(X[0:n, vi])
                T.writes(Out[vi, 0:n])
                cols.each(n, swap, Out, vi, X)

    return transpose


def _check(dtype: str) -> tvm.tirx.PrimFunc:
    """``check``: ``bad[0]`` is -1 when every id is in ``[lo, hi)``, else a position of one
    that is not (``dtype`` unused: the function reads ids only)."""

    @T.prim_func(s_tir=True)
    def check(ids: T.handle, lo: T.int64, hi: T.int64, bad: T.handle):
        T.func_attr({"tirx.noalias": True})
        m = T.int64()
        Ids = T.match_buffer(ids, (m,), "int64", align=8)
        Bad = T.match_buffer(bad, (1,), "int64", align=8)
        with T.sblock("init"):
            Bad[0] = T.int64(-1)
        for i in T.serial(m):
            with T.sblock("rows"):
                vi = T.axis.spatial(m, i)
                T.reads(Ids[vi])
                T.writes(Bad[0])
                if Ids[vi] < lo or Ids[vi] >= hi:
                    Bad[0] = vi

    return check


def gather(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``take (x[pre,n,post], ids[m], wrap, out[pre,m,post])``: ``out[p,i] = x[p,ids[i]]``;
    ``take_rsp (data[k,d], indices[k], ids[m], n, wrap, out[m,d])``: ``out[i]`` the row
    ``ids[i]`` (clipped or wrapped into ``[0, n)``) of a row_sparse array (data, sorted
    indices) of ``n`` rows, zeros where it is not stored (binary search);
    ``pick (x[pre,n,post], ids[pre,post], wrap, out[pre,post])``: ``out[p,q] = x[p,ids[p,q],q]``;
    ``gather_nd (x[r,post], ids[m,y], dims[m], out[y,post], bad[1])``: ``out[y]`` the row of
    ``x`` (the first ``m`` axes of extents ``dims``, flattened) that column ``y`` of ``ids``
    names; ``scatter_nd (data[y,post], ids[m,y], dims[m], out[r,post], bad[1])``: zeros, then
    each row of ``data`` at its row (serially, so the last of repeated ids wins);
    ``one_hot (ids[m], on, off, out[m,depth])``; ``csr_count`` / ``csr_fill``: the rows ``ids``
    (clipped or wrapped) of a csr array, sizes as a prefix sum then entries;
    ``transpose (x[n,d], out[d,n])``; ``check (ids[m], lo, hi, bad[1])``: ``bad[0]`` is -1
    when every id is in ``[lo, hi)``, else a position of one that is not."""
    return {name: build(dtype) for name, build in (
        ("take", _take),
        ("take_rsp", _take_rsp),
        ("pick", _pick),
        ("gather_nd", _gather_nd),
        ("scatter_nd", _scatter_nd),
        ("one_hot", _one_hot),
        ("csr_count", _csr_count),
        ("csr_fill", _csr_fill),
        ("transpose", _transpose),
        ("check", _check),
    )}
