"""MXNet 1.9.1's automatic-mixed-precision operators: ``amp_cast``, ``amp_multicast`` and the
loss-scaling checks ``all_finite`` / ``multi_all_finite``, composed of existing ops (``cast``,
``contrib.isfinite``, ``min``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import SparsegenError
from ..formats import check_dtype
from ..params import flag, integer
from . import reduce
from .contrib import isfinite
from .dispatch import check_out, deliver
from .ndarray import NDArray
from .nn import cast

__all__ = ["all_finite", "amp_cast", "amp_multicast", "multi_all_finite"]

AMP_DTYPES = (np.dtype(np.float16), np.dtype(np.float32))
"""The dtypes AMP casts between (MXNet's low-precision floats and float32); others pass."""


def _array(op: str, value: Any, name: str) -> NDArray:
    if not isinstance(value, NDArray):
        raise SparsegenError(f"{op}: {name} must be an NDArray, got {type(value).__name__}")
    return value


def _finite(op: str, data: Any, name: str) -> NDArray:
    """1.0 when every value of ``data`` is finite, else 0.0: a float32 ``(1,)`` array (a sparse
    array's absent values are zeros, finite)."""
    _array(op, data, name)
    if np.dtype(data.dtype).kind != "f":
        raise SparsegenError(f"{op}: {name} must be a floating point array (this operation only "
                             f"supports floating point types), got {np.dtype(data.dtype).name}")
    values = data if data.stype == "default" else data.data
    if values.size == 0:
        return NDArray(np.ones((1,), np.float32), data.context)  # metadata: nothing to check
    return reduce.min(isfinite(values)).astype(np.float32).reshape((1,))


def _finish(op: str, found: NDArray, init_output: Any, out: Any, context: Any,
            sources: tuple[NDArray, ...]) -> NDArray:
    """``found`` to ``out``; without ``init_output`` an output only ever drops to 0 (MXNet's
    loss-scaling accumulation over several calls)."""
    check_out(op, out, (1,), np.float32, context)
    if not flag(init_output, f"{op}: init_output") and out is not None:
        found = found * out
    if out is None:
        return found
    return deliver(op, found._storage, "default", context, sources, out)


def all_finite(data: NDArray, init_output: bool = True, out: NDArray | None = None,
               name: str | None = None, **kwargs: Any) -> NDArray:
    """MXNet's ``all_finite``: ``[1.0]`` when no value of ``data`` is inf or nan, else
    ``[0.0]`` (float32); ``init_output=False`` leaves a 0 already in ``out``."""
    if kwargs:
        raise SparsegenError(f"all_finite: Cannot find argument {next(iter(kwargs))!r}")
    found = _finite("all_finite", data, "data")
    return _finish("all_finite", found, init_output, out, data.context, (data,))


def multi_all_finite(*data: NDArray, num_arrays: int = 1, init_output: bool = True,
                     out: NDArray | None = None, name: str | None = None,
                     **kwargs: Any) -> NDArray:
    """MXNet's ``multi_all_finite``: ``all_finite`` of ``num_arrays`` arrays together."""
    op = "multi_all_finite"
    if kwargs:
        raise SparsegenError(f"{op}: Cannot find argument {next(iter(kwargs))!r}")
    number = integer(num_arrays, f"{op}: num_arrays", low=1)
    if len(data) != number:
        raise SparsegenError(f"{op}: num_arrays is {number}, got {len(data)} arrays")
    found = _finite(op, data[0], "array 0")
    for i, array in enumerate(data[1:], 1):
        found = found * _finite(op, array, f"array {i}")
    return _finish(op, found, init_output, out, data[0].context, tuple(data))


def amp_cast(data: NDArray, dtype: Any = None, out: NDArray | None = None,
             name: str | None = None, **kwargs: Any) -> NDArray:
    """MXNet's ``amp_cast``: ``data`` cast to ``dtype`` when both are float16 or float32; any
    other array is returned as it is (a copy), as MXNet's."""
    if kwargs:
        raise SparsegenError(f"amp_cast: Cannot find argument {next(iter(kwargs))!r}")
    _array("amp_cast", data, "data")
    if dtype is None:
        raise SparsegenError("Required parameter dtype is not presented, in operator amp_cast")
    target = np.dtype(check_dtype(dtype, "amp_cast: dtype"))
    source = np.dtype(data.dtype)
    result_dtype = target if source in AMP_DTYPES and target in AMP_DTYPES else source
    check_out("amp_cast", out, data.shape, result_dtype, data.context)
    return cast(data, result_dtype, out=out)


def amp_multicast(*data: NDArray, num_outputs: int | None = None, cast_narrow: bool = False,
                  out: Any = None, name: str | None = None, **kwargs: Any) -> Any:
    """MXNet's ``amp_multicast``: every float16 / float32 input cast to the widest of their
    dtypes (the narrowest with ``cast_narrow``); other inputs returned as they are."""
    op = "amp_multicast"
    if kwargs:
        raise SparsegenError(f"{op}: Cannot find argument {next(iter(kwargs))!r}")
    if num_outputs is None:
        raise SparsegenError(f"Required parameter num_outputs of int is not presented, in "
                             f"operator {op}")
    number = integer(num_outputs, f"{op}: num_outputs", low=1)
    if len(data) != number:
        raise SparsegenError(f"{op}: num_outputs is {number}, got {len(data)} arrays")
    for i, array in enumerate(data):
        _array(op, array, f"array {i}")
    narrow = flag(cast_narrow, f"{op}: cast_narrow")
    floats = [np.dtype(a.dtype) for a in data if np.dtype(a.dtype) in AMP_DTYPES]
    target = (min if narrow else max)(floats, key=lambda d: d.itemsize) if floats else None
    dtypes = [target if np.dtype(a.dtype) in AMP_DTYPES else np.dtype(a.dtype) for a in data]
    targets = [None] * number if out is None else (
        [out] if isinstance(out, NDArray) else list(out))
    if len(targets) != number:
        raise SparsegenError(f"{op}: out must hold {number} arrays, got {len(targets)}")
    for array, dtype, target_out in zip(data, dtypes, targets):
        check_out(op, target_out, array.shape, dtype, array.context)
    results = [cast(a, d, out=o) for a, d, o in zip(data, dtypes, targets)]
    return results[0] if number == 1 else results
