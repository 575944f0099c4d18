"""retain on the row_sparse format, on the generated ``retain`` kernel."""

from __future__ import annotations

import numpy as np

from ..cache import get_kernel
from ..ndarray.formats import RowSparse
from .layout import as_rows, dtype_name


def retain(rsp: RowSparse, row_ids: np.ndarray) -> RowSparse:
    """The rows ``row_ids`` (sorted, unique, in range) of ``rsp``; ids not stored give zero rows."""
    out = np.empty((row_ids.size, *rsp.shape[1:]), rsp.dtype)
    get_kernel("retain", (dtype_name(rsp.dtype),), size=out.size).gather(
        as_rows(rsp.data), rsp.indices, row_ids, as_rows(out, written=True)
    )
    return RowSparse(out, row_ids, rsp.shape)
