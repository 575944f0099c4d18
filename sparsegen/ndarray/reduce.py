"""Reductions, as ``mxnet.nd``: sum, mean, prod, nansum, nanprod, max, min, norm, argmax, argmin,
``_internal._square_sum``; dense on kernel ``reduce``, csr and row_sparse sum / mean / norm on
its sparse functions, other sparse inputs through the dense fallback (with its warning)."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import InvalidValue, SparsegenError
from ..ops.reduce import reduced_shape
from ..params import flag, items
from .dispatch import check_out, invoke
from .ndarray import NDArray


def _unknown(op: str, kwargs: dict[str, Any]) -> None:
    """MXNet's operator interface refuses unknown keyword arguments with ``MXNetError``."""
    kwargs.pop("name", None)
    if kwargs:
        raise SparsegenError(f"{op}: unknown keyword arguments {sorted(kwargs)}")


def _data(op: str, data: Any) -> NDArray:
    if not isinstance(data, NDArray):
        raise SparsegenError(f"{op}: data must be an NDArray, got {type(data).__name__}")
    return data


def _axis(op: str, value: Any, ndim: int) -> int:
    """One axis, made non-negative; bools, floats and out-of-range axes raise ``MXNetError``."""
    if isinstance(value, (bool, np.bool_)):
        raise SparsegenError(f"{op}: axis must be an int, got {value!r}")
    try:
        axis = operator.index(value)
    except TypeError:
        raise SparsegenError(
            f"{op}: axis must be an int, a tuple of ints or None, got {value!r}") from None
    if not -ndim <= axis < ndim:
        raise SparsegenError(f"{op}: axis {axis} is out of range for an array of {ndim} dimensions")
    return axis % ndim


def reduction_axes(op: str, axis: Any, exclude: Any, ndim: int) -> tuple[int, ...]:
    """The sorted axes an MXNet reduction reduces: ``axis`` None or ``()`` means all of them,
    ``exclude`` all but ``axis``; duplicates raise ``MXNetError``."""
    if axis is None or (isinstance(axis, (tuple, list)) and len(axis) == 0):
        return tuple(range(ndim))
    values = items(axis)
    axes = sorted(_axis(op, value, ndim) for value in values)
    if len(set(axes)) != len(axes):
        raise SparsegenError(f"{op}: axis {axis} names an axis twice")
    if flag(exclude, f"{op}: exclude"):
        return tuple(a for a in range(ndim) if a not in axes)
    return tuple(axes)


def _empty_check(op: str, data: NDArray, axes: Sequence[int]) -> None:
    if op in ("max", "min", "argmax", "argmin") and any(data.shape[a] == 0 for a in axes):
        raise InvalidValue(f"{op}: cannot reduce an empty axis of shape {data.shape} (no identity)")


def _sparse_axis(data: NDArray, axes: tuple[int, ...]) -> int | None | bool:
    """The csr / row_sparse kernel's axis (0, 1 or None for both) for a 2-D sparse ``data``;
    ``False`` when no sparse kernel serves it."""
    if data.stype == "default" or data.ndim != 2:
        return False
    return {(0,): 0, (1,): 1, (0, 1): None}.get(axes, False)


def _reduce(op: str, data: Any, axis: Any, keepdims: Any, exclude: Any, out: Any,
            plan: str | None = None) -> NDArray:
    """Run reduction ``op`` (``PLANS[plan or op]``) over the axes MXNet's arguments name."""
    data = _data(op, data)
    axes = reduction_axes(op, axis, exclude, data.ndim)
    keep = flag(keepdims, f"{op}: keepdims")
    _empty_check(op, data, axes)
    check_out(op, out, reduced_shape(data.shape, axes, keep), data.dtype, data.context)
    sparse_axis = _sparse_axis(data, axes)
    if op in ("sum", "mean", "norm") and plan != "norm1" and sparse_axis is not False:
        return invoke("_sparse_reduce", (data,), out=out, reduction=op, axis=sparse_axis,
                      keepdims=keep)
    return invoke(op, (data,), out=out, reduction=plan or op, axes=axes, keepdims=keep)


def sum(data: NDArray, axis: Any = None, keepdims: bool = False, exclude: bool = False,
        out: NDArray | None = None, **kwargs: Any) -> NDArray:  # noqa: A001 - MXNet's name
    """The sum over ``axis`` (int, tuple, None: all), as ``mxnet.nd.sum`` (csr and row_sparse
    over axis 0, 1 or both on sparse kernels; dense result)."""
    _unknown("sum", kwargs)
    return _reduce("sum", data, axis, keepdims, exclude, out)


def mean(data: NDArray, axis: Any = None, keepdims: bool = False, exclude: bool = False,
         out: NDArray | None = None, **kwargs: Any) -> NDArray:
    """The mean over ``axis``, as ``mxnet.nd.mean`` (integers truncate, as MXNet)."""
    _unknown("mean", kwargs)
    return _reduce("mean", data, axis, keepdims, exclude, out)


def prod(data: NDArray, axis: Any = None, keepdims: bool = False, exclude: bool = False,
         out: NDArray | None = None, **kwargs: Any) -> NDArray:
    """The product over ``axis``, as ``mxnet.nd.prod``."""
    _unknown("prod", kwargs)
    return _reduce("prod", data, axis, keepdims, exclude, out)


