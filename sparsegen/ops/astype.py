"""Element dtype casts of buffers on the generated ``astype`` kernel (``cast``, ids to int64)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..device import contiguous, empty_like
from ..formats import INDEX_DTYPE
from .layout import dtype_name, kernel
from .rule import Rules, StorageRule


def cast(x: Any, dtype: Any) -> Any:
    """A copy of buffer ``x`` with elements cast to ``dtype``, in the memory ``x`` lives in
    (floats to integers truncate, nan -> 0, saturating to int64, then wrapping)."""
    dtype = np.dtype(dtype)
    out = empty_like(x, x.shape, dtype)
    kernel("astype", (dtype_name(x.dtype), dtype_name(dtype)), x, x.size).convert(
        contiguous(x).reshape(-1), out.reshape(-1))
    return out


def as_ids(x: Any) -> Any:
    """Buffer ``x`` (ids of any dtype) as C-contiguous int64 ids, truncated toward zero."""
    return contiguous(x) if x.dtype == INDEX_DTYPE else cast(x, INDEX_DTYPE)


STORAGE_RULES: Rules = {("Cast", ("default",)): StorageRule("default", cast)}
"""Cast of dense data (sparse data falls back to dense, as MXNet)."""
