"""dot: products of csr, row_sparse and dense matrices, dense or sparse outputs.

Every value kernel accumulates whole output rows in place through the column loops of
templates/columns.py (a scatter into a row is a write to an owned column). Kernels that gather
rhs rows at random ids say which row each entry gathers (``ahead``), so that a schedule can
prefetch the rows of the entries ahead.

Outputs whose index set depends on the data (csrᵀ·x -> row_sparse, dense·csr -> csr) include
the radix phases of templates/radix.py: the entries are sorted by column (a blocked radix sort)
and the distinct columns listed (``unique``); then the values are computed in parallel, each
output row owned by one task, so no two tasks write one row and no array scales with the number
of columns (ids up to 2**63 work).

Buffers declare element alignment (``align=``) rather than TVM's default 64 bytes: numpy arrays
are 16-byte aligned at best, and the 64-byte promise lets LLVM emit aligned moves that fault.
"""

from __future__ import annotations

import tvm
from tvm.script import tirx as T

from . import element_bytes, radix
from .columns import ahead, cols, position
from .elemwise.merge import MERGE_STEPS, lookup_walk


@T.macro
def _add_at(out, i, j, value):
    out[i, j] = out[i, j] + value


@T.macro
def _axpy_at(out, i, alpha, rhs, r, j):
    out[i, j] = out[i, j] + alpha * rhs[r, j]


@T.macro
def _copy_column(out, i, src, j):
    out[i, j] = src[j]


def _row_macros(dtype: str):
    """TIR macros of the value kernels: ``out[i] += alpha * rhs[r]``, zero a row."""
    zero = tvm.tirx.const(0, dtype)

    @T.macro
    def clear_at(out, i, j):
        out[i, j] = zero

    @T.macro
    def axpy(out, i, alpha, rhs, r, d):
        cols.each(d, _axpy_at, out, i, alpha, rhs, r)

    @T.macro
    def zero_row(out, i, d):
        cols.each(d, clear_at, out, i)

    return axpy, zero_row


