"""The radix phases of data-dependent outputs: radix sort by column, distinct keys, ranks.

PrimFuncs (the same for every element dtype) that a kernel's template includes in its function
dict (``phases``); the blocked prefix sum they run on is templates/scan.py.

The sort by column is a stable LSD radix sort whose digit width ``bits`` (at most
``MAX_RADIX_BITS``) is an argument of each pass: the caller covers the keys' bits in the fewest
passes (``formats.radix_passes``). Each pass is a blocked counting sort over chunks of
``sort_chunk`` entries, in three steps: every chunk counts its digits into column ``c`` of a
digit-major table (``table[1 + digit * chunks + c]``, in parallel), a blocked scan turns the
table into offsets, and every chunk walks its entries in order, storing each at
``table[digit * chunks + c]`` and advancing it (in parallel; stable as chunks and entries within
one are in order). The caller provides ``table``: ``2**bits * ceil(u / sort_chunk) + 1`` entries
(the kernel checks it; tests build the phases at a small ``sort_chunk``); ops/radix.py runs the
passes.

Every statement sits in a block: serial blocks (the scans' carry steps) run as one thread under
the CUDA schedule.
"""

from __future__ import annotations

from typing import Callable

import tvm
from tvm.script import tirx as T

from ..formats import MAX_RADIX_BITS, SCAN_CHUNK, SORT_CHUNK
from .scan import offsets


def _run_start(keys: tvm.tirx.Buffer, q: tvm.tirx.PrimExpr) -> tvm.tirx.PrimExpr:
    """Whether sorted entry ``q`` starts a run of equal keys."""
    return tvm.tirx.Or(q == 0, keys[q] != keys[T.max(q, T.int64(1)) - 1])


def _position(buf: tvm.tirx.Buffer, q: tvm.tirx.PrimExpr) -> tvm.tirx.PrimExpr:
    """Entry ``q``'s own position (the source of a first pass over all entries)."""
    return q


def _element(buf: tvm.tirx.Buffer, q: tvm.tirx.PrimExpr) -> tvm.tirx.PrimExpr:
    """``buf[q]``."""
    return buf[q]


_BITS_RANGE = f"bits (the digit width of a radix pass) must lie in [0, {MAX_RADIX_BITS}]"
_TABLE_SIZE = "table must have 2**bits * ceil(entries / sort chunk) + 1 entries"


def _buckets(bits: tvm.tirx.PrimExpr) -> tvm.tirx.PrimExpr:
    """The digits of a pass of ``bits`` bits."""
    return T.shift_left(T.int64(1), bits)


def _radix_pass(sort_chunk: int) -> tuple[Callable, Callable, Callable]:
    """``chunks(u)``, the chunks of a pass over ``u`` entries, ``table_size(bits, u)``, and the
    macro of one stable counting-sort pass over chunks of ``sort_chunk`` entries: count, scan,
    scatter."""

    def chunks(u: tvm.tirx.PrimExpr) -> tvm.tirx.PrimExpr:
        """The chunks of a pass over ``u`` entries."""
        return (u + sort_chunk - 1) // sort_chunk

    def table_size(bits: tvm.tirx.PrimExpr, u: tvm.tirx.PrimExpr) -> tvm.tirx.PrimExpr:
        """The entries of a pass's offset table."""
        return _buckets(bits) * chunks(u) + 1

    def slot(key: tvm.tirx.PrimExpr, shift: tvm.tirx.PrimExpr, bits: tvm.tirx.PrimExpr,
             c: tvm.tirx.PrimExpr, u: tvm.tirx.PrimExpr) -> tvm.tirx.PrimExpr:
        """Where chunk ``c``'s offset for ``key``'s digit at ``shift`` lies in the table."""
        return ((key >> shift) & (_buckets(bits) - 1)) * chunks(u) + c

    @T.macro
    def radix_pass(keys_in, src_in, src_of, keys_out, src_out, table, size, shift, bits, u):
        # one stable counting-sort pass on the digit of ``bits`` bits at ``shift``: count,
        # scan, scatter
        for c in T.serial(chunks(u)):
            with T.sblock("rows_sort_count"):
                vc = T.axis.spatial(chunks(u), c)
                T.reads(keys_in[vc * sort_chunk : T.min(vc * sort_chunk + sort_chunk, u)])
                T.writes(table[0:size])
                for b in T.serial(_buckets(bits)):
                    table[b * chunks(u) + vc + 1] = T.int64(0)
                for t in T.serial(T.min(sort_chunk, u - vc * sort_chunk)):
                    table[slot(keys_in[vc * sort_chunk + t], shift, bits, vc, u) + 1] = (
                        table[slot(keys_in[vc * sort_chunk + t], shift, bits, vc, u) + 1]
                        + T.int64(1)
                    )
        offsets(table, size - 1)  # every digit of every chunk (the kernel checked the size)
        for c in T.serial(chunks(u)):
            with T.sblock("rows_sort_scatter"):
                vc = T.axis.spatial(chunks(u), c)
                T.reads(keys_in[vc * sort_chunk : T.min(vc * sort_chunk + sort_chunk, u)],
                        src_in[0:u], table[0:size])
                T.writes(keys_out[0:u], src_out[0:u], table[0:size])
                for t in T.serial(T.min(sort_chunk, u - vc * sort_chunk)):
                    keys_out[table[slot(keys_in[vc * sort_chunk + t], shift, bits, vc, u)]] = (
                        keys_in[vc * sort_chunk + t]
                    )
                    src_out[table[slot(keys_in[vc * sort_chunk + t], shift, bits, vc, u)]] = (
                        src_of(src_in, vc * sort_chunk + t)
                    )
                    table[slot(keys_in[vc * sort_chunk + t], shift, bits, vc, u)] = (
                        table[slot(keys_in[vc * sort_chunk + t], shift, bits, vc, u)]
                        + T.int64(1)
                    )

    return chunks, table_size, radix_pass


