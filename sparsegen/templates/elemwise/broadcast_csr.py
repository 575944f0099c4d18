"""csr (op) a broadcast vector, keeping csr (kernel ``bcast_csr``): each stored value of row
``i``, column ``j`` is multiplied or divided by ``v[j * step]`` (a row vector, ``by_col``) or
``v[i * step]`` (a column vector, ``by_row``); ``step`` 0 broadcasts a single value (a position
past ``v`` reads its last element, so no call reads out of bounds). The result
has the input's index arrays, so only values are written, parallel over rows.

Where ``z = 0 (op) v`` is nan (``0 * inf``, ``0 / 0``), the positions the csr does not store hold
that nan too: the ``*_nan`` functions count each result row (phase 1, then a prefix sum) and
fill it (phase 2), merging the stored entries with the nan positions."""

from __future__ import annotations

import tvm
from tvm import tirx
from tvm.script import tirx as T

from .. import element_bytes
from ..scan import offsets
from .arith import Expr, binary

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


def _is_nan(dtype: str, x: Expr) -> Expr:
    """Whether ``x`` is nan (never for integer dtypes)."""
    if not dtype.startswith("float"):
        return tirx.const(False, "bool")
    return tirx.isnan(T.Cast("float32", x) if dtype == "float16" else x)


def _by_row_count(dtype: str) -> tvm.tirx.PrimFunc:
    """Per row (in parallel): ``cols`` entries where the row's zero image ``z[i * step]`` is nan
    (every column of the result is stored), else the row's own entry count; then ``out_indptr``
    as their prefix sum."""
    align = element_bytes(dtype)

    @T.prim_func(s_tir=True)
    def func(indptr: T.handle, z: T.handle, step: T.int64, cols: T.int64, out_indptr: T.handle):
        T.func_attr({"tirx.noalias": True})
        n1 = T.int64()  # rows + 1
        k = T.int64()
        P = T.match_buffer(indptr, (n1,), "int64", align=8)
        Z = T.match_buffer(z, (k,), dtype, align=align)
        Q = T.match_buffer(out_indptr, (n1,), "int64", align=8)
        for i in T.serial(n1 - 1):
            with T.sblock("rows"):
                vi = T.axis.spatial(n1 - 1, i)
                T.reads(P[vi : vi + 2], Z[0:k])
                T.writes(Q[vi + 1])
                if _is_nan(dtype, Z[T.min(vi * step, k - 1)]):
                    Q[vi + 1] = cols
                else:
                    Q[vi + 1] = P[vi + 1] - P[vi]
        offsets(Q, n1 - 1)

    return func


def _by_row_fill(fn: str, dtype: str) -> tvm.tirx.PrimFunc:
    """Per row (in parallel): each stored value (op) ``v[i * step]``; a row whose zero image
    ``z[i * step]`` is nan also gets every column it does not store, holding that image."""
    align = element_bytes(dtype)

    @T.prim_func(s_tir=True)
    def func(data: T.handle, indices: T.handle, indptr: T.handle, v: T.handle, z: T.handle,
             step: T.int64, cols: T.int64, out_indptr: T.handle, out_indices: T.handle,
             out_data: T.handle):
        T.func_attr({"tirx.noalias": True})
        n1 = T.int64()  # rows + 1
        nnz = T.int64()
        k = T.int64()
        m = T.int64()
        D = T.match_buffer(data, (nnz,), dtype, align=align)
        I = T.match_buffer(indices, (nnz,), "int64", align=8)
        P = T.match_buffer(indptr, (n1,), "int64", align=8)
        V = T.match_buffer(v, (k,), dtype, align=align)
        Z = T.match_buffer(z, (k,), dtype, align=align)
        Q = T.match_buffer(out_indptr, (n1,), "int64", align=8)
        OI = T.match_buffer(out_indices, (m,), "int64", align=8)
        OD = T.match_buffer(out_data, (m,), dtype, align=align)
        for i in T.serial(n1 - 1):
            with T.sblock("rows"):
                vi = T.axis.spatial(n1 - 1, i)
                T.reads(D[P[vi] : P[vi + 1]], I[P[vi] : P[vi + 1]], P[vi : vi + 2], V[0:k],
                        Z[0:k], Q[vi : vi + 2])
                T.writes(OI[Q[vi] : Q[vi + 1]], OD[Q[vi] : Q[vi + 1]])
                p = T.alloc_buffer((1,), "int64", scope="local")  # position in the row
                p[0] = P[vi]
                if _is_nan(dtype, Z[T.min(vi * step, k - 1)]):
                    for j in T.serial(cols):
                        OI[Q[vi] + j] = j
                        OD[Q[vi] + j] = Z[T.min(vi * step, k - 1)]
                        if p[0] < P[vi + 1]:
                            if I[p[0]] == j:
                                OD[Q[vi] + j] = binary(fn, dtype, D[p[0]],
                                                       V[T.min(vi * step, k - 1)])
                                p[0] = p[0] + T.int64(1)
                else:
                    for q in T.serial(P[vi + 1] - P[vi]):
                        OI[Q[vi] + q] = I[P[vi] + q]
                        OD[Q[vi] + q] = binary(fn, dtype, D[P[vi] + q],
                                               V[T.min(vi * step, k - 1)])

    return func


