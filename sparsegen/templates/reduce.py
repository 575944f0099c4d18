"""reduce: reductions of a C-contiguous array viewed as ``(pre, n, post)`` along its middle axis,
and of csr matrices along a row or a column.

Every reduction accumulates in ``formats.ACCUMULATOR[dtype]`` (float16 in float32, float32 in
float64, integers in int64) and rounds once, into the element dtype, at the end (``finish``:
``acc / div``, or its square root when ``root`` is set; integers truncate as C does).

- ``<op>_last`` (``post == 1``): each output row in a ``rows`` block reads its ``n`` contiguous
  values into ``PARTIALS`` interleaved accumulators, then folds them.

Accumulators live in scratch buffers the caller passes (``acc``, a row per output row), not in
local buffers: on the CPU a local buffer in a ``rows`` block costs a workspace allocation per
row (~70 ns, measured), more than reducing a short row.
- ``<op>_mid`` (``post > 1``): a ``rows`` block per (``pre`` row, block of ``COLUMN_BLOCK``
  columns) steps through ``n`` outer and its columns inner, so reads run along memory; its
  accumulators are a row of the ``acc`` scratch buffer.
- ``arg{max,min}_{last,mid}``: the position of the first largest (smallest) value, nan counting as
  both, written in the element dtype as MXNet does (nothing is written when ``n == 0``).
- ``csr_rows_<op>`` / ``csr_cols_<op>`` + ``fold``: per csr row; per column, as one partial row
  per chunk of csr rows (``part``, a ``rows`` block each) that ``fold`` sums and finishes.
- ``rsp_rows_<op>``: per row of a row_sparse matrix, as a dense vector (0 at rows not stored),
  each element written once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import tvm
from tvm import tirx
from tvm.script import tirx as T

from ..formats import ACCUMULATOR
from . import element_bytes
from .columns import cols

Expr = tvm.ir.Expr

COLUMN_BLOCK = 256
"""Columns of a ``_mid`` reduction's ``rows`` block (its accumulators stay in cache)."""

PARTIALS = 8
"""Interleaved accumulators of a ``_last`` reduction (independent chains LLVM can vectorize)."""


class Reducer(NamedTuple):
    """One reduction: its identity, one step ``step(acc, x)`` and the merge of two partials."""

    identity: Expr
    step: Callable[[Expr, Expr], Expr]
    merge: Callable[[Expr, Expr], Expr]


def _is_float(dtype: str) -> bool:
    return dtype.startswith("float")


def reducers(acc_t: str) -> dict[str, Reducer]:
    """The value reductions accumulating in ``acc_t`` (mean is ``sum`` with ``div``, norm ord 2
    ``sumsq`` with ``root``); max and min propagate nan and keep the first of equal values."""
    zero, one = tirx.const(0, acc_t), tirx.const(1, acc_t)
    floating = _is_float(acc_t)

    def nan(x: Expr) -> Expr:
        return tirx.isnan(x) if floating else tirx.const(False, "bool")

    def add(a: Expr, b: Expr) -> Expr:
        return a + b

    def mul(a: Expr, b: Expr) -> Expr:
        return a * b

    def larger(a: Expr, b: Expr) -> Expr:
        return T.Select((b > a) | nan(b), b, a)

    def smaller(a: Expr, b: Expr) -> Expr:
        return T.Select((b < a) | nan(b), b, a)

    lowest = tirx.const(float("-inf"), acc_t) if floating else tirx.min_value(acc_t)
    highest = tirx.const(float("inf"), acc_t) if floating else tirx.max_value(acc_t)
    return {
        "sum": Reducer(zero, add, add),
        "nansum": Reducer(zero, lambda acc, x: T.Select(nan(x), acc, acc + x), add),
        "prod": Reducer(one, mul, mul),
        "nanprod": Reducer(one, lambda acc, x: T.Select(nan(x), acc, acc * x), mul),
        "sumsq": Reducer(zero, lambda acc, x: acc + x * x, add),
        "abssum": Reducer(zero, lambda acc, x: acc + T.Select(x < zero, zero - x, x), add),
        "max": Reducer(lowest, larger, larger),
        "min": Reducer(highest, smaller, smaller),
    }


REDUCERS = tuple(reducers("float64"))
"""The names of the value reductions."""

CSR_REDUCERS = ("sum", "sumsq")
"""Reductions of csr rows and columns (implicit zeros change neither)."""


