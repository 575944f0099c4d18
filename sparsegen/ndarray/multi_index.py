"""``ravel_multi_index`` and ``unravel_index`` of MXNet 1.9.1: flat ids from per-axis ids and
back, for a shape, composed of scalar arithmetic ops (their kernels), in the input dtype."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InvalidValue
from ..params import integer, items
from . import elemwise, shape as shapes
from .composed import delivered
from .dispatch import densified
from .indexing import array_arg
from .ndarray import NDArray


def _shape(op: str, shape: Any) -> tuple[int, ...]:
    if shape is None or not items(shape):
        raise InvalidValue(f"{op}: shape must name at least one dimension, got {shape!r}")
    return tuple(integer(d, f"{op}: shape", low=1) for d in items(shape))


def ravel_multi_index(data: NDArray, shape: Any = None,
                      out: NDArray | None = None) -> NDArray:
    """The flat (C-order) ids in ``shape`` of the ids ``data[:, j]`` (one row per axis), as
    ``mxnet.nd.ravel_multi_index``: shape ``data.shape[1:]``."""
    data = densified(array_arg(data, "data", "ravel_multi_index"))
    dims = _shape("ravel_multi_index", shape)
    if data.ndim < 1 or data.shape[0] != len(dims):
        raise InvalidValue(f"ravel_multi_index: data must hold one row of ids per dimension "
                           f"of shape {dims}, got shape {data.shape}")
    result, stride = None, 1
    for axis in reversed(range(len(dims))):
        term = data[axis] * stride
        result = term if result is None else result + term
        stride *= dims[axis]
    return delivered("ravel_multi_index", result, out)


def unravel_index(data: NDArray, shape: Any = None, out: NDArray | None = None) -> NDArray:
    """The per-axis ids in ``shape`` of the flat (C-order) ids ``data``, one row per axis, as
    ``mxnet.nd.unravel_index``: shape ``(len(shape), *data.shape)``."""
    data = densified(array_arg(data, "data", "unravel_index"))
    dims = _shape("unravel_index", shape)
    rows, rest = [], data
    for size in reversed(dims):
        rows.append(rest % size)
        rest = elemwise.floor(rest / size) if np.dtype(data.dtype).kind == "f" else rest / size
    result = shapes.stack(*reversed(rows), axis=0)
    return delivered("unravel_index", result, out)


__all__ = ["ravel_multi_index", "unravel_index"]