def _by_col_count(dtype: str) -> tvm.tirx.PrimFunc:
    """Per row (in parallel): the size of the union of the row's column ids and those of the nan
    entries of row ``i * zstep`` of the csr ``z`` (the positions whose zero image is nan); then
    ``out_indptr`` as their prefix sum."""
    align = element_bytes(dtype)

    @T.prim_func(s_tir=True)
    def func(indptr: T.handle, indices: T.handle, z_indptr: T.handle, z_indices: T.handle,
             z_data: T.handle, zstep: T.int64, out_indptr: T.handle):
        T.func_attr({"tirx.noalias": True})
        n1 = T.int64()  # rows + 1
        nnz = T.int64()
        r1 = T.int64()  # rows of z + 1
        nz = T.int64()
        P = T.match_buffer(indptr, (n1,), "int64", align=8)
        I = T.match_buffer(indices, (nnz,), "int64", align=8)
        ZP = T.match_buffer(z_indptr, (r1,), "int64", align=8)
        ZI = T.match_buffer(z_indices, (nz,), "int64", align=8)
        ZD = T.match_buffer(z_data, (nz,), dtype, align=align)
        Q = T.match_buffer(out_indptr, (n1,), "int64", align=8)
        for i in T.serial(n1 - 1):
            with T.sblock("rows"):
                vi = T.axis.spatial(n1 - 1, i)
                T.reads(P[vi : vi + 2], I[0:nnz], ZP[0:r1], ZI[0:nz], ZD[0:nz])
                T.writes(Q[vi + 1])
                p = T.alloc_buffer((3,), "int64", scope="local")  # position in a, in z; count
                p[0] = P[vi]
                p[1] = ZP[T.min(vi * zstep, r1 - 2)]
                p[2] = P[vi + 1] - P[vi]  # every stored entry, then z's nan entries beside them
                while p[0] < P[vi + 1] and p[1] < ZP[T.min(vi * zstep, r1 - 2) + 1]:
                    if I[p[0]] == ZI[p[1]]:
                        p[0] = p[0] + T.int64(1)
                        p[1] = p[1] + T.int64(1)
                    elif I[p[0]] < ZI[p[1]]:
                        p[0] = p[0] + T.int64(1)
                    else:
                        p[2] = p[2] + T.Cast("int64", _is_nan(dtype, ZD[p[1]]))
                        p[1] = p[1] + T.int64(1)
                while p[1] < ZP[T.min(vi * zstep, r1 - 2) + 1]:
                    p[2] = p[2] + T.Cast("int64", _is_nan(dtype, ZD[p[1]]))
                    p[1] = p[1] + T.int64(1)
                Q[vi + 1] = p[2]
        offsets(Q, n1 - 1)

    return func


