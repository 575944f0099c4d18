"""``mx.nd.batch_dot`` and ``mx.nd.cumsum`` on their generated kernels (``ops/batch.py``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InvalidType, InvalidValue
from ..formats import check_dtype
from ..params import flag
from .dispatch import check_out, invoke
from .indexing import array_arg, axis_arg
from .ndarray import NDArray
from .nn import cast

BATCH_DOT_DTYPES = ("float32", "float64")
"""batch_dot's element dtypes: MXNet's on CPU (float16 only on its GPUs)."""


def batch_dot(lhs: NDArray, rhs: NDArray, transpose_a: bool = False, transpose_b: bool = False,
              forward_stype: str | None = None, out: NDArray | None = None) -> NDArray:
    """``op(lhs[i]) · op(rhs[i])`` for each batch entry ``i``, as ``mxnet.nd.batch_dot``:
    operands of at least 3 dimensions whose leading (batch) dimensions are equal, the last two
    a matrix (swapped when its flag is set); dense (``forward_stype``: only ``'default'``)."""
    lhs, rhs = array_arg(lhs, "lhs", "batch_dot"), array_arg(rhs, "rhs", "batch_dot")
    transpose_a = flag(transpose_a, "batch_dot: transpose_a")
    transpose_b = flag(transpose_b, "batch_dot: transpose_b")
    if forward_stype not in (None, "default"):
        raise InvalidValue(f"batch_dot: forward_stype must be None or 'default', got "
                           f"{forward_stype!r}")
    flags = f"transpose_a={transpose_a}, transpose_b={transpose_b}"
    if lhs.ndim < 3 or lhs.ndim != rhs.ndim or lhs.shape[:-2] != rhs.shape[:-2]:
        raise InvalidValue(f"batch_dot: lhs and rhs must have one rank of at least 3 and equal "
                           f"leading (batch) dimensions, got {lhs.shape} and {rhs.shape}")
    m, k = lhs.shape[-2:][::-1] if transpose_a else lhs.shape[-2:]
    k_rhs, n = rhs.shape[-2:][::-1] if transpose_b else rhs.shape[-2:]
    if k != k_rhs:
        raise InvalidValue(f"batch_dot shape mismatch: lhs {lhs.shape} and rhs {rhs.shape} with "
                           f"{flags}: the lhs reduces {k} elements, the rhs {k_rhs}")
    if lhs.dtype != rhs.dtype or np.dtype(lhs.dtype).name not in BATCH_DOT_DTYPES:
        raise InvalidType(f"batch_dot: lhs and rhs must have one dtype of {BATCH_DOT_DTYPES} "
                          f"(MXNet's on CPU), got {np.dtype(lhs.dtype).name} and "
                          f"{np.dtype(rhs.dtype).name}")
    check_out("batch_dot", out, (*lhs.shape[:-2], m, n), lhs.dtype, lhs.context)
    op = "batch_dot" + "_transpose_a" * transpose_a + "_transpose_b" * transpose_b
    return invoke(op, (lhs, rhs), out=out, transpose_a=transpose_a, transpose_b=transpose_b)


def cumsum(a: NDArray, axis: Any = None, dtype: Any = None,
           out: NDArray | None = None) -> NDArray:
    """The running sums of ``a`` along ``axis`` (None: of the flattened array), in ``dtype``
    (default: ``a``'s), as ``mxnet.nd.cumsum``."""
    a = array_arg(a, "a", "cumsum")
    if dtype is not None:
        wanted = check_dtype(dtype, "cumsum: dtype")
        if wanted != a.dtype:
            a = cast(a, wanted)
    if axis is None:
        a = a.reshape((-1,))
        axis = 0
    if a.ndim == 0:
        raise InvalidValue("cumsum: a must have at least one dimension")
    axis = axis_arg(axis, a.ndim, "cumsum")
    check_out("cumsum", out, a.shape, a.dtype, a.context)
    return invoke("cumsum", (a,), out=out, axis=axis)


__all__ = ["batch_dot", "cumsum"]
