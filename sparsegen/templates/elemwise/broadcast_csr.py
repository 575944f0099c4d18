"""csr (op) a broadcast vector, keeping csr (kernel ``bcast_csr``): each stored value of row
``i``, column ``j`` is multiplied or divided by ``v[j * step]`` (a row vector, ``by_col``) or
``v[i * step]`` (a column vector, ``by_row``); ``step`` 0 broadcasts a single value (a position
past ``v`` reads its last element, so no call reads out of bounds). The result
has the input's index arrays, so only values are written, parallel over rows."""

from __future__ import annotations

import tvm
from tvm.script import tirx as T

from .. import element_bytes
from .arith import binary

_FUNCTIONS = ("mul", "div")


def _scale(fn: str, by_row: bool, dtype: str) -> tvm.tirx.PrimFunc:
    align = element_bytes(dtype)

    @T.macro
    def row_scale(out, d, cols, v, k, step, row, p):
        out[p] = binary(fn, dtype, d[p], v[T.min(row * step, k - 1)])

    @T.macro
    def col_scale(out, d, cols, v, k, step, row, p):
        out[p] = binary(fn, dtype, d[p], v[T.min(cols[p] * step, k - 1)])

    scale = row_scale if by_row else col_scale

    @T.prim_func(s_tir=True)
    def func(data: T.handle, indices: T.handle, indptr: T.handle, v: T.handle, step: T.int64,
             out: T.handle):
        T.func_attr({"tirx.noalias": True})
        n1 = T.int64()  # rows + 1
        nnz = T.int64()
        k = T.int64()
        D = T.match_buffer(data, (nnz,), dtype, align=align)
        I = T.match_buffer(indices, (nnz,), "int64", align=8)
        P = T.match_buffer(indptr, (n1,), "int64", align=8)
        V = T.match_buffer(v, (k,), dtype, align=align)
        Out = T.match_buffer(out, (nnz,), dtype, align=align)
        for i in T.serial(n1 - 1):
            with T.sblock("rows"):
                vi = T.axis.spatial(n1 - 1, i)
                T.reads(D[P[vi] : P[vi + 1]], I[P[vi] : P[vi + 1]], P[vi : vi + 2], V[0:k])
                T.writes(Out[P[vi] : P[vi + 1]])
                for q in T.serial(P[vi + 1] - P[vi]):
                    scale(Out, D, I, V, k, step, vi, P[vi] + q)

    return func


def broadcast_csr(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``<op>_by_row`` / ``<op>_by_col`` for op in mul, div ``(data, indices, indptr, v, step,
    out)``: stored values (op) the vector element of their row / column."""
    return {f"{fn}_by_{axis}": _scale(fn, axis == "row", dtype)
            for fn in _FUNCTIONS for axis in ("row", "col")}