def csr_dense(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``matmul``: ``out = csr · rhs`` (dense), one output row per csr row, rows in parallel."""
    elem = element_bytes(dtype)
    axpy, zero_row = _row_macros(dtype)
    at = position()

    @T.prim_func(s_tir=True)
    def matmul(data: T.handle, indices: T.handle, indptr: T.handle, rhs: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        k = T.int64()
        d = T.int64()
        nnz = T.int64()
        Data = T.match_buffer(data, (nnz,), dtype, align=elem)
        Idx = T.match_buffer(indices, (nnz,), "int64", align=8)
        P = T.match_buffer(indptr, (n + 1,), "int64", align=8)
        B = T.match_buffer(rhs, (k, d), dtype, align=elem)
        Out = T.match_buffer(out, (n, d), dtype, align=elem)
        for i in T.serial(n):
            with T.sblock("rows"):
                vi = T.axis.spatial(n, i)
                T.reads(Data[P[vi] : P[vi + 1]], Idx[0:nnz], P[vi : vi + 2], B[0:k, 0:d])
                T.writes(Out[vi, 0:d])
                zero_row(Out, vi, d)
                for p in T.serial(P[vi + 1] - P[vi]):
                    cols.gather(ahead(at, nnz, [(B, Idx[at], False)]), P[vi] + p,
                                axpy, Out, vi, Data[P[vi] + p], B, Idx[P[vi] + p], d)

    return {"matmul": matmul}


def csr_row_sparse(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``out = csr · rsp`` (dense), row ids of any size. ``matmul``: each entry's column is
    looked up among the rsp's stored row ids by binary search. ``locate`` + ``matmul_at``: with
    the entries sorted by column (the index phases of ``csr_t``, which its product's gradient
    shares), one merge walk of the distinct columns and the stored row ids writes each entry's
    row in the rsp (``pos``, -1 where none), split by merge path into tasks of ``MERGE_STEPS``;
    then each csr row gathers its entries' rows."""
    elem = element_bytes(dtype)
    axpy, zero_row = _row_macros(dtype)
    at = position()

    @T.prim_func(s_tir=True)
    def matmul(data: T.handle, indices: T.handle, indptr: T.handle, rdata: T.handle,
               rindices: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        k = T.int64()
        d = T.int64()
        nnz = T.int64()
        Data = T.match_buffer(data, (nnz,), dtype, align=elem)
        Idx = T.match_buffer(indices, (nnz,), "int64", align=8)
        P = T.match_buffer(indptr, (n + 1,), "int64", align=8)
        R = T.match_buffer(rdata, (k, d), dtype, align=elem)
        RIdx = T.match_buffer(rindices, (k,), "int64", align=8)
        Out = T.match_buffer(out, (n, d), dtype, align=elem)
        for i in T.serial(n):
            with T.sblock("rows"):
                vi = T.axis.spatial(n, i)
                T.reads(Data[P[vi] : P[vi + 1]], Idx[P[vi] : P[vi + 1]], P[vi : vi + 2],
                        R[0:k, 0:d], RIdx[0:k])
                T.writes(Out[vi, 0:d])
                # bounds[0] only grows along the row: its column ids are sorted
                bounds = T.alloc_buffer((2,), "int64", scope="local")
                bounds[0] = T.int64(0)
                zero_row(Out, vi, d)
                for p in T.serial(P[vi + 1] - P[vi]):
                    bounds[1] = k
                    while bounds[0] < bounds[1]:
                        if RIdx[(bounds[0] + bounds[1]) // 2] < Idx[P[vi] + p]:
                            bounds[0] = (bounds[0] + bounds[1]) // 2 + 1
                        else:
                            bounds[1] = (bounds[0] + bounds[1]) // 2
                    if bounds[0] < k:
                        if RIdx[bounds[0]] == Idx[P[vi] + p]:
                            axpy(Out, vi, Data[P[vi] + p], R, bounds[0], d)

    @T.macro
    def place(pos, seg, src, i, row):
        # every entry of distinct column i takes rhs row ``row`` (-1: not stored)
        for q in T.serial(seg[i + 1] - seg[i]):
            pos[src[seg[i] + q]] = row

    @T.prim_func(s_tir=True)
    def locate(ids: T.handle, seg: T.handle, src: T.handle, rindices: T.handle, pos: T.handle):
        T.func_attr({"tirx.noalias": True})
        s = T.int64()
        u = T.int64()
        k = T.int64()
        nnz = T.int64()
        Ids = T.match_buffer(ids, (s,), "int64", align=8)
        Seg = T.match_buffer(seg, (s + 1,), "int64", align=8)
        Src = T.match_buffer(src, (u,), "int64", align=8)
        RIdx = T.match_buffer(rindices, (k,), "int64", align=8)
        Pos = T.match_buffer(pos, (nnz,), "int64", align=8)
        for c in T.serial((s + k + MERGE_STEPS - 1) // MERGE_STEPS):
            with T.sblock("rows_task"):
                vc = T.axis.spatial((s + k + MERGE_STEPS - 1) // MERGE_STEPS, c)
                T.reads(Ids[0:s], Seg[0 : s + 1], Src[0:u], RIdx[0:k])
                T.writes(Pos[0:nnz])
                p = T.alloc_buffer((3,), "int64", scope="local")  # in ids, in rindices; its row
                lookup_walk(Ids, RIdx, s, k, vc, p, place, Pos, Seg, Src)

    @T.prim_func(s_tir=True)
    def matmul_at(data: T.handle, pos: T.handle, indptr: T.handle, rdata: T.handle,
                  out: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        k = T.int64()
        d = T.int64()
        nnz = T.int64()
        Data = T.match_buffer(data, (nnz,), dtype, align=elem)
        Pos = T.match_buffer(pos, (nnz,), "int64", align=8)
        P = T.match_buffer(indptr, (n + 1,), "int64", align=8)
        R = T.match_buffer(rdata, (k, d), dtype, align=elem)
        Out = T.match_buffer(out, (n, d), dtype, align=elem)
        for i in T.serial(n):
            with T.sblock("rows"):
                vi = T.axis.spatial(n, i)
                T.reads(Data[P[vi] : P[vi + 1]], Pos[0:nnz], P[vi : vi + 2], R[0:k, 0:d])
                T.writes(Out[vi, 0:d])
                zero_row(Out, vi, d)
                for p in T.serial(P[vi + 1] - P[vi]):
                    if Pos[P[vi] + p] >= T.int64(0):
                        cols.gather(ahead(at, nnz, [(R, T.max(Pos[at], T.int64(0)), False)]),
                                    P[vi] + p, axpy, Out, vi, Data[P[vi] + p], R,
                                    Pos[P[vi] + p], d)

    return {"matmul": matmul, "locate": locate, "matmul_at": matmul_at}


def csr_t(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``out = csrᵀ · rhs`` compacted to the distinct columns (row_sparse): the index phases sort
    the entries by column, then ``values`` computes row ``c`` from the entries
    ``src[seg[c]:seg[c+1]]`` of its column, each output row written by one task."""
    elem = element_bytes(dtype)
    axpy, zero_row = _row_macros(dtype)
    at = position()

    @T.prim_func(s_tir=True)
    def values(data: T.handle, src: T.handle, erow: T.handle, seg: T.handle, rhs: T.handle,
               out: T.handle):
        T.func_attr({"tirx.noalias": True})
        nnz = T.int64()
        u = T.int64()
        s = T.int64()
        k = T.int64()
        d = T.int64()
        Data = T.match_buffer(data, (nnz,), dtype, align=elem)
        Src = T.match_buffer(src, (u,), "int64", align=8)
        Erow = T.match_buffer(erow, (nnz,), "int64", align=8)
        Seg = T.match_buffer(seg, (s + 1,), "int64", align=8)
        B = T.match_buffer(rhs, (k, d), dtype, align=elem)
        Out = T.match_buffer(out, (s, d), dtype, align=elem)
        for c in T.serial(s):
            with T.sblock("rows"):
                vc = T.axis.spatial(s, c)
                T.reads(Data[0:nnz], Src[Seg[vc] : Seg[vc + 1]], Erow[0:nnz], Seg[vc : vc + 2],
                        B[0:k, 0:d])
                T.writes(Out[vc, 0:d])
                zero_row(Out, vc, d)
                for q in T.serial(Seg[vc + 1] - Seg[vc]):
                    cols.gather(ahead(at, u, [(B, Erow[Src[at]], False)]), Seg[vc] + q,
                                axpy, Out, vc, Data[Src[Seg[vc] + q]], B, Erow[Src[Seg[vc] + q]], d)

    return {**radix.phases("sort_dense", "gather_rsp", "sort_pass", "unique"), "values": values}


def dense_csr(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``matmul``: ``out = lhs · csr`` (dense). For csr output the index phases sort the csr's
    entries by column and ``rank`` maps each entry to its column's position among the distinct
    columns; ``values`` then stores the product over those columns, every output row storing
    all of them (explicit zeros included), as MXNet's dense·csr -> csr does."""
    elem = element_bytes(dtype)
    _, zero_row = _row_macros(dtype)

    @T.prim_func(s_tir=True)
    def matmul(lhs: T.handle, data: T.handle, indices: T.handle, indptr: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        m = T.int64()
        k = T.int64()
        n = T.int64()
        nnz = T.int64()
        A = T.match_buffer(lhs, (m, k), dtype, align=elem)
        Data = T.match_buffer(data, (nnz,), dtype, align=elem)
        Idx = T.match_buffer(indices, (nnz,), "int64", align=8)
        P = T.match_buffer(indptr, (k + 1,), "int64", align=8)
        Out = T.match_buffer(out, (m, n), dtype, align=elem)
        for i in T.serial(m):
            with T.sblock("rows"):
                vi = T.axis.spatial(m, i)
                T.reads(A[vi, 0:k], Data[0:nnz], Idx[0:nnz], P[0 : k + 1])
                T.writes(Out[vi, 0:n])
                zero_row(Out, vi, n)
                for kk in T.serial(k):
                    for p in T.serial(P[kk + 1] - P[kk]):
                        cols.owned(Idx[P[kk] + p], _add_at, Out, vi, Idx[P[kk] + p],
                                   A[vi, kk] * Data[P[kk] + p])

    @T.prim_func(s_tir=True)
    def values(lhs: T.handle, data: T.handle, indptr: T.handle, ranks: T.handle,
               columns: T.handle, out_data: T.handle, out_indices: T.handle, out_indptr: T.handle):
        T.func_attr({"tirx.noalias": True})
        m = T.int64()
        k = T.int64()
        s = T.int64()
        nnz = T.int64()
        A = T.match_buffer(lhs, (m, k), dtype, align=elem)
        Data = T.match_buffer(data, (nnz,), dtype, align=elem)
        P = T.match_buffer(indptr, (k + 1,), "int64", align=8)
        Rank = T.match_buffer(ranks, (nnz,), "int64", align=8)
        Cols = T.match_buffer(columns, (s,), "int64", align=8)
        OutData = T.match_buffer(out_data, (m, s), dtype, align=elem)
        OutIdx = T.match_buffer(out_indices, (m, s), "int64", align=8)
        OutPtr = T.match_buffer(out_indptr, (m + 1,), "int64", align=8)
        with T.sblock("init"):
            OutPtr[0] = T.int64(0)
        for i in T.serial(m):
            with T.sblock("rows"):
                vi = T.axis.spatial(m, i)
                T.reads(A[vi, 0:k], Data[0:nnz], P[0 : k + 1], Rank[0:nnz], Cols[0:s])
                T.writes(OutData[vi, 0:s], OutIdx[vi, 0:s], OutPtr[vi + 1])
                OutPtr[vi + 1] = (vi + 1) * s
                zero_row(OutData, vi, s)
                cols.each(s, _copy_column, OutIdx, vi, Cols)
                for kk in T.serial(k):
                    for p in T.serial(P[kk + 1] - P[kk]):
                        cols.owned(Rank[P[kk] + p], _add_at, OutData, vi, Rank[P[kk] + p],
                                   A[vi, kk] * Data[P[kk] + p])

    return {"matmul": matmul, **radix.phases("sort_dense", "sort_pass", "unique", "rank"),
            "values": values}


def dense_csr_t(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``matmul``: ``out = lhs · csrᵀ`` (dense): each output element gathers one csr row."""
    elem = element_bytes(dtype)
    zero = tvm.tirx.const(0, dtype)

    @T.macro
    def gather_at(out, i, lhs, data, idx, ptr, j):
        out[i, j] = zero
        for p in T.serial(ptr[j + 1] - ptr[j]):
            out[i, j] = out[i, j] + lhs[i, idx[ptr[j] + p]] * data[ptr[j] + p]

    @T.prim_func(s_tir=True)
    def matmul(lhs: T.handle, data: T.handle, indices: T.handle, indptr: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        m = T.int64()
        k = T.int64()
        n = T.int64()
        nnz = T.int64()
        A = T.match_buffer(lhs, (m, k), dtype, align=elem)
        Data = T.match_buffer(data, (nnz,), dtype, align=elem)
        Idx = T.match_buffer(indices, (nnz,), "int64", align=8)
        P = T.match_buffer(indptr, (n + 1,), "int64", align=8)
        Out = T.match_buffer(out, (m, n), dtype, align=elem)
        for i in T.serial(m):
            with T.sblock("rows"):
                vi = T.axis.spatial(m, i)
                T.reads(A[vi, 0:k], Data[0:nnz], Idx[0:nnz], P[0 : n + 1])
                T.writes(Out[vi, 0:n])
                cols.each(n, gather_at, Out, vi, A, Data, Idx, P)

    return {"matmul": matmul}


DENSE_TILES = (64, 8)
"""Output columns per register tile of a dense·dense row (then single columns): a tile's sums
stay in a local buffer across the whole reduction (independent chains LLVM keeps in vector
registers), where an axpy form loads and stores the output row once per reduced element."""


def dense_dense(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``nn``, ``tn``: ``out = op(lhs) · rhs`` with ``t`` = transposed lhs; each output row is
    cut into tiles of ``DENSE_TILES`` columns, each tile's sums accumulated over the reduced
    axis in a local buffer and written once, rows in parallel (a plain generated kernel, not a
    tuned GEMM). Sums run in reduction order, as an axpy form's. A transposed rhs is transposed
    first by the caller: a dot product along rhs rows is a serial reduction that LLVM cannot
    vectorize without reassociating it."""
    elem = element_bytes(dtype)
    zero = tvm.tirx.const(0, dtype)
    widest = DENSE_TILES[0]

    def tiled_form(trans_a: bool):
        def lhs_at(A, i, kk):
            return A[kk, i] if trans_a else A[i, kk]

        @T.macro
        def tile(A, B, Out, acc, i, k, start, width):
            for l in T.serial(width):
                acc[l] = zero
            for kk in T.serial(k):
                for l in T.serial(width):
                    acc[l] = acc[l] + lhs_at(A, i, kk) * B[kk, start + l]
            for l in T.serial(width):
                Out[i, start + l] = acc[l]

        @T.prim_func(s_tir=True)
        def kernel(lhs: T.handle, rhs: T.handle, out: T.handle):
            T.func_attr({"tirx.noalias": True})
            m = T.int64()
            k = T.int64()
            n = T.int64()
            A = T.match_buffer(lhs, (k, m) if trans_a else (m, k), dtype, align=elem)
            B = T.match_buffer(rhs, (k, n), dtype, align=elem)
            Out = T.match_buffer(out, (m, n), dtype, align=elem)
            for i in T.serial(m):
                with T.sblock("rows"):
                    vi = T.axis.spatial(m, i)
                    T.reads(A[0:k, vi] if trans_a else A[vi, 0:k], B[0:k, 0:n])
                    T.writes(Out[vi, 0:n])
                    acc = T.alloc_buffer((widest,), dtype, scope="local")
                    for t in T.serial(n // widest):
                        tile(A, B, Out, acc, vi, k, t * widest, widest)
                    for t in T.serial(n % widest // DENSE_TILES[1]):
                        tile(A, B, Out, acc, vi, k, n - n % widest + t * DENSE_TILES[1],
                             DENSE_TILES[1])
                    for t in T.serial(n % DENSE_TILES[1]):
                        tile(A, B, Out, acc, vi, k, n - n % DENSE_TILES[1] + t, 1)

        return kernel

    return {"nn": tiled_form(False), "tn": tiled_form(True)}