def _by_col_fill(fn: str, dtype: str) -> tvm.tirx.PrimFunc:
    """Per row (in parallel): the union of the row's entries, each stored value (op)
    ``v[i * rstep + j * cstep]``, and the nan entries of row ``i * zstep`` of the csr ``z`` that
    it does not store, holding their value (the zero image)."""
    align = element_bytes(dtype)

    @T.macro
    def from_a(p, I, D, V, k, rstep, cstep, row, OI, OD):
        OI[p[2]] = I[p[0]]
        OD[p[2]] = binary(fn, dtype, D[p[0]], V[T.min(row * rstep + I[p[0]] * cstep, k - 1)])
        p[0] = p[0] + T.int64(1)
        p[2] = p[2] + T.int64(1)

    @T.macro
    def from_z(p, ZI, ZD, OI, OD):
        if _is_nan(dtype, ZD[p[1]]):
            OI[p[2]] = ZI[p[1]]
            OD[p[2]] = ZD[p[1]]
            p[2] = p[2] + T.int64(1)
        p[1] = p[1] + T.int64(1)

    @T.prim_func(s_tir=True)
    def func(data: T.handle, indices: T.handle, indptr: T.handle, v: T.handle, rstep: T.int64,
             cstep: T.int64, z_indptr: T.handle, z_indices: T.handle, z_data: T.handle,
             zstep: T.int64, out_indptr: T.handle, out_indices: T.handle, out_data: T.handle):
        T.func_attr({"tirx.noalias": True})
        n1 = T.int64()  # rows + 1
        nnz = T.int64()
        k = T.int64()
        r1 = T.int64()  # rows of z + 1
        nz = T.int64()
        m = T.int64()
        D = T.match_buffer(data, (nnz,), dtype, align=align)
        I = T.match_buffer(indices, (nnz,), "int64", align=8)
        P = T.match_buffer(indptr, (n1,), "int64", align=8)
        V = T.match_buffer(v, (k,), dtype, align=align)
        ZP = T.match_buffer(z_indptr, (r1,), "int64", align=8)
        ZI = T.match_buffer(z_indices, (nz,), "int64", align=8)
        ZD = T.match_buffer(z_data, (nz,), dtype, align=align)
        Q = T.match_buffer(out_indptr, (n1,), "int64", align=8)
        OI = T.match_buffer(out_indices, (m,), "int64", align=8)
        OD = T.match_buffer(out_data, (m,), dtype, align=align)
        for i in T.serial(n1 - 1):
            with T.sblock("rows"):
                vi = T.axis.spatial(n1 - 1, i)
                T.reads(D[P[vi] : P[vi + 1]], I[P[vi] : P[vi + 1]], P[vi : vi + 2], V[0:k],
                        ZP[0:r1], ZI[0:nz], ZD[0:nz], Q[vi : vi + 2])
                T.writes(OI[Q[vi] : Q[vi + 1]], OD[Q[vi] : Q[vi + 1]])
                p = T.alloc_buffer((3,), "int64", scope="local")  # position in a, in z, in out
                p[0] = P[vi]
                p[1] = ZP[T.min(vi * zstep, r1 - 2)]
                p[2] = Q[vi]
                while p[0] < P[vi + 1] and p[1] < ZP[T.min(vi * zstep, r1 - 2) + 1]:
                    if I[p[0]] == ZI[p[1]]:
                        p[1] = p[1] + T.int64(1)  # stored: the value computes from the entry
                        from_a(p, I, D, V, k, rstep, cstep, vi, OI, OD)
                    elif I[p[0]] < ZI[p[1]]:
                        from_a(p, I, D, V, k, rstep, cstep, vi, OI, OD)
                    else:
                        from_z(p, ZI, ZD, OI, OD)
                while p[0] < P[vi + 1]:
                    from_a(p, I, D, V, k, rstep, cstep, vi, OI, OD)
                while p[1] < ZP[T.min(vi * zstep, r1 - 2) + 1]:
                    from_z(p, ZI, ZD, OI, OD)

    return func


def broadcast_csr(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``<op>_by_row`` / ``<op>_by_col`` for op in mul, div ``(data, indices, indptr, v, step,
    out)``: stored values (op) the vector element of their row / column.

    When ``0 (op) v`` is nan somewhere (``0 * inf``, ``0 / 0``: the dense operand turns absent
    zeros into nan), the result also stores those positions: ``by_row_nan_count`` /
    ``<op>_by_row_nan`` for a column vector or a single value (a row whose zero image ``z`` is
    nan stores every column), ``by_col_nan_count`` / ``<op>_by_col_nan`` for a row vector
    (``rstep`` 0) or a matrix of the csr's shape (``rstep`` its column count), given the nan
    positions of the zero image as a csr ``z`` of one row (``zstep`` 0) or one per row (entries
    of ``z`` that are not nan are skipped)."""
    funcs = {f"{fn}_by_{axis}": _scale(fn, axis == "row", dtype)
             for fn in _FUNCTIONS for axis in ("row", "col")}
    funcs["by_row_nan_count"] = _by_row_count(dtype)
    funcs["by_col_nan_count"] = _by_col_count(dtype)
    for fn in _FUNCTIONS:
        funcs[f"{fn}_by_row_nan"] = _by_row_fill(fn, dtype)
        funcs[f"{fn}_by_col_nan"] = _by_col_fill(fn, dtype)
    return funcs
