"""``mx.nd.histogram`` and MXNet's op ``_histogram``: counts of the flattened data in bins
given by their edges, composed of broadcast comparisons and a column sum (each value compared
with every bin: memory of values x bins); the counts are int64, the edges in the data's dtype,
as MXNet's."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..errors import InvalidType, InvalidValue
from ..params import integer, items, real
from . import arith, reduce, shape as shapes, sparse
from .creation import linspace
from .dispatch import densified
from .indexing import array_arg
from .ndarray import NDArray
from .nn import cast
from .slicing import slice_axis


def _counts(values: NDArray, edges: NDArray) -> NDArray:
    """int64 counts of ``values`` (flat) in the bins between consecutive ``edges`` (each
    half-open, the last closed); nan and values outside are not counted."""
    column = cast(values.reshape((-1, 1)), "float64")
    bounds = cast(edges.reshape((1, -1)), "float64")
    bins = edges.size - 1
    low = slice_axis(bounds, axis=1, begin=0, end=bins)
    high = slice_axis(bounds, axis=1, begin=1, end=bins + 1)
    inside = arith.broadcast_greater_equal(column, low) * arith.broadcast_lesser(column, high)
    last = arith.broadcast_equal(column, slice_axis(bounds, axis=1, begin=bins,
                                                           end=bins + 1))
    counts = reduce.sum(inside, axis=0)
    if bins > 1:  # the values at the last edge join the last bin
        before = sparse.zeros("default", (bins - 1,), ctx=values.context, dtype="float64")
        counts = counts + shapes.concat(before, reduce.sum(last, axis=0), dim=0)
    else:
        counts = counts + reduce.sum(last, axis=0)
    return cast(counts, "int64")


def _histogram(data: NDArray, bins: NDArray | None = None, bin_cnt: Any = None,
               range: Any = None) -> list[NDArray]:  # noqa: A002 - MXNet's name
    """MXNet's ``_histogram``: ``[counts, edges]`` of ``data`` in the bins of the edges
    ``bins`` (increasing), or in ``bin_cnt`` equal bins over ``range`` (low, high)."""
    data = densified(array_arg(data, "data", "_histogram"))
    if bins is not None:
        edges = densified(array_arg(bins, "bins", "_histogram"))
        if edges.ndim != 1 or edges.size < 2:
            raise InvalidValue(f"histogram: bins must be a 1-D array of at least 2 edges, got "
                               f"shape {edges.shape}")
        return [_counts(data, edges), edges]
    count = integer(bin_cnt, "histogram: bins", low=1)
    bounds = items(range) if range is not None else ()
    if len(bounds) != 2:
        raise InvalidValue(f"histogram: range must be (low, high), got {range!r}")
    low, high = real(bounds[0], "histogram: range"), real(bounds[1], "histogram: range")
    if low > high:
        raise InvalidValue(f"histogram: range {(low, high)} must not decrease")
    edges = linspace(low, high, count + 1, ctx=data.context, dtype=data.dtype)
    return [_counts(data, edges), edges]


def histogram(a: NDArray, bins: Any = 10, range: Any = None) -> list[NDArray]:  # noqa: A002
    """``[counts, edges]`` of the flattened ``a``, as ``mxnet.nd.histogram``: ``bins`` edges
    (an NDArray) or a number of equal bins over ``range`` (default: ``a``'s minimum to its
    maximum, as numpy's, with MXNet's warning; then both results are float32, as MXNet's)."""
    a = array_arg(a, "a", "histogram")
    if isinstance(bins, NDArray):
        return _histogram(a, bins=bins)
    if not isinstance(bins, (int, np.integer)) or isinstance(bins, bool):
        raise InvalidType(f"histogram: bins must be an integer or an NDArray, got "
                          f"{type(bins).__name__}")
    if range is not None:
        return _histogram(a, bin_cnt=bins, range=range)
    warnings.warn("range is not specified, using numpy's result to ensure consistency with "
                  "numpy", stacklevel=2)
    if a.size == 0:
        low, high = 0.0, 1.0
    else:  # two numbers read back: the range (metadata of the bins)
        low, high = float(reduce.min(a).asscalar()), float(reduce.max(a).asscalar())
    if low == high:  # numpy's widening of an empty range
        low, high = low - 0.5, high + 0.5
    counts, edges = _histogram(cast(a, "float64"), bin_cnt=bins, range=(low, high))
    return [cast(counts, "float32"), cast(edges, "float32")]


__all__ = ["histogram"]
