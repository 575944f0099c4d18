"""Array layout helpers shared by the storage-level ops."""

from __future__ import annotations

import math

import numpy as np

from ..errors import SparsegenError
from ..registry import DATA_DTYPES

_NAMES = {np.dtype(name): name for name in DATA_DTYPES}


def dtype_name(dtype: np.dtype) -> str:
    """The kernel dtype name of a numpy dtype (a table: numpy's ``dtype.name`` costs ~2 us)."""
    return _NAMES[dtype]


def as_rows(x: np.ndarray, written: bool = False) -> np.ndarray:
    """``x`` as a C-contiguous 2-D array of rows by everything else (a view when ``written``)."""
    if not x.flags.c_contiguous:
        if written:
            raise SparsegenError(f"output array must be C-contiguous, got strides {x.strides}")
        x = np.ascontiguousarray(x)
    return x.reshape(x.shape[0], math.prod(x.shape[1:]))
