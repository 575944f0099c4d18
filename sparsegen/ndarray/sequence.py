"""MXNet 1.9.1's sequence ops over padded batches: ``SequenceMask``, ``SequenceLast`` and
``SequenceReverse``, with time on ``axis`` (0: ``(T, N, ...)``; 1: ``(N, T, ...)``) and each
sequence's length in ``sequence_length`` (``(N,)``). Composed of the comparison, ``where``,
``gather_nd`` and view ops (their kernels), so gradients come from those ops' rules."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ..errors import InvalidType, InvalidValue
from ..params import flag
from . import arith, creation, indexing, shape, slicing
from .dispatch import densified
from .indexing import array_arg, axis_arg
from .ndarray import NDArray
from .sparse import zeros


def _lengths(data: NDArray, sequence_length: Any, use_sequence_length: Any, axis: Any, op: str,
             least: int) -> tuple[int, NDArray | None]:
    """The time axis of ``data`` and the lengths (None: every sequence is whole), checked:
    integers in ``[least, T]``, one per sequence (read to check: lengths are metadata)."""
    time = axis_arg(axis, data.ndim, op)
    if time > 1 or data.ndim < 2:
        raise InvalidValue(f"{op}: axis must be 0 (time first) or 1 (batch first) of an array "
                           f"of 2 or more dimensions, got axis={axis} for shape {data.shape}")
    if not flag(use_sequence_length, f"{op}: use_sequence_length"):
        if sequence_length is not None:
            raise InvalidValue(f"{op}: sequence_length is given but use_sequence_length is "
                               "False (MXNet's op then takes one input)")
        return time, None
    lengths = densified(array_arg(sequence_length, "sequence_length", op))
    steps, batch = data.shape[time], data.shape[1 - time]
    if lengths.shape != (batch,):
        raise InvalidValue(f"{op}: sequence_length must have shape ({batch},) (one length per "
                           f"sequence of data {data.shape}), got {lengths.shape}")
    values = lengths.asnumpy()
    bad = values[(values != np.floor(values)) | (values < least) | (values > steps)]
    if bad.size:
        raise InvalidValue(f"{op}: sequence_length must hold integers in [{least}, {steps}], "
                           f"got {bad[:5].tolist()}")
    return time, lengths.astype("int64")


def _grid(lengths: NDArray, steps: int, time: int) -> tuple[NDArray, NDArray]:
    """The step number and the length, each broadcast to the ``(T, N)`` (``axis=0``) or
    ``(N, T)`` grid."""
    at = creation.arange(steps, ctx=lengths.context, dtype="int64")
    step_shape, length_shape = ((steps, 1), (1, -1)) if time == 0 else ((1, steps), (-1, 1))
    step, length = at.reshape(step_shape), lengths.reshape(length_shape)
    grid = arith.broadcast_add(step, length)  # of the grid's shape
    return shape.broadcast_like(step, grid), shape.broadcast_like(length, grid)


def _over_data(grid: NDArray, data: NDArray) -> NDArray:
    """A ``(T, N)`` grid broadcast over the trailing axes of ``data``."""
    return shape.broadcast_like(grid.reshape(grid.shape + (1,) * (data.ndim - 2)), data)


def SequenceMask(data: NDArray, sequence_length: NDArray | None = None,  # noqa: N802
                 use_sequence_length: Any = False, value: Any = 0.0, axis: Any = 0,
                 out: NDArray | None = None) -> NDArray:
    """``data`` with each sequence's steps at or past its length set to ``value``, as
    ``mxnet.nd.SequenceMask``."""
    data = densified(array_arg(data, "data", "SequenceMask"))
    time, lengths = _lengths(data, sequence_length, use_sequence_length, axis, "SequenceMask", 0)
    if not isinstance(value, numbers.Real) or isinstance(value, (bool, np.bool_)):
        raise InvalidType(f"SequenceMask: value must be a number (nan and inf too), got "
                          f"{value!r}")
    fill = float(value)
    if lengths is None:
        result = data.copy()
    else:
        step, length = _grid(lengths, data.shape[time], time)
        keep = _over_data(arith.broadcast_lesser(step, length), data)
        result = arith.where(keep, data, zeros("default", data.shape, ctx=data.context,
                                               dtype=data.dtype) + fill)
    return result if out is None else result.copyto(out)


def SequenceLast(data: NDArray, sequence_length: NDArray | None = None,  # noqa: N802
                 use_sequence_length: Any = False, axis: Any = 0,
                 out: NDArray | None = None) -> NDArray:
    """Each sequence's last step (at its length - 1; the last of the axis without lengths):
    shape ``data.shape`` without ``axis``, as ``mxnet.nd.SequenceLast``."""
    data = densified(array_arg(data, "data", "SequenceLast"))
    time, lengths = _lengths(data, sequence_length, use_sequence_length, axis, "SequenceLast", 1)
    steps, batch = data.shape[time], data.shape[1 - time]
    if lengths is None:
        kept = slicing.slice_axis(data, axis=time, begin=steps - 1, end=steps)
        result = kept.reshape(tuple(n for k, n in enumerate(data.shape) if k != time))
    else:
        last = lengths - 1
        which = creation.arange(batch, ctx=data.context, dtype="int64")
        where = shape.stack(*((last, which) if time == 0 else (which, last)))
        result = indexing.gather_nd(data, where)
    return result if out is None else result.copyto(out)


def SequenceReverse(data: NDArray, sequence_length: NDArray | None = None,  # noqa: N802
                    use_sequence_length: Any = False, axis: Any = 0,
                    out: NDArray | None = None) -> NDArray:
    """Each sequence's first ``length`` steps in reverse order, the padding after them kept in
    place (the whole time axis reversed without lengths), as ``mxnet.nd.SequenceReverse``
    (time first: ``axis`` 0 only, as MXNet's)."""
    data = densified(array_arg(data, "data", "SequenceReverse"))
    if axis_arg(axis, max(data.ndim, 1), "SequenceReverse") != 0:
        raise InvalidValue(f"SequenceReverse: axis must be 0 (time first), got {axis}")
    time, lengths = _lengths(data, sequence_length, use_sequence_length, axis,
                             "SequenceReverse", 0)
    if lengths is None:
        result = shape.flip(data, axis=0)
    else:
        step, length = _grid(lengths, data.shape[0], time)
        mirrored = length - step - 1
        source = arith.where(arith.broadcast_lesser(step, length), mirrored, step)
        which = shape.broadcast_like(creation.arange(data.shape[1], ctx=data.context,
                                                     dtype="int64").reshape((1, -1)), source)
        result = indexing.gather_nd(data, shape.stack(source, which))
    return result if out is None else result.copyto(out)


__all__ = ["SequenceLast", "SequenceMask", "SequenceReverse"]