def _sort_dense(radix: tuple[Callable, Callable, Callable]) -> tvm.tirx.PrimFunc:
    """``sort_dense``: the first pass over all csr entries, on the lowest ``bits`` bits:
    ``keys``/``src`` are column ids and entry positions sorted by that digit, ``erow[p]`` the
    csr row of entry ``p``."""
    chunks, table_size, radix_pass = radix

    @T.prim_func(s_tir=True)
    def sort_dense(indices: T.handle, indptr: T.handle, keys: T.handle, src: T.handle,
                   erow: T.handle, table: T.handle, bits: T.int64):
        T.func_attr({"tirx.noalias": True})
        rows = T.int64()  # indptr entries: n + 1
        nnz = T.int64()
        Idx = T.match_buffer(indices, (nnz,), "int64", align=8)
        P = T.match_buffer(indptr, (rows,), "int64", align=8)
        Keys = T.match_buffer(keys, (nnz,), "int64", align=8)
        Src = T.match_buffer(src, (nnz,), "int64", align=8)
        Erow = T.match_buffer(erow, (nnz,), "int64", align=8)
        size = T.int64()
        Table = T.match_buffer(table, (size,), "int64", align=8)
        assert 0 <= bits and bits <= MAX_RADIX_BITS, _BITS_RANGE
        assert size == table_size(bits, nnz), _TABLE_SIZE
        for r in T.serial(rows - 1):
            with T.sblock("rows_erow"):
                vr = T.axis.spatial(rows - 1, r)
                T.reads(P[vr : vr + 2])
                T.writes(Erow[P[vr] : P[vr + 1]])
                for p in T.serial(P[vr + 1] - P[vr]):
                    Erow[P[vr] + p] = vr
        radix_pass(Idx, Idx, _position, Keys, Src, Table, size, T.int64(0), bits, nnz)

    return sort_dense


def _gather_rsp() -> tvm.tirx.PrimFunc:
    """``gather_rsp``: the entries of the rows a row_sparse rhs stores, in order (unsorted), with
    ``erow[p]`` the index of entry ``p``'s row among the stored rows (``starts``: each stored
    row's first output position, a scan of their entry counts)."""

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

    return gather_rsp


def _sort_pass(radix: tuple[Callable, Callable, Callable]) -> tvm.tirx.PrimFunc:
    """``sort_pass``: one pass on the digit of ``bits`` bits at ``shift``, from ``keys``/``src``
    into ``keys_out``/``src_out``; the caller runs the passes its column count needs."""
    chunks, table_size, radix_pass = radix

    @T.prim_func(s_tir=True)
    def sort_pass(keys: T.handle, src: T.handle, keys_out: T.handle, src_out: T.handle,
                  table: T.handle, shift: T.int64, bits: T.int64):
        T.func_attr({"tirx.noalias": True})
        u = T.int64()
        Keys = T.match_buffer(keys, (u,), "int64", align=8)
        Src = T.match_buffer(src, (u,), "int64", align=8)
        KeysOut = T.match_buffer(keys_out, (u,), "int64", align=8)
        SrcOut = T.match_buffer(src_out, (u,), "int64", align=8)
        size = T.int64()
        Table = T.match_buffer(table, (size,), "int64", align=8)
        assert 0 <= bits and bits <= MAX_RADIX_BITS, _BITS_RANGE
        assert size == table_size(bits, u), _TABLE_SIZE
        radix_pass(Keys, Src, _element, KeysOut, SrcOut, Table, size, shift, bits, u)

    return sort_pass


def _unique() -> tvm.tirx.PrimFunc:
    """``unique``: the distinct sorted keys, where each one's run starts (``seg``) and their
    number (``count[0]``), over chunks of ``SCAN_CHUNK`` sorted keys in parallel: each chunk
    counts its run starts into ``runs[c + 1]`` (``runs`` has ``ceil(u / SCAN_CHUNK) + 1``
    entries), a blocked scan turns them into offsets, and each chunk writes its runs from there."""

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

    return unique


def _rank() -> tvm.tirx.PrimFunc:
    """``rank``: ``rank[src[q]]`` = the position of entry ``src[q]``'s key among the distinct
    keys (``seg``: where each one's run starts, as ``unique`` writes it)."""

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

    return rank


def phases(*names: str, sort_chunk: int = SORT_CHUNK) -> dict[str, tvm.tirx.PrimFunc]:
    """The radix phases ``names`` (``sort_dense``, ``gather_rsp``, ``sort_pass``, ``unique``,
    ``rank``), in the order of ``names``, as functions of a kernel; sorts run over chunks of
    ``sort_chunk`` entries.

    ``sort_dense`` and ``sort_pass`` expand one radix pass macro, which numbers the blocks of
    its later expansions (``rows_sort_count_1``): one macro per call keeps each kernel's block
    names the same whichever kernels were built before it."""
    radix = _radix_pass(sort_chunk)
    builders = {"sort_dense": lambda: _sort_dense(radix), "gather_rsp": _gather_rsp,
                "sort_pass": lambda: _sort_pass(radix), "unique": _unique, "rank": _rank}
    return {name: builders[name]() for name in names}
