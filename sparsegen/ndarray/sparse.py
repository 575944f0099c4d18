"""``RowSparseNDArray`` and ``CSRNDArray``, and the ``mx.nd.sparse`` creation functions."""

from __future__ import annotations

import builtins
import sys
from typing import Any

import numpy as np

from ..context import Context
from ..context import resolve as resolve_context
from ..device import DeviceArray, copy as copy_buffer, host_copy, item, rows as copy_rows, to_host
from .. import formats
from ..errors import InvalidType, InvalidValue, SparsegenError
from ..formats import CSR, INDEX_DTYPE, RowSparse
from .dispatch import cast_storage, check_out, deliver, invoke
from .dlpack import dlpack_numpy, torch_tensor
from ..ops.dot import distinct_columns
from ..ops.sort import csr_rows
from .dot import dot
from . import elemwise
from .elemwise import *  # noqa: F403 - elemwise.__all__, which includes abs and round
from .ndarray import NDArray, _shape_text, is_full_slice
from .storage import convert, register, with_dtype

DEFAULT_DTYPE = np.dtype("float32")


class BaseSparseNDArray(NDArray):
    """What row_sparse and csr arrays share: formats, ``[:]`` assignment only, no dense buffer."""

    def __repr__(self) -> str:
        return f"\n<{type(self).__name__} {_shape_text(self.shape)} @{self._ctx}>"

    def asnumpy(self) -> np.ndarray:
        """The dense values as a new numpy array (generated cast kernel)."""
        return to_host(convert(self._storage, self.stype, "default"))

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        values = self.asnumpy()
        return values if dtype is None else values.astype(dtype, copy=False)

    def __dlpack__(self, **kwargs: Any) -> Any:
        raise SparsegenError(
            f"a {self.stype} array has no dense buffer to share through DLPack; "
            "use .data / .indices, or .tostype('default')"
        )

    def __setitem__(self, key: Any, value: Any) -> None:
        if not is_full_slice(key):  # MXNet: ValueError for csr, TypeError for row_sparse
            error = InvalidValue if self.stype == "csr" else InvalidType
            raise error(
                f"{type(self).__name__} supports only x[:] = value assignment, got key {key!r}"
            )
        super().__setitem__(key, value)

    def reshape(self, *shape: Any) -> NDArray:
        """Not available for sparse storage (as in MXNet)."""
        raise SparsegenError(f"reshape is not supported for {self.stype} arrays")

    def _part(self, values: Any, writable: bool) -> NDArray:
        """One of the format's arrays as a dense NDArray sharing its buffer.

        Index arrays come back read-only for good (``formats.frozen``; on a GPU, a read-only
        copy): kernels trust validated indices, so nothing may change them behind the format's
        back.
        """
        if writable:
            return NDArray(values.view(), self._ctx)
        if isinstance(values, DeviceArray):
            view = copy_buffer(values)
            view.flags.writeable = False
            return NDArray(view, self._ctx)
        return NDArray(formats.frozen(values), self._ctx)

    @property
    def data(self) -> NDArray:
        """The stored values, sharing memory with this array (MXNet returns a copy)."""
        return self._part(self._storage.data, writable=True)

    @property
    def indices(self) -> NDArray:
        """The int64 indices (row ids for row_sparse, column ids for csr), read-only."""
        return self._part(self._storage.indices, writable=False)

    # -- interop (sparsegen/interop.py) -----------------------------------------------------
    def to_torch(self) -> Any:
        """A torch sparse tensor sharing this array's memory: COO for row_sparse, CSR for csr."""
        return torch_tensor(self._storage)

    # -- utils: MXNet's sparse odds and ends (issue 13) ---------------------------------------
    @property
    def _num_aux(self) -> int:
        """The number of index arrays beside the data (row_sparse 1, csr 2), as MXNet's."""
        return 2 if self.stype == "csr" else 1


