"""sort, argsort and topk along an axis of dense storage, and a csr's rows sorted by column, on
the generated ``nn_sort`` kernel (a stable merge sort of each line or row) and ``astype`` for ids
in a float or narrow dtype."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..device import contiguous, empty_like
from ..formats import CSR, INDEX_DTYPE
from .astype import cast
from .gather import lines
from .layout import dtype_name, kernel
from .rule import Rules, StorageRule


def _order(x: Any, axis: int, descend: bool) -> tuple[Any, Any, tuple[int, int, int]]:
    """The sort kernel, each line's order along ``axis`` as (pre, n, post) int64 positions, and
    that view of ``x``."""
    pre, n, post = lines(x.shape, axis)
    view = contiguous(x).reshape(pre, n, post)
    ids, scratch = (empty_like(x, (pre, n, post), INDEX_DTYPE) for _ in range(2))
    sorter = kernel("nn_sort", (dtype_name(x.dtype),), x, x.size * max(1, n.bit_length()))
    if x.size:
        sorter.order(view, int(descend), ids, scratch)
    return sorter, ids, (pre, n, post)


def _ids_as(ids: Any, dtype: Any) -> Any:
    return ids if np.dtype(dtype) == INDEX_DTYPE else cast(ids, dtype)


def topk(x: Any, axis: int, k: int, ret_typ: str, is_ascend: bool, dtype: Any) -> Any:
    """The first ``k`` of each line sorted along ``axis`` (MXNet's topk): values, their
    positions in ``dtype``, both (a tuple), or a mask of ``x``'s dtype (``ret_typ``)."""
    sorter, ids, (pre, n, post) = _order(x, axis, not is_ascend)
    view = contiguous(x).reshape(pre, n, post)
    if ret_typ == "mask":
        out = empty_like(x, x.shape, x.dtype)
        if x.size:
            sorter.mask(ids, k, out.reshape(pre, n, post))
        return out
    shape = (*x.shape[:axis], k, *x.shape[axis + 1:])
    values, first = empty_like(x, shape, x.dtype), empty_like(x, shape, INDEX_DTYPE)
    if values.size:
        sorter.select(view, ids, values.reshape(pre, k, post), first.reshape(pre, k, post))
    if ret_typ == "value":
        return values
    positions = _ids_as(first, dtype)
    return (values, positions) if ret_typ == "both" else positions


def sort(x: Any, axis: int, is_ascend: bool = True) -> Any:
    """``x`` sorted along ``axis`` (MXNet's sort; stable, nan last ascending)."""
    return topk(x, axis, x.shape[axis], "value", is_ascend, INDEX_DTYPE)


def argsort(x: Any, axis: int, is_ascend: bool = True, dtype: Any = "float32") -> Any:
    """The positions that sort ``x`` along ``axis`` (MXNet's argsort; stable), in ``dtype``."""
    _, ids, _ = _order(x, axis, not is_ascend)
    return _ids_as(ids.reshape(x.shape), dtype)


def csr_rows(m: CSR) -> CSR:
    """``m`` with each row's entries in ascending column order (values moved with their ids;
    a stable sort, so a repeated column keeps its entries' order)."""
    nnz = m.indices.size
    indices, order, scratch = (empty_like(m.indices, (nnz,), INDEX_DTYPE) for _ in range(3))
    data = empty_like(m.data, (nnz,), m.data.dtype)
    if nnz:
        sorter = kernel("nn_sort", (dtype_name(m.dtype),), m.data, nnz * max(1, nnz.bit_length()))
        sorter.csr_rows(m.indices, m.indptr, m.data, indices, data, order, scratch)
    return CSR(data, indices, m.indptr, m.shape)


STORAGE_RULES: Rules = {
    ("sort", ("default",)): StorageRule("default", sort),
    ("argsort", ("default",)): StorageRule("default", argsort),
    ("topk", ("default",)): StorageRule("default", topk),
    ("_topk_both", ("default",)): StorageRule(None, topk),
}
"""Sorting rules (sparse inputs fall back to dense, as MXNet). ``_topk_both`` returns topk's
(values, indices) pair of dense buffers, which the front end wraps (its input is dense: the
front end converts first)."""
