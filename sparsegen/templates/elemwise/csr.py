"""Phase 2 of csr ops (kernel ``ew_csr``): result entries per row from the two operands' rows,
and csr with dense (in-place updates, products), parallel over rows."""

from __future__ import annotations

from collections.abc import Callable

import tvm
from tvm import tirx
from tvm.script import tirx as T

from ...opnames import SPARSE_UNION_OPS, SPARSE_UPDATE_OPS
from .. import element_bytes
from ..scan import offsets
from .arith import Expr, binary, nonfinite, with_zero

def _one_sided(fn: str, dtype: str, keep: str) -> tuple[Callable[..., None], ...]:
    """The merge steps over an entry stored in ``a`` only and in ``b`` only: write it (as
    ``x <fn> 0``) if ``keep`` keeps it, then step past it; ``p`` is the position in a, in b, in
    the output."""

    def kept(value: Expr) -> Expr:
        if keep == "all":
            return tirx.const(True, "bool")
        if keep == "both":
            return tirx.const(False, "bool")
        return nonfinite(dtype, value)

    @T.macro
    def from_a(p, AI, AD, I, D):
        if keep != "both":
            if kept(AD[p[0]]):
                I[p[2]] = AI[p[0]]
                D[p[2]] = with_zero(fn, dtype, AD[p[0]])
                p[2] = p[2] + T.int64(1)
        p[0] = p[0] + T.int64(1)

    @T.macro
    def from_b(p, BI, BD, I, D):
        if keep != "both":
            if kept(BD[p[1]]):
                I[p[2]] = BI[p[1]]
                D[p[2]] = with_zero(fn, dtype, BD[p[1]], True)
                p[2] = p[2] + T.int64(1)
        p[1] = p[1] + T.int64(1)

    return from_a, from_b


def _csr_fill(fn: str, dtype: str, keep: str) -> tvm.tirx.PrimFunc:
    """Per row, merge the two rows' entries into the positions ``indptr`` gives: ``keep`` is
    ``"all"`` (a union: every entry of either), ``"both"`` (entries stored in both) or
    ``"nonfinite"`` (those, and entries stored in one whose value is inf or nan)."""
    align = element_bytes(dtype)
    from_a, from_b = _one_sided(fn, dtype, keep)

    @T.prim_func(s_tir=True)
    def func(a_ptr: T.handle, a_idx: T.handle, a_data: T.handle, b_ptr: T.handle,
             b_idx: T.handle, b_data: T.handle, indptr: T.handle, indices: T.handle,
             data: T.handle):
        T.func_attr({"tirx.noalias": True})
        n1 = T.int64()  # rows + 1: no buffer has the row count itself
        na = T.int64()
        nb = T.int64()
        nnz = T.int64()
        AP = T.match_buffer(a_ptr, (n1,), "int64", align=8)
        AI = T.match_buffer(a_idx, (na,), "int64", align=8)
        AD = T.match_buffer(a_data, (na,), dtype, align=align)
        BP = T.match_buffer(b_ptr, (n1,), "int64", align=8)
        BI = T.match_buffer(b_idx, (nb,), "int64", align=8)
        BD = T.match_buffer(b_data, (nb,), dtype, align=align)
        P = T.match_buffer(indptr, (n1,), "int64", align=8)
        I = T.match_buffer(indices, (nnz,), "int64", align=8)
        D = T.match_buffer(data, (nnz,), dtype, align=align)
        for i in T.serial(n1 - 1):
            with T.sblock("rows"):
                vi = T.axis.spatial(n1 - 1, i)
                T.reads(AP[vi : vi + 2], BP[vi : vi + 2], AI[0:na], BI[0:nb], AD[0:na],
                        BD[0:nb], P[vi])
                T.writes(I[P[vi] : P[vi + 1]], D[P[vi] : P[vi + 1]])
                p = T.alloc_buffer((3,), "int64", scope="local")  # position in a, in b, in out
                p[0] = AP[vi]
                p[1] = BP[vi]
                p[2] = P[vi]
                while p[0] < AP[vi + 1] and p[1] < BP[vi + 1]:
                    if AI[p[0]] == BI[p[1]]:
                        I[p[2]] = AI[p[0]]
                        D[p[2]] = binary(fn, dtype, AD[p[0]], BD[p[1]])
                        p[0] = p[0] + T.int64(1)
                        p[1] = p[1] + T.int64(1)
                        p[2] = p[2] + T.int64(1)
                    elif AI[p[0]] < BI[p[1]]:
                        from_a(p, AI, AD, I, D)
                    else:
                        from_b(p, BI, BD, I, D)
                if keep != "both":
                    while p[0] < AP[vi + 1]:
                        from_a(p, AI, AD, I, D)
                    while p[1] < BP[vi + 1]:
                        from_b(p, BI, BD, I, D)

    return func


