"""Shape and slicing ops of ``mx.nd`` (MXNet 1.9.1 semantics): transpose, reshape, flips, tiles,
slices, splits, concatenation, broadcasts and padding.

Each result is a fresh C-contiguous array (MXNet's ops copy; only ``NDArray.reshape`` and basic
``x[...]`` keep views). Views are computed here from shapes alone (``ops/strided.View``) and
copied by kernel ``strided``; sparse inputs fall back to dense with a ``StorageFallbackWarning``
as in MXNet, except csr ``slice`` without steps and csr ``concat`` on dim 0, which stay csr.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import InvalidType, InvalidValue
from ..ops.shape import PAD_MODES
from ..ops.strided import View, broadcast, contiguous_strides, transposed
from ..params import integer, items
from .dispatch import check_out, invoke
from .ndarray import NDArray, reshaped


def _data(data: Any, op: str) -> NDArray:
    if not isinstance(data, NDArray):
        raise InvalidType(f"{op}: data must be an NDArray, got {type(data).__name__}")
    return data


def _int(value: Any, name: str) -> int:
    """An integral argument (negative allowed)."""
    return integer(value, name, low=-(2**63))


def _axis(axis: Any, ndim: int, op: str, name: str = "axis", extra: int = 0) -> int:
    """``axis`` normalised into ``[0, ndim + extra)``; out of range raises naming the op."""
    value = _int(axis, f"{op}: {name}")
    size = ndim + extra
    if not -size <= value < size:
        raise InvalidValue(f"{op}: {name} {value} is out of range for an array of "
                           f"{ndim} dimension(s) (valid: {-size} to {size - 1})")
    return value % size


def _axes(axes: Any, ndim: int, op: str, name: str = "axis") -> tuple[int, ...]:
    """An int or a sequence of ints as distinct normalised axes."""
    listed = items(axes)
    result = tuple(_axis(a, ndim, op, name) for a in listed)
    if len(set(result)) != len(result):
        raise InvalidValue(f"{op}: {name} {tuple(listed)} repeats an axis")
    return result


def _copy(op: str, data: NDArray, shape: Sequence[int], view: View, out: Any,
          into: Sequence[int] | None = None) -> NDArray:
    """The copy of ``view`` (over ``data``'s shape) as a fresh array, reshaped to ``into``."""
    result = tuple(shape if into is None else into)
    check_out(op, out, result, data.dtype, data.context)
    return invoke(op, (data,), out=out, shape=tuple(shape), view=view, into=into)


def _contiguous(op: str, data: NDArray, shape: Sequence[int], out: Any) -> NDArray:
    """A copy of ``data`` with a new ``shape`` of the same size."""
    return _copy(op, data, data.shape, View(contiguous_strides(data.shape)), out, shape)


def transpose(data: NDArray, axes: Any = None, out: NDArray | None = None) -> NDArray:
    """``data`` with its dimensions permuted (reversed without ``axes``), as
    ``mxnet.nd.transpose``."""
    data = _data(data, "transpose")
    if axes is None or axes == ():
        order = tuple(reversed(range(data.ndim)))
    else:
        order = _axes(axes, data.ndim, "transpose", "axes")
        if len(order) != data.ndim:
            raise InvalidValue(f"transpose: axes {tuple(axes)} must name each of the "
                               f"{data.ndim} dimensions once")
    shape = [data.shape[a] for a in order]
    return _copy("transpose", data, shape, transposed(data.shape, order), out)


def swapaxes(data: NDArray, dim1: Any = 0, dim2: Any = 0, out: NDArray | None = None) -> NDArray:
    """``data`` with dimensions ``dim1`` and ``dim2`` exchanged."""
    data = _data(data, "swapaxes")
    a = _axis(dim1, data.ndim, "swapaxes", "dim1")
    b = _axis(dim2, data.ndim, "swapaxes", "dim2")
    order = list(range(data.ndim))
    order[a], order[b] = order[b], order[a]
    shape = [data.shape[k] for k in order]
    return _copy("swapaxes", data, shape, transposed(data.shape, order), out)


def flip(data: NDArray, axis: Any, out: NDArray | None = None) -> NDArray:
    """``data`` with the order of elements along ``axis`` (an int or a tuple) reversed."""
    data = _data(data, "flip")
    flipped = _axes(axis, data.ndim, "flip")
    strides = list(contiguous_strides(data.shape))
    offset = 0
    for a in flipped:
        offset += max(data.shape[a] - 1, 0) * strides[a]
        strides[a] = -strides[a]
    return _copy("flip", data, data.shape, View(tuple(strides), offset), out)


reverse = flip


def expand_dims_shape(data: NDArray, axis: Any) -> tuple[int, ...]:
    """The shape of ``expand_dims(data, axis)`` (``axis`` checked)."""
    a = _axis(axis, data.ndim, "expand_dims", extra=1)
    return data.shape[:a] + (1,) + data.shape[a:]


def expand_dims(data: NDArray, axis: Any, out: NDArray | None = None) -> NDArray:
    """``data`` with a new dimension of size 1 at ``axis`` (``-ndim-1 <= axis <= ndim``)."""
    data = _data(data, "expand_dims")
    return _contiguous("expand_dims", data, expand_dims_shape(data, axis), out)


def squeeze_shape(data: NDArray, axis: Any = None) -> tuple[int, ...]:
    """The shape of ``squeeze(data, axis)`` (``axis`` checked): squeezing every dimension
    leaves ``(1,)``, as MXNet."""
    if axis is None:
        dropped = tuple(k for k, n in enumerate(data.shape) if n == 1)
    else:
        dropped = _axes(axis, data.ndim, "squeeze")
        for a in dropped:
            if data.shape[a] != 1:
                raise InvalidValue(f"squeeze: axis {a} has size {data.shape[a]}, not 1")
    return tuple(n for k, n in enumerate(data.shape) if k not in dropped) or (1,)


def squeeze(data: NDArray, axis: Any = None, out: NDArray | None = None) -> NDArray:
    """``data`` without its size-1 dimensions (those of ``axis`` only, when given); squeezing
    every dimension leaves shape ``(1,)``, as MXNet."""
    data = _data(data, "squeeze")
    return _contiguous("squeeze", data, squeeze_shape(data, axis), out)


def flatten_shape(data: NDArray) -> tuple[int, ...]:
    """The shape of ``flatten(data)``: the first dimension by the product of the others."""
    if data.ndim == 0:
        raise InvalidValue("flatten: data must have at least one dimension, got shape ()")
    return (data.shape[0], math.prod(data.shape[1:]))


def flatten(data: NDArray, out: NDArray | None = None) -> NDArray:
    """``data`` as 2-D: its first dimension by the product of the others."""
    data = _data(data, "flatten")
    return _contiguous("flatten", data, flatten_shape(data), out)


Flatten = flatten


def reshape(data: NDArray, shape: Any = None, reverse: bool = False,
            out: NDArray | None = None) -> NDArray:
    """A copy of ``data`` with a new shape (MXNet's special values 0, -1, -2, -3, -4;
    ``reverse=True`` reads them from the right), as ``mxnet.nd.reshape``."""
    data = _data(data, "reshape")
    if shape is None:
        raise InvalidValue("reshape: shape is required")
    spec = items(shape)
    return _contiguous("reshape", data, reshaped(data.shape, spec, bool(reverse)), out)


def _span(begin: Any, end: Any, ndim: int, what: str) -> slice:
    """The dimensions ``[begin, end)`` of a shape of ``ndim`` dimensions (None: the ends;
    negative: from the right), checked."""
    bounds = []
    for value, default, name in ((begin, 0, "begin"), (end, ndim, "end")):
        k = default if value is None else _int(value, f"reshape_like: {what}_{name}")
        k = k + ndim if k < 0 else k
        if not 0 <= k <= ndim:
            raise InvalidValue(f"reshape_like: {what}_{name} {value} is out of range for "
                               f"{ndim} dimensions")
        bounds.append(k)
    if bounds[0] > bounds[1]:
        raise InvalidValue(f"reshape_like: {what}_begin {begin} is after {what}_end {end}")
    return slice(*bounds)


def reshape_like(lhs: NDArray, rhs: NDArray, lhs_begin: Any = None, lhs_end: Any = None,
                 rhs_begin: Any = None, rhs_end: Any = None,
                 out: NDArray | None = None) -> NDArray:
    """A copy of ``lhs`` whose dimensions ``[lhs_begin, lhs_end)`` are replaced by ``rhs``'s
    ``[rhs_begin, rhs_end)`` (by default: ``lhs`` in ``rhs``'s shape), as MXNet's."""
    lhs, rhs = _data(lhs, "reshape_like"), _data(rhs, "reshape_like")
    left = _span(lhs_begin, lhs_end, lhs.ndim, "lhs")
    shape = (lhs.shape[:left.start] + rhs.shape[_span(rhs_begin, rhs_end, rhs.ndim, "rhs")]
             + lhs.shape[left.stop:])
    if math.prod(shape) != lhs.size:
        raise InvalidValue(f"reshape_like: lhs of shape {lhs.shape} ({lhs.size} elements) "
                           f"cannot take the shape {shape} from rhs of shape {rhs.shape}")
    return _contiguous("reshape", lhs, shape, out)


def shape_array(data: NDArray) -> NDArray:
    """``data``'s shape as a 1-D int64 array (on its context), as ``mx.nd.shape_array``."""
    data = _data(data, "shape_array")
    return NDArray(np.array(data.shape, dtype=np.int64), data.context)  # metadata only


def size_array(data: NDArray) -> NDArray:
    """``data``'s number of elements as a (1,) int64 array, as ``mx.nd.size_array``."""
    data = _data(data, "size_array")
    return NDArray(np.array([data.size], dtype=np.int64), data.context)  # metadata only


def tile(data: NDArray, reps: Any, out: NDArray | None = None) -> NDArray:
    """``data`` repeated ``reps[k]`` times along each dimension (numpy's alignment of ``reps``
    and the shape on the right; every rep at least 1, as MXNet)."""
    data = _data(data, "tile")
    listed = items(reps)
    counts = [integer(r, "tile: reps", low=1) for r in listed]
    rank = max(len(counts), data.ndim)
    shape = (1,) * (rank - data.ndim) + data.shape
    counts = [1] * (rank - len(counts)) + counts
    strides = contiguous_strides(shape)
    grid = [x for r, n in zip(counts, shape) for x in (r, n)]
    grid_strides = tuple(x for s in strides for x in (0, s))
    result = [r * n for r, n in zip(counts, shape)]
    return _copy("tile", data, grid, View(grid_strides), out, result)


def repeat(data: NDArray, repeats: Any, axis: Any = None, out: NDArray | None = None) -> NDArray:
    """Each element of ``data`` repeated ``repeats`` times along ``axis`` (of the flattened
    array when ``axis`` is None)."""
    data = _data(data, "repeat")
    count = integer(repeats, "repeat: repeats", low=0)
    shape = data.shape if axis is not None else (data.size,)
    a = len(shape) - 1 if axis is None else _axis(axis, data.ndim, "repeat")
    strides = contiguous_strides(shape)
    grid = shape[: a + 1] + (count,) + shape[a + 1:]
    grid_strides = strides[: a + 1] + (0,) + strides[a + 1:]
    result = shape[:a] + (shape[a] * count,) + shape[a + 1:]
    return _copy("repeat", data, grid, View(grid_strides), out, result)


def _broadcast(op: str, data: NDArray, shape: Sequence[int], out: Any) -> NDArray:
    """``data`` broadcast to ``shape`` (same rank; each dimension equal or 1 in ``data``)."""
    for have, want in zip(data.shape, shape):
        if have != want and have != 1:
            raise InvalidValue(f"{op}: an array of shape {data.shape} cannot be broadcast to "
                               f"{tuple(shape)}")
    return _copy(op, data, shape, broadcast(data.shape, shape), out)


def broadcast_to(data: NDArray, shape: Any, out: NDArray | None = None) -> NDArray:
    """``data`` broadcast to ``shape`` (of the same rank; a 0 in ``shape`` keeps that dimension,
    as MXNet)."""
    data = _data(data, "broadcast_to")
    wanted = items(shape)
    if len(wanted) != data.ndim:
        raise InvalidValue(f"broadcast_to: an array of shape {data.shape} cannot be broadcast "
                           f"to {wanted}: the ranks differ")
    dims = [integer(d, "broadcast_to: shape") for d in wanted]
    return _broadcast("broadcast_to", data, [d or n for d, n in zip(dims, data.shape)], out)


def broadcast_like(lhs: NDArray, rhs: NDArray, lhs_axes: Any = None, rhs_axes: Any = None,
                   out: NDArray | None = None) -> NDArray:
    """``lhs`` broadcast to the shape of ``rhs`` (or its ``lhs_axes`` to the sizes of ``rhs``'s
    ``rhs_axes``)."""
    lhs, rhs = _data(lhs, "broadcast_like"), _data(rhs, "broadcast_like")
    if (lhs_axes is None) != (rhs_axes is None):
        raise InvalidValue("broadcast_like: give both lhs_axes and rhs_axes, or neither")
    if lhs_axes is None:
        if lhs.ndim != rhs.ndim:
            raise InvalidValue(f"broadcast_like: shapes {lhs.shape} and {rhs.shape} have "
                               "different ranks")
        return _broadcast("broadcast_like", lhs, rhs.shape, out)
    mine = _axes(lhs_axes, lhs.ndim, "broadcast_like", "lhs_axes")
    theirs = _axes(rhs_axes, rhs.ndim, "broadcast_like", "rhs_axes")
    if not mine:
        raise InvalidValue("broadcast_like: lhs_axes and rhs_axes are empty (MXNet refuses "
                           "an empty axes tuple; leave both out to broadcast every axis)")
    if len(mine) != len(theirs):
        raise InvalidValue(f"broadcast_like: lhs_axes {mine} and rhs_axes {theirs} differ in "
                           "length")
    shape = list(lhs.shape)
    for a, b in zip(mine, theirs):
        shape[a] = rhs.shape[b]
    return _broadcast("broadcast_like", lhs, shape, out)


def broadcast_axis(data: NDArray, axis: Any = (), size: Any = (),
                   out: NDArray | None = None) -> NDArray:
    """``data`` with each size-1 dimension of ``axis`` broadcast to the matching ``size``."""
    data = _data(data, "broadcast_axis")
    axes = _axes(axis, data.ndim, "broadcast_axis")
    sizes = items(size)
    if len(sizes) != len(axes):
        raise InvalidValue(f"broadcast_axis: axis {axes} and size {sizes} differ in length")
    shape = list(data.shape)
    for a, n in zip(axes, sizes):
        if data.shape[a] != 1:
            raise InvalidValue(f"broadcast_axis: axis {a} has size {data.shape[a]}; only "
                               "size-1 axes broadcast")
        shape[a] = integer(n, "broadcast_axis: size")
    return _broadcast("broadcast_axis", data, shape, out)


broadcast_axes = broadcast_axis


def _joined(op: str, data: Sequence[Any]) -> tuple[NDArray, ...]:
    """The arrays of a concat / stack, checked: at least one, NDArrays of one dtype and rank."""
    arrays = tuple(_data(a, op) for a in data)
    if not arrays:
        raise InvalidValue(f"{op}: needs at least one array")
    first = arrays[0]
    for k, a in enumerate(arrays):
        if a.dtype != first.dtype:
            raise InvalidValue(f"{op}: array {k} has dtype {np.dtype(a.dtype).name}, array 0 "
                               f"{np.dtype(first.dtype).name}; every array needs one dtype")
        if a.ndim != first.ndim:
            raise InvalidValue(f"{op}: array {k} has shape {a.shape}, array 0 {first.shape}; "
                               "the ranks differ")
    return arrays


def _num_args(op: str, num_args: Any, count: int) -> None:
    if num_args is not None and integer(num_args, f"{op}: num_args") != count:
        raise InvalidValue(f"{op}: num_args is {num_args} but {count} arrays were given")


def concat(*data: NDArray, dim: Any = 1, num_args: Any = None,
           out: NDArray | None = None) -> NDArray:
    """The arrays joined along dimension ``dim``, as ``mxnet.nd.concat``; csr arrays joined on
    dim 0 stay csr, other sparse inputs fall back to dense."""
    arrays = _joined("concat", data)
    _num_args("concat", num_args, len(arrays))
    first = arrays[0]
    axis = _axis(dim, first.ndim, "concat", "dim")
    for k, a in enumerate(arrays):
        if any(x != y for j, (x, y) in enumerate(zip(a.shape, first.shape)) if j != axis):
            raise InvalidValue(f"concat: array {k} has shape {a.shape}, array 0 {first.shape}; "
                               f"they may differ only in dimension {axis}")
    shape = list(first.shape)
    shape[axis] = sum(a.shape[axis] for a in arrays)
    check_out("concat", out, shape, first.dtype, first.context)
    if axis == 0 and all(a.stype == "csr" for a in arrays):
        return invoke("_concat_csr", arrays, out=out)
    return invoke("concat", arrays, out=out, axis=axis)


Concat = concat


def stack(*data: NDArray, axis: Any = 0, num_args: Any = None,
          out: NDArray | None = None) -> NDArray:
    """The arrays (of one shape) stacked along a new dimension ``axis``."""
    arrays = _joined("stack", data)
    _num_args("stack", num_args, len(arrays))
    first = arrays[0]
    a = _axis(axis, first.ndim, "stack", extra=1)
    for k, x in enumerate(arrays):
        if x.shape != first.shape:
            raise InvalidValue(f"stack: array {k} has shape {x.shape}, array 0 {first.shape}; "
                               "every array needs one shape")
    shape = first.shape[:a] + (len(arrays),) + first.shape[a:]
    check_out("stack", out, shape, first.dtype, first.context)
    return invoke("stack", arrays, out=out, axis=a)


def _pad_widths(data: NDArray, pad_width: Any) -> tuple[list[int], list[int]]:
    """pad's widths before and after each padded dimension, checked as MXNet does."""
    widths = tuple(pad_width) if isinstance(pad_width, (tuple, list)) else ()
    if len(widths) != 2 * data.ndim:
        raise InvalidValue(f"pad: pad_width must hold 2 values per dimension ({2 * data.ndim}), "
                           f"got {pad_width!r}")
    values = [integer(w, "pad: pad_width") for w in widths]
    if any(values[:4]):
        raise InvalidValue(f"pad: padding of the first two dimensions must be 0, got "
                           f"pad_width {tuple(values)}")
    return values[4::2], values[5::2]


def pad(data: NDArray, mode: str = "constant", pad_width: Any = None, constant_value: Any = 0,
        out: NDArray | None = None) -> NDArray:
    """A 4-D or 5-D float array padded on its last 2 or 3 dimensions, as ``mxnet.nd.pad``
    (``constant`` with ``constant_value``, ``edge`` or ``reflect``)."""
    data = _data(data, "pad")
    if data.ndim not in (4, 5):
        raise InvalidValue(f"pad: only 4-D and 5-D arrays are padded, got shape {data.shape}")
    if mode not in PAD_MODES:
        raise InvalidValue(f"pad: mode must be one of {PAD_MODES}, got {mode!r}")
    if np.dtype(data.dtype).kind != "f":
        raise InvalidValue(f"pad: only floating point arrays are padded, got "
                           f"{np.dtype(data.dtype).name}")
    before, after = _pad_widths(data, pad_width)
    spatial = data.shape[2:]
    if 0 in spatial and math.prod(data.shape[:2]):
        raise InvalidValue(f"pad: the padded dimensions must not be empty, got {data.shape}")
    if mode == "reflect" and any(max(b, a) >= n for b, a, n in zip(before, after, spatial)):
        raise InvalidValue(f"pad: reflect padding must be smaller than each padded dimension "
                           f"{spatial}, got pad_width {tuple(pad_width)}")
    if not isinstance(constant_value, numbers.Real) or isinstance(constant_value, bool):
        raise InvalidType(f"pad: constant_value must be a real number, got {constant_value!r}")
    value = float(constant_value)
    shape = data.shape[:2] + tuple(n + b + a for n, b, a in zip(spatial, before, after))
    check_out("pad", out, shape, data.dtype, data.context)
    return invoke("pad", (data,), out=out, mode=mode, before=before, after=after, value=value)


Pad = pad


def _blocks(op: str, data: Any, block_size: Any) -> tuple[NDArray, int]:
    """``data`` (4-D) and ``block_size`` (at least 1), checked for the block moves."""
    data = _data(data, op)
    b = integer(block_size, f"{op}: block_size", low=1)
    if data.ndim != 4:
        raise InvalidValue(f"{op}: data must be 4-D (batch, channels, height, width), got shape "
                           f"{data.shape}")
    return data, b


def depth_to_space(data: NDArray, block_size: Any, out: NDArray | None = None) -> NDArray:
    """Blocks of ``block_size²`` channels moved into ``block_size`` x ``block_size`` spatial
    tiles, as ``mxnet.nd.depth_to_space``: (N, C, H, W) -> (N, C / b², H·b, W·b), one strided
    copy (so autograd differentiates it as a view)."""
    data, b = _blocks("depth_to_space", data, block_size)
    n, c, h, w = data.shape
    if c % (b * b):
        raise InvalidValue(f"depth_to_space: the {c} channels must be a multiple of block_size² "
                           f"({b * b})")
    split, order = (n, b, b, c // (b * b), h, w), (0, 3, 4, 1, 5, 2)
    return _copy("depth_to_space", data, [split[a] for a in order], transposed(split, order), out,
                 (n, c // (b * b), h * b, w * b))


def space_to_depth(data: NDArray, block_size: Any, out: NDArray | None = None) -> NDArray:
    """``block_size`` x ``block_size`` spatial tiles moved into channels, as
    ``mxnet.nd.space_to_depth``: (N, C, H, W) -> (N, C·b², H / b, W / b), the inverse of
    depth_to_space."""
    data, b = _blocks("space_to_depth", data, block_size)
    n, c, h, w = data.shape
    if h % b or w % b:
        raise InvalidValue(f"space_to_depth: height {h} and width {w} must be multiples of "
                           f"block_size {b}")
    split, order = (n, c, h // b, b, w // b, b), (0, 3, 5, 1, 2, 4)
    return _copy("space_to_depth", data, [split[a] for a in order], transposed(split, order), out,
                 (n, c * b * b, h // b, w // b))


def concatenate(arrays: Sequence[NDArray], axis: int = 0, always_copy: bool = True) -> NDArray:
    """``arrays`` joined along ``axis`` (a new array, ``always_copy`` or not), as
    ``mxnet.nd.concatenate``: ``concat(*arrays, dim=axis)``."""
    if isinstance(arrays, NDArray) or not isinstance(arrays, Sequence) or not arrays:
        raise InvalidType(f"concatenate: arrays must be a non-empty list of NDArrays, got "
                          f"{arrays!r}")
    return concat(*arrays, dim=axis)


def moveaxis(tensor: NDArray, source: Any, destination: Any) -> NDArray:
    """``tensor`` with axes ``source`` moved to ``destination`` (ints or sequences of them,
    negative from the end), the others in order, as ``mxnet.nd.moveaxis`` and numpy's."""
    tensor = _data(tensor, "moveaxis")
    ndim = len(tensor.shape)
    moved = _axes(source, ndim, "moveaxis", "source")
    places = _axes(destination, ndim, "moveaxis", "destination")
    if len(moved) != len(places):
        raise InvalidValue(f"moveaxis: source {source!r} and destination {destination!r} must "
                           "name as many axes")
    order = [a for a in range(ndim) if a not in moved]
    for place, axis in sorted(zip(places, moved)):
        order.insert(place, axis)
    return transpose(tensor, axes=tuple(order))


__all__ = [
    "Concat", "Flatten", "Pad", "broadcast_axes", "broadcast_axis", "broadcast_like",
    "broadcast_to", "concat", "concatenate", "expand_dims", "flatten", "flip", "moveaxis", "pad",
    "repeat", "reshape", "reshape_like", "reverse", "shape_array", "size_array", "squeeze",
    "stack", "swapaxes", "tile", "transpose", "depth_to_space", "space_to_depth",
]