class RowSparseNDArray(BaseSparseNDArray):
    """Rows ``indices`` of a mostly-zero array, as ``mxnet.nd.sparse.RowSparseNDArray``."""

    stype = "row_sparse"

    def check_format(self, full_check: bool = True) -> None:
        """Raise ``MXNetError`` unless indices are sorted, unique, in range and match the data.

        Every check runs whatever ``full_check`` says: they are vectorised and cheap (a GPU
        array's indices are checked on a host copy)."""
        s = host_copy(self._storage)
        formats.row_sparse(s.data, s.indices, s.shape)

    def __getitem__(self, key: Any) -> NDArray:
        if is_full_slice(key):
            return self
        raise InvalidValue(f"RowSparseNDArray supports only x[:] indexing, got key {key!r}")

    def retain(self, indices: Any) -> "RowSparseNDArray":
        """The rows ``indices`` of this array (see ``mx.nd.sparse.retain``)."""
        return retain(self, indices)


class CSRNDArray(BaseSparseNDArray):
    """A 2-D compressed-sparse-row matrix, as ``mxnet.nd.sparse.CSRNDArray``."""

    stype = "csr"

    @property
    def indptr(self) -> NDArray:
        """The int64 row pointers: row ``i`` is ``data[indptr[i]:indptr[i+1]]``."""
        return self._part(self._storage.indptr, writable=False)

    def check_format(self, full_check: bool = True) -> None:
        """Raise ``MXNetError`` unless indptr and column indices are consistent and in range.

        Every check runs whatever ``full_check`` says: they are vectorised and cheap (a GPU
        array's indices are checked on a host copy)."""
        s = host_copy(self._storage)
        formats.csr(s.data, s.indices, s.indptr, s.shape)

    def asscipy(self) -> Any:
        """A ``scipy.sparse.csr_matrix`` copy."""
        import scipy.sparse

        s = host_copy(self._storage)
        if s.dtype == np.float16:
            raise SparsegenError(
                "scipy.sparse does not support float16: use x.astype('float32').asscipy()"
            )
        return scipy.sparse.csr_matrix((s.data, s.indices, s.indptr), shape=s.shape)

    def __getitem__(self, key: Any) -> "CSRNDArray":
        """Rows ``key`` (an int or a contiguous slice) as a new csr matrix, as MXNet slices csr."""
        rows = self.shape[0]
        if isinstance(key, (int, np.integer)):
            if not -rows <= key < rows:
                raise SparsegenError(f"row index {key} out of range for {rows} rows")
            key = builtins.slice(int(key) % rows, int(key) % rows + 1)  # slice: mx.nd.sparse.slice
        if not isinstance(key, builtins.slice) or key.step not in (None, 1):
            raise InvalidValue(f"CSRNDArray supports int and contiguous slice keys, got {key!r}")
        start, stop, _ = key.indices(rows)
        stop = max(start, stop)
        s = self._storage
        lo, hi = item(s.indptr, start), item(s.indptr, stop)
        indptr = to_host(s.indptr)[start : stop + 1] - lo
        return CSRNDArray(
            CSR(copy_rows(s.data, lo, hi), copy_rows(s.indices, lo, hi), indptr, (stop - start, s.shape[1])),
            self._ctx,
        )


register(RowSparse, RowSparseNDArray)
register(CSR, CSRNDArray)


# -- creation ---------------------------------------------------------------------------------
def _host_array(source: Any, what: str) -> Any:
    """``source`` in a form numpy reads: a dense NDArray's values (a host copy), a torch or other
    DLPack array as a numpy view, anything else as it is."""
    if isinstance(source, NDArray):
        return source.asnumpy()
    if not isinstance(source, np.ndarray) and hasattr(source, "__dlpack__"):
        return dlpack_numpy(source, what)
    return source


def _values(source: Any, dtype: Any, what: str) -> np.ndarray:
    """``source`` (NDArray, numpy, a torch or other DLPack array, nested lists) as a fresh numpy
    array.

    dtype: the one asked for, else the source's own for arrays, else float32 (as MXNet).
    """
    source = _host_array(source, what)
    if dtype is None:
        dtype = source.dtype if isinstance(source, np.ndarray) else DEFAULT_DTYPE
    dtype = formats.check_dtype(dtype, f"{what} dtype")
    try:
        return np.array(source, dtype=dtype, copy=True)
    except (TypeError, ValueError) as err:
        raise SparsegenError(f"{what} cannot be read as a {dtype.name} array: {err}") from None


