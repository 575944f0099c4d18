"""Indexing ops of ``mx.nd`` (MXNet 1.9.1 semantics): take, pick, gather_nd, scatter_nd, one_hot.

Ids may be of any dtype (MXNet's default is float32); they are truncated toward zero. take and
pick clip ids into range (or wrap them, ``mode='wrap'``), take's ``mode='raise'``, gather_nd
and scatter_nd refuse out-of-range ids with ``InvalidIndex`` (an IndexError) naming one; the
kernels never read or write outside an array whatever the ids hold (sparsegen/ops/gather.py).
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ..errors import InvalidIndex, InvalidType, InvalidValue
from ..formats import check_dtype
from ..params import flag, integer
from . import arith
from . import shape as shapes
from .dispatch import check_out, deliver, invoke
from .elemwise import _cast_scalar
from .ndarray import NDArray

_TAKE_MODES = ("clip", "raise", "wrap")
_PICK_MODES = ("clip", "wrap")


def array_arg(value: Any, name: str, op: str) -> NDArray:
    """``value`` if it is an NDArray, else ``InvalidType`` naming the argument."""
    if not isinstance(value, NDArray):
        raise InvalidType(f"{op}: {name} must be an NDArray, got {type(value).__name__}")
    return value


def axis_arg(axis: Any, ndim: int, op: str) -> int:
    """``axis`` (an int in ``[-ndim, ndim)``) as a non-negative axis."""
    axis = integer(axis, f"{op}: axis", low=-(2**63))
    if not -ndim <= axis < ndim:
        raise InvalidValue(f"{op}: axis {axis} is out of range for an array of {ndim} "
                           f"dimensions (it must be in [{-ndim}, {ndim}))")
    return axis % ndim


def choice_arg(value: Any, name: str, choices: tuple[str, ...], op: str) -> str:
    """``value`` if it is one of ``choices``, else ``InvalidValue`` listing them."""
    if not isinstance(value, str) or value not in choices:
        raise InvalidValue(f"{op}: {name} must be one of {', '.join(map(repr, choices))}, "
                           f"got {value!r}")
    return value


def take(a: NDArray, indices: NDArray, axis: int = 0, mode: str = "clip",
         out: NDArray | None = None) -> NDArray:
    """Elements of ``a`` at ``indices`` along ``axis``, as ``mxnet.nd.take``: shape
    ``a.shape[:axis] + indices.shape + a.shape[axis + 1:]``.

    ``mode``: 'clip' (ids into range), 'wrap' (ids modulo the axis), 'raise' (ids outside
    ``[0, n)`` raise ``InvalidIndex``). A csr ``a`` along axis 0 with 'clip' or 'wrap' gives csr
    (MXNet's csr take); a row_sparse ``a`` along axis 0 gives dense rows from its kernel; other
    sparse cases fall back to dense."""
    a, indices = array_arg(a, "a", "take"), array_arg(indices, "indices", "take")
    axis = axis_arg(axis, a.ndim, "take")
    mode = choice_arg(mode, "mode", _TAKE_MODES, "take")
    if a.shape[axis] == 0 and indices.size:
        raise InvalidIndex(f"take: cannot take indices from axis {axis} of size 0")
    shape = (*a.shape[:axis], *indices.shape, *a.shape[axis + 1:])
    check_out("take", out, shape, a.dtype, a.context)
    sparse_rows = axis == 0 and (a.stype == "row_sparse" or (
        a.stype == "csr" and mode != "raise" and indices.ndim == 1))
    return invoke("take" if sparse_rows else "take->default", (a, indices), out=out, axis=axis,
                  mode=mode)


def pick(data: NDArray, index: NDArray, axis: Any = -1, keepdims: bool = False,
         mode: str = "clip", out: NDArray | None = None) -> NDArray:
    """``data[..., index[...], ...]`` along ``axis``, as ``mxnet.nd.pick``: ``index`` has the
    shape of ``data`` without ``axis`` (or with it of size 1); ids are clipped ('clip') or
    wrapped ('wrap'). The result drops ``axis`` unless ``keepdims``."""
    data, index = array_arg(data, "data", "pick"), array_arg(index, "index", "pick")
    if axis is None:
        raise InvalidValue("pick: axis=None is not supported (as in MXNet); give an axis")
    axis = axis_arg(axis, data.ndim, "pick")
    keepdims = flag(keepdims, "pick: keepdims")
    mode = choice_arg(mode, "mode", _PICK_MODES, "pick")
    dropped = (*data.shape[:axis], *data.shape[axis + 1:])
    kept = (*data.shape[:axis], 1, *data.shape[axis + 1:])
    if index.shape not in (dropped, kept):
        raise InvalidValue(f"pick: index has shape {index.shape}; for data of shape "
                           f"{data.shape} along axis {axis} it must be {dropped} or {kept}")
    if data.shape[axis] == 0 and index.size:
        raise InvalidIndex(f"pick: cannot pick from axis {axis} of size 0")
    check_out("pick", out, kept if keepdims else dropped, data.dtype, data.context)
    return invoke("pick", (data, index), out=out, axis=axis, mode=mode, keepdims=keepdims)


def batch_take(a: NDArray, indices: NDArray, out: NDArray | None = None) -> NDArray:
    """``a[i, indices[i]]`` of ``a`` seen as rows of its last axis (one index per row; ids
    clipped to the row), as ``mxnet.nd.batch_take``: a ``pick`` along the last axis, shaped as
    ``indices``."""
    a, indices = array_arg(a, "a", "batch_take"), array_arg(indices, "indices", "batch_take")
    if a.ndim == 0 or a.size != indices.size * a.shape[-1]:
        raise InvalidValue(f"batch_take: a of shape {a.shape} must hold one row of its last "
                           f"axis per index; indices has {indices.size}")
    taken = pick(a.reshape((indices.size, a.shape[-1])), indices.reshape((indices.size,)),
                 axis=1, mode="clip").reshape(indices.shape)
    if out is None:
        return taken
    return deliver("batch_take", taken._storage, taken.stype, taken.context, (), out)


def fill_element_0index(lhs: NDArray, mhs: NDArray, rhs: NDArray,
                        out: NDArray | None = None) -> NDArray:
    """``lhs`` with ``lhs[i, rhs[i]]`` set to ``mhs[i]`` in each row ``i`` (an id outside the row
    sets nothing), as ``mxnet.nd.fill_element_0index``."""
    op = "fill_element_0index"
    lhs, mhs, rhs = (array_arg(lhs, "lhs", op), array_arg(mhs, "mhs", op),
                     array_arg(rhs, "rhs", op))
    if lhs.ndim != 2 or mhs.shape != (lhs.shape[0],) or rhs.shape != (lhs.shape[0],):
        raise InvalidValue(f"{op}: lhs must be a matrix and mhs and rhs hold one value per row; "
                           f"got lhs {lhs.shape}, mhs {mhs.shape}, rhs {rhs.shape}")
    hits = one_hot(rhs, lhs.shape[1], dtype=lhs.dtype)
    values = shapes.broadcast_like(mhs.astype(lhs.dtype).reshape((lhs.shape[0], 1)), lhs)
    check_out(op, out, lhs.shape, lhs.dtype, lhs.context)
    return arith.where(hits, values, lhs, out=out)


def _nd_table(indices: NDArray, ndim: int, op: str) -> int:
    """The number of leading axes an (m, ...) index table of ``indices`` addresses."""
    if indices.ndim < 2:
        raise InvalidValue(f"{op}: indices must have at least 2 dimensions (m, ...), got shape "
                           f"{indices.shape}")
    m = indices.shape[0]
    if not 0 < m <= ndim:
        raise InvalidValue(f"{op}: indices address {m} axes (indices.shape[0]); the array has "
                           f"{ndim}")
    return m


def gather_nd(data: NDArray, indices: NDArray, out: NDArray | None = None) -> NDArray:
    """``out[y...] = data[indices[0, y...], ..., indices[m-1, y...]]``, as
    ``mxnet.nd.gather_nd``: shape ``indices.shape[1:] + data.shape[m:]``. Negative ids count
    from the end of their axis; ids outside ``[-d, d)`` raise ``InvalidIndex``."""
    data = array_arg(data, "data", "gather_nd")
    indices = array_arg(indices, "indices", "gather_nd")
    m = _nd_table(indices, data.ndim, "gather_nd")
    check_out("gather_nd", out, (*indices.shape[1:], *data.shape[m:]), data.dtype, data.context)
    return invoke("gather_nd", (data, indices), out=out)


def scatter_nd(data: NDArray, indices: NDArray, shape: Any,
               out: NDArray | None = None) -> NDArray:
    """Zeros of ``shape`` with ``out[indices[:, y...]] = data[y...]``, as
    ``mxnet.nd.scatter_nd``; the last of repeated ids wins (as MXNet on CPU), ids outside
    ``[-d, d)`` raise ``InvalidIndex`` (MXNet writes out of bounds)."""
    data = array_arg(data, "data", "scatter_nd")
    indices = array_arg(indices, "indices", "scatter_nd")
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    shape = tuple(integer(d, "scatter_nd: shape") for d in shape)
    m = _nd_table(indices, len(shape), "scatter_nd")
    expected = (*indices.shape[1:], *shape[m:])
    if data.shape != expected:
        raise InvalidValue(f"scatter_nd: data has shape {data.shape}; indices of shape "
                           f"{indices.shape} into shape {shape} need data of shape {expected}")
    check_out("scatter_nd", out, shape, data.dtype, data.context)
    return invoke("scatter_nd", (data, indices), out=out, shape=shape)


def one_hot(indices: NDArray, depth: int, on_value: float = 1.0, off_value: float = 0.0,
            dtype: Any = "float32", out: NDArray | None = None) -> NDArray:
    """``out[..., d] = on_value if indices[...] == d else off_value`` in ``dtype``, as
    ``mxnet.nd.one_hot``: shape ``indices.shape + (depth,)``; ids are truncated, and ids
    outside ``[0, depth)`` give rows of ``off_value``."""
    indices = array_arg(indices, "indices", "one_hot")
    depth = integer(depth, "one_hot: depth")
    resolved = check_dtype(dtype, "one_hot: dtype")
    for name, value in (("on_value", on_value), ("off_value", off_value)):
        if not isinstance(value, numbers.Real):
            raise InvalidType(f"one_hot: {name} must be a number, got {type(value).__name__}")
    on, off = (_cast_scalar(v, resolved, "one_hot") for v in (on_value, off_value))
    shape = (*indices.shape, depth)
    check_out("one_hot", out, shape, resolved, indices.context)
    return invoke("one_hot", (indices,), out=out, depth=depth, on_value=on, off_value=off,
                  dtype=resolved)


def onehot_encode(indices: NDArray, out: NDArray) -> NDArray:
    """``out`` set to the one-hot rows of ``indices`` (``out``'s width is the depth, its dtype
    the values'), as MXNet's deprecated ``onehot_encode``: ``one_hot`` into ``out``."""
    out = array_arg(out, "out", "onehot_encode")
    if len(out.shape) != 2:
        raise InvalidValue(f"onehot_encode: out must be 2-D (rows, depth), got shape {out.shape}")
    return one_hot(indices, out.shape[1], dtype=out.dtype, out=out)


__all__ = ["batch_take", "fill_element_0index", "gather_nd", "one_hot", "onehot_encode", "pick", "scatter_nd", "take"]
