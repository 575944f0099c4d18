"""Shape, slicing and creation ops on storage (kernels ``strided`` and ``shape``).

Every result is a fresh C-contiguous buffer (or format) next to the inputs; views (transpose,
slices, flips, broadcasts, tiles, repeats) are copies of a ``strided.View`` the front end
computed from the shapes alone, so one implementation serves them all.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..device import DeviceArray, allocated, check_allocation, contiguous, empty_like, item
from ..formats import CSR, INDEX_DTYPE
from .layout import dtype_name, kernel
from .rule import VARIADIC, Rules, StorageRule
from .strided import View, copy_view

VIEW_OPS = (
    "transpose", "swapaxes", "flip", "expand_dims", "squeeze", "flatten", "reshape", "tile",
    "repeat", "slice", "slice_axis", "slice_like", "split", "broadcast_to", "broadcast_like",
    "broadcast_axis", "_getitem", "depth_to_space", "space_to_depth", "diag",
)
"""Ops that copy a strided view of their input (``view``; the front end computes the view from
shapes, params ``shape``, ``view``, ``into``): one storage rule and one gradient rule for all."""

PAD_MODES = ("constant", "edge", "reflect")
"""pad's modes, in the order the ``shape.pad`` kernel numbers them."""


def _empty(device: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """An uninitialised buffer in ``device``'s memory (``None``: the host)."""
    if device is not None:
        check_allocation(shape, dtype)
        return DeviceArray.empty(shape, dtype, device)
    return allocated(lambda: np.empty(shape, dtype), shape, dtype)


def _kernel(near: Any, dtype: np.dtype, size: int) -> Any:
    return kernel("shape", (dtype_name(np.dtype(dtype)),), near, size)


def view(x: Any, shape: Sequence[int], view: View, into: Sequence[int] | None = None) -> Any:
    """A copy of ``view`` over the flat storage of dense ``x``, of ``shape`` (then reshaped to
    ``into``, a shape of the same size, when given)."""
    out = copy_view(contiguous(x), shape, view)
    return out if into is None else out.reshape(tuple(into))


def arange(size: int, start: float | int, step: float | int, repeat: int, dtype: np.dtype,
           device: Any) -> Any:
    """``start + (i // repeat) * step`` for ``i < size``, computed in ``dtype``."""
    out = _empty(device, (size,), dtype)
    if size:
        _kernel(out, dtype, size).arange(out, start, step, repeat)
    return out


def linspace(size: int, start: float, step: float, dtype: np.dtype, device: Any) -> Any:
    """``start + i * step`` for ``i < size``, in float64 rounded once to ``dtype``."""
    out = _empty(device, (size,), dtype)
    if size:
        _kernel(out, dtype, size).linspace(out, start, step, -math.inf)  # -inf: see the kernel
    return out


def eye(n: int, m: int, k: int, dtype: np.dtype, device: Any) -> Any:
    """An ``(n, m)`` matrix with ones on diagonal ``k``."""
    out = _empty(device, (n, m), dtype)
    if out.size:
        _kernel(out, dtype, out.size).eye(out, k)
    return out


def concat(*xs: Any, axis: int) -> Any:
    """Dense ``xs`` (one dtype, equal shapes but on ``axis``) joined along ``axis``."""
    first = xs[0]
    shape = list(first.shape)
    shape[axis] = sum(x.shape[axis] for x in xs)
    out = empty_like(first, tuple(shape), first.dtype)
    rows = math.prod(shape[:axis])
    width = math.prod(shape[axis:])
    if out.size == 0:
        return out
    put = _kernel(out, first.dtype, out.size).put
    flat, at = out.reshape(rows, width), 0
    for x in xs:
        block = x.size // rows
        if block:
            put(contiguous(x).reshape(rows, block), flat, at)
        at += block
    return out


def stack(*xs: Any, axis: int) -> Any:
    """Dense ``xs`` of one shape and dtype stacked on a new ``axis``."""
    shape = tuple(xs[0].shape)
    lifted = shape[:axis] + (1,) + shape[axis:]
    return concat(*(contiguous(x).reshape(lifted) for x in xs), axis=axis)


def concat_csr(*ms: CSR) -> CSR:
    """csr matrices with one column count stacked row-wise (MXNet's csr ``concat`` on dim 0)."""
    first = ms[0]
    rows = sum(m.shape[0] for m in ms)
    nnz = sum(m.data.size for m in ms)
    data = empty_like(first.data, (nnz,), first.dtype)
    indices = empty_like(first.data, (nnz,), INDEX_DTYPE)
    indptr = empty_like(first.data, (rows + 1,), INDEX_DTYPE)
    shape_kernel = _kernel(data, first.dtype, nnz + rows)
    stored = row = 0
    for m in ms:
        # each indptr starts at 0: placed at the previous one's end, its first value rewrites
        # that end with the same value
        shape_kernel.put_index(m.indptr.reshape(1, -1), indptr.reshape(1, -1), row, stored)
        if m.data.size:
            shape_kernel.put(m.data.reshape(1, -1), data.reshape(1, -1), stored)
            shape_kernel.put_index(m.indices.reshape(1, -1), indices.reshape(1, -1), stored, 0)
        stored += m.data.size
        row += m.shape[0]
    return CSR(data, indices, indptr, (rows, first.shape[1]))


def slice_csr(m: CSR, rows: tuple[int, int], cols: tuple[int, int]) -> CSR:
    """Rows ``rows[0]:rows[1]`` and columns ``cols[0]:cols[1]`` of ``m`` (in range, ascending)."""
    (r0, r1), (c0, c1) = rows, cols
    shape_kernel = _kernel(m.data, m.dtype, m.data.size + r1 - r0)
    indptr = empty_like(m.data, (r1 - r0 + 1,), INDEX_DTYPE)
    shape_kernel.slice_count(m.indices, m.indptr, r0, c0, c1, indptr)
    nnz = item(indptr, -1)
    data = empty_like(m.data, (nnz,), m.dtype)
    indices = empty_like(m.data, (nnz,), INDEX_DTYPE)
    shape_kernel.slice_fill(m.data, m.indices, m.indptr, r0, c0, c1, indptr, data, indices)
    return CSR(data, indices, indptr, (r1 - r0, c1 - c0))


def pad(x: Any, mode: str, before: Sequence[int], after: Sequence[int], value: Any) -> Any:
    """4-D or 5-D ``x`` padded by ``before`` / ``after`` on its last 2 or 3 dimensions."""
    spatial = x.shape[2:]
    grown = tuple(n + b + a for n, b, a in zip(spatial, before, after))
    out = empty_like(x, (*x.shape[:2], *grown), x.dtype)
    if out.size == 0:
        return out
    lead = (1,) * (3 - len(spatial))
    planes = x.shape[0] * x.shape[1]
    front, top, left = (*(0,) * (3 - len(before)), *before)
    _kernel(out, x.dtype, out.size).pad(
        contiguous(x).reshape(planes, *lead, *spatial), out.reshape(planes, *lead, *grown),
        front, top, left, PAD_MODES.index(mode), value)
    return out


STORAGE_RULES: Rules = {
    **{(op, ("default",)): StorageRule("default", view) for op in VIEW_OPS},
    ("pad", ("default",)): StorageRule("default", pad),
    ("concat", ("default", VARIADIC)): StorageRule("default", concat),
    ("stack", ("default", VARIADIC)): StorageRule("default", stack),
    ("_concat_csr", ("csr", VARIADIC)): StorageRule("csr", concat_csr),
    ("_slice_csr", ("csr",)): StorageRule("csr", slice_csr),
}
"""Shape and slicing rules, as MXNet 1.9.1's: dense kernels, sparse inputs fall back to dense,
except csr ``concat`` along dim 0 and csr ``slice`` without steps (the front end asks for
``_concat_csr`` / ``_slice_csr`` when every input is csr), which keep csr."""