def nansum(data: NDArray, axis: Any = None, keepdims: bool = False, exclude: bool = False,
           out: NDArray | None = None, **kwargs: Any) -> NDArray:
    """The sum over ``axis`` with nan counted as zero, as ``mxnet.nd.nansum``."""
    _unknown("nansum", kwargs)
    return _reduce("nansum", data, axis, keepdims, exclude, out)


def nanprod(data: NDArray, axis: Any = None, keepdims: bool = False, exclude: bool = False,
            out: NDArray | None = None, **kwargs: Any) -> NDArray:
    """The product over ``axis`` with nan counted as one, as ``mxnet.nd.nanprod``."""
    _unknown("nanprod", kwargs)
    return _reduce("nanprod", data, axis, keepdims, exclude, out)


def max(data: NDArray, axis: Any = None, keepdims: bool = False, exclude: bool = False,
        out: NDArray | None = None, **kwargs: Any) -> NDArray:  # noqa: A001 - MXNet's name
    """The maximum over ``axis`` (nan if any value is nan), as ``mxnet.nd.max``."""
    _unknown("max", kwargs)
    return _reduce("max", data, axis, keepdims, exclude, out)


def min(data: NDArray, axis: Any = None, keepdims: bool = False, exclude: bool = False,
        out: NDArray | None = None, **kwargs: Any) -> NDArray:  # noqa: A001 - MXNet's name
    """The minimum over ``axis`` (nan if any value is nan), as ``mxnet.nd.min``."""
    _unknown("min", kwargs)
    return _reduce("min", data, axis, keepdims, exclude, out)


def norm(data: NDArray, ord: int = 2, axis: Any = None, keepdims: bool = False,
         out: NDArray | None = None, **kwargs: Any) -> NDArray:  # noqa: A002 - MXNet's name
    """The L1 or L2 norm over ``axis`` (default all), as ``mxnet.nd.norm``; csr and row_sparse
    L2 norms over axis 0, 1 or both run on sparse kernels."""
    _unknown("norm", kwargs)
    if isinstance(ord, (bool, np.bool_)) or not isinstance(ord, (int, np.integer)) \
            or ord not in (1, 2):
        raise SparsegenError(f"norm: ord must be 1 or 2, got {ord!r}")
    return _reduce("norm", data, axis, keepdims, False, out, plan=f"norm{int(ord)}")


def _arg(op: str, data: Any, axis: Any, keepdims: Any, out: Any) -> NDArray:
    """argmax / argmin over one axis, or over the flattened array (one pass: every axis of a
    C-contiguous array is adjacent)."""
    data = _data(op, data)
    return _reduce(op, data, None if axis is None else _axis(op, axis, data.ndim), keepdims,
                   False, out)


def argmax(data: NDArray, axis: Any = None, keepdims: bool = False,
           out: NDArray | None = None, **kwargs: Any) -> NDArray:
    """The position of the first maximum along ``axis`` (an int, or None for the flattened
    array), in the input's dtype as MXNet (a nan counts as the maximum)."""
    _unknown("argmax", kwargs)
    return _arg("argmax", data, axis, keepdims, out)


def argmin(data: NDArray, axis: Any = None, keepdims: bool = False,
           out: NDArray | None = None, **kwargs: Any) -> NDArray:
    """The position of the first minimum along ``axis``, as ``argmax``."""
    _unknown("argmin", kwargs)
    return _arg("argmin", data, axis, keepdims, out)


def square_sum(data: NDArray, axis: Any = None, keepdims: bool = False,
               out: NDArray | None = None, **kwargs: Any) -> NDArray:
    """``mxnet.nd._internal._square_sum``: the sum of squares of a 2-D row_sparse array over
    axis 0 or 1 (dense; row_sparse for axis 1 with keepdims); other inputs raise as MXNet."""
    _unknown("_square_sum", kwargs)
    data = _data("_square_sum", data)
    if data.stype != "row_sparse" or data.ndim != 2:
        raise SparsegenError(f"_square_sum: only 2-D row_sparse input is implemented, got a "
                             f"{data.ndim}-D {data.stype} array")
    picked = axis[0] if isinstance(axis, (tuple, list)) and len(axis) == 1 else axis
    if isinstance(picked, (bool, np.bool_)) or picked not in (0, 1):
        raise SparsegenError(f"_square_sum: axis must be 0 or 1 for row_sparse input, got {axis!r}")
    picked = int(picked)
    keep = flag(keepdims, "_square_sum: keepdims")
    check_out("_square_sum", out, reduced_shape(data.shape, (picked,), keep), data.dtype,
              data.context)
    if picked == 1 and keep:
        return invoke("_square_sum->row_sparse", (data,), out=out)
    return invoke("_square_sum", (data,), out=out, axis=picked, keepdims=keep)


def argmax_channel(data: NDArray, out: NDArray | None = None) -> NDArray:
    """The position of the maximum along axis 1 (the channels), as ``mx.nd.argmax_channel``."""
    return argmax(data, axis=1, out=out)


__all__ = ["argmax", "argmax_channel", "argmin", "max", "mean", "min", "nanprod", "nansum",
           "norm", "prod", "sum"]
