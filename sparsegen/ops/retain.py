"""retain on the row_sparse format, on the generated ``retain`` kernel."""

from __future__ import annotations

from typing import Any

from ..device import colocate, empty_like
from ..ndarray.formats import RowSparse
from .layout import as_rows, dtype_name, kernel


def retain(rsp: RowSparse, row_ids: Any) -> RowSparse:
    """The rows ``row_ids`` (sorted, unique, in range) of ``rsp``; ids not stored give zero rows.

    ``row_ids`` may be a host array for a device ``rsp``: it is copied next to the data."""
    row_ids = colocate(row_ids, rsp.data)
    out = empty_like(rsp.data, (row_ids.size, *rsp.shape[1:]), rsp.dtype)
    kernel("retain", (dtype_name(rsp.dtype),), out, out.size).gather(
        as_rows(rsp.data), rsp.indices, row_ids, as_rows(out, written=True)
    )
    return RowSparse(out, row_ids, rsp.shape)
