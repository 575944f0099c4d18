"""Phase 2 of row_sparse ops (kernel ``ew_rsp``): result rows from the merged index set, and
row_sparse with dense (in-place updates, products), parallel over rows."""

from __future__ import annotations

from collections.abc import Callable

import tvm
from tvm.script import tirx as T

from ...opnames import SPARSE_UNION_OPS, SPARSE_UPDATE_OPS
from .. import element_bytes
from ..columns import cols
from ..scan import offsets
from .arith import binary, nonfinite, with_zero

def _row_ops(fn: str, dtype: str) -> tuple[Callable[..., None], ...]:
    """Column macros writing an output row from rows of both operands, of ``a`` only, of ``b``
    only (the other operand's zero made explicit)."""

    @T.macro
    def both(out, r, a, ra, b, rb, j):
        out[r, j] = binary(fn, dtype, a[ra, j], b[rb, j])

    @T.macro
    def left(out, r, a, ra, j):
        out[r, j] = with_zero(fn, dtype, a[ra, j])

    @T.macro
    def right(out, r, b, rb, j):
        out[r, j] = with_zero(fn, dtype, b[rb, j], True)

    return both, left, right


def _row_writer(fn: str, dtype: str) -> Callable[..., None]:
    """A macro writing output row ``r`` from row ``sa`` of ``a`` and ``sb`` of ``b`` (-1 where
    the operand does not store it)."""
    both, left, right = _row_ops(fn, dtype)

    @T.macro
    def write(out, r, a, sa, b, sb, d):
        if sa >= T.int64(0) and sb >= T.int64(0):
            cols.each(d, both, out, r, a, sa, b, sb)
        elif sa >= T.int64(0):
            cols.each(d, left, out, r, a, sa)
        else:
            cols.each(d, right, out, r, b, sb)

    return write


