"""take, pick, gather_nd, scatter_nd, one_hot and Embedding on dense storage, take of csr rows,
and take and Embedding of row_sparse rows, on the generated ``nn_gather`` kernel.

Ids of any dtype are cast to int64 on the device first (kernel ``astype``: truncation toward
zero, as MXNet's cast). Ids are clipped or wrapped in the kernel; where an op refuses bad ids
(take's ``mode='raise'``, gather_nd, scatter_nd) the kernel reports one and this module raises
``InvalidIndex`` naming it. Parameters arrive validated by the front end (axis in range, shapes
agreeing).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..device import colocate, contiguous, empty_like, item
from ..errors import InvalidIndex
from ..formats import CSR, INDEX_DTYPE, RowSparse
from .astype import as_ids
from .elemwise import has_nonfinite
from .layout import as_rows, dtype_name, kernel
from .rule import Rules, StorageRule


def lines(shape: tuple[int, ...], axis: int) -> tuple[int, int, int]:
    """The ``(pre, n, post)`` view of an array of ``shape`` around ``axis``."""
    return math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1:])


def _gather(x: Any, size: int) -> Any:
    return kernel("nn_gather", (dtype_name(x.dtype),), x, size)


def first_out_of_range(flat: Any, lo: int, hi: int) -> int:
    """The position of one of the int64 ids ``flat`` outside ``[lo, hi)`` (any one: the check
    may run in parallel), or -1, found where they live (kernel ``nn_gather.check``)."""
    bad = empty_like(flat, (1,), INDEX_DTYPE)
    _gather(flat, flat.size).check(flat, lo, hi, bad)
    return item(bad, 0)


def _first_bad(ids: Any, flat: Any, lo: int, hi: int, what: str) -> None:
    """Raise ``InvalidIndex`` unless every id (``flat``: the int64 cast of ``ids``) is finite
    and in ``[lo, hi)``."""
    if has_nonfinite(ids):
        raise InvalidIndex(f"{what}: the indices hold nan or inf")
    position = first_out_of_range(flat, lo, hi)
    if position >= 0:
        raise InvalidIndex(f"{what}: index {item(flat, position)} at position {position} is out "
                           f"of bounds for an axis of size {hi}")


def take(x: Any, ids: Any, axis: int = 0, mode: str = "clip") -> Any:
    """``x`` at ``ids`` along ``axis`` (MXNet's take): out shape ``x.shape[:axis] + ids.shape +
    x.shape[axis + 1:]``; ids clipped, wrapped, or (``mode='raise'``) checked."""
    flat = as_ids(ids).reshape(-1)
    pre, n, post = lines(x.shape, axis)
    if mode == "raise":
        _first_bad(ids, flat, 0, n, "take")
    out = empty_like(x, (*x.shape[:axis], *ids.shape, *x.shape[axis + 1:]), x.dtype)
    if out.size:
        _gather(x, out.size).take(contiguous(x).reshape(pre, n, post), flat, int(mode == "wrap"),
                                  out.reshape(pre, flat.size, post))
    return out


def take_csr(x: CSR, ids: Any, axis: int = 0, mode: str = "clip") -> CSR:
    """The rows ``ids`` (clipped or wrapped) of a csr array, as csr (MXNet's csr take)."""
    flat = as_ids(ids).reshape(-1)
    wrap = int(mode == "wrap")
    indptr = empty_like(x.indptr, (flat.size + 1,), INDEX_DTYPE)
    gather = _gather(x.data, x.data.size + flat.size)
    gather.csr_count(x.indptr, flat, wrap, indptr)
    nnz = item(indptr, -1)
    data, indices = empty_like(x.data, (nnz,), x.dtype), empty_like(x.indices, (nnz,), INDEX_DTYPE)
    gather.csr_fill(x.data, x.indices, x.indptr, flat, wrap, indptr, data, indices)
    return CSR(data, indices, indptr, (flat.size, x.shape[1]))


def _rows_rsp(x: RowSparse, ids: Any, mode: str, what: str) -> Any:
    """The rows ``ids`` of ``x`` (clipped, wrapped, or checked for ``what``), dense."""
    flat = as_ids(ids).reshape(-1)
    n = x.shape[0]
    if mode == "raise":
        _first_bad(ids, flat, 0, n, what)
    out = empty_like(x.data, (*ids.shape, *x.shape[1:]), x.dtype)
    if out.size:
        _gather(x.data, out.size).take_rsp(as_rows(x.data), x.indices, flat, n, int(mode == "wrap"),
                                           out.reshape(flat.size, math.prod(x.shape[1:])))
    return out


def take_rsp(x: RowSparse, ids: Any, axis: int = 0, mode: str = "clip") -> Any:
    """The rows ``ids`` of a row_sparse array along axis 0, dense (``take`` of MXNet's result):
    ids clipped, wrapped, or (``mode='raise'``) checked; rows not stored are zeros."""
    return _rows_rsp(x, ids, mode, "take")


def pick(x: Any, ids: Any, axis: int, mode: str = "clip", keepdims: bool = False) -> Any:
    """``x[..., ids[...], ...]`` along ``axis`` (MXNet's pick), ids clipped or wrapped."""
    pre, n, post = lines(x.shape, axis)
    flat = as_ids(ids).reshape(pre, post)
    shape = (*x.shape[:axis], *((1,) if keepdims else ()), *x.shape[axis + 1:])
    out = empty_like(x, shape, x.dtype)
    if out.size:
        _gather(x, out.size).pick(contiguous(x).reshape(pre, n, post), flat, int(mode == "wrap"),
                                  out.reshape(pre, post))
    return out


def _nd_ids(ids: Any, dims: tuple[int, ...], what: str) -> tuple[Any, Any]:
    """The (m, y) int64 id table of gather_nd / scatter_nd and the extents it indexes."""
    if has_nonfinite(ids):
        raise InvalidIndex(f"{what}: the indices hold nan or inf")
    table = as_ids(ids).reshape(ids.shape[0], -1)
    return table, colocate(np.array(dims, dtype=INDEX_DTYPE), table)


def _raise_bad(bad: Any, table: Any, dims: tuple[int, ...], what: str) -> None:
    position = item(bad, 0)
    if position >= 0:
        flat = table.reshape(-1)
        entry = [item(flat, k * table.shape[1] + position) for k in range(table.shape[0])]
        raise InvalidIndex(f"{what}: index {tuple(entry)} at position {position} is out of "
                           f"bounds for axes of sizes {dims}")


def gather_nd(x: Any, ids: Any) -> Any:
    """``out[y] = x[ids[0, y], ..., ids[m-1, y]]`` (MXNet's gather_nd; negative ids count from
    the end, ids past an axis raise ``InvalidIndex``)."""
    m = ids.shape[0]
    table, dims = _nd_ids(ids, x.shape[:m], "gather_nd")
    post = math.prod(x.shape[m:])
    out = empty_like(x, (*ids.shape[1:], *x.shape[m:]), x.dtype)
    bad = empty_like(table, (1,), INDEX_DTYPE)
    _gather(x, out.size + table.size).gather_nd(
        contiguous(x).reshape(math.prod(x.shape[:m]), post), table, dims,
        out.reshape(table.shape[1], post), bad)  # (no -1: it cannot be inferred beside a 0)
    _raise_bad(bad, table, x.shape[:m], "gather_nd")
    return out


def scatter_nd(data: Any, ids: Any, shape: tuple[int, ...]) -> Any:
    """Zeros of ``shape`` with ``out[ids[:, y]] = data[y]`` (MXNet's scatter_nd; the last of
    repeated ids wins, ids past an axis raise ``InvalidIndex``)."""
    m = ids.shape[0]
    table, dims = _nd_ids(ids, shape[:m], "scatter_nd")
    post = math.prod(shape[m:])
    out = empty_like(data, shape, data.dtype)
    bad = empty_like(table, (1,), INDEX_DTYPE)
    _gather(data, out.size + table.size).scatter_nd(
        contiguous(data).reshape(table.shape[1], post), table, dims,
        out.reshape(math.prod(shape[:m]), post), bad)
    _raise_bad(bad, table, shape[:m], "scatter_nd")
    return out


def one_hot(ids: Any, depth: int, on_value: Any, off_value: Any, dtype: Any) -> Any:
    """``out[..., d] = on_value if ids[...] == d else off_value`` (ids truncated; ids outside
    ``[0, depth)`` give rows of ``off_value``), in ``dtype``."""
    flat = as_ids(ids).reshape(-1)
    out = empty_like(flat, (*ids.shape, depth), dtype)
    if out.size:
        kernel("nn_gather", (dtype_name(np.dtype(dtype)),), flat, out.size).one_hot(
            flat, on_value, off_value, out.reshape(flat.size, depth))
    return out


def embedding(ids: Any, weight: Any) -> Any:
    """The rows of ``weight`` at ``ids`` (clipped into range, as MXNet's Embedding): shape
    ``ids.shape + (output_dim,)``."""
    return take(weight, ids, 0, "clip")


def embedding_rsp(ids: Any, weight: RowSparse) -> Any:
    """The rows of a row_sparse ``weight`` at ``ids``, dense (zeros where a row is not stored):
    ids past the weight's rows raise ``InvalidIndex``, as MXNet's row_sparse Embedding."""
    return _rows_rsp(weight, ids, "raise", "Embedding")


def transpose(x: Any) -> Any:
    """A 2-D buffer transposed (kernel ``nn_gather.transpose``)."""
    out = empty_like(x, (x.shape[1], x.shape[0]), x.dtype)
    if out.size:
        _gather(x, x.size).transpose(contiguous(x), out)
    return out


_DENSE1, _DENSE2 = ("default",), ("default",) * 2
STORAGE_RULES: Rules = {
    ("take", _DENSE2): StorageRule("default", take),
    ("take", ("csr", "default")): StorageRule("csr", take_csr),
    ("take", ("row_sparse", "default")): StorageRule("default", take_rsp),
    ("take->default", _DENSE2): StorageRule("default", take),
    ("pick", _DENSE2): StorageRule("default", pick),
    ("gather_nd", _DENSE2): StorageRule("default", gather_nd),
    ("scatter_nd", _DENSE2): StorageRule("default", scatter_nd),
    ("one_hot", _DENSE1): StorageRule("default", one_hot),
    ("Embedding", _DENSE2): StorageRule("default", embedding),
    ("Embedding", ("default", "row_sparse")): StorageRule("default", embedding_rsp),
}
"""Indexing rules, as MXNet 1.9.1's: csr take along axis 0 and Embedding of a row_sparse weight
have sparse kernels, and so has take of row_sparse rows along axis 0, which MXNet runs on a
dense copy; every other sparse input falls back to dense. ``take->default`` is take where the
csr kernel does not serve (another axis, mode='raise')."""
