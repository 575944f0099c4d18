"""``mx.nd.L2Normalization`` (MXNet 1.9.1 semantics), composed of the elementwise, reduce and
broadcast ops (so it runs on their generated kernels and differentiates through their gradient
rules): the data divided by ``sqrt(sum(data ** 2) + eps)``, the sum over every axis but the
first (``instance``), over axis 1 (``channel``) or over the axes after axis 1 (``spatial``)."""

from __future__ import annotations

from typing import Any

from ..errors import InvalidValue
from ..params import real
from . import arith, elemwise, reduce
from .dispatch import deliver
from .indexing import array_arg, choice_arg
from .ndarray import NDArray
from .output import dense_inputs

L2_MODES = ("instance", "channel", "spatial")
"""``L2Normalization``'s modes."""

_LEAST_DIMENSIONS = {"instance": 1, "channel": 2, "spatial": 3}


def l2_axes(mode: str, ndim: int) -> tuple[int, ...]:
    """The axes ``L2Normalization`` sums the squares over in ``mode``, for ``ndim`` dimensions."""
    if mode == "instance":
        return tuple(range(1, ndim))
    return (1,) if mode == "channel" else tuple(range(2, ndim))


def L2Normalization(data: NDArray, eps: Any = 1e-10, mode: Any = "instance",  # noqa: N802
                    out: NDArray | None = None, **kwargs: Any) -> NDArray:
    """``data / sqrt(sum(data ** 2, axes) + eps)``, the axes by ``mode``: every axis but the
    first (``instance``), axis 1 (``channel``) or the axes after it (``spatial``), as
    ``mxnet.nd.L2Normalization``."""
    op = "L2Normalization"
    kwargs.pop("name", None)
    if kwargs:
        raise InvalidValue(f"{op}: unknown keyword arguments {sorted(kwargs)}")
    data = array_arg(data, "data", op)
    mode = choice_arg(mode, "mode", L2_MODES, op)
    epsilon = real(eps, f"{op}: eps", low=0.0)
    if data.ndim < _LEAST_DIMENSIONS[mode]:
        raise InvalidValue(f"{op}: mode {mode!r} needs data of at least "
                           f"{_LEAST_DIMENSIONS[mode]} dimensions, got shape {data.shape}")
    (x,) = dense_inputs(op, data)
    axes = l2_axes(mode, x.ndim)
    squares = elemwise.square(x)
    total = reduce.sum(squares, axis=axes, keepdims=True) if axes else squares
    result = arith.broadcast_div(x, elemwise.sqrt(total + epsilon))
    if out is None:
        return result
    return deliver(op, result._storage, "default", result.context, (data,), out)


__all__ = ["L2Normalization"]
