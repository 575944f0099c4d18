"""``mx.nd``: dense and sparse arrays and their creation functions (MXNet 1.9.1 semantics)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..context import Context
from ..context import resolve as resolve_context
from . import sparse
from .dispatch import deliver
from .dot import dot
from . import compare, elemwise
from .compare import *  # noqa: F403 - equal, not_equal, greater, greater_equal, lesser, ...
from .elemwise import *  # noqa: F403 - elemwise.__all__, which includes abs and round
from .formats import check_dtype, check_shape
from .ndarray import NDArray
from .sparse import BaseSparseNDArray, CSRNDArray, RowSparseNDArray
from .storage import cast_storage

_DEFAULT = np.dtype("float32")


def array(source_array: Any, ctx: Context | None = None, dtype: Any = None) -> NDArray:
    """An array copied from ``source_array``, as ``mxnet.nd.array``.

    Sparse NDArrays and scipy sparse matrices give sparse arrays; anything else gives a dense
    array whose dtype is ``dtype``, else the source NDArray's, else float32 (as MXNet 1.x, even
    for numpy input).
    """
    if isinstance(source_array, BaseSparseNDArray) or sparse._is_scipy_sparse(source_array):
        return sparse.array(source_array, ctx=ctx, dtype=dtype)
    if dtype is None:
        dtype = source_array.dtype if isinstance(source_array, NDArray) else _DEFAULT
    values = sparse._values(source_array, dtype, "source_array")
    return NDArray(values, resolve_context(ctx))


def empty(shape: Any, ctx: Context | None = None, dtype: Any = None, stype: str | None = None) -> NDArray:
    """An uninitialised dense array (zeros here), or a sparse one when ``stype`` is given."""
    return zeros(shape, ctx, dtype, stype)


def zeros(shape: Any, ctx: Context | None = None, dtype: Any = None, stype: str | None = None,
          out: NDArray | None = None) -> NDArray:
    """An all-zero array of ``shape`` (dense unless ``stype`` says otherwise), or ``out`` (of
    that shape and dtype) set to zeros."""
    return sparse.zeros(stype or "default", shape, ctx=ctx, dtype=dtype, out=out)


def full(shape: Any, val: Any, ctx: Context | None = None, dtype: Any = None,
         out: NDArray | None = None) -> NDArray:
    """A dense array of ``shape`` filled with ``val``, or ``out`` (of that shape and dtype) set
    to ``val``."""
    dtype = check_dtype(_DEFAULT if dtype is None else dtype, "dtype")
    result = NDArray(np.full(check_shape(shape), val, dtype),
                     resolve_context(getattr(out, "context", None) if ctx is None else ctx))
    return deliver("full", result._storage, "default", result.context, (), out)


def ones(shape: Any, ctx: Context | None = None, dtype: Any = None,
         out: NDArray | None = None) -> NDArray:
    """A dense array of ones, or ``out`` (of that shape and dtype) set to ones."""
    return full(shape, 1, ctx, dtype, out)


def zeros_like(data: NDArray, out: NDArray | None = None) -> NDArray:
    """Zeros with the shape, dtype, context and storage type of ``data`` (or written into
    ``out``, which must have that shape and dtype)."""
    return sparse.zeros(data.stype, data.shape, ctx=data.context, dtype=data.dtype, out=out)


def ones_like(data: NDArray, out: NDArray | None = None) -> NDArray:
    """A dense array of ones with the shape, dtype and context of ``data`` (or written into
    ``out``)."""
    return full(data.shape, 1, data.context, data.dtype, out)


def waitall() -> None:
    """Wait for every pending kernel on every GPU (CPU kernels are synchronous)."""
    from ..device import synchronize_all

    synchronize_all()


__all__ = [
    "CSRNDArray", "NDArray", "RowSparseNDArray", "array", "cast_storage", "dot", "empty", "full",
    "ones", "ones_like", "sparse", "waitall", "zeros", "zeros_like",
]
__all__ += compare.__all__ + elemwise.__all__
