"""``LayerNorm``, ``InstanceNorm`` and ``GroupNorm`` of MXNet 1.9.1, composed of the reduce,
broadcast and elementwise ops (so they run on those generated kernels and differentiate
through their gradient rules): the data less its mean over the normalized axes, divided by
``sqrt(variance + eps)``, scaled by ``gamma`` and shifted by ``beta``."""

from __future__ import annotations

from typing import Any

from ..errors import InvalidValue
from ..params import integer, real
from . import arith, elemwise, reduce, shape as shapes
from .indexing import array_arg
from .ndarray import NDArray


def _normalized(x: NDArray, axes: tuple[int, ...], eps: float) -> tuple[NDArray, NDArray,
                                                                        NDArray]:
    """``(x - mean) / sqrt(var + eps)`` over ``axes`` (kept), the mean and the standard
    deviation ``sqrt(var + eps)``."""
    mean = reduce.mean(x, axis=axes, keepdims=True)
    centered = arith.broadcast_sub(x, mean)
    std = elemwise.sqrt(reduce.mean(elemwise.square(centered), axis=axes, keepdims=True) + eps)
    return arith.broadcast_div(centered, std), mean, std


def _affine(y: NDArray, gamma: NDArray, beta: NDArray, axis: int) -> NDArray:
    """``y * gamma + beta``, the 1-D ``gamma`` and ``beta`` along ``axis`` of ``y``."""
    along = tuple(-1 if k == axis else 1 for k in range(y.ndim))
    return arith.broadcast_add(arith.broadcast_mul(y, gamma.reshape(along)),
                                  beta.reshape(along))


def _parameters(op: str, gamma: Any, beta: Any, size: int, what: str) -> tuple[NDArray, NDArray]:
    gamma, beta = array_arg(gamma, "gamma", op), array_arg(beta, "beta", op)
    for name, value in (("gamma", gamma), ("beta", beta)):
        if value.shape != (size,):
            raise InvalidValue(f"{op}: {name} must have shape ({size},) ({what}), got "
                               f"{value.shape}")
    return gamma, beta


def LayerNorm(data: NDArray, gamma: NDArray, beta: NDArray, axis: Any = -1,  # noqa: N802
              eps: Any = 1e-5, output_mean_var: Any = False) -> Any:
    """``data`` normalized over ``axis``, times ``gamma`` plus ``beta`` (of that axis' size);
    with ``output_mean_var`` also the mean and standard deviation (``axis`` kept)."""
    data = array_arg(data, "data", "LayerNorm")
    a = shapes._axis(axis, data.ndim, "LayerNorm")
    gamma, beta = _parameters("LayerNorm", gamma, beta, data.shape[a],
                              f"the size of axis {a} of data {data.shape}")
    y, mean, std = _normalized(data, (a,), real(eps, "LayerNorm: eps"))
    out = _affine(y, gamma, beta, a)
    return [out, mean, std] if output_mean_var else out


def InstanceNorm(data: NDArray, gamma: NDArray, beta: NDArray,  # noqa: N802
                 eps: Any = 1e-3) -> NDArray:
    """Each sample's channels (axis 1) normalized over the axes after it, times ``gamma``
    plus ``beta`` (one per channel)."""
    data = array_arg(data, "data", "InstanceNorm")
    if data.ndim < 3:
        raise InvalidValue(f"InstanceNorm: data must have at least 3 dimensions (batch, "
                           f"channel, ...), got shape {data.shape}")
    gamma, beta = _parameters("InstanceNorm", gamma, beta, data.shape[1],
                              f"the channels of data {data.shape}")
    y, _, _ = _normalized(data, tuple(range(2, data.ndim)), real(eps, "InstanceNorm: eps"))
    return _affine(y, gamma, beta, 1)


def GroupNorm(data: NDArray, gamma: NDArray, beta: NDArray, num_groups: Any = 1,  # noqa: N802
              eps: Any = 1e-5, output_mean_var: Any = False) -> Any:
    """Each sample's channels (axis 1) in ``num_groups`` groups, each group normalized over
    its channels and the axes after them, times ``gamma`` plus ``beta`` (one per group); with
    ``output_mean_var`` also the mean and standard deviation per sample and group."""
    data = array_arg(data, "data", "GroupNorm")
    groups = integer(num_groups, "GroupNorm: num_groups", low=1)
    if data.ndim < 2 or data.shape[1] % groups:
        raise InvalidValue(f"GroupNorm: the channels (axis 1) of data {data.shape} must split "
                           f"into num_groups={groups} equal groups")
    gamma, beta = _parameters("GroupNorm", gamma, beta, groups, "num_groups")
    grouped = data.reshape((data.shape[0], groups, -1))
    y, mean, std = _normalized(grouped, (2,), real(eps, "GroupNorm: eps"))
    out = _affine(y, gamma, beta, 1).reshape(data.shape)
    if output_mean_var:
        return [out, mean.reshape((data.shape[0], groups)), std.reshape((data.shape[0], groups))]
    return out


__all__ = ["GroupNorm", "InstanceNorm", "LayerNorm"]
