"""Phase 1 of sparse (op) sparse (kernel ``ew_index``): the union or intersection of two
operands' sorted ids, by merge path over chunks (row_sparse rows) or per row (csr columns)."""

from __future__ import annotations

from collections.abc import Callable

import tvm
from tvm.script import tirx as T

from ..scan import offsets
from .arith import Expr

MERGE_STEPS = 1024
"""Steps (ids of either list) of a merge walk per parallel task, where a kernel splits one walk
by merge path (``diagonal``): retain's ``gather_merge``, dot's ``locate``."""


@T.macro
def diagonal(A, B, ka, kb, d, p):
    """``p[0], p[1]``: how many of the first ``d`` merged ids come from ``a`` and from ``b`` (the
    merge path crossing diagonal ``d``; on equal ids ``a`` comes first), by binary search."""
    p[0] = T.max(d - kb, T.int64(0))  # the answer lies in [p[0], p[1]]
    p[1] = T.min(d, ka)
    while p[0] < p[1]:
        if A[(p[0] + p[1]) // 2] <= B[d - (p[0] + p[1]) // 2 - 1]:
            p[0] = (p[0] + p[1]) // 2 + T.int64(1)
        else:
            p[1] = (p[0] + p[1]) // 2
    p[1] = d - p[0]


@T.macro
def lookup_walk(wanted, stored, kw, ks, task, p, body, *args):
    """Task ``task`` (``MERGE_STEPS`` steps, from its merge-path ``diagonal``) of the merge walk
    that finds each id of sorted ``wanted`` (``kw`` ids) in sorted ``stored`` (``ks``):
    ``body(*args, i, s)`` for each position ``i`` of ``wanted`` the task reaches, ``s`` its
    position in ``stored`` or -1. ``p``: three local int64."""
    diagonal(wanted, stored, kw, ks, task * MERGE_STEPS, p)
    while p[0] + p[1] < T.min(task * MERGE_STEPS + MERGE_STEPS, kw + ks) and p[0] < kw:
        p[2] = T.int64(-1)  # wanted[p[0]] is not stored
        if p[1] < ks:  # TIR's `and` does not short-circuit: nested
            if stored[p[1]] < wanted[p[0]]:
                p[2] = T.int64(-2)  # step past stored[p[1]]
            elif stored[p[1]] == wanted[p[0]]:
                p[2] = p[1]
        if p[2] == T.int64(-2):
            p[1] = p[1] + T.int64(1)
        else:
            body(*args, p[0], p[2])
            p[0] = p[0] + T.int64(1)


# Merge steps while both lists last: ``v`` holds ``a[p[0]]`` and ``b[p[1]]``, ``p[2]`` is the
# output position (or the count so far).
@T.macro
def _union_store(p, v, Idx, SA, SB):
    """Write the smaller id with its positions (both on equal ids), without a branch."""
    Idx[p[2]] = T.min(v[0], v[1])
    SA[p[2]] = T.Select(v[0] <= v[1], p[0], T.int64(-1))
    SB[p[2]] = T.Select(v[1] <= v[0], p[1], T.int64(-1))
    p[2] = p[2] + T.int64(1)


@T.macro
def _union_tally(p, v):
    """Count the smaller id."""
    p[2] = p[2] + T.int64(1)


@T.macro
def _match_store(p, v, Idx, SA, SB):
    """Write equal ids with both positions."""
    if v[0] == v[1]:
        Idx[p[2]] = v[0]
        SA[p[2]] = p[0]
        SB[p[2]] = p[1]
        p[2] = p[2] + T.int64(1)


@T.macro
def _match_tally(p, v):
    """Count equal ids."""
    p[2] = p[2] + T.Cast("int64", v[0] == v[1])


@T.macro
def _rest_store(A, B, ka, kb, p, Idx, SA, SB):
    """Write the ids left in either list up to the chunk's end ``p[3]`` (a union's tail)."""
    while p[0] + p[1] < p[3] and p[0] < ka:
        Idx[p[2]] = A[p[0]]
        SA[p[2]] = p[0]
        SB[p[2]] = T.int64(-1)
        p[0] = p[0] + T.int64(1)
        p[2] = p[2] + T.int64(1)
    while p[0] + p[1] < p[3] and p[1] < kb:
        Idx[p[2]] = B[p[1]]
        SA[p[2]] = T.int64(-1)
        SB[p[2]] = p[1]
        p[1] = p[1] + T.int64(1)
        p[2] = p[2] + T.int64(1)


@T.macro
def _rest_tally(A, B, ka, kb, p):
    """Count the ids left in either list up to the chunk's end ``p[3]``."""
    p[2] = p[2] + T.max(p[3] - p[0] - p[1], T.int64(0))


def _merge_chunk(step: Callable[..., None],
                 rest: Callable[..., None] | None) -> Callable[..., None]:
    """The merge of the diagonal steps ``[start, end)`` of two sorted id lists: ``step`` while
    both lists last, then ``rest`` (the union's unmatched tail; None for an intersection).

    Equal ids ``a[i] == b[j]`` are adjacent on the merge path (``a`` first) and merged in one
    step, by the chunk whose range holds ``a[i]``'s step; a chunk starting between the two skips
    ``b[j]``, so a pair split by a chunk edge is emitted exactly once."""

    @T.macro
    def merge(A, B, ka, kb, start, end, p, v, *outs):
        diagonal(A, B, ka, kb, start, p)
        p[3] = end
        if p[0] > T.int64(0) and p[1] < kb:
            if A[p[0] - 1] == B[p[1]]:
                p[1] = p[1] + T.int64(1)
        while p[0] + p[1] < p[3] and p[0] < ka and p[1] < kb:
            v[0] = A[p[0]]
            v[1] = B[p[1]]
            step(p, v, *outs)
            p[0] = p[0] + T.Cast("int64", v[0] <= v[1])
            p[1] = p[1] + T.Cast("int64", v[1] <= v[0])
        if rest is not None:
            rest(A, B, ka, kb, p, *outs)

    return merge


def _chunk_edge(chunk: Expr, steps: Expr, chunks: Expr) -> Expr:
    """The first of ``steps`` merge steps split evenly over ``chunks`` that belongs to ``chunk``."""
    return T.min(chunk * ((steps + chunks - 1) // chunks), steps)


def _rsp_merge(keep_unmatched: bool) -> tvm.tirx.PrimFunc:
    """Merge-path merge of two sorted row-id lists: the output ids, and for each the position of
    the row in ``a`` and in ``b`` (-1 where absent); ``count[0]`` is the number written.

    The ``ka + kb`` steps of the merge are split evenly over the ``c = len(runs) - 1`` chunks
    (``c >= 1``, chosen by the caller). ``rows_count`` merges each chunk counting its outputs
    into ``runs[chunk + 1]``, the blocked scan turns the counts into offsets, ``rows_write``
    merges each chunk again writing at its offset. One chunk is a serial merge in one pass: its
    offset is 0, so the count pass is skipped and ``rows_write`` stores the count."""
    if keep_unmatched:
        tally = _merge_chunk(_union_tally, _rest_tally)
        write = _merge_chunk(_union_store, _rest_store)
    else:
        tally, write = _merge_chunk(_match_tally, None), _merge_chunk(_match_store, None)

    @T.prim_func(s_tir=True)
    def func(a: T.handle, b: T.handle, idx: T.handle, src_a: T.handle, src_b: T.handle,
             count: T.handle, runs: T.handle):
        T.func_attr({"tirx.noalias": True})
        ka = T.int64()
        kb = T.int64()
        m = T.int64()
        c1 = T.int64()  # chunks + 1
        A = T.match_buffer(a, (ka,), "int64", align=8)
        B = T.match_buffer(b, (kb,), "int64", align=8)
        Idx = T.match_buffer(idx, (m,), "int64", align=8)
        SA = T.match_buffer(src_a, (m,), "int64", align=8)
        SB = T.match_buffer(src_b, (m,), "int64", align=8)
        C = T.match_buffer(count, (1,), "int64", align=8)
        Runs = T.match_buffer(runs, (c1,), "int64", align=8)
        for c in T.serial(c1 - 1):
            with T.sblock("rows_count"):
                vc = T.axis.spatial(c1 - 1, c)
                T.reads(A[0:ka], B[0:kb])
                T.writes(Runs[vc + 1])
                p = T.alloc_buffer((4,), "int64", scope="local")  # in a, in b, count, chunk end
                v = T.alloc_buffer((2,), "int64", scope="local")
                p[2] = T.int64(0)
                if c1 > T.int64(2):
                    tally(A, B, ka, kb, _chunk_edge(vc, ka + kb, c1 - 1),
                          _chunk_edge(vc + 1, ka + kb, c1 - 1), p, v)
                Runs[vc + 1] = p[2]
        offsets(Runs, c1 - 1)
        for c in T.serial(c1 - 1):
            with T.sblock("rows_write"):
                vc = T.axis.spatial(c1 - 1, c)
                T.reads(A[0:ka], B[0:kb], Runs[vc])
                T.writes(Idx[Runs[vc] : Runs[vc + 1]], SA[Runs[vc] : Runs[vc + 1]],
                         SB[Runs[vc] : Runs[vc + 1]], Runs[vc + 1])
                p = T.alloc_buffer((4,), "int64", scope="local")  # in a, in b, in out, chunk end
                v = T.alloc_buffer((2,), "int64", scope="local")
                p[2] = Runs[vc]
                write(A, B, ka, kb, _chunk_edge(vc, ka + kb, c1 - 1),
                      _chunk_edge(vc + 1, ka + kb, c1 - 1), p, v, Idx, SA, SB)
                if c1 == T.int64(2):  # the one chunk was not counted: its end is the count
                    Runs[1] = p[2]
        with T.sblock("count"):
            T.reads(Runs[c1 - 1])
            T.writes(C[0])
            C[0] = Runs[c1 - 1]

    return func


def _csr_count(keep_unmatched: bool) -> tvm.tirx.PrimFunc:
    """Per row (in parallel): the size of the union or intersection of the two rows' column ids;
    then ``indptr`` as their prefix sum (a blocked scan, parallel over chunks)."""

    @T.prim_func(s_tir=True)
    def func(a_ptr: T.handle, a_idx: T.handle, b_ptr: T.handle, b_idx: T.handle, indptr: T.handle):
        T.func_attr({"tirx.noalias": True})
        n1 = T.int64()  # rows + 1: no buffer has the row count itself
        na = T.int64()
        nb = T.int64()
        AP = T.match_buffer(a_ptr, (n1,), "int64", align=8)
        AI = T.match_buffer(a_idx, (na,), "int64", align=8)
        BP = T.match_buffer(b_ptr, (n1,), "int64", align=8)
        BI = T.match_buffer(b_idx, (nb,), "int64", align=8)
        P = T.match_buffer(indptr, (n1,), "int64", align=8)
        for i in T.serial(n1 - 1):
            with T.sblock("rows"):
                vi = T.axis.spatial(n1 - 1, i)
                T.reads(AP[vi : vi + 2], BP[vi : vi + 2], AI[0:na], BI[0:nb])
                T.writes(P[vi + 1])
                p = T.alloc_buffer((3,), "int64", scope="local")  # position in a, in b; count
                p[0] = AP[vi]
                p[1] = BP[vi]
                p[2] = T.int64(0)
                while p[0] < AP[vi + 1] and p[1] < BP[vi + 1]:
                    if AI[p[0]] == BI[p[1]]:
                        p[0] = p[0] + T.int64(1)
                        p[1] = p[1] + T.int64(1)
                        p[2] = p[2] + T.int64(1)
                    elif AI[p[0]] < BI[p[1]]:
                        p[0] = p[0] + T.int64(1)
                        if keep_unmatched:
                            p[2] = p[2] + T.int64(1)
                    else:
                        p[1] = p[1] + T.int64(1)
                        if keep_unmatched:
                            p[2] = p[2] + T.int64(1)
                if keep_unmatched:
                    P[vi + 1] = p[2] + (AP[vi + 1] - p[0]) + (BP[vi + 1] - p[1])
                else:
                    P[vi + 1] = p[2]
        offsets(P, n1 - 1)

    return func


def index_sets() -> dict[str, tvm.tirx.PrimFunc]:
    """Phase 1 of the data-dependent ops: row_sparse union / intersection (chunked merges writing
    the output ids and source positions) and csr union / intersection sizes per row (indptr)."""
    return {
        "rsp_union": _rsp_merge(True),
        "rsp_intersect": _rsp_merge(False),
        "csr_union_count": _csr_count(True),
        "csr_intersect_count": _csr_count(False),
    }
