"""Storage formats as frozen dataclasses, and the one place where user data is validated.

Everything past this module trusts a format: indices are ``int64``, sorted, unique and in range,
and array shapes agree, so kernels never read out of bounds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..errors import SparsegenError
from ..registry import DATA_DTYPES

INDEX_DTYPE = np.dtype("int64")


def _preview(values: np.ndarray, limit: int = 6) -> str:
    """A short print of offending values."""
    values = np.asarray(values).ravel()
    shown = ", ".join(str(v) for v in values[:limit])
    return f"[{shown}{', ...' if values.size > limit else ''}]"


def check_dtype(dtype: Any, what: str) -> np.dtype:
    """``dtype`` as a numpy dtype if sparsegen has kernels for it, else a clear error."""
    try:
        resolved = np.dtype(dtype)
    except TypeError:
        raise SparsegenError(f"{what}: {dtype!r} is not a dtype") from None
    if resolved.name not in DATA_DTYPES:
        raise SparsegenError(
            f"{what}: dtype {resolved.name} is not supported; supported dtypes are "
            f"{', '.join(DATA_DTYPES)}"
        )
    return resolved


def check_shape(shape: Any, what: str = "shape") -> tuple[int, ...]:
    """``shape`` as a tuple of non-negative ints, else a clear error."""
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        dims = tuple(int(d) for d in shape)
    except (TypeError, ValueError):
        raise SparsegenError(f"{what} must be a tuple of ints, got {shape!r}") from None
    if any(d != s for d, s in zip(dims, shape)) or any(d < 0 for d in dims):
        raise SparsegenError(f"{what} must hold non-negative ints, got {shape!r}")
    return dims


def check_indices(indices: Any, what: str, upper: int | None, sorted_unique: bool) -> np.ndarray:
    """A 1-D int64 copy of ``indices``; checks integrality, range ``[0, upper)`` and order."""
    arr = np.asarray(indices)
    if arr.ndim != 1:
        raise SparsegenError(f"{what} must be 1-D, got shape {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        if not np.issubdtype(arr.dtype, np.floating) or not np.all(np.floor(arr) == arr):
            raise SparsegenError(f"{what} must hold integers, got {_preview(arr)} ({arr.dtype})")
    arr = np.ascontiguousarray(arr, dtype=INDEX_DTYPE) if arr.size else np.empty(0, INDEX_DTYPE)
    if not arr.flags.writeable:  # numpy will not hand read-only arrays to the kernels (DLPack)
        arr = arr.copy()
    if arr.size:
        bad = np.flatnonzero((arr < 0) | (arr >= upper)) if upper is not None else np.flatnonzero(arr < 0)
        if bad.size:
            bound = f"[0, {upper})" if upper is not None else ">= 0"
            raise SparsegenError(
                f"{what} out of range {bound}: {_preview(arr[bad])} at positions {_preview(bad)}"
            )
        if sorted_unique:
            step = np.diff(arr)
            bad = np.flatnonzero(step <= 0)
            if bad.size:
                kind = "duplicate" if step[bad[0]] == 0 else "unsorted"
                raise SparsegenError(
                    f"{what} must be sorted and unique; {kind} at position {bad[0] + 1}: "
                    f"... {arr[bad[0]]}, {arr[bad[0] + 1]} ..."
                )
    return arr


@dataclass(frozen=True)
class RowSparse:
    """row_sparse storage: ``dense[indices[i]] = data[i]``; indices sorted, unique, in range."""

    data: np.ndarray  # (k, *shape[1:])
    indices: np.ndarray  # (k,) int64
    shape: tuple[int, ...]
    BUFFERS: ClassVar[tuple[str, ...]] = ("data", "indices")  # fields holding arrays

    @property
    def dtype(self) -> np.dtype:
        """The element dtype."""
        return self.data.dtype

    @property
    def row_size(self) -> int:
        """Elements per row (the product of the trailing dimensions)."""
        return int(np.prod(self.shape[1:], dtype=np.int64))


@dataclass(frozen=True)
class CSR:
    """csr storage: row ``i`` holds ``data[indptr[i]:indptr[i+1]]`` at columns ``indices[...]``."""

    data: np.ndarray  # (nnz,)
    indices: np.ndarray  # (nnz,) int64, sorted and unique within each row
    indptr: np.ndarray  # (rows + 1,) int64
    shape: tuple[int, int]
    BUFFERS: ClassVar[tuple[str, ...]] = ("data", "indices", "indptr")  # fields holding arrays

    @property
    def dtype(self) -> np.dtype:
        """The element dtype."""
        return self.data.dtype


def row_sparse(data: np.ndarray, indices: Any, shape: tuple[int, ...] | None) -> RowSparse:
    """A validated ``RowSparse`` from data and row ids (``shape`` inferred when ``None``)."""
    data = np.asarray(data)
    if data.ndim < 1:
        raise SparsegenError(f"data must have at least 1 dimension (one per stored row), got {data.shape}")
    check_dtype(data.dtype, "data")
    if shape is None:
        raw = np.asarray(indices)
        rows = int(raw.max()) + 1 if raw.size and np.issubdtype(raw.dtype, np.number) else 0
        shape = (rows, *data.shape[1:])
    shape = check_shape(shape)
    if data.size == 0 and data.shape[0] == 0 and shape:
        data = data.reshape((0, *shape[1:]))  # an empty list stores no rows of any shape
    if len(shape) != data.ndim:
        raise SparsegenError(
            f"data must have rank {len(shape)} for shape {shape} (one stored row per leading "
            f"entry), got data of shape {data.shape}"
        )
    if data.shape[1:] != shape[1:]:
        raise SparsegenError(
            f"data rows of shape {data.shape[1:]} do not match shape {shape} (expected rows "
            f"of shape {shape[1:]})"
        )
    idx = check_indices(indices, "indices", shape[0], sorted_unique=True)
    if idx.size != data.shape[0]:
        raise SparsegenError(
            f"data and indices must have the same length: data has {data.shape[0]} rows, "
            f"indices has {idx.size} entries"
        )
    return RowSparse(np.ascontiguousarray(data), idx, shape)


def csr(data: Any, indices: Any, indptr: Any, shape: tuple[int, ...] | None) -> CSR:
    """A validated ``CSR`` from the three arrays (``shape`` inferred when ``None``)."""
    data = np.asarray(data)
    if data.ndim != 1:
        raise SparsegenError(f"data must be 1-D for csr, got shape {data.shape}")
    check_dtype(data.dtype, "data")
    ptr = np.asarray(indptr)
    if ptr.ndim != 1 or ptr.size < 1:
        raise SparsegenError(f"indptr must be 1-D with at least one entry, got shape {ptr.shape}")
    ptr = check_indices(ptr, "indptr", None, sorted_unique=False)
    if shape is None:
        raw = np.asarray(indices)
        cols = int(raw.max()) + 1 if raw.size else 0
        shape = (ptr.size - 1, cols)
    shape = check_shape(shape)
    if len(shape) != 2:
        raise SparsegenError(f"csr storage needs a 2-D shape, got {shape}")
    if ptr.size != shape[0] + 1:
        raise SparsegenError(
            f"indptr must have shape[0] + 1 = {shape[0] + 1} entries, got {ptr.size}"
        )
    if ptr[0] != 0:
        raise SparsegenError(f"indptr must start at 0, got {ptr[0]}")
    drops = np.flatnonzero(np.diff(ptr) < 0)
    if drops.size:
        raise SparsegenError(
            f"indptr must be non-decreasing; it drops at position {drops[0] + 1}: "
            f"... {ptr[drops[0]]}, {ptr[drops[0] + 1]} ..."
        )
    idx = check_indices(indices, "indices", shape[1], sorted_unique=False)
    if not (idx.size == data.size == ptr[-1]):
        raise SparsegenError(
            f"data and indices must both have indptr[-1] = {ptr[-1]} entries, got "
            f"{data.size} and {idx.size}"
        )
    if idx.size > 1:
        rising = np.diff(idx) > 0
        row_start = np.zeros(idx.size - 1, bool)
        starts = ptr[1:-1][(ptr[1:-1] > 0) & (ptr[1:-1] < idx.size)]
        row_start[starts - 1] = True
        bad = np.flatnonzero(~rising & ~row_start)
        if bad.size:
            row = int(np.searchsorted(ptr, bad[0], side="right") - 1)
            raise SparsegenError(
                f"indices must be sorted and unique within each row; row {row} has "
                f"... {idx[bad[0]]}, {idx[bad[0] + 1]} ..."
            )
    return CSR(np.ascontiguousarray(data), idx, ptr, (shape[0], shape[1]))
