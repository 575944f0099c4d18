"""Reductions of dense, csr and row_sparse storage on the generated ``reduce`` kernel.

A dense reduction over sorted, unique ``axes`` runs one kernel pass per run of adjacent reduced
axes (right to left), each over the ``(pre, n, post)`` view of the array that run spans (shapes
only: no copy); mean divides and norm takes the root in the last pass only.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from ..config import num_threads
from ..device import colocate, contiguous, empty_like, target_of
from ..formats import ACCUMULATOR, CSR, INDEX_DTYPE, RowSparse
from .layout import dtype_name, kernel
from .rule import Rules, StorageRule

PARTIALS = 8
"""Partial accumulators per row of a ``_last`` pass (templates/reduce.py ``PARTIALS``; the
registry's signature names the same width)."""

CHUNK_ENTRIES = 32768
"""Fewest csr entries per chunk of a column reduction (``csr_cols_*``): one thread's task."""


class Plan(NamedTuple):
    """How an op reduces: its first pass, the pass that combines partial results, whether the
    last pass divides by the count (mean) and takes the square root (norm ord 2)."""

    first: str
    later: str
    mean: bool = False
    root: bool = False


PLANS = {
    "sum": Plan("sum", "sum"),
    "mean": Plan("sum", "sum", mean=True),
    "prod": Plan("prod", "prod"),
    "nansum": Plan("nansum", "sum"),
    "nanprod": Plan("nanprod", "prod"),
    "max": Plan("max", "max"),
    "min": Plan("min", "min"),
    "norm1": Plan("abssum", "sum"),
    "norm2": Plan("sumsq", "sum", root=True),
    "argmax": Plan("argmax", "argmax"),
    "argmin": Plan("argmin", "argmin"),
}
"""The reductions by front-end name (norm as ``norm<ord>``); arg* reduce one axis only."""


def _runs(axes: tuple[int, ...]) -> list[tuple[int, int]]:
    """The runs ``(first, last)`` of adjacent axes in sorted ``axes``, last run first."""
    runs: list[tuple[int, int]] = []
    for axis in axes:
        if runs and runs[-1][1] == axis - 1:
            runs[-1] = (runs[-1][0], axis)
        else:
            runs.append((axis, axis))
    return runs[::-1]


def reduced_shape(shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> tuple[int, ...]:
    """The result shape of reducing ``axes`` of ``shape`` (MXNet's ``(1,)`` for a scalar)."""
    if keepdims:
        return tuple(1 if a in axes else d for a, d in enumerate(shape))
    kept = tuple(d for a, d in enumerate(shape) if a not in axes)
    return kept or (1,)


def _pass(x: Any, function: str, pre: int, n: int, post: int, div: int, root: bool) -> Any:
    """One kernel pass over the ``(pre, n, post)`` view of ``x``: a ``(pre, post)`` result."""
    name = dtype_name(x.dtype)
    reduce = kernel("reduce", (name,), x, x.size)
    out = empty_like(x, (pre, post), x.dtype)
    arg = function.startswith("arg")
    scalars = () if arg else (div, int(root))
    acc_t = np.dtype(ACCUMULATOR[name])
    if post == 1:
        acc = empty_like(x, (pre,) if arg else (pre, PARTIALS), acc_t)
        getattr(reduce, f"{function}_last")(x.reshape(pre, n), acc, out.reshape(pre), *scalars)
    else:
        acc = empty_like(x, (pre, post), acc_t)
        getattr(reduce, f"{function}_mid")(x.reshape(pre, n, post), acc, out, *scalars)
    return out


def dense(x: Any, reduction: str, axes: tuple[int, ...], keepdims: bool) -> Any:
    """``reduction`` (a key of ``PLANS``) of dense ``x`` over sorted, unique ``axes`` (all valid;
    an empty tuple reduces nothing). max, min and arg* need no empty reduced axis (the front end
    checks)."""
    plan = PLANS[reduction]
    x = contiguous(x)
    shape = list(x.shape)
    runs = _runs(axes) or [(x.ndim, x.ndim - 1)]  # no axes: one pass over n = 1
    count = math.prod(x.shape[a] for a in axes)
    for position, (first, last) in enumerate(runs):
        final = position == len(runs) - 1
        n = math.prod(shape[first:last + 1])
        x = _pass(x, plan.first if position == 0 else plan.later, math.prod(shape[:first]), n,
                  math.prod(shape[last + 1:]), count if final and plan.mean else 1,
                  final and plan.root)
        shape[first:last + 1] = [1] * (last + 1 - first)
    return x.reshape(reduced_shape(tuple(shape), axes, keepdims))


def _values_pass(values: Any, function: str, rows: int, div: int, root: bool) -> Any:
    """The ``(rows,)`` reduction of ``values`` viewed as rows of equal length."""
    return _pass(values, function, rows, values.size // max(rows, 1), 1, div, root)


def _sparse_plan(reduction: str) -> Plan:
    return PLANS["norm2" if reduction == "norm" else reduction]


def csr(x: CSR, reduction: str, axis: int | None, keepdims: bool) -> Any:
    """sum, mean or norm (ord 2) of a csr matrix over ``axis`` (0, 1 or None): dense."""
    plan = _sparse_plan(reduction)
    n, m = x.shape
    function = "sumsq" if plan.root else "sum"
    if axis is None:
        out = _values_pass(x.data.reshape(1, x.data.size), function, 1, n * m if plan.mean else 1,
                           plan.root)
    elif axis == 1:
        name = dtype_name(x.dtype)
        out = empty_like(x.data, (n,), x.dtype)
        acc = empty_like(x.data, (n,), np.dtype(ACCUMULATOR[name]))
        rows = getattr(kernel("reduce", (name,), x.data, x.data.size), f"csr_rows_{function}")
        rows(x.data, x.indptr, acc, out, m if plan.mean else 1, int(plan.root))
    else:
        out = _csr_columns(x, function, n if plan.mean else 1, plan.root)
    return out.reshape(reduced_shape(x.shape, (0, 1) if axis is None else (axis,), keepdims))


def _csr_columns(x: CSR, function: str, div: int, root: bool) -> Any:
    """Per column of ``x``: partial rows over chunks of csr rows, then their fold."""
    n, m = x.shape
    # a chunk of rows per CPU thread (a parallel task each; 64 on a GPU), each of at least
    # CHUNK_ENTRIES entries, with partial rows of at most a quarter of the entries' count
    # (zeroing and folding them costs that much)
    tasks = num_threads() if target_of(x.data) is None else 64
    chunks = max(1, min(tasks, n, x.data.size // CHUNK_ENTRIES, x.data.size // (4 * max(m, 1))))
    rows = -(-n // chunks) if n else 1
    chunks = max(1, -(-n // rows))
    name = dtype_name(x.dtype)
    reduce = kernel("reduce", (name,), x.data, x.data.size)
    part = empty_like(x.data, (chunks, m), np.dtype(ACCUMULATOR[name]))
    getattr(reduce, f"csr_cols_{function}")(x.data, x.indices, x.indptr, part, rows)
    out = empty_like(x.data, (m,), x.dtype)
    reduce.fold(part, out, div, int(root))
    return out


def row_sparse(x: RowSparse, reduction: str, axis: int | None, keepdims: bool) -> Any:
    """sum, mean or norm (ord 2) of a 2-D row_sparse matrix over ``axis`` (0, 1 or None): dense."""
    plan = _sparse_plan(reduction)
    n, m = x.shape
    k = x.data.shape[0]
    function = "sumsq" if plan.root else "sum"
    if axis is None:
        out = _values_pass(x.data.reshape(1, x.data.size), function, 1, n * m if plan.mean else 1,
                           plan.root)
    elif axis == 0:
        out = _pass(x.data, function, 1, k, m, n if plan.mean else 1, plan.root).reshape(m)
    elif m == 0:  # every row is empty: 0 for sum and norm, 0 / 0 for mean
        empty = empty_like(x.data, (n, 0), x.dtype)
        out = _pass(empty, function, n, 0, 1, m if plan.mean else 1, plan.root).reshape(n)
    else:
        out = _rows(x, function, m if plan.mean else 1, plan.root)
    return out.reshape(reduced_shape(x.shape, (0, 1) if axis is None else (axis,), keepdims))


def _rows(x: RowSparse, function: str, div: int, root: bool) -> Any:
    """The ``(n,)`` dense vector of ``function`` (sum or sumsq) over each row of 2-D ``x``, 0 at
    rows not stored: one ``rsp_rows_*`` pass."""
    name = dtype_name(x.dtype)
    out = empty_like(x.data, (x.shape[0],), x.dtype)
    acc = empty_like(x.data, (x.data.shape[0], PARTIALS), np.dtype(ACCUMULATOR[name]))
    reduce = kernel("reduce", (name,), x.data, x.data.size + out.size)
    getattr(reduce, f"rsp_rows_{function}")(x.data, x.indices, acc, out, div, int(root))
    return out


def square_sum(x: RowSparse, axis: int, keepdims: bool) -> Any:
    """MXNet's ``_square_sum`` of a 2-D row_sparse matrix over axis 0 or 1: dense."""
    n, m = x.shape
    if axis == 0:
        out = _pass(x.data, "sumsq", 1, x.data.shape[0], m, 1, False)
        return out.reshape((1, m) if keepdims else (m,))
    return _rows(x, "sumsq", 1, False).reshape((n, 1) if keepdims else (n,))


def square_sum_rows(x: RowSparse) -> RowSparse:
    """``_square_sum`` over axis 1 with keepdims: row_sparse ``(n, 1)``, the rows of ``x``."""
    values = _pass(x.data, "sumsq", x.data.shape[0], x.shape[1], 1, 1, False)
    return RowSparse(values.reshape(-1, 1), x.indices, (x.shape[0], 1))


def nnz(x: CSR, axis: int | None) -> Any:
    """``contrib.getnnz``: stored entries in all (``(1,)``) or per row (axis 1), int64."""
    if axis is None:
        return colocate(np.array([x.data.size], dtype=INDEX_DTYPE), x.data)
    out = empty_like(x.data, (x.shape[0],), INDEX_DTYPE)
    counts = kernel("reduce", (dtype_name(x.dtype),), x.data, x.data.size).csr_row_counts
    counts(x.data, x.indptr, out)
    return out


STORAGE_RULES: Rules = {
    **{(op, ("default",)): StorageRule("default", dense)
       for op in ("sum", "mean", "prod", "nansum", "nanprod", "max", "min", "norm", "argmax",
                  "argmin")},
    ("_sparse_reduce", ("csr",)): StorageRule("default", csr),
    ("_sparse_reduce", ("row_sparse",)): StorageRule("default", row_sparse),
    ("_square_sum", ("row_sparse",)): StorageRule("default", square_sum),
    ("_square_sum->row_sparse", ("row_sparse",)): StorageRule("row_sparse", square_sum_rows),
    ("getnnz", ("csr",)): StorageRule("default", nnz),
}
"""Reductions (kernel ``reduce``): every op on dense input; sum / mean / norm of 2-D csr and
row_sparse over axis 0, 1 or both (``_sparse_reduce``, which the front end picks; other sparse
reductions fall back to dense under the op's own name); ``_square_sum`` and ``getnnz`` have
sparse rules only, as in MXNet."""