def _refuse_sparse(source: Any, what: str) -> None:
    """Raise when an index argument is a sparse array (its dense values would be used silently)."""
    if isinstance(source, BaseSparseNDArray):
        raise SparsegenError(
            f"{what} must be a dense array (default storage), got a {source.stype} array of "
            f"shape {source.shape}"
        )


def _ids(source: Any, what: str) -> Any:
    """An index argument (ids, indices, indptr, row, col) as ``formats.index_array`` reads it."""
    _refuse_sparse(source, what)
    return _host_array(source, what)


def _is_shape(arg: Any) -> bool:
    """Whether ``arg1`` is a shape: a tuple of ints, or of numbers that are not all ints (a shape
    with a float in it, which ``check_shape`` refuses by name)."""
    if not isinstance(arg, tuple) or not arg:
        return False
    if all(isinstance(d, (int, np.integer)) for d in arg):
        return True
    return all(isinstance(d, (int, float, np.number)) and not isinstance(d, bool) for d in arg)


def _check_target_shape(storage: Any, shape: Any) -> None:
    """Raise ``InvalidValue`` (a ``ValueError``, as MXNet raises) when ``shape=`` is given and is
    not the shape of what ``arg1`` builds."""
    if shape is not None and tuple(storage.shape) != formats.check_shape(shape):
        raise InvalidValue(
            f"shape={shape!r} does not match the shape {tuple(storage.shape)} of the array "
            "built from arg1"
        )


def _copy_of(source: BaseSparseNDArray, dtype: Any, shape: Any) -> Any:
    """A copy of ``source``'s (already valid) format, cast to ``dtype`` if given."""
    result = (source.copy() if dtype is None else with_dtype(source, dtype))._storage
    _check_target_shape(result, shape)
    return result


def _from_dense(source: Any, dtype: Any, stype: str, shape: Any) -> Any:
    """The ``stype`` format of a dense source (NDArray, numpy or lists), checked against ``shape``."""
    result = convert(_values(source, dtype, "source array"), "default", stype)
    _check_target_shape(result, shape)
    return result


def row_sparse_array(
    arg1: Any, shape: Any = None, ctx: Context | None = None, dtype: Any = None
) -> RowSparseNDArray:
    """A ``RowSparseNDArray`` from ``(data, indices)``, a dense array, another row_sparse array,
    or a shape (all zeros), as ``mxnet.nd.sparse.row_sparse_array``."""
    ctx = resolve_context(ctx)
    if isinstance(arg1, RowSparseNDArray):
        result = _copy_of(arg1, dtype, shape)
    elif _is_shape(arg1):
        result = _empty_row_sparse(arg1, dtype)
        _check_target_shape(result, shape)
    elif isinstance(arg1, tuple) and len(arg1) == 2:
        data = _values(arg1[0], dtype, "data")
        result = formats.row_sparse(data, _ids(arg1[1], "indices"), shape)
    elif isinstance(arg1, NDArray) and arg1.stype == "csr":
        raise InvalidValue("row_sparse_array cannot be created from a csr array (as in MXNet)")
    elif isinstance(arg1, (NDArray, np.ndarray, list)):
        result = _from_dense(arg1, dtype, "row_sparse", shape)
    else:
        raise InvalidValue(
            "row_sparse_array expects (data, indices), a dense array, a RowSparseNDArray or a "
            f"shape tuple; got {type(arg1).__name__}"
        )
    return RowSparseNDArray(result, ctx)


def _empty_row_sparse(shape: Any, dtype: Any) -> RowSparse:
    shape = formats.check_row_shape(shape)
    dtype = formats.check_dtype(DEFAULT_DTYPE if dtype is None else dtype, "dtype")
    return RowSparse(np.empty((0, *shape[1:]), dtype), np.empty(0, INDEX_DTYPE), shape)


