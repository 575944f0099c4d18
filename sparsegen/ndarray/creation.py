"""Creation ops of ``mx.nd`` filled by kernel ``shape``: ``arange``, ``linspace``, ``eye``
(MXNet 1.9.1 semantics, on the given or the current context)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..context import Context
from ..context import resolve as resolve_context
from ..device import device_of
from ..errors import SparsegenError
from ..formats import check_dtype
from ..ops import shape as ops
from ..params import flag, integer, real
from .ndarray import NDArray


def _dtype(dtype: Any) -> np.dtype:
    return check_dtype(np.float32 if dtype is None else dtype, "dtype")


def _in(dtype: np.dtype, value: float) -> float | int:
    """A parameter as the kernel takes it for ``dtype``: truncated to an int for integer dtypes
    (MXNet casts arange's start and step to the dtype)."""
    return float(value) if dtype.kind == "f" else int(value)


def arange(start: Any, stop: Any = None, step: Any = 1.0, repeat: Any = 1,
           infer_range: Any = None, ctx: Context | None = None, dtype: Any = np.float32) -> NDArray:
    """``start, start + step, ...`` below ``stop`` (``[0, start)`` without ``stop``), each value
    ``repeat`` times, as ``mxnet.nd.arange``: the values are computed in ``dtype`` from start
    and step cast to it; an empty range or ``step == 0`` raises, as MXNet."""
    if infer_range is not None:
        flag(infer_range, "arange: infer_range")  # a symbol-API flag: nd arrays know stop
    begin = real(start, "arange: start")
    if stop is None:
        begin, end = 0.0, begin
    else:
        end = real(stop, "arange: stop")
    delta = real(step, "arange: step")
    times = integer(repeat, "arange: repeat", low=1)
    if delta == 0:
        raise SparsegenError("arange: step must not be 0")
    if (end - begin) / delta <= 0:
        raise SparsegenError(f"arange: the range (start, stop, step) = ({begin:g}, {end:g}, "
                             f"{delta:g}) is empty")
    resolved = _dtype(dtype)
    size = math.ceil((end - begin) / delta) * times
    context = resolve_context(ctx)
    values = ops.arange(size, _in(resolved, begin), _in(resolved, delta), times, resolved,
                        device_of(context))
    return NDArray(values, context)


def linspace(start: Any, stop: Any, num: Any, endpoint: Any = True, ctx: Context | None = None,
             dtype: Any = np.float32) -> NDArray:
    """``num`` evenly spaced values from ``start`` to ``stop`` (``stop`` excluded unless
    ``endpoint``), computed in float64 and rounded to ``dtype``, as ``mxnet.nd.linspace``."""
    begin, end = real(start, "linspace: start"), real(stop, "linspace: stop")
    count = integer(num, "linspace: num")
    closed = flag(endpoint, "linspace: endpoint")
    intervals = count - 1 if closed else count
    delta = (end - begin) / intervals if intervals > 0 else 0.0
    context = resolve_context(ctx)
    values = ops.linspace(count, begin, delta, _dtype(dtype), device_of(context))
    return NDArray(values, context)


def eye(N: Any, M: Any = 0, k: Any = 0, ctx: Context | None = None, dtype: Any = None,
        **kwargs: Any) -> NDArray:  # noqa: N803 - MXNet's names
    """An ``N x M`` matrix (``M = 0``: ``N x N``) with ones on diagonal ``k`` (above the main
    one for ``k > 0``), as ``mxnet.nd.eye``."""
    if kwargs:
        raise SparsegenError(f"eye: unknown arguments {sorted(kwargs)}")
    rows = integer(N, "eye: N")
    cols = integer(M, "eye: M") or rows
    diagonal = integer(k, "eye: k", low=-(2**63))
    context = resolve_context(ctx)
    values = ops.eye(rows, cols, diagonal, _dtype(dtype), device_of(context))
    return NDArray(values, context)


__all__ = ["arange", "eye", "linspace"]
