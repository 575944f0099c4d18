"""retain: the rows of a row_sparse array whose ids are requested, zero rows for ids not stored."""

from __future__ import annotations

import tvm
from tvm.script import tirx as T

from . import element_bytes
from .columns import cols
from .elemwise.merge import MERGE_STEPS, lookup_walk


@T.macro
def find_in_range(at, idx, begin, end, key):
    """Binary search of ``key`` in the sorted ``idx[begin:end]``: ``at[0]`` its position (the
    first not below it), ``at[2]`` 1 when ``idx[at[0]] == key`` (stored), else 0 (``at``: a local
    (3,) int64 buffer; ``at[1]`` is scratch)."""
    at[0] = begin
    at[1] = end
    while at[0] < at[1]:
        if idx[(at[0] + at[1]) // 2] < key:
            at[0] = (at[0] + at[1]) // 2 + 1
        else:
            at[1] = (at[0] + at[1]) // 2
    at[2] = T.int64(0)
    if at[0] < end:  # TIR's `and` does not short-circuit: the bound is checked before the load
        if idx[at[0]] == key:
            at[2] = T.int64(1)


@T.macro
def find_row(at, idx, k, row):
    """Binary search of id ``row`` in the sorted ``idx[0:k]`` (``find_in_range`` from 0)."""
    find_in_range(at, idx, T.int64(0), k, row)


def retain(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``gather``: ``out[r] = data[s]`` where ``indices[s] == req[r]``, else zeros (binary search).
    ``gather_merge``: the same by a merge walk of the two sorted id lists, their ``m + k`` merge
    steps split by merge path into tasks of ``MERGE_STEPS`` (``req`` must be sorted and unique).
    ``check``: ``bad[0]`` is -1 when ``req`` is sorted, unique and in ``[0, rows)``, else a
    position that breaks it (any one: positions are written concurrently)."""
    zero = tvm.tirx.const(0, dtype)
    itemsize = element_bytes(dtype)

    @T.macro
    def copy(out, r, data, s, j):
        out[r, j] = data[s, j]

    @T.macro
    def clear(out, r, j):
        out[r, j] = zero

    @T.macro
    def keep(out, data, d, r, s):
        # row r of out: stored row s of data, or zeros where the id is not stored (s = -1)
        if s >= 0:
            cols.each(d, copy, out, r, data, s)
        else:
            cols.each(d, clear, out, r)

    @T.prim_func(s_tir=True)
    def gather(data: T.handle, indices: T.handle, req: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        k = T.int64()
        d = T.int64()
        m = T.int64()
        Data = T.match_buffer(data, (k, d), dtype, align=itemsize)
        Idx = T.match_buffer(indices, (k,), "int64", align=8)
        Req = T.match_buffer(req, (m,), "int64", align=8)
        Out = T.match_buffer(out, (m, d), dtype, align=itemsize)
        for r in T.serial(m):
            with T.sblock("rows"):
                vr = T.axis.spatial(m, r)
                T.reads(Data[0:k, 0:d], Idx[0:k], Req[vr])
                T.writes(Out[vr, 0:d])
                at = T.alloc_buffer((3,), "int64", scope="local")
                find_row(at, Idx, k, Req[vr])
                if at[2] == T.int64(1):
                    cols.each(d, copy, Out, vr, Data, at[0])
                else:
                    cols.each(d, clear, Out, vr)

    @T.prim_func(s_tir=True)
    def gather_merge(data: T.handle, indices: T.handle, req: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        k = T.int64()
        d = T.int64()
        m = T.int64()
        Data = T.match_buffer(data, (k, d), dtype, align=itemsize)
        Idx = T.match_buffer(indices, (k,), "int64", align=8)
        Req = T.match_buffer(req, (m,), "int64", align=8)
        Out = T.match_buffer(out, (m, d), dtype, align=itemsize)
        for c in T.serial((m + k + MERGE_STEPS - 1) // MERGE_STEPS):
            with T.sblock("rows_task"):
                vc = T.axis.spatial((m + k + MERGE_STEPS - 1) // MERGE_STEPS, c)
                T.reads(Data[0:k, 0:d], Idx[0:k], Req[0:m])
                T.writes(Out[0:m, 0:d])
                p = T.alloc_buffer((3,), "int64", scope="local")  # in req, in idx; found
                lookup_walk(Req, Idx, m, k, vc, p, keep, Out, Data, d)

    @T.prim_func(s_tir=True)
    def check(req: T.handle, rows: T.int64, bad: T.handle):
        T.func_attr({"tirx.noalias": True})
        m = T.int64()
        Req = T.match_buffer(req, (m,), "int64", align=8)
        Bad = T.match_buffer(bad, (1,), "int64", align=8)
        with T.sblock("init"):
            Bad[0] = T.int64(-1)
        for r in T.serial(m):
            with T.sblock("rows"):
                vr = T.axis.spatial(m, r)
                T.reads(Req[0:m])
                T.writes(Bad[0])
                if Req[vr] < T.int64(0) or Req[vr] >= rows:
                    Bad[0] = vr
                elif vr > T.int64(0):  # TIR's `and` does not short-circuit: nested
                    if Req[vr] <= Req[vr - 1]:
                        Bad[0] = vr

    return {"gather": gather, "gather_merge": gather_merge, "check": check}
