"""Slicing ops of ``mx.nd`` (MXNet 1.9.1 semantics): ``slice`` / ``crop``, ``slice_axis``,
``slice_like`` and ``split`` / ``SliceChannel``, as copies of strided views (kernel
``strided``); csr ``slice`` without steps stays csr (kernel ``shape``'s csr slice)."""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .. import tape
from ..device import DeviceArray
from ..errors import InvalidValue, SparsegenError
from ..ops.strided import View, contiguous_strides
from ..params import flag, integer, items, real
from .ndarray import NDArray
from .dispatch import check_out, invoke
from .shape import _axes, _axis, _data, _int


def _ranges(shape: Sequence[int], ranges: Sequence[tuple[int, int, int]]) -> tuple[list[int], View]:
    """The shape and view of ``range(start, stop, step)`` on each dimension (the rest whole)."""
    strides = contiguous_strides(shape)
    dims, steps, offset = [], [], 0
    for k, n in enumerate(shape):
        start, stop, step = ranges[k] if k < len(ranges) else (0, n, 1)
        size = len(range(start, stop, step))
        dims.append(size)
        steps.append(step * strides[k])
        offset += start * strides[k] if size else 0
    return dims, View(tuple(steps), offset)


def _optional(values: Any, name: str, count: int) -> list[Any]:
    if values is None:
        return [None] * count
    listed = list(items(values))
    return [None if v is None else _int(v, f"slice: {name}") for v in listed]


def slice(data: NDArray, begin: Any, end: Any, step: Any = None,  # noqa: A001 - MXNet's name
          out: NDArray | None = None) -> NDArray:
    """``data[begin:end:step]`` on the leading dimensions (``None`` entries take the defaults,
    bounds are clipped as Python's), as ``mxnet.nd.slice``; a csr matrix sliced without
    ``step`` stays csr."""
    data = _data(data, "slice")
    key = _key("slice", data, begin, end, step)
    ranges = [part.indices(data.shape[k]) for k, part in enumerate(key)]
    return _sliced("slice", data, ranges, step is None, out)


def _key(op: str, data: NDArray, begin: Any, end: Any, step: Any) -> tuple[builtins.slice, ...]:
    """MXNet's ``begin`` / ``end`` / ``step`` (``None`` entries take the defaults) as the Python
    slices of ``data``'s leading dimensions they name."""
    starts = _optional(begin, "begin", 0)
    stops = _optional(end, "end", 0)
    if len(starts) != len(stops):
        raise SparsegenError(f"{op}: begin {tuple(starts)} and end {tuple(stops)} differ in "
                             "length")
    if len(starts) > data.ndim:
        raise SparsegenError(f"{op}: begin {tuple(starts)} has more entries than data has "
                             f"dimensions ({data.shape})")
    steps = _optional(step, "step", len(starts)) if step is not None else [None] * len(starts)
    if step is not None and len(steps) != len(starts):
        raise SparsegenError(f"{op}: step {tuple(steps)} and begin differ in length")
    for k, s in enumerate(steps):
        if s == 0:
            raise SparsegenError(f"{op}: step[{k}] cannot be 0")
    return tuple(builtins.slice(b, e, s) for b, e, s in zip(starts, stops, steps))


def _slice_assign(lhs: NDArray, rhs: NDArray, begin: Any, end: Any, step: Any = None,
                  out: NDArray | None = None) -> NDArray:
    """``lhs`` with its ``slice(begin, end, step)`` replaced by ``rhs`` (of that slice's shape),
    written into ``out`` (which may be ``lhs``), as MXNet's ``_slice_assign`` / ``_crop_assign``."""
    lhs, rhs = _data(lhs, "_slice_assign"), _data(rhs, "_slice_assign")
    key = _key("_slice_assign", lhs, begin, end, step)
    sliced = (*(len(range(*part.indices(n))) for part, n in zip(key, lhs.shape)),
              *lhs.shape[len(key):])
    if rhs.shape != sliced:
        raise InvalidValue(f"_slice_assign: rhs has shape {rhs.shape}; the slice begin={begin} "
                           f"end={end} of lhs {lhs.shape} has shape {sliced}")
    return _assigned("_slice_assign", lhs, key, rhs, out)


def _slice_assign_scalar(data: NDArray, scalar: Any = 0, begin: Any = (), end: Any = (),
                         step: Any = None, out: NDArray | None = None) -> NDArray:
    """``data`` with its ``slice(begin, end, step)`` set to ``scalar``, as MXNet's
    ``_slice_assign_scalar`` / ``_crop_assign_scalar``."""
    data = _data(data, "_slice_assign_scalar")
    key = _key("_slice_assign_scalar", data, begin, end, step)
    return _assigned("_slice_assign_scalar", data, key, real(scalar, "scalar"), out)