def _empty_csr(shape: Any, dtype: Any) -> CSR:
    shape = formats.check_shape(shape)
    if len(shape) != 2:
        raise InvalidValue(f"csr storage needs a 2-D shape, got {shape}")
    dtype = formats.check_dtype(DEFAULT_DTYPE if dtype is None else dtype, "dtype")
    return CSR(np.empty(0, dtype), np.empty(0, INDEX_DTYPE), np.zeros(shape[0] + 1, INDEX_DTYPE),
               (shape[0], shape[1]))


def csr_matrix(
    arg1: Any, shape: Any = None, ctx: Context | None = None, dtype: Any = None
) -> CSRNDArray:
    """A ``CSRNDArray`` from ``(data, indices, indptr)``, ``(data, (row, col))``, a scipy sparse
    matrix, a dense 2-D array, another csr array or a shape, as ``mxnet.nd.sparse.csr_matrix``."""
    ctx = resolve_context(ctx)
    if isinstance(arg1, CSRNDArray):
        result = _copy_of(arg1, dtype, shape)
    elif _is_shape(arg1):
        result = _empty_csr(arg1, dtype)
        _check_target_shape(result, shape)
    elif _is_scipy_sparse(arg1):
        result = _from_scipy(arg1, dtype)
        _check_target_shape(result, shape)
    elif isinstance(arg1, tuple) and len(arg1) == 3:
        data = _values(arg1[0], dtype, "data")
        result = formats.csr(data, _ids(arg1[1], "indices"), _ids(arg1[2], "indptr"), shape,
                             sort_rows=csr_rows)
    elif isinstance(arg1, tuple) and len(arg1) == 2 and isinstance(arg1[1], tuple):
        import scipy.sparse

        data = _values(arg1[0], dtype, "data")
        if len(arg1[1]) != 2:
            raise SparsegenError(
                f"csr_matrix((data, (row, col))) needs two index arrays, got {len(arg1[1])}"
            )
        row, col = (formats.check_indices(_ids(a, what), what, None, False)
                    for a, what in zip(arg1[1], ("row", "col")))
        if shape is None:
            shape = (formats.inferred_size(row, "row"), formats.inferred_size(col, "col"))
        shape = formats.check_shape(shape)
        if len(shape) != 2:
            raise SparsegenError(f"csr storage needs a 2-D shape, got {shape}")
        for ids, dim, what in ((row, shape[0], "row"), (col, shape[1], "col")):
            formats.check_range(ids, what, dim, sorted_unique=False)
        if not data.size == row.size == col.size:
            raise SparsegenError(
                f"data, row and col must have the same length, got {data.size}, {row.size}, {col.size}"
            )
        result = _from_scipy(scipy.sparse.coo_matrix((data, (row, col)), shape=shape), data.dtype)
    elif isinstance(arg1, NDArray) and arg1.stype == "row_sparse":
        raise InvalidValue("csr_matrix cannot be created from a row_sparse array (as in MXNet)")
    elif isinstance(arg1, (NDArray, np.ndarray, list)):
        result = _from_dense(arg1, dtype, "csr", shape)
    else:
        raise InvalidValue(
            "csr_matrix expects (data, indices, indptr), (data, (row, col)), a scipy sparse "
            f"matrix, a dense 2-D array, a CSRNDArray or a shape tuple; got {type(arg1).__name__}"
        )
    return CSRNDArray(result, ctx)


def _is_scipy_sparse(arg: Any) -> bool:
    """Whether ``arg`` is a scipy sparse matrix; one exists only once scipy.sparse is imported,
    so a process that never imported it does not pay for the import here (warm start)."""
    module = sys.modules.get("scipy.sparse")
    return module is not None and module.issparse(arg)


