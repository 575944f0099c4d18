"""MXNet's ``_internal`` ops that ``mx.nd`` reaches by other names: ``identity`` (``_copy``),
the creation ops of graphs (``_zeros``, ``_ones``, ``_full``, ``_arange``, ``_linspace``,
``_eye``: MXNet's parameter names, ``ctx`` and ``dtype``), ``_hypot_scalar``,
``_scatter_set_nd``, ``_split_v2`` and ``_onehot_encode``, each composed of existing ops."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..context import Context
from ..errors import InvalidType, InvalidValue
from ..params import integer, items
from . import arith, sparse
from .composed import delivered
from .creation import arange, eye, linspace
from .dispatch import densified
from .elemwise import _cast_scalar, _is_scalar
from .indexing import array_arg, onehot_encode, scatter_nd
from .ndarray import NDArray
from .slicing import split_v2


def identity(data: NDArray, out: NDArray | None = None) -> NDArray:
    """A copy of ``data`` (its storage type kept; gradient passed through), as
    ``mxnet.nd.identity`` / ``_copy``."""
    data = array_arg(data, "data", "identity")
    if out is None:
        return data.copy()
    return data.copyto(out)


def _creation(function: Any, out: NDArray | None, op: str) -> NDArray:
    return delivered(op, function(), out)


def _zeros(shape: Any = (), ctx: Context | None = None, dtype: Any = np.float32,
           out: NDArray | None = None) -> NDArray:
    """MXNet's ``_zeros``: zeros of ``shape`` (``mx.sym.zeros``'s op)."""
    return _creation(lambda: sparse.zeros("default", shape, ctx=ctx, dtype=dtype), out, "_zeros")


def _full(shape: Any = (), ctx: Context | None = None, dtype: Any = np.float32,
          value: Any = 0.0, out: NDArray | None = None) -> NDArray:
    """MXNet's ``_full``: ``value`` everywhere in ``shape`` (``mx.sym.full``'s op), composed
    as zeros plus the value (the add kernel)."""
    if not _is_scalar(value):
        raise InvalidType(f"_full: value must be a number, got {type(value).__name__}")
    zeros = _zeros(shape, ctx, dtype)
    return delivered("_full", zeros + _cast_scalar(value, np.dtype(zeros.dtype), "_full"), out)


def _ones(shape: Any = (), ctx: Context | None = None, dtype: Any = np.float32,
          out: NDArray | None = None) -> NDArray:
    """MXNet's ``_ones``: ones of ``shape`` (``mx.sym.ones``'s op)."""
    return _full(shape, ctx, dtype, 1, out)


def _arange(start: Any = 0, stop: Any = None, step: Any = 1.0, repeat: Any = 1,
            infer_range: Any = False, ctx: Context | None = None, dtype: Any = np.float32,
            out: NDArray | None = None) -> NDArray:
    """MXNet's ``_arange`` (``mx.sym.arange``'s op): ``mx.nd.arange``."""
    return _creation(lambda: arange(start, stop, step, repeat, infer_range, ctx, dtype), out,
                     "_arange")


def _linspace(start: Any = 0, stop: Any = None, num: Any = 50, endpoint: Any = True,
              ctx: Context | None = None, dtype: Any = np.float32,
              out: NDArray | None = None) -> NDArray:
    """MXNet's ``_linspace`` (``mx.sym.linspace``'s op): ``mx.nd.linspace``."""
    if stop is None:
        raise InvalidValue("_linspace: stop is required")
    return _creation(lambda: linspace(start, stop, num, endpoint, ctx, dtype), out, "_linspace")


def _eye(N: Any = 0, M: Any = 0, k: Any = 0, ctx: Context | None = None,  # noqa: N803
         dtype: Any = np.float32, out: NDArray | None = None) -> NDArray:
    """MXNet's ``_eye`` (``mx.sym.eye``'s op): ``mx.nd.eye``."""
    return _creation(lambda: eye(N, M, k, ctx, dtype), out, "_eye")


def _hypot_scalar(data: NDArray, scalar: Any, is_int: Any = None,
                  out: NDArray | None = None) -> NDArray:
    """MXNet's ``_hypot_scalar``: ``sqrt(data² + scalar²)`` elementwise (the broadcast hypot
    kernel against a one-element array of the number)."""
    data = densified(array_arg(data, "data", "_hypot_scalar"))
    if not _is_scalar(scalar):
        raise InvalidType(f"_hypot_scalar: scalar must be a number, got {type(scalar).__name__}")
    number = _cast_scalar(scalar, np.dtype(data.dtype), "_hypot_scalar")
    value = np.full((1,) * max(data.ndim, 1), number, data.dtype)  # one element: metadata
    return delivered("_hypot_scalar",
                     arith.broadcast_hypot(data, NDArray(value, data.context)), out)


def _scatter_set_nd(lhs: NDArray, rhs: NDArray, indices: NDArray, shape: Any = None,
                    out: NDArray | None = None) -> NDArray:
    """MXNet's ``_scatter_set_nd`` (``x[ids] = values``): ``lhs`` with the positions
    ``indices`` names (as ``scatter_nd``'s) set to ``rhs``; written into ``out`` when given
    (MXNet's writes ``lhs`` in place, as its ``out``)."""
    lhs = densified(array_arg(lhs, "lhs", "_scatter_set_nd"))
    rhs = densified(array_arg(rhs, "rhs", "_scatter_set_nd"))
    dims = lhs.shape if shape is None else tuple(items(shape))
    if tuple(dims) != lhs.shape:
        raise InvalidValue(f"_scatter_set_nd: shape {tuple(dims)} is not lhs' shape {lhs.shape}")
    if rhs.dtype != lhs.dtype:
        raise InvalidType(f"_scatter_set_nd: rhs must have lhs' dtype {np.dtype(lhs.dtype).name}, "
                          f"got {np.dtype(rhs.dtype).name}")
    placed = scatter_nd(rhs, indices, dims)
    mask = scatter_nd(rhs * 0 + 1, indices, dims)
    return delivered("_scatter_set_nd", arith.where(mask, placed, lhs), out)


def _split_v2(data: NDArray, indices: Any = (), axis: Any = 0, squeeze_axis: Any = False,
              sections: Any = 0) -> Any:
    """MXNet's ``_split_v2``: ``split_v2`` into ``sections`` equal parts (when not 0), else at
    ``indices`` (MXNet's op form: starting with 0)."""
    count = integer(sections, "_split_v2: sections")
    if count:
        return split_v2(data, count, axis, squeeze_axis)
    cuts = [integer(i, "_split_v2: indices") for i in items(indices)]
    if cuts[:1] == [0]:
        cuts = cuts[1:]
    return split_v2(data, cuts, axis, squeeze_axis)


def _onehot_encode(lhs: NDArray, rhs: NDArray, out: NDArray | None = None) -> NDArray:
    """MXNet's ``_onehot_encode``: ``rhs`` (2-D) set to the one-hot rows of the ids ``lhs``."""
    result = onehot_encode(lhs, rhs)
    return result if out is None or out is rhs else delivered("_onehot_encode", result, out)


INTERNAL = {name: globals()[name] for name in (
    "_zeros", "_ones", "_full", "_arange", "_linspace", "_eye", "_hypot_scalar",
    "_scatter_set_nd", "_split_v2", "_onehot_encode")}
"""The ops ``mx.nd._internal`` names (``_copy`` is ``identity``, by MXNet's alias)."""

__all__ = ["identity"]
