"""Storage formats as frozen dataclasses, the one place where user data is validated, and the
constants the kernels' index phases share: the bottom layer, free of TVM and of the front end.

Everything past this module trusts a format: indices are ``int64``, sorted, unique and in range,
and array shapes agree, so kernels never read out of bounds. A format owns its index arrays
(validated copies that nothing outside sparsegen can write), so that stays true after
construction.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .errors import InvalidType, InvalidValue, SparsegenError

DATA_DTYPES = ("float16", "float32", "float64", "uint8", "int8", "int32", "int64")
"""Element dtypes every storage kernel is generated for (MXNet's sparse dtypes)."""

INDEX_DTYPE = np.dtype("int64")
"""The dtype of every index array (row ids, column ids, indptr) and of the kernels' shapes."""

ACCUMULATOR = {"float16": "float32", "float32": "float64", "float64": "float64", "uint8": "int64",
               "int8": "int64", "int32": "int64", "int64": "int64"}
"""The dtype reductions accumulate in, per element dtype (templates/reduce.py; ops/reduce.py
allocates its scratch buffers in it)."""

INT64_MAX = 2**63 - 1
_FITS = "fit int64 ([-2**63, 2**63))"

SCAN_CHUNK = 1024
"""Elements per chunk of the blocked prefix sums (templates/scan.py) and of ``unique``: chunks are
scanned in parallel, then a serial pass carries ``n / SCAN_CHUNK`` chunk totals. Kept here, free of
TVM, so the ops can size per-chunk scratch without importing the compiler."""

MAX_RADIX_BITS = 10
"""The widest digit of a radix sort pass (templates/radix.py): 1,024 buckets a chunk."""


def radix_passes(bits: int) -> list[tuple[int, int]]:
    """``(shift, width)`` of the passes of a radix sort of ``bits``-bit keys: the fewest passes
    of at most ``MAX_RADIX_BITS``, their widths as even as can be (17 bits: 9 + 8), so the
    per-pass tables stay small; no pass for zero bits."""
    if bits <= 0:
        return []
    count = -(-bits // MAX_RADIX_BITS)
    widths = [bits // count + (k < bits % count) for k in range(count)]
    shifts = [sum(widths[:k]) for k in range(count)]
    return list(zip(shifts, widths))

SORT_CHUNK = 4096
"""Entries per chunk of a radix sort pass: each chunk counts its digits into a (buckets x
chunks) table, and scatters its entries from there, chunks in parallel. The table has at most
one entry per 4 entries sorted (``2**MAX_RADIX_BITS / SORT_CHUNK``); on a GPU 10M entries are
2,442 threads."""

MERGE_CHUNK = 256
"""Merge steps (ids of either operand) per chunk of the row_sparse merges (``ew_index.rsp_*``):
each chunk is one parallel task, on a GPU one thread; the kernel takes the chunk count from the
size of its ``runs`` scratch."""

SERIAL_MERGE_STEPS = 1 << 21
"""Merges of fewer steps run on the CPU as one chunk: a serial merge in one pass. The chunked
merge passes over the ids twice (count, then write); on 2 threads (AMD EPYC) it took twice as
long as the serial merge for 100,000 ids (W6: 50,000 rows each)."""

# -- io: what the libsvm parser kernel reports per line (templates/libsvm.py, io/libsvm.py) --
LIBSVM_OK, LIBSVM_BAD_LABEL, LIBSVM_BAD_FEATURE, LIBSVM_OUT_OF_RANGE = 0, 1, 2, 3
LIBSVM_NOT_INCREASING, LIBSVM_BLANK = 4, 5
"""The error codes of kernel ``libsvm.fill`` per line (``LIBSVM_BLANK``: only white space)."""
LIBSVM_DIGITS = 18
"""Significant digits the libsvm parser reads into a mantissa or an index (more digits in an
index: ``LIBSVM_OUT_OF_RANGE``)."""


def preview(values: Any, limit: int = 6) -> str:
    """A short print of offending values."""
    values = list(values) if isinstance(values, (list, tuple)) else np.asarray(values).ravel()
    shown = ", ".join(repr(str(v)) if isinstance(v, (str, bytes)) else str(v) for v in values[:limit])
    return f"[{shown}{', ...' if len(values) > limit else ''}]"


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
    """``shape`` as a tuple of Python ints in ``[0, 2**63)``, else a clear error (a float or
    other non-integer dimension raises ``InvalidType``, as MXNet raises ``TypeError``)."""
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        given = tuple(shape)
    except TypeError:
        raise InvalidType(f"{what} must be a tuple of ints, got {shape!r}") from None
    dims = []
    for position, dim in enumerate(given):
        if isinstance(dim, (bool, np.bool_)):
            raise SparsegenError(
                f"{what} must hold non-negative ints, got {shape!r}: {dim!r} at position "
                f"{position} (a bool is not a size)"
            )
        try:
            dims.append(operator.index(dim))
        except TypeError:
            raise InvalidType(
                f"{what} must hold ints, got {shape!r}: {dim!r} ({type(dim).__name__}) at "
                f"position {position}"
            ) from None
    if any(d < 0 for d in dims):
        raise SparsegenError(f"{what} must hold non-negative ints, got {shape!r}")
    too_big = [p for p, d in enumerate(dims) if d > INT64_MAX]
    if too_big:
        raise SparsegenError(
            f"{what} must hold ints that fit int64 (below 2**63), got {shape!r}: "
            f"{dims[too_big[0]]} at position {too_big[0]}"
        )
    return tuple(dims)


def frozen(values: np.ndarray) -> np.ndarray:
    """A read-only view of a numpy array (of a C-contiguous copy when it is not contiguous) that
    cannot be made writeable again (``flags.writeable = True`` raises): how validated indices
    are shown to users."""
    view = np.frombuffer(memoryview(np.ascontiguousarray(values)).toreadonly(), dtype=values.dtype)
    return view.reshape(values.shape)


def is_frozen(values: Any) -> bool:
    """Whether ``values`` is a numpy view that ``frozen`` made: read-only for good."""
    base = values
    while isinstance(base, np.ndarray):
        if base.flags.writeable:
            return False
        base = base.base
    return isinstance(base, memoryview) and base.readonly


def _bad_integers(arr: np.ndarray) -> tuple[np.ndarray, str]:
    """Positions of entries that are not integers in int64's range, and what is wrong with them."""
    kind = arr.dtype.kind
    if kind == "i":
        return np.empty(0, np.intp), ""
    if kind == "u":
        return np.flatnonzero(arr > INT64_MAX), _FITS
    if kind == "f":
        with np.errstate(invalid="ignore"):
            fraction = ~np.isfinite(arr) | (np.floor(arr) != arr)
            bad = np.flatnonzero(fraction)
            if bad.size:
                return bad, ""
            limit = np.asarray(2.0**63, np.promote_types(arr.dtype, np.float64))
            return np.flatnonzero((arr < -limit) | (arr >= limit)), _FITS
    if kind == "O":
        def integral(v: Any) -> bool:
            if isinstance(v, (bool, np.bool_)):
                return False
            if isinstance(v, (int, np.integer)):
                return True
            return isinstance(v, (float, np.floating)) and np.isfinite(v) and float(v).is_integer()

        bad = np.flatnonzero([not integral(v) for v in arr])
        if bad.size:
            return bad, ""
        return np.flatnonzero([not -(2**63) <= int(v) <= INT64_MAX for v in arr]), _FITS
    return np.arange(arr.size), ""  # bool, complex, strings ...


def index_array(indices: Any, what: str, flatten: bool = False) -> np.ndarray:
    """A fresh 1-D int64 array (the caller's own: it shares no memory with ``indices``) holding
    the values of ``indices`` (of any rank when ``flatten``).

    Values that are not integers (``1.5``, ``nan``, ``inf``, strings) or do not fit int64
    (``1e30``, uint64 ``2**63``) raise before any cast, printing the values as given."""
    try:
        arr = np.asarray(indices)
    except (TypeError, ValueError, RuntimeError) as err:
        raise SparsegenError(f"{what} cannot be read as an array of integers: {err}") from None
    if flatten:
        arr = arr.reshape(-1)
    if arr.ndim != 1:
        raise SparsegenError(f"{what} must be 1-D, got shape {arr.shape}")
    bad, problem = _bad_integers(arr) if arr.size else (np.empty(0, np.intp), "")
    if bad.size:
        flat_list = isinstance(indices, (list, tuple)) and len(indices) == arr.size
        given = [indices[p] for p in bad] if flat_list else arr[bad]
        raise SparsegenError(
            f"{what} must hold integers{' that ' + problem if problem else ''}, got "
            f"{preview(given)} ({arr.dtype}) at positions {preview(bad)}"
        )
    return np.array(arr, dtype=INDEX_DTYPE, order="C", copy=True)


def check_range(arr: np.ndarray, what: str, upper: int | None, sorted_unique: bool) -> None:
    """Raise unless the int64 ``arr`` lies in ``[0, upper)`` (``>= 0`` when ``upper`` is None)
    and, if ``sorted_unique``, rises strictly."""
    if not arr.size:
        return
    bad = np.flatnonzero((arr < 0) | (arr >= upper)) if upper is not None else np.flatnonzero(arr < 0)
    if bad.size:
        bound = f"[0, {upper})" if upper is not None else ">= 0"
        raise SparsegenError(
            f"{what} out of range {bound}: {preview(arr[bad])} at positions {preview(bad)}"
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


def check_indices(indices: Any, what: str, upper: int | None, sorted_unique: bool) -> np.ndarray:
    """A fresh 1-D int64 copy of ``indices`` (see ``index_array``), checked to lie in
    ``[0, upper)`` and, if ``sorted_unique``, to rise strictly."""
    arr = index_array(indices, what)
    check_range(arr, what, upper, sorted_unique)
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


def inferred_size(ids: np.ndarray, what: str) -> int:
    """The dimension ``ids`` imply when no shape is given: the largest id plus one; no ids imply
    none, and raise ``InvalidValue`` (MXNet's ``ValueError('invalid shape')``)."""
    if not ids.size:
        raise InvalidValue(f"{what} is empty, so it implies no shape: pass shape=")
    largest = int(ids.max())
    if largest >= INT64_MAX:
        raise SparsegenError(
            f"{what}: id {largest} leaves no room for an inferred shape (the largest id plus one "
            "must fit int64); pass shape="
        )
    return max(largest, -1) + 1


def check_row_shape(shape: Any) -> tuple[int, ...]:
    """A row_sparse ``shape`` (see ``check_shape``): at least one dimension, and rows whose
    element count fits int64, as the kernels index them."""
    shape = check_shape(shape)
    if not shape:
        raise SparsegenError("row_sparse storage needs at least 1 dimension, got shape ()")
    if math.prod(shape[1:]) > INT64_MAX:
        raise SparsegenError(
            f"shape {shape} has rows of {math.prod(shape[1:])} elements, more than int64 indexes"
        )
    return shape


def row_sparse(data: np.ndarray, indices: Any, shape: tuple[int, ...] | None) -> RowSparse:
    """A validated ``RowSparse`` from data and row ids (``shape`` inferred when ``None``).

    The format owns its row ids (a validated copy); ``data`` is kept as it is when C-contiguous.
    """
    data = np.asarray(data)
    if data.ndim < 1:
        raise SparsegenError(f"data must have at least 1 dimension (one per stored row), got {data.shape}")
    check_dtype(data.dtype, "data")
    idx = index_array(indices, "indices")
    if shape is None:
        shape = (inferred_size(idx, "indices"), *data.shape[1:])
    shape = check_row_shape(shape)
    if data.size == 0 and data.shape[0] == 0:
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
    check_range(idx, "indices", shape[0], sorted_unique=True)
    if idx.size != data.shape[0]:
        raise SparsegenError(
            f"data and indices must have the same length: data has {data.shape[0]} rows, "
            f"indices has {idx.size} entries"
        )
    return RowSparse(np.ascontiguousarray(data), idx, shape)


def csr(data: Any, indices: Any, indptr: Any, shape: tuple[int, ...] | None,
        sort_rows: Callable[[CSR], CSR] | None = None) -> CSR:
    """A validated ``CSR`` from the three arrays (``shape`` inferred when ``None``).

    The format owns its ``indices`` and ``indptr`` (validated copies); ``data`` is kept as it
    is when C-contiguous. Column ids out of order within a row raise, unless ``sort_rows``
    is given: then, once everything else is checked, it sorts each row's entries by column
    (values with their ids); a column twice in one row raises either way."""
    data = np.asarray(data)
    if data.ndim != 1:
        raise SparsegenError(f"data must be 1-D for csr, got shape {data.shape}")
    check_dtype(data.dtype, "data")
    ptr = index_array(indptr, "indptr")
    if ptr.size < 1:
        raise SparsegenError(f"indptr must be 1-D with at least one entry, got shape {ptr.shape}")
    check_range(ptr, "indptr", None, sorted_unique=False)
    idx = index_array(indices, "indices")
    if shape is None:
        shape = (ptr.size - 1, inferred_size(idx, "indices"))
    shape = check_shape(shape)
    if len(shape) != 2:
        raise SparsegenError(f"csr storage needs a 2-D shape, got {shape}")
    if ptr.size != shape[0] + 1:
        raise SparsegenError(
            f"indptr must have shape[0] + 1 = {shape[0] + 1} entries, got {ptr.size}"
        )
    check_indptr(ptr, "indptr")
    check_range(idx, "indices", shape[1], sorted_unique=False)
    if not (idx.size == data.size == ptr[-1]):
        raise SparsegenError(
            f"data and indices must both have indptr[-1] = {ptr[-1]} entries, got "
            f"{data.size} and {idx.size}"
        )
    result = CSR(np.ascontiguousarray(data), idx, ptr, (shape[0], shape[1]))
    if sort_rows is not None and _falls_within_rows(idx, ptr).size:
        result = sort_rows(result)
    check_sorted_rows(result.indices, ptr, "indices")
    return result


def check_indptr(ptr: np.ndarray, what: str, total: int | None = None) -> None:
    """Raise unless the int64 ``ptr`` (at least one entry) starts at 0, never drops and, when
    ``total`` is given, ends at ``total``."""
    if ptr[0] != 0:
        raise SparsegenError(f"{what} must start at 0, got {ptr[0]}")
    drops = np.flatnonzero(np.diff(ptr) < 0)
    if drops.size:
        raise SparsegenError(
            f"{what} must be non-decreasing; it drops at position {drops[0] + 1}: "
            f"... {ptr[drops[0]]}, {ptr[drops[0] + 1]} ..."
        )
    if total is not None and ptr[-1] != total:
        raise SparsegenError(f"{what} must end at {total}, got {ptr[-1]} at position "
                             f"{ptr.size - 1}")


def _falls_within_rows(idx: np.ndarray, ptr: np.ndarray) -> np.ndarray:
    """The positions ``p`` where ``idx[p + 1]`` does not rise above ``idx[p]`` in the same row
    (``ptr`` already checked by ``check_indptr`` to end at ``idx.size``)."""
    if idx.size < 2:
        return np.empty(0, np.intp)
    row_start = np.zeros(idx.size - 1, bool)
    starts = ptr[1:-1][(ptr[1:-1] > 0) & (ptr[1:-1] < idx.size)]
    row_start[starts - 1] = True
    return np.flatnonzero((np.diff(idx) <= 0) & ~row_start)


def check_sorted_rows(idx: np.ndarray, ptr: np.ndarray, what: str) -> None:
    """Raise unless ``idx`` rises strictly within each row ``idx[ptr[i]:ptr[i+1]]`` (``ptr``
    already checked by ``check_indptr`` to end at ``idx.size``)."""
    bad = _falls_within_rows(idx, ptr)
    if bad.size:
        row = int(np.searchsorted(ptr, bad[0], side="right") - 1)
        kind = (f"duplicate column {idx[bad[0]]}" if idx[bad[0]] == idx[bad[0] + 1]
                else "unsorted")
        raise SparsegenError(
            f"{what} must be sorted and unique within each row; row {row} has {kind}: "
            f"... {idx[bad[0]]}, {idx[bad[0] + 1]} ... at positions {bad[0]}, {bad[0] + 1}"
        )
