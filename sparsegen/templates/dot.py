"""dot: products of csr, row_sparse and dense matrices, and the index phases of sparse outputs.

Every value kernel accumulates whole output rows in place through the column loops of
templates/columns.py (``T.vectorized(lanes)`` steps on the CPU, ``row_threads`` threads per row on
a GPU; a scatter into a row is stored by the thread that owns the column). Kernels that gather
rhs rows at random ids prefetch the row of the entry ``prefetch`` entries ahead (a knob of
``cpu.rows_prefetch``; 0, the default elsewhere, emits no prefetch, so CUDA builds carry no LLVM
intrinsic).

Outputs whose index set depends on the data (csrᵀ·x -> row_sparse, dense·csr -> csr) are
sorted by column with a stable LSD radix sort (``RADIX_BITS`` per pass, each pass a counting
sort in parallel over chunks of ``SORT_CHUNK`` entries), then the distinct columns are listed
(``unique``, in parallel over chunks of sorted keys), then the
values are computed in parallel, each output row owned by one task, so no two tasks write one
row and no array scales with the number of columns (ids up to 2**63 work).

Buffers declare element alignment (``align=``) rather than TVM's default 64 bytes: numpy arrays
are 16-byte aligned at best, and the 64-byte promise lets LLVM emit aligned moves that fault.
"""

from __future__ import annotations

import tvm
from tvm.script import tirx as T

from ..formats import RADIX_BITS, SCAN_CHUNK, SORT_CHUNK
from . import element_bytes
from .columns import Columns, columns
from .scan import offsets

_LINE_BYTES = 64  # cache line: prefetch one address per line of a row


def _run_start(keys: tvm.tirx.Buffer, q: tvm.tirx.PrimExpr) -> tvm.tirx.PrimExpr:
    """Whether sorted entry ``q`` starts a run of equal keys."""
    return tvm.tirx.Or(q == 0, keys[q] != keys[T.max(q, T.int64(1)) - 1])


@T.macro
def _add_at(out, i, j, value):
    out[i, j] = out[i, j] + value


@T.macro
def _axpy_at(out, i, alpha, rhs, r, j):
    out[i, j] = out[i, j] + alpha * rhs[r, j]


@T.macro
def _copy_column(out, i, src, j):
    out[i, j] = src[j]


