"""Creation fills, block placement, padding and csr slicing: the ``shape`` kernel.

- ``arange``: ``out[i] = start + (i // repeat) * step`` in the element dtype (MXNet's arange casts
  start and step to the dtype first); ``linspace``: ``out[i] = start + max(i * step, low)`` in
  float64, rounded once to the dtype (the caller passes ``low = -inf``: a bound no target fuses
  into a multiply-add);
- ``eye``: ones on diagonal ``k`` of an ``(n, m)`` matrix;
- ``put``: ``out[i, at + j] = x[i, j]`` (a block of columns: concat and stack place each input);
  ``put_index`` the same for int64 with ``shift`` added (concatenated csr row pointers);
- ``pad``: a ``(r, d, h, w)`` array padded on its last three dimensions (mode 0 constant, 1 edge,
  2 reflect); sources are clamped into range before every load, so no read leaves ``x``;
- ``slice_count`` / ``slice_fill``: the entries of csr rows ``row0 ..`` with columns in
  ``[col0, col1)``, renumbered from ``col0`` (row pointers by the blocked scan, then the entries).
"""

from __future__ import annotations

import tvm
from tvm.script import tirx as T

from . import element_bytes
from .columns import cols
from .elemwise.arith import binary
from .flat import each_element, scalar_type
from .scan import offsets

_CONSTANT, _REFLECT = 0, 2


def _product(dtype: str, i: tvm.ir.Expr, step: tvm.ir.Expr) -> tvm.ir.Expr:
    """``i * step`` (``i`` an int64 count, ``step`` in ``dtype``) rounded to ``dtype`` before
    anything adds to it. The targets fuse a float32 ``start + i * step`` into one multiply-add,
    which rounds once where MXNet rounds twice; a float64 product of the count and the step is
    exact (for counts below 2**24, where float32 holds the count exactly) and rounds once to
    float32, and no pass can turn it back into a float32 multiply."""
    if dtype != "float32":
        return binary("mul", dtype, T.Cast(dtype, i), step)
    return T.Cast(dtype, T.Cast("float64", i) * T.Cast("float64", step))