def _csr_count_nonfinite(dtype: str) -> tvm.tirx.PrimFunc:
    """Per row (in parallel): how many entries ``_csr_fill(..., "nonfinite")`` writes (entries
    stored in both rows, and entries of one holding inf or nan); then ``indptr`` as their
    prefix sum."""
    align = element_bytes(dtype)

    @T.prim_func(s_tir=True)
    def func(a_ptr: T.handle, a_idx: T.handle, a_data: T.handle, b_ptr: T.handle,
             b_idx: T.handle, b_data: T.handle, indptr: T.handle):
        T.func_attr({"tirx.noalias": True})
        n1 = T.int64()
        na = T.int64()
        nb = T.int64()
        AP = T.match_buffer(a_ptr, (n1,), "int64", align=8)
        AI = T.match_buffer(a_idx, (na,), "int64", align=8)
        AD = T.match_buffer(a_data, (na,), dtype, align=align)
        BP = T.match_buffer(b_ptr, (n1,), "int64", align=8)
        BI = T.match_buffer(b_idx, (nb,), "int64", align=8)
        BD = T.match_buffer(b_data, (nb,), dtype, align=align)
        P = T.match_buffer(indptr, (n1,), "int64", align=8)
        for i in T.serial(n1 - 1):
            with T.sblock("rows"):
                vi = T.axis.spatial(n1 - 1, i)
                T.reads(AP[vi : vi + 2], BP[vi : vi + 2], AI[0:na], BI[0:nb], AD[0:na],
                        BD[0:nb])
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
                        p[2] = p[2] + T.Cast("int64", nonfinite(dtype, AD[p[0]]))
                        p[0] = p[0] + T.int64(1)
                    else:
                        p[2] = p[2] + T.Cast("int64", nonfinite(dtype, BD[p[1]]))
                        p[1] = p[1] + T.int64(1)
                while p[0] < AP[vi + 1]:
                    p[2] = p[2] + T.Cast("int64", nonfinite(dtype, AD[p[0]]))
                    p[0] = p[0] + T.int64(1)
                while p[1] < BP[vi + 1]:
                    p[2] = p[2] + T.Cast("int64", nonfinite(dtype, BD[p[1]]))
                    p[1] = p[1] + T.int64(1)
                P[vi + 1] = p[2]
        offsets(P, n1 - 1)

    return func


def _csr_update(fn: str, dtype: str) -> tvm.tirx.PrimFunc:
    align = element_bytes(dtype)

    @T.prim_func(s_tir=True)
    def func(dense: T.handle, data: T.handle, indices: T.handle, indptr: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        m = T.int64()
        nnz = T.int64()
        Dn = T.match_buffer(dense, (n, m), dtype, align=align)
        D = T.match_buffer(data, (nnz,), dtype, align=align)
        I = T.match_buffer(indices, (nnz,), "int64", align=8)
        P = T.match_buffer(indptr, (n + 1,), "int64", align=8)
        for i in T.serial(n):
            with T.sblock("rows"):
                vi = T.axis.spatial(n, i)
                T.reads(Dn[vi, 0:m], D[P[vi] : P[vi + 1]], I[P[vi] : P[vi + 1]], P[vi : vi + 2])
                T.writes(Dn[vi, 0:m])
                for q in T.serial(P[vi + 1] - P[vi]):
                    Dn[vi, I[P[vi] + q]] = binary(fn, dtype, Dn[vi, I[P[vi] + q]], D[P[vi] + q])

    return func


def _csr_gather_mul(dtype: str) -> tvm.tirx.PrimFunc:
    align = element_bytes(dtype)

    @T.prim_func(s_tir=True)
    def func(dense: T.handle, data: T.handle, indices: T.handle, indptr: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        m = T.int64()
        nnz = T.int64()
        Dn = T.match_buffer(dense, (n, m), dtype, align=align)
        D = T.match_buffer(data, (nnz,), dtype, align=align)
        I = T.match_buffer(indices, (nnz,), "int64", align=8)
        P = T.match_buffer(indptr, (n + 1,), "int64", align=8)
        Out = T.match_buffer(out, (nnz,), dtype, align=align)
        for i in T.serial(n):
            with T.sblock("rows"):
                vi = T.axis.spatial(n, i)
                T.reads(Dn[vi, 0:m], D[P[vi] : P[vi + 1]], I[P[vi] : P[vi + 1]], P[vi : vi + 2])
                T.writes(Out[P[vi] : P[vi + 1]])
                for q in T.serial(P[vi + 1] - P[vi]):
                    Out[P[vi] + q] = binary("mul", dtype, D[P[vi] + q], Dn[vi, I[P[vi] + q]])

    return func


def csr(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """Phase 2 of csr ops, parallel over rows: ``fill_<op>`` merges each row's column ids and
    values into the positions ``indptr`` gives; ``update_<op>`` applies stored values to a dense
    matrix in place; ``gather_mul`` multiplies stored values by the dense values at their
    positions. ``count_mul_nonfinite`` / ``fill_mul_nonfinite`` are the product's index set and
    values when an operand holds inf or nan: entries stored in both, and entries stored in one
    that hold a non-finite value (``x * 0`` is nan there)."""
    funcs = {f"fill_{fn}": _csr_fill(fn, dtype, "all") for fn in SPARSE_UNION_OPS}
    funcs["fill_mul"] = _csr_fill("mul", dtype, "both")
    funcs["count_mul_nonfinite"] = _csr_count_nonfinite(dtype)
    funcs["fill_mul_nonfinite"] = _csr_fill("mul", dtype, "nonfinite")
    funcs.update({f"update_{fn}": _csr_update(fn, dtype) for fn in SPARSE_UPDATE_OPS})
    funcs["gather_mul"] = _csr_gather_mul(dtype)
    return funcs
