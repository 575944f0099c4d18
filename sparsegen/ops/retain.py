"""retain on the row_sparse format, on the generated ``retain`` kernel."""

from __future__ import annotations

from typing import Any

from ..device import colocate, empty_like, item
from ..formats import INDEX_DTYPE, RowSparse
from .gather import take
from .layout import as_rows, dtype_name, kernel
from .rule import Rules, StorageRule


def merge_walk(stored: int, requested: int) -> bool:
    """Whether a merge walk of the two sorted id lists (``stored + requested`` streaming steps)
    takes fewer steps than a binary search per requested id (``log2(stored)`` dependent loads
    each)."""
    return stored + requested < requested * max(1, stored.bit_length())


def retain(rsp: RowSparse, row_ids: Any) -> RowSparse:
    """The rows ``row_ids`` (sorted, unique, in range) of ``rsp``; ids not stored give zero rows.
    A row_sparse array storing every row (a kvstore's weight) is read by position (``take``).

    ``row_ids`` may be a host array for a device ``rsp``: it is copied next to the data."""
    row_ids = colocate(row_ids, rsp.data)
    if rsp.indices.size == rsp.shape[0]:  # every row stored: row r is at position r
        return RowSparse(take(rsp.data, row_ids), row_ids, rsp.shape)
    out = empty_like(rsp.data, (row_ids.size, *rsp.shape[1:]), rsp.dtype)
    kernels = kernel("retain", (dtype_name(rsp.dtype),), out, out.size)
    gather = kernels.gather_merge if merge_walk(rsp.indices.size, row_ids.size) else kernels.gather
    gather(as_rows(rsp.data), rsp.indices, row_ids, as_rows(out, written=True))
    return RowSparse(out, row_ids, rsp.shape)


def first_unsorted(row_ids: Any, rows: int) -> int:
    """The position of one of the 1-D int64 ``row_ids`` that lies outside ``[0, rows)`` or is
    not above the id before it (any one), or -1, found where they live in one pass (kernel
    ``retain.check``): a GPU's ids need no trip to the host, a host array no numpy passes."""
    bad = empty_like(row_ids, (1,), INDEX_DTYPE)
    kernel("retain", ("int64",), row_ids, row_ids.size).check(row_ids, rows, bad)
    return item(bad, 0)


def valid_ids(rsp: RowSparse, row_ids: Any) -> bool:
    """Whether ``row_ids`` are 1-D int64, sorted, unique and in range of ``rsp``'s rows, checked
    where they live (``first_unsorted``)."""
    return (row_ids.ndim == 1 and row_ids.dtype == INDEX_DTYPE
            and first_unsorted(row_ids, rsp.shape[0]) < 0)


STORAGE_RULES: Rules = {
    ("retain", ("row_sparse",)): StorageRule("row_sparse", retain),
    ("_retain_check", ("row_sparse", "default")): StorageRule(None, valid_ids),
}
"""``retain`` of a row_sparse array's rows by id, and the check of its ids alone."""