def _finish(dtype: str, acc: Expr, div: Expr, root: Expr) -> Expr:
    """``acc / div`` (or its square root when ``root != 0``) rounded into ``dtype``."""
    acc_t = ACCUMULATOR[dtype]
    if _is_float(acc_t):
        mean = acc / T.Cast(acc_t, div)
        return T.Cast(dtype, T.Select(root != T.int64(0), T.sqrt(mean), mean))
    quotient = tirx.truncdiv(acc, T.Select(div == T.int64(0), T.int64(1), div))
    rooted = T.Cast("int64", T.floor(T.sqrt(T.Cast("float64", acc))))
    return T.Cast(dtype, T.Select(root != T.int64(0), rooted, quotient))


def _first_wins(acc_t: str, larger: bool, best: Expr, x: Expr) -> Expr:
    """Whether ``x`` replaces ``best`` in an argmax (argmin): strictly beyond it, or the first
    nan."""
    beyond = x > best if larger else x < best
    if not _is_float(acc_t):
        return beyond
    return beyond | (tirx.isnan(x) & tirx.bitwise_not(tirx.isnan(best)))


def _row_reduction(dtype: str, reducer: Reducer) -> Callable[..., None]:
    """A macro ``(x, acc, i, n)``: ``acc[i, 0]`` = the reduction of ``x[i, 0:n]`` through the
    ``PARTIALS`` interleaved accumulators of row ``i`` of ``acc``."""
    acc_t = ACCUMULATOR[dtype]
    init = reducer.identity

    @T.macro
    def reduce_row(x, acc, i, n):
        for lane in T.serial(PARTIALS):
            acc[i, lane] = init
        for k in T.serial(n // PARTIALS):
            for lane in T.serial(PARTIALS):
                acc[i, lane] = reducer.step(acc[i, lane], T.Cast(acc_t, x[i, k * PARTIALS + lane]))
        for t in T.serial(n % PARTIALS):
            acc[i, 0] = reducer.step(acc[i, 0], T.Cast(acc_t, x[i, n - n % PARTIALS + t]))
        for lane in T.serial(PARTIALS - 1):
            acc[i, 0] = reducer.merge(acc[i, 0], acc[i, lane + 1])

    return reduce_row


def _value_last(dtype: str, reducer: Reducer) -> tvm.tirx.PrimFunc:
    """``(x, acc, out, div, root)``: ``out[i] = finish(reduce(x[i, :]))``, row ``i`` of ``acc``
    holding its partial accumulators."""
    acc_t = ACCUMULATOR[dtype]
    align = element_bytes(dtype)
    reduce_row = _row_reduction(dtype, reducer)

    @T.prim_func(s_tir=True)
    def func(x: T.handle, acc: T.handle, out: T.handle, div: T.int64, root: T.int64):
        T.func_attr({"tirx.noalias": True})
        m = T.int64()
        n = T.int64()
        X = T.match_buffer(x, (m, n), dtype, align=align)
        Acc = T.match_buffer(acc, (m, PARTIALS), acc_t, align=element_bytes(acc_t))
        Out = T.match_buffer(out, (m,), dtype, align=align)
        for i in T.serial(m):
            with T.sblock("rows"):
                vi = T.axis.spatial(m, i)
                T.reads(X[vi, 0:n], Acc[vi, 0:PARTIALS])
                T.writes(Acc[vi, 0:PARTIALS], Out[vi])
                reduce_row(X, Acc, vi, n)
                Out[vi] = _finish(dtype, Acc[vi, 0], div, root)

    return func


@T.macro
def _column_blocks(pre, n, post, x, acc, out, block, *args):
    """``block(x, acc, out, n, p, j0, width, *args)`` in a ``rows`` block per (``pre`` row ``p``,
    block of ``COLUMN_BLOCK`` columns from ``j0``, ``width`` of them) of a ``_mid`` reduction."""
    for r in T.serial(pre * ((post + COLUMN_BLOCK - 1) // COLUMN_BLOCK)):
        with T.sblock("rows"):
            vr = T.axis.spatial(pre * ((post + COLUMN_BLOCK - 1) // COLUMN_BLOCK), r)
            T.reads(x[0:pre, 0:n, 0:post], acc[0:pre, 0:post])
            T.writes(acc[0:pre, 0:post], out[0:pre, 0:post])
            blocks = (post + COLUMN_BLOCK - 1) // COLUMN_BLOCK
            p = vr // blocks
            j0 = vr % blocks * COLUMN_BLOCK
            block(x, acc, out, n, p, j0, T.min(post - j0, COLUMN_BLOCK), *args)


def _value_mid(dtype: str, reducer: Reducer) -> tvm.tirx.PrimFunc:
    """``(x, acc, out, div, root)``: ``out[p, j] = finish(reduce(x[p, :, j]))``."""
    acc_t = ACCUMULATOR[dtype]
    align = element_bytes(dtype)
    init = reducer.identity

    @T.macro
    def start(acc, p, j0, j):
        acc[p, j0 + j] = init

    @T.macro
    def step(acc, x, p, k, j0, j):
        acc[p, j0 + j] = reducer.step(acc[p, j0 + j], T.Cast(acc_t, x[p, k, j0 + j]))

    @T.macro
    def finish(out, acc, p, j0, div, root, j):
        out[p, j0 + j] = _finish(dtype, acc[p, j0 + j], div, root)

    @T.macro
    def block(x, acc, out, n, p, j0, width, div, root):
        cols.each(width, start, acc, p, j0)
        for k in T.serial(n):
            cols.each(width, step, acc, x, p, k, j0)
        cols.each(width, finish, out, acc, p, j0, div, root)

    @T.prim_func(s_tir=True)
    def func(x: T.handle, acc: T.handle, out: T.handle, div: T.int64, root: T.int64):
        T.func_attr({"tirx.noalias": True})
        pre = T.int64()
        n = T.int64()
        post = T.int64()
        X = T.match_buffer(x, (pre, n, post), dtype, align=align)
        Acc = T.match_buffer(acc, (pre, post), acc_t, align=element_bytes(acc_t))
        Out = T.match_buffer(out, (pre, post), dtype, align=align)
        _column_blocks(pre, n, post, X, Acc, Out, block, div, root)

    return func


def _arg_last(dtype: str, larger: bool) -> tvm.tirx.PrimFunc:
    """``(x, acc, out)``: ``out[i]`` = the position of the first extreme of ``x[i, :]`` (``acc[i]``
    holds the extreme so far)."""
    acc_t = ACCUMULATOR[dtype]
    align = element_bytes(dtype)

    @T.prim_func(s_tir=True)
    def func(x: T.handle, acc: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        m = T.int64()
        n = T.int64()
        X = T.match_buffer(x, (m, n), dtype, align=align)
        Best = T.match_buffer(acc, (m,), acc_t, align=element_bytes(acc_t))
        Out = T.match_buffer(out, (m,), dtype, align=align)
        for i in T.serial(m):
            with T.sblock("rows"):
                vi = T.axis.spatial(m, i)
                T.reads(X[vi, 0:n], Best[vi])
                T.writes(Best[vi], Out[vi])
                Out[vi] = T.Cast(dtype, 0)
                if n > T.int64(0):
                    Best[vi] = T.Cast(acc_t, X[vi, 0])
                    for k in T.serial(n - 1):
                        if _first_wins(acc_t, larger, Best[vi], T.Cast(acc_t, X[vi, k + 1])):
                            Best[vi] = T.Cast(acc_t, X[vi, k + 1])
                            Out[vi] = T.Cast(dtype, k + 1)

    return func


def _arg_mid(dtype: str, larger: bool) -> tvm.tirx.PrimFunc:
    """``(x, acc, out)``: ``out[p, j]`` = the position of the first extreme of ``x[p, :, j]``."""
    acc_t = ACCUMULATOR[dtype]
    align = element_bytes(dtype)

    @T.macro
    def start(best, out, x, p, j0, j):
        best[p, j0 + j] = T.Cast(acc_t, x[p, 0, j0 + j])
        out[p, j0 + j] = T.Cast(dtype, 0)

    @T.macro
    def step(best, out, x, p, k, j0, j):
        if _first_wins(acc_t, larger, best[p, j0 + j], T.Cast(acc_t, x[p, k, j0 + j])):
            best[p, j0 + j] = T.Cast(acc_t, x[p, k, j0 + j])
            out[p, j0 + j] = T.Cast(dtype, k)

    @T.macro
    def block(x, best, out, n, p, j0, width):
        if n > T.int64(0):
            cols.each(width, start, best, out, x, p, j0)
            for k in T.serial(n - 1):
                cols.each(width, step, best, out, x, p, k + 1, j0)

    @T.prim_func(s_tir=True)
    def func(x: T.handle, acc: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        pre = T.int64()
        n = T.int64()
        post = T.int64()
        X = T.match_buffer(x, (pre, n, post), dtype, align=align)
        Best = T.match_buffer(acc, (pre, post), acc_t, align=element_bytes(acc_t))
        Out = T.match_buffer(out, (pre, post), dtype, align=align)
        _column_blocks(pre, n, post, X, Best, Out, block)

    return func


def _csr_rows(dtype: str, reducer: Reducer) -> tvm.tirx.PrimFunc:
    """``(data, indptr, acc, out, div, root)``: ``out[i] = finish(reduce(row i's stored
    values))``, accumulated in ``acc[i]``."""
    acc_t = ACCUMULATOR[dtype]
    align = element_bytes(dtype)
    init = reducer.identity

    @T.prim_func(s_tir=True)
    def func(data: T.handle, indptr: T.handle, acc: T.handle, out: T.handle, div: T.int64,
             root: T.int64):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        nnz = T.int64()
        Data = T.match_buffer(data, (nnz,), dtype, align=align)
        P = T.match_buffer(indptr, (n + 1,), "int64", align=8)
        Acc = T.match_buffer(acc, (n,), acc_t, align=element_bytes(acc_t))
        Out = T.match_buffer(out, (n,), dtype, align=align)
        for i in T.serial(n):
            with T.sblock("rows"):
                vi = T.axis.spatial(n, i)
                T.reads(Data[P[vi] : P[vi + 1]], P[vi : vi + 2], Acc[vi])
                T.writes(Acc[vi], Out[vi])
                Acc[vi] = init
                for p in T.serial(P[vi + 1] - P[vi]):
                    Acc[vi] = reducer.step(Acc[vi], T.Cast(acc_t, Data[P[vi] + p]))
                Out[vi] = _finish(dtype, Acc[vi], div, root)

    return func


def _csr_cols(dtype: str, reducer: Reducer) -> tvm.tirx.PrimFunc:
    """``(data, indices, indptr, part, rows)``: ``part[c, j]`` = the reduction of column ``j`` over
    csr rows ``[c * rows, (c + 1) * rows)`` (one ``rows_task`` block, a parallel task on the CPU,
    per chunk ``c``)."""
    acc_t = ACCUMULATOR[dtype]
    align = element_bytes(dtype)
    init = reducer.identity

    @T.macro
    def start(part, c, j):
        part[c, j] = init

    @T.macro
    def put(part, c, j, value):
        part[c, j] = reducer.step(part[c, j], T.Cast(acc_t, value))

    @T.prim_func(s_tir=True)
    def func(data: T.handle, indices: T.handle, indptr: T.handle, part: T.handle,
             rows: T.int64):
        T.func_attr({"tirx.noalias": True})
        ends = T.int64()  # n + 1 (n appears in no other shape)
        m = T.int64()
        c = T.int64()
        nnz = T.int64()
        Data = T.match_buffer(data, (nnz,), dtype, align=align)
        Idx = T.match_buffer(indices, (nnz,), "int64", align=8)
        P = T.match_buffer(indptr, (ends,), "int64", align=8)
        Part = T.match_buffer(part, (c, m), acc_t, align=element_bytes(acc_t))
        for q in T.serial(c):
            with T.sblock("rows_task"):
                vq = T.axis.spatial(c, q)
                T.reads(Data[0:nnz], Idx[0:nnz], P[0:ends])
                T.writes(Part[vq, 0:m])
                first = P[T.min(ends - 1, vq * T.max(rows, T.int64(0)))]
                cols.each(m, start, Part, vq)
                for p in T.serial(P[T.min(ends - 1, (vq + 1) * T.max(rows, T.int64(0)))] - first):
                    cols.owned(Idx[first + p], put, Part, vq, Idx[first + p], Data[first + p])

    return func


def _fold(dtype: str) -> tvm.tirx.PrimFunc:
    """``(part, out, div, root)``: ``out[j] = finish(sum over c of part[c, j])`` (sums into
    ``part[0]``; ``c >= 1``, else nothing is written)."""
    acc_t = ACCUMULATOR[dtype]
    align = element_bytes(dtype)

    @T.macro
    def add(part, c, j0, j):
        part[0, j0 + j] = part[0, j0 + j] + part[c, j0 + j]

    @T.macro
    def finish(out, part, j0, div, root, j):
        out[j0 + j] = _finish(dtype, part[0, j0 + j], div, root)

    @T.prim_func(s_tir=True)
    def func(part: T.handle, out: T.handle, div: T.int64, root: T.int64):
        T.func_attr({"tirx.noalias": True})
        c = T.int64()
        m = T.int64()
        Part = T.match_buffer(part, (c, m), acc_t, align=element_bytes(acc_t))
        Out = T.match_buffer(out, (m,), dtype, align=align)
        for b in T.serial((m + COLUMN_BLOCK - 1) // COLUMN_BLOCK):
            with T.sblock("rows"):
                vb = T.axis.spatial((m + COLUMN_BLOCK - 1) // COLUMN_BLOCK, b)
                T.reads(Part[0:c, 0:m])
                T.writes(Part[0, 0:m], Out[0:m])
                width = T.min(m - vb * COLUMN_BLOCK, COLUMN_BLOCK)
                if c > T.int64(0):
                    for q in T.serial(c - 1):
                        cols.each(width, add, Part, q + 1, vb * COLUMN_BLOCK)
                    cols.each(width, finish, Out, Part, vb * COLUMN_BLOCK, div, root)

    return func


def _row_counts(dtype: str) -> tvm.tirx.PrimFunc:
    """``(data, indptr, out)``: ``out[i]`` = the stored entries of csr row ``i`` (``data`` only
    sizes the row pointer, which the checked API then verifies)."""

    @T.prim_func(s_tir=True)
    def func(data: T.handle, indptr: T.handle, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        n = T.int64()
        nnz = T.int64()
        T.match_buffer(data, (nnz,), dtype, align=element_bytes(dtype))
        P = T.match_buffer(indptr, (n + 1,), "int64", align=8)
        Out = T.match_buffer(out, (n,), "int64", align=8)
        for i in T.serial(n):
            with T.sblock("rows"):
                vi = T.axis.spatial(n, i)
                Out[vi] = P[vi + 1] - P[vi]

    return func


def _rsp_rows(dtype: str, reducer: Reducer) -> tvm.tirx.PrimFunc:
    """``(data, indices, acc, out, div, root)``: ``out`` (dense, ``n``) holds ``finish(reduce(
    data[s, :]))`` at stored row ``indices[s]`` (sorted, unique), else 0. Block ``g`` of ``k + 1``
    zeroes the gap before stored row ``g`` (after the last one for ``g == k``) and writes row
    ``g``'s: every element of ``out`` is written once, in one pass."""
    acc_t = ACCUMULATOR[dtype]
    align = element_bytes(dtype)
    zero = tvm.tirx.const(0, dtype)
    reduce_row = _row_reduction(dtype, reducer)

    @T.macro
    def clear(out, start, j):
        out[start + j] = zero

    @T.macro
    def put(data, indices, acc, out, g, m, div, root):
        reduce_row(data, acc, g, m)
        out[indices[g]] = _finish(dtype, acc[g, 0], div, root)

    @T.prim_func(s_tir=True)
    def func(data: T.handle, indices: T.handle, acc: T.handle, out: T.handle, div: T.int64,
             root: T.int64):
        T.func_attr({"tirx.noalias": True})
        k = T.int64()
        m = T.int64()
        n = T.int64()
        Data = T.match_buffer(data, (k, m), dtype, align=align)
        Idx = T.match_buffer(indices, (k,), "int64", align=8)
        Acc = T.match_buffer(acc, (k, PARTIALS), acc_t, align=element_bytes(acc_t))
        Out = T.match_buffer(out, (n,), dtype, align=align)
        for g in T.serial(k + 1):
            with T.sblock("rows"):
                vg = T.axis.spatial(k + 1, g)
                T.reads(Data[0:k, 0:m], Idx[0:k], Acc[0:k, 0:PARTIALS])
                T.writes(Acc[0:k, 0:PARTIALS], Out[0:n])
                start = T.if_then_else(vg > T.int64(0), Idx[vg - 1] + 1, T.int64(0))
                end = T.if_then_else(vg < k, Idx[vg], n)
                cols.each(T.max(end - start, T.int64(0)), clear, Out, start)
                if vg < k:  # one GPU thread of the row's: it writes Acc[vg] and Out[Idx[vg]]
                    cols.owned(Idx[vg], put, Data, Idx, Acc, Out, vg, m, div, root)

    return func


def reduce(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """Every reduction function for element dtype ``dtype`` (see the module docstring)."""
    funcs: dict[str, tvm.tirx.PrimFunc] = {}
    for name, reducer in reducers(ACCUMULATOR[dtype]).items():
        funcs[f"{name}_last"] = _value_last(dtype, reducer)
        funcs[f"{name}_mid"] = _value_mid(dtype, reducer)
    for name, larger in (("argmax", True), ("argmin", False)):
        funcs[f"{name}_last"] = _arg_last(dtype, larger)
        funcs[f"{name}_mid"] = _arg_mid(dtype, larger)
    for name in CSR_REDUCERS:
        funcs[f"csr_rows_{name}"] = _csr_rows(dtype, reducers(ACCUMULATOR[dtype])[name])
        funcs[f"csr_cols_{name}"] = _csr_cols(dtype, reducers(ACCUMULATOR[dtype])[name])
        funcs[f"rsp_rows_{name}"] = _rsp_rows(dtype, reducers(ACCUMULATOR[dtype])[name])
    funcs["fold"] = _fold(dtype)
    funcs["csr_row_counts"] = _row_counts(dtype)
    return funcs