def _row_macros(dtype: str, cols: Columns):
    """TIR macros of the value kernels: ``out[i] += alpha * rhs[r]``, zero a row, prefetch a row."""
    zero = tvm.tirx.const(0, dtype)
    line = max(1, _LINE_BYTES // element_bytes(dtype))

    @T.macro
    def clear_at(out, i, j):
        out[i, j] = zero

    @T.macro
    def axpy(out, i, alpha, rhs, r, d):
        cols.each(d, _axpy_at, out, i, alpha, rhs, r)

    @T.macro
    def zero_row(out, i, d):
        cols.each(d, clear_at, out, i)

    @T.macro
    def prefetch_row(rhs, r, d):
        for jq in T.serial((d + line - 1) // line):
            T.evaluate(T.call_llvm_intrin(
                "void", "llvm.prefetch.p0", T.address_of(rhs[r, jq * line]),
                T.int32(0), T.int32(3), T.int32(1),
            ))

    return axpy, zero_row, prefetch_row


def csr_dense(dtype: str, lanes: int = 16, prefetch: int = 0,
              row_threads: int | None = None) -> dict[str, tvm.tirx.PrimFunc]:
    """``matmul``: ``out = csr · rhs`` (dense), one output row per csr row, rows in parallel."""
    elem = element_bytes(dtype)
    cols = columns(lanes, row_threads)
    axpy, zero_row, prefetch_row = _row_macros(dtype, cols)

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
                    if prefetch > 0:
                        prefetch_row(B, Idx[T.min(P[vi] + p + prefetch, nnz - 1)], d)
                    axpy(Out, vi, Data[P[vi] + p], B, Idx[P[vi] + p], d)

    return {"matmul": matmul}


def csr_row_sparse(dtype: str, lanes: int = 16,
                   row_threads: int | None = None) -> dict[str, tvm.tirx.PrimFunc]:
    """``matmul``: ``out = csr · rsp`` (dense); each column id is looked up among the rsp's
    stored row ids by binary search, so row ids of any size work."""
    elem = element_bytes(dtype)
    cols = columns(lanes, row_threads)
    axpy, zero_row, _ = _row_macros(dtype, cols)

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

    return {"matmul": matmul}


def _position(buf: tvm.tirx.Buffer, q: tvm.tirx.PrimExpr) -> tvm.tirx.PrimExpr:
    """Entry ``q``'s own position (the source of a first pass over all entries)."""
    return q


def _element(buf: tvm.tirx.Buffer, q: tvm.tirx.PrimExpr) -> tvm.tirx.PrimExpr:
    """``buf[q]``."""
    return buf[q]


def _index_phases(sort_chunk: int = SORT_CHUNK) -> dict[str, tvm.tirx.PrimFunc]:
    """Index phases of data-dependent outputs (the same for every element dtype).

    The sort by column is a stable LSD radix sort of ``RADIX_BITS`` per pass. Each pass is a
    blocked counting sort over chunks of ``sort_chunk`` entries, in three steps: every chunk
    counts its digits into column ``c`` of a digit-major table (``table[1 + digit * chunks +
    c]``, in parallel), a blocked scan (templates/scan.py) turns the table into offsets, and
    every chunk walks its entries in order, storing each at ``table[digit * chunks + c]`` and
    advancing it (in parallel; stable as chunks and entries within one are in order). The
    caller provides ``table``: ``2**RADIX_BITS * ceil(u / sort_chunk) + 1`` entries (tests
    build the phases at a small ``sort_chunk``).

    ``sort_dense``: the first pass over all csr entries: ``keys``/``src`` are column ids and
    entry positions sorted by the lowest digit, ``erow[p]`` the csr row of entry ``p``.
    ``gather_rsp``: the entries of the rows a row_sparse rhs stores, in order (unsorted), with
    ``erow[p]`` the index of entry ``p``'s row among the stored rows (``starts``: each stored
    row's first output position, a scan of their entry counts). ``sort_pass``: one pass on the
    digit at ``shift``, from ``keys``/``src`` into ``keys_out``/``src_out``; the caller runs
    the passes its column count needs. ``unique``: the distinct sorted keys, where each one's
    run starts (``seg``) and their number (``count[0]``). ``rank``: ``rank[src[q]]`` = the
    position of entry ``src[q]``'s key among the distinct keys.

    ``unique`` runs over chunks of ``SCAN_CHUNK`` sorted keys in parallel: each chunk counts its
    run starts into ``runs[c + 1]`` (``runs`` has ``ceil(u / SCAN_CHUNK) + 1`` entries), a blocked
    scan turns them into offsets, and each chunk writes its runs from there. Every statement
    sits in a block: serial blocks (the scans' carry steps) run as one thread under the CUDA
    schedule.
    """
    buckets = 1 << RADIX_BITS
    mask = T.int64(buckets - 1)

    def chunks(u: tvm.tirx.PrimExpr) -> tvm.tirx.PrimExpr:
        """The chunks of a pass over ``u`` entries."""
        return (u + sort_chunk - 1) // sort_chunk

    def slot(key: tvm.tirx.PrimExpr, shift: tvm.tirx.PrimExpr, c: tvm.tirx.PrimExpr,
             u: tvm.tirx.PrimExpr) -> tvm.tirx.PrimExpr:
        """Where chunk ``c``'s offset for ``key``'s digit at ``shift`` lies in the table."""
        return ((key >> shift) & mask) * chunks(u) + c

    @T.macro
    def radix_pass(keys_in, src_in, src_of, keys_out, src_out, table, shift, u):
        # one stable counting-sort pass on the digit at ``shift``: count, scan, scatter
        for c in T.serial(chunks(u)):
            with T.sblock("rows_sort_count"):
                vc = T.axis.spatial(chunks(u), c)
                T.reads(keys_in[vc * sort_chunk : T.min(vc * sort_chunk + sort_chunk, u)])
                T.writes(table[0 : buckets * chunks(u) + 1])
                for b in T.serial(buckets):
                    table[b * chunks(u) + vc + 1] = T.int64(0)
                for t in T.serial(T.min(sort_chunk, u - vc * sort_chunk)):
                    table[slot(keys_in[vc * sort_chunk + t], shift, vc, u) + 1] = (
                        table[slot(keys_in[vc * sort_chunk + t], shift, vc, u) + 1] + T.int64(1)
                    )
        offsets(table, buckets * chunks(u))
        for c in T.serial(chunks(u)):
            with T.sblock("rows_sort_scatter"):
                vc = T.axis.spatial(chunks(u), c)
                T.reads(keys_in[vc * sort_chunk : T.min(vc * sort_chunk + sort_chunk, u)],
                        src_in[0:u], table[0 : buckets * chunks(u)])
                T.writes(keys_out[0:u], src_out[0:u], table[0 : buckets * chunks(u)])
                for t in T.serial(T.min(sort_chunk, u - vc * sort_chunk)):
                    keys_out[table[slot(keys_in[vc * sort_chunk + t], shift, vc, u)]] = (
                        keys_in[vc * sort_chunk + t]
                    )
                    src_out[table[slot(keys_in[vc * sort_chunk + t], shift, vc, u)]] = (
                        src_of(src_in, vc * sort_chunk + t)
                    )
                    table[slot(keys_in[vc * sort_chunk + t], shift, vc, u)] = (
                        table[slot(keys_in[vc * sort_chunk + t], shift, vc, u)] + T.int64(1)
                    )

    @T.prim_func(s_tir=True)
    def sort_dense(indices: T.handle, indptr: T.handle, keys: T.handle, src: T.handle,
                   erow: T.handle, table: T.handle):
        T.func_attr({"tirx.noalias": True})
        rows = T.int64()  # indptr entries: n + 1
        nnz = T.int64()
        Idx = T.match_buffer(indices, (nnz,), "int64", align=8)
        P = T.match_buffer(indptr, (rows,), "int64", align=8)
        Keys = T.match_buffer(keys, (nnz,), "int64", align=8)
        Src = T.match_buffer(src, (nnz,), "int64", align=8)
        Erow = T.match_buffer(erow, (nnz,), "int64", align=8)
        Table = T.match_buffer(table, (buckets * chunks(nnz) + 1,), "int64", align=8)
        for r in T.serial(rows - 1):
            with T.sblock("rows_erow"):
                vr = T.axis.spatial(rows - 1, r)
                T.reads(P[vr : vr + 2])
                T.writes(Erow[P[vr] : P[vr + 1]])
                for p in T.serial(P[vr + 1] - P[vr]):
                    Erow[P[vr] + p] = vr
        radix_pass(Idx, Idx, _position, Keys, Src, Table, T.int64(0), nnz)

    @T.prim_func(s_tir=True)
    def gather_rsp(indices: T.handle, indptr: T.handle, rindices: T.handle, starts: T.handle,
                   keys: T.handle, src: T.handle, erow: T.handle):
        T.func_attr({"tirx.noalias": True})
        rows = T.int64()  # indptr entries: n + 1
        nnz = T.int64()
        k = T.int64()
        u = T.int64()
        Idx = T.match_buffer(indices, (nnz,), "int64", align=8)
        P = T.match_buffer(indptr, (rows,), "int64", align=8)
        RIdx = T.match_buffer(rindices, (k,), "int64", align=8)
        Starts = T.match_buffer(starts, (k + 1,), "int64", align=8)
        Keys = T.match_buffer(keys, (u,), "int64", align=8)
        Src = T.match_buffer(src, (u,), "int64", align=8)
        Erow = T.match_buffer(erow, (nnz,), "int64", align=8)
        for s in T.serial(k):
            with T.sblock("rows_gather_count"):
                vs = T.axis.spatial(k, s)
                T.reads(P[RIdx[vs] : RIdx[vs] + 2], RIdx[vs])
                T.writes(Starts[vs + 1])
                Starts[vs + 1] = P[RIdx[vs] + 1] - P[RIdx[vs]]
        offsets(Starts, k)
        for s in T.serial(k):
            with T.sblock("rows_gather"):
                vs = T.axis.spatial(k, s)
                T.reads(Idx[0:nnz], P[RIdx[vs] : RIdx[vs] + 2], RIdx[vs], Starts[vs])
                T.writes(Keys[0:u], Src[0:u], Erow[0:nnz])
                for p in T.serial(P[RIdx[vs] + 1] - P[RIdx[vs]]):
                    Keys[Starts[vs] + p] = Idx[P[RIdx[vs]] + p]
                    Src[Starts[vs] + p] = P[RIdx[vs]] + p
                    Erow[P[RIdx[vs]] + p] = vs

    @T.prim_func(s_tir=True)
    def sort_pass(keys: T.handle, src: T.handle, keys_out: T.handle, src_out: T.handle,
                  table: T.handle, shift: T.int64):
        T.func_attr({"tirx.noalias": True})
        u = T.int64()
        Keys = T.match_buffer(keys, (u,), "int64", align=8)
        Src = T.match_buffer(src, (u,), "int64", align=8)
        KeysOut = T.match_buffer(keys_out, (u,), "int64", align=8)
        SrcOut = T.match_buffer(src_out, (u,), "int64", align=8)
        Table = T.match_buffer(table, (buckets * chunks(u) + 1,), "int64", align=8)
        radix_pass(Keys, Src, _element, KeysOut, SrcOut, Table, shift, u)

    @T.prim_func(s_tir=True)
    def unique(keys: T.handle, uidx: T.handle, seg: T.handle, count: T.handle, runs: T.handle):
        T.func_attr({"tirx.noalias": True})
        u = T.int64()
        Keys = T.match_buffer(keys, (u,), "int64", align=8)
        Uidx = T.match_buffer(uidx, (u,), "int64", align=8)
        Seg = T.match_buffer(seg, (u + 1,), "int64", align=8)
        Count = T.match_buffer(count, (1,), "int64", align=8)
        Runs = T.match_buffer(runs, ((u + SCAN_CHUNK - 1) // SCAN_CHUNK + 1,), "int64", align=8)
        for c in T.serial((u + SCAN_CHUNK - 1) // SCAN_CHUNK):
            with T.sblock("rows_count"):
                vc = T.axis.spatial((u + SCAN_CHUNK - 1) // SCAN_CHUNK, c)
                T.reads(Keys[0:u])
                T.writes(Runs[vc + 1])
                runs_here = T.alloc_buffer((1,), "int64", scope="local")
                runs_here[0] = T.int64(0)
                for t in T.serial(T.min(SCAN_CHUNK, u - vc * SCAN_CHUNK)):
                    if _run_start(Keys, vc * SCAN_CHUNK + t):
                        runs_here[0] = runs_here[0] + T.int64(1)
                Runs[vc + 1] = runs_here[0]
        offsets(Runs, (u + SCAN_CHUNK - 1) // SCAN_CHUNK)
        for c in T.serial((u + SCAN_CHUNK - 1) // SCAN_CHUNK):
            with T.sblock("rows_scatter"):
                vc = T.axis.spatial((u + SCAN_CHUNK - 1) // SCAN_CHUNK, c)
                T.reads(Keys[0:u], Runs[vc])
                T.writes(Uidx[Runs[vc] : Runs[vc + 1]], Seg[Runs[vc] : Runs[vc + 1]])
                out = T.alloc_buffer((1,), "int64", scope="local")
                out[0] = Runs[vc]
                for t in T.serial(T.min(SCAN_CHUNK, u - vc * SCAN_CHUNK)):
                    if _run_start(Keys, vc * SCAN_CHUNK + t):
                        Uidx[out[0]] = Keys[vc * SCAN_CHUNK + t]
                        Seg[out[0]] = vc * SCAN_CHUNK + t
                        out[0] = out[0] + T.int64(1)
        with T.sblock("count"):
            T.reads(Runs[(u + SCAN_CHUNK - 1) // SCAN_CHUNK])
            T.writes(Count[0], Seg[0 : u + 1])
            Count[0] = Runs[(u + SCAN_CHUNK - 1) // SCAN_CHUNK]
            Seg[Runs[(u + SCAN_CHUNK - 1) // SCAN_CHUNK]] = u

    @T.prim_func(s_tir=True)
    def rank(seg: T.handle, src: T.handle, ranks: T.handle):
        T.func_attr({"tirx.noalias": True})
        bounds = T.int64()  # run starts: distinct keys + 1
        u = T.int64()
        nnz = T.int64()
        Seg = T.match_buffer(seg, (bounds,), "int64", align=8)
        Src = T.match_buffer(src, (u,), "int64", align=8)
        Rank = T.match_buffer(ranks, (nnz,), "int64", align=8)
        for c in T.serial(bounds - 1):
            with T.sblock("rows"):
                vc = T.axis.spatial(bounds - 1, c)
                T.reads(Seg[vc : vc + 2], Src[Seg[vc] : Seg[vc + 1]])
                T.writes(Rank[0:nnz])
                for q in T.serial(Seg[vc + 1] - Seg[vc]):
                    Rank[Src[Seg[vc] + q]] = vc

    return {"sort_dense": sort_dense, "gather_rsp": gather_rsp, "sort_pass": sort_pass,
            "unique": unique, "rank": rank}


def csr_t(dtype: str, lanes: int = 16, prefetch: int = 0,
          row_threads: int | None = None) -> dict[str, tvm.tirx.PrimFunc]:
    """``out = csrᵀ · rhs`` compacted to the distinct columns (row_sparse): the index phases sort
    the entries by column, then ``values`` computes row ``c`` from the entries
    ``src[seg[c]:seg[c+1]]`` of its column, each output row written by one task."""
    elem = element_bytes(dtype)
    cols = columns(lanes, row_threads)
    axpy, zero_row, prefetch_row = _row_macros(dtype, cols)

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
                    if prefetch > 0:
                        prefetch_row(B, Erow[Src[T.min(Seg[vc] + q + prefetch, u - 1)]], d)
                    axpy(Out, vc, Data[Src[Seg[vc] + q]], B, Erow[Src[Seg[vc] + q]], d)

    phases = _index_phases()
    return {**{name: phases[name] for name in ("sort_dense", "gather_rsp", "sort_pass", "unique")},
            "values": values}


def dense_csr(dtype: str, lanes: int = 16,
              row_threads: int | None = None) -> dict[str, tvm.tirx.PrimFunc]:
    """``matmul``: ``out = lhs · csr`` (dense). For csr output the index phases sort the csr's
    entries by column and ``rank`` maps each entry to its column's position among the distinct
    columns; ``values`` then stores the product over those columns, every output row storing
    all of them (explicit zeros included), as MXNet's dense·csr -> csr does."""
    elem = element_bytes(dtype)
    cols = columns(lanes, row_threads)
    flat = columns(1, row_threads)  # the column ids: a plain loop on the CPU
    _, zero_row, _ = _row_macros(dtype, cols)

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
                flat.each(s, _copy_column, OutIdx, vi, Cols)
                for kk in T.serial(k):
                    for p in T.serial(P[kk + 1] - P[kk]):
                        cols.owned(Rank[P[kk] + p], _add_at, OutData, vi, Rank[P[kk] + p],
                                   A[vi, kk] * Data[P[kk] + p])

    phases = _index_phases()
    return {"matmul": matmul,
            **{name: phases[name] for name in ("sort_dense", "sort_pass", "unique", "rank")},
            "values": values}


def dense_csr_t(dtype: str, row_threads: int | None = None) -> dict[str, tvm.tirx.PrimFunc]:
    """``matmul``: ``out = lhs · csrᵀ`` (dense): each output element gathers one csr row."""
    elem = element_bytes(dtype)
    zero = tvm.tirx.const(0, dtype)
    cols = columns(1, row_threads)

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


def dense_dense(dtype: str, lanes: int = 16,
                row_threads: int | None = None) -> dict[str, tvm.tirx.PrimFunc]:
    """``nn``, ``tn``, ``nt``, ``tt``: ``out = op(lhs) · op(rhs)`` with ``t`` = transposed
    operand; output rows in parallel (a plain generated kernel, not a tuned GEMM)."""
    elem = element_bytes(dtype)
    cols = columns(lanes, row_threads)
    axpy, zero_row, _ = _row_macros(dtype, cols)
    zero = tvm.tirx.const(0, dtype)

    def axpy_form(trans_a: bool):
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
                    zero_row(Out, vi, n)
                    for kk in T.serial(k):
                        axpy(Out, vi, A[kk, vi] if trans_a else A[vi, kk], B, kk, n)

        return kernel

    def dot_form(trans_a: bool):
        flat = columns(1, row_threads)  # each element is a dot product: a plain loop on the CPU

        @T.macro
        def dot_at(out, i, lhs, rhs, k, j):
            out[i, j] = zero
            for kk in T.serial(k):
                out[i, j] = out[i, j] + (lhs[kk, i] if trans_a else lhs[i, kk]) * rhs[j, kk]

        @T.prim_func(s_tir=True)
        def kernel(lhs: T.handle, rhs: T.handle, out: T.handle):
            T.func_attr({"tirx.noalias": True})
            m = T.int64()
            k = T.int64()
            n = T.int64()
            A = T.match_buffer(lhs, (k, m) if trans_a else (m, k), dtype, align=elem)
            B = T.match_buffer(rhs, (n, k), dtype, align=elem)
            Out = T.match_buffer(out, (m, n), dtype, align=elem)
            for i in T.serial(m):
                with T.sblock("rows"):
                    vi = T.axis.spatial(m, i)
                    T.reads(A[0:k, vi] if trans_a else A[vi, 0:k], B[0:n, 0:k])
                    T.writes(Out[vi, 0:n])
                    flat.each(n, dot_at, Out, vi, A, B, k)

        return kernel

    return {"nn": axpy_form(False), "tn": axpy_form(True), "nt": dot_form(False),
            "tt": dot_form(True)}
