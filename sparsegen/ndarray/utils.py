"""``mx.nd.utils``: the creation and file functions MXNet 1.9.1's ``mxnet.ndarray.utils`` holds
(``zeros``, ``empty``, ``array``, ``load``, ``load_frombuffer``, ``save``); ``mx.nd`` exports
these same objects, as MXNet's does."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..context import Context
from ..context import resolve as resolve_context
from ..device import allocated, check_allocation
from ..formats import check_dtype, check_shape
from . import sparse
from .dlpack import dlpack_numpy
from .ndarray import NDArray
from .persist import load, load_frombuffer, save
from .sparse import BaseSparseNDArray
from .values import user_values

__all__ = ["zeros", "empty", "array", "load", "load_frombuffer", "save"]

_DEFAULT = np.dtype("float32")


def _dense_shape(shape: Any, dtype: np.dtype) -> tuple[int, ...]:
    """A dense array's ``shape`` checked: non-negative ints (not bools), addressable in memory."""
    checked = check_shape(shape)
    check_allocation(checked, dtype)
    return checked


def _dense_dtype(dtype: Any) -> np.dtype:
    """``dtype`` checked, float32 when None (MXNet's default)."""
    return check_dtype(_DEFAULT if dtype is None else dtype, "dtype")


def array(source_array: Any, ctx: Context | None = None, dtype: Any = None) -> NDArray:
    """An array copied from ``source_array``, as ``mxnet.nd.array``.

    Sparse NDArrays and scipy sparse matrices give sparse arrays; anything else gives a dense
    array whose dtype is ``dtype``, else the source NDArray's, else float32 (as MXNet 1.x, even
    for numpy input). Values ``dtype`` cannot hold (nan as an integer, 300 as uint8) raise.
    """
    if isinstance(source_array, BaseSparseNDArray) or sparse._is_scipy_sparse(source_array):
        return sparse.array(source_array, ctx=ctx, dtype=dtype)
    if isinstance(source_array, NDArray):
        dtype = source_array.dtype if dtype is None else dtype
        values = sparse._values(source_array, dtype, "source_array")
    else:
        if hasattr(source_array, "__dlpack__") and not isinstance(source_array, np.ndarray):
            source_array = dlpack_numpy(source_array, "source_array")
        values = user_values(source_array, check_dtype(_DEFAULT if dtype is None else dtype,
                                                       "source_array dtype"), "source_array")
    return NDArray(values, resolve_context(ctx))


def empty(shape: Any, ctx: Context | None = None, dtype: Any = None,
          stype: str | None = None) -> NDArray:
    """An uninitialised dense array (zeros here), or a sparse one when ``stype`` is given."""
    return zeros(shape, ctx, dtype, stype)


def zeros(shape: Any, ctx: Context | None = None, dtype: Any = None, stype: str | None = None,
          out: NDArray | None = None) -> NDArray:
    """An all-zero array of ``shape`` (dense unless ``stype`` says otherwise), or ``out`` (of
    that shape and dtype) set to zeros."""
    if stype in (None, "default"):
        resolved = _dense_dtype(dtype)
        dims = _dense_shape(shape, resolved)
        return allocated(lambda: sparse.zeros("default", dims, ctx=ctx, dtype=resolved, out=out),
                         dims, resolved)
    return sparse.zeros(stype, shape, ctx=ctx, dtype=dtype, out=out)
