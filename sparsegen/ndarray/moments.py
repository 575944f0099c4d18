"""``moments`` of MXNet 1.9.1: the mean and variance over axes, composed of the reduce and
broadcast ops (their kernels; gradients through those ops' rules)."""

from __future__ import annotations

from typing import Any

from ..errors import InvalidValue
from ..params import flag, items
from . import arith, elemwise, reduce
from .dispatch import densified
from .indexing import array_arg, axis_arg
from .ndarray import NDArray


def moments(data: NDArray, axes: Any = None, keepdims: Any = False) -> list[NDArray]:
    """``[mean, variance]`` of ``data`` over ``axes`` (required, as MXNet's: pass every axis
    for global moments), the variance the mean of squared deviations, as
    ``mxnet.nd.moments``."""
    x = densified(array_arg(data, "data", "moments"))
    if axes is None or not items(axes):
        raise InvalidValue("moments: axes must name at least one axis (for global moments "
                           "pass every axis)")
    axes = tuple(axis_arg(a, x.ndim, "moments") for a in items(axes))
    if len(set(axes)) != len(axes):
        raise InvalidValue(f"moments: axes {axes} repeat an axis")
    keep = flag(keepdims, "moments: keepdims")
    mean = reduce.mean(x, axis=axes, keepdims=True)
    variance = reduce.mean(elemwise.square(arith.broadcast_sub(x, mean)), axis=axes,
                           keepdims=keep)
    return [mean if keep else mean.reshape(variance.shape), variance]


__all__ = ["moments"]
