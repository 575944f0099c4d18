"""Strided views of flat buffers copied into fresh C-contiguous arrays (kernel ``strided``).

A view of a buffer is what numpy's ``as_strided`` describes: an output ``shape``, and for the
operand a ``View(strides, offset)`` in *elements* (0 broadcasts a dimension, a negative stride
walks it backwards) into the operand's flat, C-contiguous storage. Transposes, slices with
steps, flips, ``broadcast_to`` and the broadcasting of binary ops are all views:

    copy_view(x, shape, View(strides, offset))           -> a C-contiguous copy of the view
    binary_view("add", a, a_view, b, b_view, out_shape)   -> a + b through both views

Buffers are host numpy arrays or GPU ``DeviceArray``s; the output is allocated next to the first
operand. The host merges dimensions that are contiguous in every operand and drops size-1 ones
(``collapse``), so the kernel divides once per remaining outer dimension and row. Views are
checked against their buffers before any kernel runs (``SparsegenError`` on an out-of-range
element), so no view reads out of bounds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ..device import colocate, empty_like
from ..errors import SparsegenError
from ..formats import INDEX_DTYPE
from .layout import dtype_name, kernel


class View(NamedTuple):
    """Where the elements of an output shape live in an operand's flat storage."""

    strides: tuple[int, ...]  # per output dimension, in elements (0: broadcast)
    offset: int = 0


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """The C-contiguous strides of ``shape``, in elements."""
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= max(int(size), 1)
    return tuple(reversed(strides))


def contiguous(shape: Sequence[int]) -> View:
    """The view of a C-contiguous array of ``shape`` as itself."""
    return View(contiguous_strides(shape))


def broadcast(shape: Sequence[int], out_shape: Sequence[int]) -> View:
    """The view of a C-contiguous array of ``shape`` broadcast to ``out_shape`` (numpy's rules:
    shapes aligned on the right, size-1 dimensions repeated; the caller checks compatibility)."""
    lead = len(out_shape) - len(shape)
    strides = contiguous_strides(shape)
    return View((0,) * lead + tuple(0 if size == 1 else stride
                                     for size, stride in zip(shape, strides)))


def transposed(shape: Sequence[int], axes: Sequence[int]) -> View:
    """The view of a C-contiguous array of ``shape`` with its dimensions in order ``axes``
    (the output shape is ``[shape[a] for a in axes]``)."""
    strides = contiguous_strides(shape)
    return View(tuple(strides[a] for a in axes))


def collapse(shape: Sequence[int], views: Sequence[View]) -> tuple[list[int], list[list[int]]]:
    """``shape`` and each view's strides with size-1 dimensions dropped and neighbours merged
    where every view steps through them contiguously (at least one dimension is kept)."""
    dims: list[int] = []
    strides: list[list[int]] = [[] for _ in views]
    for k, size in enumerate(shape):
        if size == 1:
            continue
        if dims and all(s[-1] == v.strides[k] * size for s, v in zip(strides, views)):
            dims[-1] *= size
            for s, v in zip(strides, views):
                s[-1] = v.strides[k]
            continue
        dims.append(int(size))
        for s, v in zip(strides, views):
            s.append(int(v.strides[k]))
    if not dims:
        dims, strides = [1], [[0] for _ in views]
    return dims, strides


def _check(buffer: Any, shape: Sequence[int], view: View, what: str) -> None:
    """Raise unless every element of ``view`` over ``shape`` lies inside ``buffer``."""
    if len(view.strides) != len(shape):
        raise SparsegenError(f"{what}: view strides {view.strides} do not match shape {shape}")
    if math.prod(shape) == 0:
        return
    low = view.offset + sum(min(0, s * (n - 1)) for s, n in zip(view.strides, shape))
    high = view.offset + sum(max(0, s * (n - 1)) for s, n in zip(view.strides, shape))
    if low < 0 or high >= buffer.size:
        raise SparsegenError(
            f"{what}: view (shape {tuple(shape)}, strides {view.strides}, offset {view.offset}) "
            f"reaches elements {low}..{high} of a buffer of {buffer.size}"
        )


def _meta(shape: Sequence[int], views: Sequence[View], near: Any) -> tuple[Any, int, int]:
    """The kernel's meta buffer (module docstring of templates/strided.py) in ``near``'s memory,
    and the output's rows and columns."""
    dims, strides = collapse(shape, views)
    outer = [[dims[k], *(s[k] for s in strides)] for k in reversed(range(len(dims) - 1))]
    meta = [*(v.offset for v in views), *(s[-1] for s in strides), *(x for d in outer for x in d)]
    return colocate(np.array(meta, INDEX_DTYPE), near), math.prod(dims[:-1]), dims[-1]


def copy_view(x: Any, shape: Sequence[int], view: View) -> Any:
    """A fresh C-contiguous array of ``shape``: the elements ``view`` picks from ``x``'s flat
    storage (``x`` C-contiguous, any shape)."""
    _check(x, shape, view, "copy_view")
    out = empty_like(x, tuple(shape), x.dtype)
    if out.size:
        meta, rows, cols = _meta(shape, [view], x)
        kernel("strided", (dtype_name(x.dtype),), x, out.size).copy(
            x.reshape(-1), meta, out.reshape(rows, cols))
    return out


def binary_view(fn: str, a: Any, a_view: View, b: Any, b_view: View,
                out_shape: Sequence[int]) -> Any:
    """A fresh C-contiguous array of ``out_shape``: ``fn`` (a name of
    ``opnames.STRIDED_BINARY_OPS``) of the elements the views pick from ``a`` and ``b`` (one
    dtype, C-contiguous, in one memory); the result has their dtype."""
    if a.dtype != b.dtype:
        raise SparsegenError(f"binary_view: operand dtypes differ ({a.dtype} and {b.dtype})")
    _check(a, out_shape, a_view, f"binary_view {fn}, operand a")
    _check(b, out_shape, b_view, f"binary_view {fn}, operand b")
    out = empty_like(a, tuple(out_shape), a.dtype)
    if out.size:
        meta, rows, cols = _meta(out_shape, [a_view, b_view], a)
        getattr(kernel("strided", (dtype_name(a.dtype),), a, out.size), fn)(
            a.reshape(-1), b.reshape(-1), meta, out.reshape(rows, cols))
    return out
