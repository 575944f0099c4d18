"""``mx.nd.Dropout``: zero each element with probability ``p`` and scale the others by
``1 / (1 - p)`` while training, as MXNet 1.9.1's ``Dropout`` op.

The mask is built from ``mx.nd.random.uniform`` and comparison kernels and applied with
``broadcast_mul``, a recorded op, so autograd gives the gradient ``g * mask`` with no rule of
its own.
"""

from __future__ import annotations

from typing import Any

from .. import tape
from ..errors import InvalidValue
from ..params import items, real
from .arith import broadcast_mul
from .compare import greater_equal
from .indexing import array_arg
from .ndarray import NDArray
from .dispatch import densified
from .random import uniform

MODES = ("training", "always")
"""MXNet's Dropout modes: drop while training only, or always."""


def _mask_shape(shape: tuple[int, ...], axes: Any) -> tuple[int, ...]:
    """``shape`` with 1 on ``axes`` (the axes one mask value is shared along)."""
    dims = list(shape)
    for axis in items(axes):
        if not isinstance(axis, int) or not -len(shape) <= axis < len(shape):
            raise InvalidValue(f"Dropout: axes holds {axis!r}, not an axis of a "
                               f"{len(shape)}-d array")
        dims[axis] = 1
    return tuple(dims)


def Dropout(data: NDArray, p: float = 0.5, mode: str = "training",  # noqa: N802
            axes: Any = (), cudnn_off: bool = False, out: NDArray | None = None) -> NDArray:
    """``data`` with each element (or each slice along ``axes``) zeroed with probability ``p``
    and the rest scaled by ``1 / (1 - p)`` when training (``autograd.is_training()``) or
    ``mode='always'``; ``data`` itself otherwise, as MXNet. ``p = 1`` gives zeros (MXNet gives
    NaN)."""
    data = array_arg(data, "data", "Dropout")
    p = real(p, "Dropout: p", low=0.0, high=1.0)
    if mode not in MODES:
        raise InvalidValue(f"Dropout: mode must be one of {MODES}, got {mode!r}")
    if out is not None:
        raise InvalidValue("Dropout: out is not supported; use the returned array")
    shape = _mask_shape(data.shape, axes)
    if p == 0 or (mode == "training" and not tape.is_training()):
        return data
    dense = densified(data)
    draws = uniform(0, 1, shape=shape, dtype=dense.dtype, ctx=dense.context)
    mask = greater_equal(draws, p) * (1.0 / (1.0 - p)) if p < 1 else draws * 0
    return broadcast_mul(dense, mask)


__all__ = ["Dropout"]
