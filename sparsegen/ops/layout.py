"""Array layout helpers shared by the storage-level ops."""

from __future__ import annotations

import math

import numpy as np

from ..errors import SparsegenError


def as_rows(x: np.ndarray, written: bool = False) -> np.ndarray:
    """``x`` as a C-contiguous 2-D array of rows by everything else (a view when ``written``)."""
    if not x.flags.c_contiguous:
        if written:
            raise SparsegenError(f"output array must be C-contiguous, got strides {x.strides}")
        x = np.ascontiguousarray(x)
    return x.reshape(x.shape[0], math.prod(x.shape[1:]))