def _rsp_fill(fn: str, dtype: str) -> tvm.tirx.PrimFunc:
    align = element_bytes(dtype)
    write = _row_writer(fn, dtype)

    @T.prim_func(s_tir=True)
    def func(a: T.handle, b: T.handle, src_a: T.handle, src_b: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        ka = T.int64()
        kb = T.int64()
        k = T.int64()
        d = T.int64()
        A = T.match_buffer(a, (ka, d), dtype, align=align)
        B = T.match_buffer(b, (kb, d), dtype, align=align)
        SA = T.match_buffer(src_a, (k,), "int64", align=8)
        SB = T.match_buffer(src_b, (k,), "int64", align=8)
        Out = T.match_buffer(out, (k, d), dtype, align=align)
        for r in T.serial(k):
            with T.sblock("rows"):
                vr = T.axis.spatial(k, r)
                T.reads(A[0:ka, 0:d], B[0:kb, 0:d], SA[vr], SB[vr])
                T.writes(Out[vr, 0:d])
                write(Out, vr, A, SA[vr], B, SB[vr], d)

    return func


def _rsp_update(fn: str, dtype: str) -> tvm.tirx.PrimFunc:
    align = element_bytes(dtype)

    @T.macro
    def apply(dst, r, src, s, j):
        dst[r, j] = binary(fn, dtype, dst[r, j], src[s, j])

    @T.prim_func(s_tir=True)
    def func(dense: T.handle, data: T.handle, indices: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        k = T.int64()
        d = T.int64()
        D = T.match_buffer(dense, (n, d), dtype, align=align)
        Data = T.match_buffer(data, (k, d), dtype, align=align)
        Idx = T.match_buffer(indices, (k,), "int64", align=8)
        for r in T.serial(k):
            with T.sblock("rows"):
                vr = T.axis.spatial(k, r)
                T.reads(D[Idx[vr], 0:d], Data[vr, 0:d], Idx[vr])
                T.writes(D[Idx[vr], 0:d])
                cols.each(d, apply, D, Idx[vr], Data, vr)

    return func


def _rsp_gather(fn: str, dtype: str) -> tvm.tirx.PrimFunc:
    align = element_bytes(dtype)

    @T.macro
    def apply(out, r, src, other, s, j):
        out[r, j] = binary(fn, dtype, src[r, j], other[s, j])

    @T.prim_func(s_tir=True)
    def func(dense: T.handle, data: T.handle, indices: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        k = T.int64()
        d = T.int64()
        D = T.match_buffer(dense, (n, d), dtype, align=align)
        Data = T.match_buffer(data, (k, d), dtype, align=align)
        Idx = T.match_buffer(indices, (k,), "int64", align=8)
        Out = T.match_buffer(out, (k, d), dtype, align=align)
        for r in T.serial(k):
            with T.sblock("rows"):
                vr = T.axis.spatial(k, r)
                T.reads(D[Idx[vr], 0:d], Data[vr, 0:d], Idx[vr])
                T.writes(Out[vr, 0:d])
                cols.each(d, apply, Out, vr, Data, D, Idx[vr])

    return func


def _rsp_keep_mul(dtype: str) -> tvm.tirx.PrimFunc:
    align = element_bytes(dtype)

    @T.prim_func(s_tir=True)
    def func(a: T.handle, b: T.handle, src_a: T.handle, src_b: T.handle, pos: T.handle):
        T.func_attr({"tirx.noalias": True})
        ka = T.int64()
        kb = T.int64()
        k = T.int64()
        k1 = T.int64()
        d = T.int64()
        A = T.match_buffer(a, (ka, d), dtype, align=align)
        B = T.match_buffer(b, (kb, d), dtype, align=align)
        SA = T.match_buffer(src_a, (k,), "int64", align=8)
        SB = T.match_buffer(src_b, (k,), "int64", align=8)
        P = T.match_buffer(pos, (k1,), "int64", align=8)
        for r in T.serial(k):
            with T.sblock("rows"):
                vr = T.axis.spatial(k, r)
                T.reads(A[0:ka, 0:d], B[0:kb, 0:d], SA[vr], SB[vr])
                T.writes(P[vr + 1])
                acc = T.alloc_buffer((1,), "int64", scope="local")
                acc[0] = T.int64(0)
                if SA[vr] >= T.int64(0) and SB[vr] >= T.int64(0):
                    acc[0] = T.int64(1)
                elif SA[vr] >= T.int64(0):
                    for j in T.serial(d):
                        acc[0] = T.max(acc[0], T.Cast("int64", nonfinite(dtype, A[SA[vr], j])))
                else:
                    for j in T.serial(d):
                        acc[0] = T.max(acc[0], T.Cast("int64", nonfinite(dtype, B[SB[vr], j])))
                P[vr + 1] = acc[0]
        offsets(P, k1 - 1)

    return func


def _rsp_fill_kept(fn: str, dtype: str) -> tvm.tirx.PrimFunc:
    align = element_bytes(dtype)
    write = _row_writer(fn, dtype)

    @T.prim_func(s_tir=True)
    def func(a: T.handle, b: T.handle, src_a: T.handle, src_b: T.handle, pos: T.handle,
             ids: T.handle, out: T.handle, out_ids: T.handle):
        T.func_attr({"tirx.noalias": True})
        ka = T.int64()
        kb = T.int64()
        k = T.int64()
        m = T.int64()
        d = T.int64()
        A = T.match_buffer(a, (ka, d), dtype, align=align)
        B = T.match_buffer(b, (kb, d), dtype, align=align)
        SA = T.match_buffer(src_a, (k,), "int64", align=8)
        SB = T.match_buffer(src_b, (k,), "int64", align=8)
        P = T.match_buffer(pos, (k + 1,), "int64", align=8)
        Ids = T.match_buffer(ids, (k,), "int64", align=8)
        Out = T.match_buffer(out, (m, d), dtype, align=align)
        OutIds = T.match_buffer(out_ids, (m,), "int64", align=8)
        for r in T.serial(k):
            with T.sblock("rows"):
                vr = T.axis.spatial(k, r)
                T.reads(A[0:ka, 0:d], B[0:kb, 0:d], SA[vr], SB[vr], P[vr : vr + 2], Ids[vr])
                T.writes(Out[P[vr], 0:d], OutIds[P[vr]])
                if P[vr + 1] > P[vr]:
                    OutIds[P[vr]] = Ids[vr]
                    write(Out, P[vr], A, SA[vr], B, SB[vr], d)

    return func


def row_sparse(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """Phase 2 of row_sparse ops, parallel over rows: ``fill_<op>`` writes each output row from
    its source rows (zero where absent); ``update_<op>`` applies stored rows to a dense array in
    place; ``gather_mul`` / ``gather_div`` multiply / divide stored rows by the dense rows of
    the same ids.

    ``keep_mul`` marks the rows of a union (``src_a``, ``src_b`` from ``ew_index.rsp_union``)
    that a product stores when an operand holds inf or nan: rows stored in both, and rows stored
    in one that hold a non-finite value (``x * 0`` is nan there); ``pos`` becomes their offsets.
    ``fill_mul_kept`` writes those rows and their ids at the offsets."""
    funcs = {f"fill_{fn}": _rsp_fill(fn, dtype) for fn in (*SPARSE_UNION_OPS, "mul")}
    funcs.update({f"update_{fn}": _rsp_update(fn, dtype) for fn in SPARSE_UPDATE_OPS})
    funcs.update({f"gather_{fn}": _rsp_gather(fn, dtype) for fn in ("mul", "div")})
    funcs["keep_mul"] = _rsp_keep_mul(dtype)
    funcs["fill_mul_kept"] = _rsp_fill_kept("mul", dtype)
    return funcs
