"""``mx.nd.diag``: a diagonal of an array as a strided view copy (op ``diag``, one of
``ops/shape.VIEW_OPS``), or a vector placed on a diagonal of a square matrix (``scatter_nd``
at ids made by ``arange``)."""

from __future__ import annotations

from typing import Any

from ..errors import InvalidValue
from ..ops.strided import View, contiguous_strides
from ..params import integer
from . import sparse
from .composed import delivered
from .creation import arange
from .dispatch import check_out, densified, invoke
from .indexing import array_arg, axis_arg, scatter_nd
from .ndarray import NDArray
from .shape import stack


def diag(data: NDArray, k: Any = 0, axis1: Any = 0, axis2: Any = 1,
         out: NDArray | None = None) -> NDArray:
    """Diagonal ``k`` (above the main one for ``k > 0``) of the planes ``axis1`` x ``axis2``
    of ``data`` as its last axis, or for 1-D ``data`` the square matrix with ``data`` on
    diagonal ``k``, as ``mxnet.nd.diag``."""
    data = densified(array_arg(data, "data", "diag"))
    k = integer(k, "diag: k", low=-(2**63))
    if data.ndim == 0:
        raise InvalidValue("diag: data must have at least one dimension")
    if data.ndim == 1:
        n = data.shape[0]
        size = n + abs(k)
        if n == 0:  # nothing to place: zeros of (|k|, |k|)
            return delivered("diag", sparse.zeros("default", (size, size), ctx=data.context,
                                                  dtype=data.dtype), out)
        ids = _ids(max(-k, 0), max(k, 0), data)
        return delivered("diag", scatter_nd(data, ids, (size, size)), out)
    a1, a2 = axis_arg(axis1, data.ndim, "diag"), axis_arg(axis2, data.ndim, "diag")
    if a1 == a2:
        raise InvalidValue(f"diag: axis1 and axis2 must differ, got {a1} and {a2}")
    strides = contiguous_strides(data.shape)
    rows, cols = data.shape[a1], data.shape[a2]
    length = max(0, min(rows - max(-k, 0), cols - max(k, 0)))
    offset = (k * strides[a2] if k >= 0 else -k * strides[a1]) if length else 0
    kept = [d for d in range(data.ndim) if d not in (a1, a2)]
    shape = (*(data.shape[d] for d in kept), length)
    view = View((*(strides[d] for d in kept), strides[a1] + strides[a2]), offset)
    check_out("diag", out, shape, data.dtype, data.context)
    return invoke("diag", (data,), out=out, shape=shape, view=view, into=None)


def _ids(row: int, col: int, data: NDArray) -> NDArray:
    """The (2, n) int64 ids ``(row + i, col + i)`` of ``data``'s ``n`` elements."""
    n = data.shape[0]
    return stack(arange(row, row + n, ctx=data.context, dtype="int64"),
                 arange(col, col + n, ctx=data.context, dtype="int64"), axis=0)


__all__ = ["diag"]
