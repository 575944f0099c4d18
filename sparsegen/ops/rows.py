"""Rows of a dense buffer or a csr matrix by an id table, on the generated ``csr_rows`` kernel."""

from __future__ import annotations

from typing import Any

from ..device import colocate, empty_like, item
from ..formats import CSR, INDEX_DTYPE
from .layout import as_rows, dtype_name, kernel


def dense_rows(x: Any, ids: Any) -> Any:
    """``x[ids]`` along axis 0 (``ids`` int64, validated in ``[0, len(x))`` by the caller)."""
    ids = colocate(ids, x)
    out = empty_like(x, (ids.size, *x.shape[1:]), x.dtype)
    kernel("csr_rows", (dtype_name(x.dtype),), out, out.size).dense(
        as_rows(x), ids, as_rows(out, written=True)
    )
    return out


def csr_rows(m: CSR, ids: Any) -> CSR:
    """Rows ``ids`` of ``m`` in that order, as a csr matrix (ids validated by the caller)."""
    ids = colocate(ids, m.data)
    gather = kernel("csr_rows", (dtype_name(m.dtype),), m.data, m.data.size)
    indptr = empty_like(m.indptr, (ids.size + 1,), INDEX_DTYPE)
    gather.count(m.indptr, ids, indptr)
    nnz = item(indptr, -1)
    data = empty_like(m.data, (nnz,), m.dtype)
    indices = empty_like(m.indices, (nnz,), INDEX_DTYPE)
    gather.fill(m.data, m.indices, m.indptr, ids, indptr, data, indices)
    return CSR(data, indices, indptr, (ids.size, m.shape[1]))
