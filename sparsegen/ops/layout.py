"""Array layout helpers shared by the storage-level ops, for host and device buffers alike."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..cache import Kernel, get_kernel
from ..device import target_of
from ..errors import SparsegenError
from ..formats import DATA_DTYPES

_NAMES = {np.dtype(name): name for name in DATA_DTYPES}


def dtype_name(dtype: np.dtype) -> str:
    """The kernel dtype name of a numpy dtype (a table: numpy's ``dtype.name`` costs ~2 us)."""
    return _NAMES[dtype]


def kernel(name: str, dtypes: tuple[str, ...], near: Any, size: int) -> Kernel:
    """Kernel ``name`` compiled for where buffer ``near`` lives (host CPU or its GPU).

    ``size`` is the number of elements the call touches (it picks the tuning bucket).
    """
    return get_kernel(name, dtypes, target=target_of(near), size=size)


def as_rows(x: Any, written: bool = False) -> Any:
    """``x`` as a C-contiguous 2-D array of rows by everything else (a view when ``written``)."""
    if not x.flags.c_contiguous:
        if written:
            raise SparsegenError(f"output array must be C-contiguous, got strides {x.strides}")
        x = np.ascontiguousarray(x)
    return x.reshape(x.shape[0], math.prod(x.shape[1:]))