def _from_scipy(matrix: Any, dtype: Any) -> CSR:
    """A canonical copy of a scipy sparse matrix (duplicates summed, columns sorted)."""
    m = matrix.tocsr(copy=True)
    m.sum_duplicates()
    m.sort_indices()
    data = _values(m.data, dtype, "data")
    return formats.csr(data, m.indices, m.indptr, m.shape)


def zeros(stype: str, shape: Any, ctx: Context | None = None, dtype: Any = None,
          out: NDArray | None = None) -> NDArray:
    """An all-zero array of storage ``stype`` (``default``, ``row_sparse`` or ``csr``), or
    ``out`` (of that shape and dtype, any storage type) set to zeros."""
    if out is not None:
        result = zeros(stype, shape, getattr(out, "context", None) if ctx is None else ctx, dtype)
        return deliver("zeros", result._storage, result.stype, result.context, (), out)
    shape = formats.check_shape(shape)
    ctx = resolve_context(ctx)
    if stype == "row_sparse":
        return RowSparseNDArray(_empty_row_sparse(shape, dtype), ctx)
    if stype == "csr":
        return CSRNDArray(_empty_csr(shape, dtype), ctx)
    if stype == "default":
        if ctx.device_type == "gpu" and shape:  # zeroed where it lives, by the cast kernel
            return cast_storage(RowSparseNDArray(_empty_row_sparse(shape, dtype), ctx), "default")
        dtype = formats.check_dtype(DEFAULT_DTYPE if dtype is None else dtype, "dtype")
        return NDArray(np.zeros(shape, dtype), ctx)
    raise InvalidValue(f"stype must be 'default', 'row_sparse' or 'csr', got {stype!r}")


def empty(stype: str, shape: Any, ctx: Context | None = None, dtype: Any = None) -> NDArray:
    """An array of storage ``stype`` with no stored values (zeros, as MXNet gives for sparse)."""
    return zeros(stype, shape, ctx, dtype)


def array(source_array: Any, ctx: Context | None = None, dtype: Any = None) -> BaseSparseNDArray:
    """A sparse copy of a sparse NDArray or scipy sparse matrix, as ``mxnet.nd.sparse.array``."""
    if isinstance(source_array, RowSparseNDArray):
        return row_sparse_array(source_array, ctx=ctx, dtype=dtype)
    if isinstance(source_array, CSRNDArray) or _is_scipy_sparse(source_array):
        return csr_matrix(source_array, ctx=ctx, dtype=dtype)
    raise InvalidValue(
        "mx.nd.sparse.array expects a RowSparseNDArray, a CSRNDArray or a scipy.sparse matrix, "
        f"got {type(source_array).__name__}; use row_sparse_array or csr_matrix for other sources"
    )


def retain(data: RowSparseNDArray, indices: Any, out: NDArray | None = None) -> RowSparseNDArray:
    """The rows ``indices`` of ``data`` as a row_sparse array whose indices are the requested ids;
    ids not stored come back as zero rows (``mxnet.nd.sparse.retain``).

    The ids may be in any order and repeat: the result stores each id once, in ascending order,
    which represents the same array. Ids outside ``[0, data.shape[0])`` raise, and so do sparse
    ids (as in MXNet, retain has no kernel for them). An int64 array of sorted ids in the data's
    context is checked there by a kernel and copied; other ids (and a csr's read-only indices,
    whose sorted ids are remembered) are checked and sorted on the host. The result never
    shares memory with ``indices``. ``out`` (a row_sparse array of ``data``'s shape and dtype)
    receives the result.
    """
    if not isinstance(data, RowSparseNDArray):
        raise SparsegenError(
            f"retain needs a row_sparse array as data, got {getattr(data, 'stype', type(data).__name__)}"
        )
    check_out("retain", out, data.shape, data.dtype, data.context, ("row_sparse",))
    _refuse_sparse(indices, "indices")
    if (isinstance(indices, NDArray) and indices.context == data.context
            and not formats.is_frozen(indices._storage)
            and invoke("_retain_check", (data, indices))):
        ids = copy_buffer(indices._storage)
    else:
        ids = sorted_row_ids(indices, data.shape[0], "indices")
    return invoke("retain", (data,), out=out, row_ids=ids)