def _assigned(op: str, data: NDArray, key: tuple[builtins.slice, ...], value: Any,
              out: NDArray | None) -> NDArray:
    """``data`` (copied into ``out``, or a new array) with ``key`` set to ``value``."""
    check_out(op, out, data.shape, data.dtype, data.context)
    target = data.copy() if out is None else out
    if target is not data:
        target[:] = data
    target[key] = value
    return target


def _sliced(op: str, data: NDArray, ranges: list[tuple[int, int, int]], plain: bool,
            out: Any) -> NDArray:
    """``data`` over ``ranges`` (csr without steps stays csr)."""
    shape, view = _ranges(data.shape, ranges)
    check_out(op, out, shape, data.dtype, data.context)
    if plain and data.stype == "csr":
        (r0, r1, _), (c0, c1, _) = [ranges[k] if k < len(ranges) else (0, n, 1)
                                    for k, n in enumerate(data.shape)]
        return invoke("_slice_csr", (data,), out=out, rows=(r0, max(r0, r1)),
                      cols=(c0, max(c0, c1)))
    return invoke(op, (data,), out=out, shape=tuple(shape), view=view, into=None)


crop = slice


def slice_axis(data: NDArray, axis: Any, begin: Any, end: Any,
               out: NDArray | None = None) -> NDArray:
    """``data`` over ``begin:end`` of dimension ``axis`` (``end`` None: to the end; negative
    bounds count from the end; ``begin < end <= size`` as MXNet requires)."""
    data = _data(data, "slice_axis")
    a = _axis(axis, data.ndim, "slice_axis")
    n = data.shape[a]
    b = _int(begin, "slice_axis: begin")
    e = n if end is None else _int(end, "slice_axis: end")
    b, e = b + n if b < 0 else b, e + n if e < 0 else e
    if not 0 <= b < e <= n:
        raise SparsegenError(f"slice_axis: begin {begin} and end {end} must give "
                             f"0 <= begin < end <= {n} on axis {a}")
    ranges = [(0, m, 1) for m in data.shape[:a]] + [(b, e, 1)]
    return _sliced("slice_axis", data, ranges, False, out)


def slice_like(data: NDArray, shape_like: NDArray, axes: Any = (),
               out: NDArray | None = None) -> NDArray:
    """``data`` cut to the shape of ``shape_like`` (on ``axes`` only, when given), from 0."""
    data, like = _data(data, "slice_like"), _data(shape_like, "slice_like")
    if axes == () or axes is None:
        if like.ndim != data.ndim:
            raise SparsegenError(f"slice_like: shapes {data.shape} and {like.shape} have "
                                 "different ranks (give axes to slice some dimensions only)")
        chosen = tuple(range(data.ndim))
    else:
        chosen = _axes(axes, data.ndim, "slice_like", "axes")  # negative: from data's end
        beyond = [a for a in chosen if a >= like.ndim]
        if beyond:
            raise SparsegenError(f"slice_like: axis {beyond[0]} (of axes {axes}) is beyond "
                                 f"shape_like's {like.ndim} dimensions (shape {like.shape})")
    ranges = [(0, n, 1) for n in data.shape]
    for a in chosen:
        if like.shape[a] > data.shape[a]:
            raise SparsegenError(f"slice_like: axis {a} of shape_like ({like.shape[a]}) exceeds "
                                 f"data's ({data.shape[a]})")
        ranges[a] = (0, like.shape[a], 1)
    return _sliced("slice_like", data, ranges, False, out)


def split(data: NDArray, num_outputs: Any, axis: Any = 1, squeeze_axis: Any = False) -> Any:
    """``data`` cut into ``num_outputs`` equal parts along ``axis`` (a list, or the array itself
    for one part, as MXNet); ``squeeze_axis`` drops that axis when each part has size 1."""
    data = _data(data, "split")
    count = integer(num_outputs, "split: num_outputs", low=1)
    a = _axis(axis, data.ndim, "split")
    squeeze = flag(squeeze_axis, "split: squeeze_axis")
    n = data.shape[a]
    if n % count:
        raise SparsegenError(f"split: {count} equal parts of axis {a} (size {n}) are not "
                             f"possible; {count} does not divide {n}")
    part = n // count
    if squeeze and part != 1:
        raise SparsegenError(f"split: squeeze_axis needs parts of size 1, got {part} "
                             f"(axis {a} of size {n} into {count})")
    parts = _parts(data, a, [k * part for k in range(count + 1)], squeeze)
    return parts[0] if count == 1 else parts


