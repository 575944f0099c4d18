"""``mx.nd.contrib``'s index ops, MXNet 1.9.1 semantics: ``index_copy``, ``boolean_mask``,
``arange_like``, ``index_array``.

Each is composed of ops that run generated kernels: ``index_copy`` of ``scatter_nd`` and
``where``, ``boolean_mask`` of the dense -> csr cast (its count / prefix-sum phase then its fill
phase give the positions of the mask's non-zeros) and ``take``, ``arange_like`` of kernel
``shape``'s arange, ``index_array`` of arange, ``broadcast_to`` and ``stack``. Their gradients
are those of the ops they are composed of (MXNet's: ``index_copy`` gives ``old_tensor`` the head
gradient with the copied rows zeroed and ``new_tensor`` the copied rows; ``boolean_mask``
scatters the head gradient back to the kept rows).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..device import device_of
from ..errors import InvalidIndex, InvalidType, InvalidValue
from ..formats import INDEX_DTYPE
from ..ops import shape as shape_ops
from ..params import integer, items, real
from . import arith, reduce
from . import shape as shapes
from .dispatch import check_out, deliver
from .indexing import array_arg, axis_arg, scatter_nd, take
from .ndarray import NDArray
from .sparse import zeros


def delivered(op: str, result: NDArray, out: NDArray | None) -> NDArray:
    """``result`` itself, or written into ``out`` (checked first, as every op's ``out=``)."""
    if out is None:
        return result
    check_out(op, out, result.shape, result.dtype, result.context)
    return deliver(op, result._storage, result.stype, result.context, (), out)


def _vector(value: Any, name: str, op: str) -> NDArray:
    """``value`` checked to be a 1-D NDArray."""
    value = array_arg(value, name, op)
    if value.ndim != 1:
        raise InvalidValue(f"{op}: {name} must be 1-D, got shape {value.shape}")
    return value


def index_copy(old_tensor: NDArray, index_vector: NDArray, new_tensor: NDArray,
               out: NDArray | None = None) -> NDArray:
    """A copy of ``old_tensor`` whose rows ``index_vector[i]`` are ``new_tensor[i]``, as
    ``mxnet.nd.contrib.index_copy`` (the last of repeated ids wins, as MXNet on CPU; an id
    outside ``[0, old_tensor.shape[0])`` raises ``InvalidIndex``: MXNet writes out of bounds)."""
    op = "index_copy"
    old = array_arg(old_tensor, "old_tensor", op)
    ids = _vector(index_vector, "index_vector", op)
    new = array_arg(new_tensor, "new_tensor", op)
    if old.ndim == 0:
        raise InvalidValue(f"{op}: old_tensor must have at least 1 dimension, got shape ()")
    if new.shape != (ids.shape[0], *old.shape[1:]):
        raise InvalidValue(f"{op}: new_tensor has shape {new.shape}; {ids.shape[0]} ids into "
                           f"old_tensor of shape {old.shape} need {(ids.shape[0], *old.shape[1:])}")
    if new.dtype != old.dtype:
        raise InvalidType(f"{op}: new_tensor has dtype {new.dtype.__name__}, old_tensor "
                          f"{old.dtype.__name__}; they must match")
    old, new = old.tostype("default"), new.tostype("default")
    rows = ids.astype("int64")
    if rows.size:
        low, high = reduce.min(rows).asscalar(), reduce.max(rows).asscalar()
        if low < 0 or high >= old.shape[0]:
            raise InvalidIndex(f"{op}: index_vector holds {low if low < 0 else high}, outside "
                               f"[0, {old.shape[0]}) (old_tensor's rows)")
    if not rows.size:
        return delivered(op, old.copy(), out)
    table = rows.reshape((1, rows.size))
    copied = scatter_nd(new, table, old.shape)
    hit = scatter_nd(rows.ones_like(), table, (old.shape[0],))
    return delivered(op, arith.where(hit, copied, old), out)


def boolean_mask(data: NDArray, index: NDArray, axis: Any = 0,
                 out: NDArray | None = None) -> NDArray:
    """The slices of ``data`` along ``axis`` where ``index`` is non-zero (nan counts), in order,
    as ``mxnet.nd.contrib.boolean_mask``: the output's length along ``axis`` depends on the
    data. Any axis works (MXNet supports axis 0 only)."""
    op = "boolean_mask"
    data = array_arg(data, "data", op)
    index = _vector(index, "index", op)
    if data.ndim == 0:
        raise InvalidValue(f"{op}: data must have at least 1 dimension, got shape ()")
    axis = axis_arg(axis, data.ndim, op)
    if index.shape[0] != data.shape[axis]:
        raise InvalidValue(f"{op}: index has {index.shape[0]} entries, data {data.shape[axis]} "
                           f"along axis {axis} (shape {data.shape})")
    data = data.tostype("default")
    if not index.size:
        return delivered(op, data.copy(), out)
    floating = np.dtype(index.dtype).kind == "f"
    mask = index.tostype("default") if floating else index.astype("float32")
    kept = mask.reshape((1, index.size)).tostype("csr").indices
    return delivered(op, take(data, kept, axis=axis), out)


def arange_like(data: NDArray, start: float = 0.0, step: float = 1.0, repeat: int = 1,
                ctx: Any = None, axis: Any = None, out: NDArray | None = None) -> NDArray:
    """``start + (i // repeat) * step`` in ``data``'s shape (or along its ``axis``, 1-D) and
    dtype, as ``mxnet.nd.contrib.arange_like``; ``ctx`` is ignored, as in MXNet's imperative
    calls (the output is on ``data``'s context)."""
    op = "arange_like"
    data = array_arg(data, "data", op)
    start, step = real(start, f"{op}: start"), real(step, f"{op}: step")
    repeat = integer(repeat, f"{op}: repeat", low=1)
    if axis is None:
        shape = data.shape
    else:
        if data.ndim == 0:
            raise InvalidValue(f"{op}: axis {axis!r} needs data of at least 1 dimension")
        shape = (data.shape[axis_arg(axis, data.ndim, op)],)
    size = 1
    for d in shape:
        size *= d
    dtype = np.dtype(data.dtype)
    cast = float if dtype.kind == "f" else int
    if not size:  # reshape reads a 0 as "copy this dimension"
        return delivered(op, zeros("default", shape, data.context, dtype), out)
    values = shape_ops.arange(size, cast(start), cast(step), repeat, dtype, device_of(data.context))
    return delivered(op, NDArray(values, data.context).reshape(shape), out)


def index_array(data: NDArray, axes: Any = None, out: NDArray | None = None) -> NDArray:
    """``out[i..., k] = i[axes[k]]``: each element's index along ``axes`` (all axes by default),
    int64, of shape ``data.shape + (len(axes),)``, as ``mxnet.nd.contrib.index_array``."""
    op = "index_array"
    data = array_arg(data, "data", op)
    if data.ndim == 0:
        raise InvalidValue(f"{op}: data must have at least 1 dimension, got shape ()")
    chosen = (tuple(range(data.ndim)) if axes is None
              else tuple(axis_arg(a, data.ndim, op) for a in items(axes)))
    if not chosen or not data.size:
        empty = zeros("default", (*data.shape, len(chosen)), data.context, INDEX_DTYPE)
        return delivered(op, empty, out)
    device = device_of(data.context)
    columns = []
    for a in chosen:
        line = NDArray(shape_ops.arange(data.shape[a], 0, 1, 1, INDEX_DTYPE, device),
                       data.context)
        along = tuple(data.shape[a] if k == a else 1 for k in range(data.ndim))
        columns.append(shapes.broadcast_to(line.reshape(along), data.shape))
    return delivered(op, shapes.stack(*columns, axis=data.ndim), out)


__all__ = ["arange_like", "boolean_mask", "index_array", "index_copy"]