def sorted_row_ids(indices: Any, rows: int, what: str) -> np.ndarray:
    """``indices`` (any order, repeats allowed) as sorted unique int64 row ids on the host,
    checked to lie in ``[0, rows)``; ``what`` names them in errors.

    The ids of a read-only-for-good buffer (a csr's ``indices``, as a batch's
    ``sparse_row_id_fn`` passes them to each of its weights' pulls) are worked out once."""
    buffer = indices._storage if isinstance(indices, NDArray) else None
    known = _DISTINCT.get(buffer)
    if known is not None and (not known.size or known[-1] < rows):
        return known.copy()  # the caller's own: a result keeps its row ids
    ids = formats.index_array(_ids(indices, what), what, flatten=True)
    formats.check_range(ids, what, rows, sorted_unique=False)
    if ids.size > 1 and not (ids[1:] > ids[:-1]).all():
        ids = _sorted_unique(ids, rows)
    _DISTINCT.put(buffer, ids)
    return ids


class _DistinctIds:
    """The sorted unique ids of the last few frozen index buffers (``formats.is_frozen``), by
    address, size and strides: two views of one such buffer hold the same ids for good, and
    the buffer kept here keeps its memory from being reused while it is remembered."""

    SIZE = 4

    def __init__(self) -> None:
        self._entries: dict[tuple[int, int, tuple[int, ...]], tuple[np.ndarray, np.ndarray]] = {}

    @staticmethod
    def _key(buffer: Any) -> tuple[int, int, tuple[int, ...]] | None:
        if not isinstance(buffer, np.ndarray) or buffer.dtype != INDEX_DTYPE \
                or not formats.is_frozen(buffer):
            return None
        return buffer.__array_interface__["data"][0], buffer.size, buffer.strides

    def get(self, buffer: Any) -> np.ndarray | None:
        """The remembered ids of ``buffer``, or None."""
        key = self._key(buffer)
        hit = None if key is None else self._entries.get(key)
        return None if hit is None else hit[1]

    def put(self, buffer: Any, ids: np.ndarray) -> None:
        """Remember ``ids`` (sorted, unique) as the distinct values of ``buffer`` if frozen."""
        key = self._key(buffer)
        if key is None:
            return
        self._entries.pop(key, None)
        self._entries[key] = (buffer, formats.frozen(ids.copy()))
        while len(self._entries) > self.SIZE:
            del self._entries[next(iter(self._entries))]


_DISTINCT = _DistinctIds()


def learn_row_ids(csr: "CSRNDArray", ids: Any) -> None:
    """When ``ids`` views the index buffer of ``csr`` (a batch's ``data.indices``, about to be
    pulled), take their distinct values from the csr's column sort on the sort kernels: the
    pulls then sort nothing, and the batch's products reuse the sort."""
    indices = csr._storage.indices
    buffer = ids._storage if isinstance(ids, NDArray) else None
    if not (isinstance(buffer, np.ndarray) and isinstance(indices, np.ndarray)
            and buffer.size == indices.size and buffer.size
            and buffer.__array_interface__["data"][0] == indices.__array_interface__["data"][0]
            and _DISTINCT.get(buffer) is None):
        return
    _DISTINCT.put(buffer, distinct_columns(csr._storage))


def _sorted_unique(ids: np.ndarray, rows: int) -> np.ndarray:
    """``np.unique`` of int64 ids in ``[0, rows)``: by a mask over the rows (linear time) when
    there are not many more rows than ids (a batch's feature ids), else by sorting."""
    if rows > 32 * ids.size:
        return np.unique(ids)
    mask = np.zeros(rows, bool)
    mask[ids] = True
    return np.flatnonzero(mask).astype(INDEX_DTYPE, copy=False)


__all__ = [
    "BaseSparseNDArray", "CSRNDArray", "RowSparseNDArray", "array", "cast_storage", "csr_matrix",
    "dot", "empty", "retain", "row_sparse_array", "zeros",
]
__all__ += elemwise.__all__