def _fills(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``arange``, ``linspace`` and ``eye``."""
    align = element_bytes(dtype)
    scalar_t = scalar_type(dtype)
    one, zero = tvm.tirx.const(1, dtype), tvm.tirx.const(0, dtype)

    @T.macro
    def step_of(out, start, step, repeat, base, j):
        if repeat == 1:  # no division per element: the loop vectorizes (an index's arange)
            out[base + j] = binary("add", dtype, T.Cast(dtype, start), _product(
                dtype, base + j, T.Cast(dtype, step)))
        else:
            out[base + j] = binary("add", dtype, T.Cast(dtype, start), _product(
                dtype, (base + j) // repeat, T.Cast(dtype, step)))

    # ``low`` (-inf from the host) bounds the product from below: the sum then adds a max,
    # which no target fuses with the product into one multiply-add (MXNet rounds twice)
    @T.macro
    def point_of(out, start, step, low, base, j):
        out[base + j] = T.Cast(dtype, start + T.max(T.Cast("float64", base + j) * step, low))

    @T.macro
    def diagonal(out, i, k, j):
        out[i, j] = T.Select(j - i == k, one, zero)

    @T.prim_func(s_tir=True)
    def arange(out: T.handle, start: scalar_t, step: scalar_t, repeat: T.int64):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        Out = T.match_buffer(out, (n,), dtype, align=align)
        each_element(n, step_of, Out, start, step, repeat)

    @T.prim_func(s_tir=True)
    def linspace(out: T.handle, start: T.float64, step: T.float64, low: T.float64):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        Out = T.match_buffer(out, (n,), dtype, align=align)
        each_element(n, point_of, Out, start, step, low)

    @T.prim_func(s_tir=True)
    def eye(out: T.handle, k: T.int64):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        m = T.int64()
        Out = T.match_buffer(out, (n, m), dtype, align=align)
        for i in T.serial(n):
            with T.sblock("rows"):
                vi = T.axis.spatial(n, i)
                T.writes(Out[vi, 0:m])
                cols.each(m, diagonal, Out, vi, k)

    return {"arange": arange, "linspace": linspace, "eye": eye}


def _placements(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``put`` and ``put_index``."""
    align = element_bytes(dtype)

    @T.macro
    def place(out, i, x, at, j):
        out[i, at + j] = x[i, j]

    @T.macro
    def place_shifted(out, i, x, at, shift, j):
        out[i, at + j] = x[i, j] + shift

    @T.prim_func(s_tir=True)
    def put(x: T.handle, out: T.handle, at: T.int64):
        T.func_attr({"tirx.noalias": True})
        r = T.int64()
        c = T.int64()
        m = T.int64()
        X = T.match_buffer(x, (r, c), dtype, align=align)
        Out = T.match_buffer(out, (r, m), dtype, align=align)
        for i in T.serial(r):
            with T.sblock("rows"):
                vi = T.axis.spatial(r, i)
                T.reads(X[vi, 0:c])
                T.writes(Out[vi, at : at + c])
                cols.each(c, place, Out, vi, X, at)

    @T.prim_func(s_tir=True)
    def put_index(x: T.handle, out: T.handle, at: T.int64, shift: T.int64):
        T.func_attr({"tirx.noalias": True})
        r = T.int64()
        c = T.int64()
        m = T.int64()
        X = T.match_buffer(x, (r, c), "int64", align=8)
        Out = T.match_buffer(out, (r, m), "int64", align=8)
        for i in T.serial(r):
            with T.sblock("rows"):
                vi = T.axis.spatial(r, i)
                T.reads(X[vi, 0:c])
                T.writes(Out[vi, at : at + c])
                cols.each(c, place_shifted, Out, vi, X, at, shift)

    return {"put": put, "put_index": put_index}


def _source(i, before, size, mode):
    """The source index of padded position ``i`` on a dimension of ``size`` padded by ``before``,
    clamped into ``[0, size)`` (edge; reflect mirrors without repeating the edge first)."""
    k = i - before
    mirrored = T.Select(k < 0, -k, T.Select(k >= size, 2 * (size - 1) - k, k))
    picked = T.Select(mode == _REFLECT, mirrored, k)
    return T.max(T.min(picked, size - 1), T.int64(0))


def _inside(i, before, size):
    return tvm.tirx.all(i >= before, i < before + size)


def _pad(dtype: str) -> tvm.tirx.PrimFunc:
    """``pad``."""
    align = element_bytes(dtype)
    scalar_t = scalar_type(dtype)

    @T.macro
    def padded(out, q, a, b, x, src, left, w, mode, value, j):
        out[q, a, b, j] = T.Select(
            tvm.tirx.all(src[3] == 1, tvm.tirx.any(mode != _CONSTANT, _inside(j, left, w))),
            x[src[0], src[1], src[2], _source(j, left, w, mode)], T.Cast(dtype, value))

    @T.prim_func(s_tir=True)
    def pad(x: T.handle, out: T.handle, front: T.int64, top: T.int64, left: T.int64,
            mode: T.int64, value: scalar_t):
        T.func_attr({"tirx.noalias": True})
        r = T.int64()
        d = T.int64()
        h = T.int64()
        w = T.int64()
        d2 = T.int64()
        h2 = T.int64()
        w2 = T.int64()
        X = T.match_buffer(x, (r, d, h, w), dtype, align=align)
        Out = T.match_buffer(out, (r, d2, h2, w2), dtype, align=align)
        for i in T.serial(r * d2 * h2):
            with T.sblock("rows"):
                vi = T.axis.spatial(r * d2 * h2, i)
                T.reads(X[0:r, 0:d, 0:h, 0:w])
                T.writes(Out[vi // (d2 * h2), vi // h2 % d2, vi % h2, 0:w2])
                # src: the source (plane, depth, row) and whether the row is inside (1) or padding
                src = T.alloc_buffer((4,), "int64", scope="local")
                src[0] = vi // (d2 * h2)
                src[1] = _source(vi // h2 % d2, front, d, mode)
                src[2] = _source(vi % h2, top, h, mode)
                src[3] = T.Select(tvm.tirx.any(mode != _CONSTANT, tvm.tirx.all(
                    _inside(vi // h2 % d2, front, d), _inside(vi % h2, top, h))),
                    T.int64(1), T.int64(0))
                cols.each(w2, padded, Out, vi // (d2 * h2), vi // h2 % d2, vi % h2, X, src,
                          left, w, mode, value)

    return pad


def _csr_slices(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``slice_count`` and ``slice_fill``."""
    align = element_bytes(dtype)

    @T.prim_func(s_tir=True)
    def slice_count(indices: T.handle, indptr: T.handle, row0: T.int64, col0: T.int64,
                    col1: T.int64, out_indptr: T.handle):
        T.func_attr({"tirx.noalias": True})
        nnz = T.int64()
        n1 = T.int64()  # rows + 1 of the input
        m1 = T.int64()  # rows + 1 of the slice
        Idx = T.match_buffer(indices, (nnz,), "int64", align=8)
        P = T.match_buffer(indptr, (n1,), "int64", align=8)
        Q = T.match_buffer(out_indptr, (m1,), "int64", align=8)
        for i in T.serial(m1 - 1):
            with T.sblock("rows"):
                vi = T.axis.spatial(m1 - 1, i)
                T.reads(Idx[0:nnz], P[row0 + vi : row0 + vi + 2])
                T.writes(Q[vi + 1])
                acc = T.alloc_buffer((1,), "int64", scope="local")
                acc[0] = T.int64(0)
                for p in T.serial(P[row0 + vi + 1] - P[row0 + vi]):
                    if Idx[P[row0 + vi] + p] >= col0 and Idx[P[row0 + vi] + p] < col1:
                        acc[0] = acc[0] + T.int64(1)
                Q[vi + 1] = acc[0]
        offsets(Q, m1 - 1)

    @T.prim_func(s_tir=True)
    def slice_fill(data: T.handle, indices: T.handle, indptr: T.handle, row0: T.int64,
                   col0: T.int64, col1: T.int64, out_indptr: T.handle, out_data: T.handle,
                   out_indices: T.handle):
        T.func_attr({"tirx.noalias": True})
        nnz = T.int64()
        n1 = T.int64()
        m1 = T.int64()
        k = T.int64()
        Data = T.match_buffer(data, (nnz,), dtype, align=align)
        Idx = T.match_buffer(indices, (nnz,), "int64", align=8)
        P = T.match_buffer(indptr, (n1,), "int64", align=8)
        Q = T.match_buffer(out_indptr, (m1,), "int64", align=8)
        OutData = T.match_buffer(out_data, (k,), dtype, align=align)
        OutIdx = T.match_buffer(out_indices, (k,), "int64", align=8)
        for i in T.serial(m1 - 1):
            with T.sblock("rows"):
                vi = T.axis.spatial(m1 - 1, i)
                T.reads(Data[0:nnz], Idx[0:nnz], P[row0 + vi : row0 + vi + 2], Q[vi])
                T.writes(OutData[Q[vi] : Q[vi + 1]], OutIdx[Q[vi] : Q[vi + 1]])
                c = T.alloc_buffer((1,), "int64", scope="local")
                c[0] = Q[vi]
                for p in T.serial(P[row0 + vi + 1] - P[row0 + vi]):
                    if Idx[P[row0 + vi] + p] >= col0 and Idx[P[row0 + vi] + p] < col1:
                        OutData[c[0]] = Data[P[row0 + vi] + p]
                        OutIdx[c[0]] = Idx[P[row0 + vi] + p] - col0
                        c[0] = c[0] + T.int64(1)

    return {"slice_count": slice_count, "slice_fill": slice_fill}


def shape(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """Every function of kernel ``shape`` in ``dtype`` (module docstring)."""
    return {**_fills(dtype), **_placements(dtype), "pad": _pad(dtype), **_csr_slices(dtype)}
