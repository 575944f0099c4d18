"""Convolution forward on dense buffers (kernel ``nn_conv``): 1-D, 2-D and 3-D convolutions run as
one 3-D form, the missing leading spatial axes added as unit dimensions; float16 operands are
cast to float32, convolved, and the result cast back (one rounding). Operands arrive validated
by the front end (shapes, geometry, dtypes)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..device import contiguous, empty_like
from .astype import cast
from .layout import dtype_name, kernel
from .rule import Rules, StorageRule

SPATIAL = 3
"""The spatial dimensions of the kernel's form (depth, height, width)."""


def output_size(size: int, kernel_size: int, stride: int, dilate: int, pad: int) -> int:
    """The output length of one spatial axis (the dilated window must fit the padded input)."""
    return (size + 2 * pad - dilate * (kernel_size - 1) - 1) // stride + 1


def _lifted(values: tuple[int, ...], fill: int) -> tuple[int, ...]:
    return (fill,) * (SPATIAL - len(values)) + tuple(values)


def convolution(data: Any, weight: Any, bias: Any = None, *, stride: tuple[int, ...],
                dilate: tuple[int, ...], pad: tuple[int, ...], num_group: int) -> Any:
    """MXNet's Convolution of ``data`` (batch, channels, *spatial) by ``weight`` (filters,
    channels / num_group, *kernel), plus ``bias`` (filters,) when given."""
    if data.dtype == np.float16:
        wide = convolution(cast(data, np.float32), cast(weight, np.float32),
                           None if bias is None else cast(bias, np.float32), stride=stride,
                           dilate=dilate, pad=pad, num_group=num_group)
        return cast(wide, np.float16)
    batch, channels, *spatial = data.shape
    filters, per_group, *window = weight.shape
    sizes = tuple(output_size(*axis) for axis in zip(spatial, window, stride, dilate, pad))
    out = empty_like(data, (batch, filters, *sizes), data.dtype)
    if out.size:
        geometry = (*_lifted(stride, 1), *_lifted(dilate, 1), *_lifted(pad, 0), num_group)
        x = contiguous(data).reshape(batch, channels, *_lifted(tuple(spatial), 1))
        w = contiguous(weight).reshape(filters, per_group, *_lifted(tuple(window), 1))
        result = out.reshape(batch, filters, *_lifted(sizes, 1))
        conv = kernel("nn_conv", (dtype_name(data.dtype),), data, out.size)
        if bias is None:
            conv.forward(x, w, *geometry, result)
        else:
            conv.forward_bias(x, w, contiguous(bias).reshape(filters), *geometry, result)
    return out


STORAGE_RULES: Rules = {
    ("Convolution", stypes): StorageRule("default", convolution)
    for stypes in (("default",) * 2, ("default",) * 3)
}
"""Convolution of dense data, weight (and bias); sparse inputs fall back to dense, as MXNet."""