SliceChannel = split


def _parts(data: NDArray, axis: int, bounds: list[int], squeeze: bool) -> list[NDArray]:
    """``data`` cut along ``axis`` between consecutive ``bounds`` (each part a strided copy,
    op ``split``; ``squeeze`` drops the axis)."""
    parts = []
    for begin, end in zip(bounds, bounds[1:]):
        ranges = [(0, m, 1) for m in data.shape[:axis]] + [(begin, end, 1)]
        shape, view = _ranges(data.shape, ranges)
        into = shape[:axis] + shape[axis + 1:] if squeeze else None
        parts.append(invoke("split", (data,), shape=tuple(shape), view=view, into=into))
    return parts


def split_v2(data: NDArray, indices_or_sections: Any, axis: Any = 0,
             squeeze_axis: Any = False) -> Any:
    """``data`` cut along ``axis`` as numpy's ``split``: into ``indices_or_sections`` equal
    parts (an int), or at the given increasing indices (a tuple: empty parts allowed); one
    part is the array itself, as MXNet's ``split_v2``."""
    data = _data(data, "split_v2")
    a = _axis(axis, data.ndim, "split_v2")
    squeeze = flag(squeeze_axis, "split_v2: squeeze_axis")
    n = data.shape[a]
    if isinstance(indices_or_sections, (tuple, list)):
        cuts = [integer(i, "split_v2: indices_or_sections") for i in indices_or_sections]
        if any(c > n for c in cuts) or cuts != sorted(cuts):
            raise InvalidValue(f"split_v2: indices_or_sections {tuple(cuts)} must increase "
                               f"within axis {a} (size {n})")
        bounds = [0, *cuts, n]
    else:
        count = integer(indices_or_sections, "split_v2: indices_or_sections", low=1)
        if n % count:
            raise InvalidValue(f"split_v2: {count} equal parts of axis {a} (size {n}) are not "
                               "possible (array split does not result in an equal division)")
        bounds = [k * (n // count) for k in range(count + 1)]
    if squeeze and any(e - b != 1 for b, e in zip(bounds, bounds[1:])):
        raise InvalidValue("split_v2: squeeze_axis needs every part of size 1")
    parts = _parts(data, a, bounds, squeeze)
    return parts[0] if len(parts) == 1 else parts


def is_basic(index: tuple[Any, ...]) -> bool:
    """Whether a checked indexing key (``ndarray.numpy_key``) holds only ints, slices, None and
    ``...`` (numpy's basic indexing: the result is a strided view)."""
    return all(p is None or p is Ellipsis or isinstance(p, (int, builtins.slice)) for p in index)


def _picked(shape: tuple[int, ...], index: tuple[Any, ...]) -> tuple[np.ndarray, int]:
    """What a basic key picks of an array of ``shape``, on a one-byte probe (numpy's bounds
    checks and IndexError, never reading values): the picked view and its element offset."""
    probe = as_strided(np.zeros(1, np.uint8), shape, contiguous_strides(shape))
    picked = probe[index]
    return picked, picked.__array_interface__["data"][0] - probe.__array_interface__["data"][0]


def picks_one_block(index: tuple[Any, ...], shape: tuple[int, ...]) -> bool:
    """Whether the basic key ``index`` picks one contiguous block of a C-ordered array of
    ``shape`` (what ``x[index]`` returns as a view; MXNet's
    ``_basic_indexing_slice_is_contiguous``)."""
    return bool(_picked(tuple(shape), tuple(index))[0].flags.c_contiguous)


def getitem(data: NDArray, index: tuple[Any, ...]) -> NDArray:
    """``data[index]`` for a basic key: a view when it picks one contiguous block of a host
    array (as MXNet's leading-axis views), else a copy of the strided view (kernel
    ``strided``)."""
    picked, offset = _picked(data.shape, index)
    storage = data._storage
    view = View(tuple(int(s) for s in picked.strides), int(offset))
    if (picked.flags.c_contiguous and not isinstance(storage, DeviceArray)
            and storage.flags.c_contiguous):
        block = storage.reshape(-1)[offset : offset + picked.size]
        result = NDArray(block.reshape(picked.shape), data._ctx)
        tape.record("_getitem", (data,), result, {"shape": picked.shape, "view": view})
        return result
    return invoke("_getitem", (data,), shape=picked.shape, view=view, into=None)


__all__ = ["SliceChannel", "crop", "slice", "slice_axis", "slice_like", "split", "split_v2"]
