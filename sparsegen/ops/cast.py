"""cast_storage between dense buffers and the row_sparse / csr formats, on generated kernels."""

from __future__ import annotations

import numpy as np

from ..cache import get_kernel
from ..errors import SparsegenError
from ..ndarray.formats import CSR, INDEX_DTYPE, RowSparse
from .layout import as_rows, dtype_name


def dense_to_row_sparse(x: np.ndarray) -> RowSparse:
    """The rows of ``x`` that hold a non-zero, compacted (kernel ``cast_dense_rsp``)."""
    if x.ndim < 1:
        raise SparsegenError(f"row_sparse storage needs at least 1 dimension, got shape {x.shape}")
    kernel = get_kernel("cast_dense_rsp", (dtype_name(x.dtype),), size=x.size)
    flat = as_rows(x)
    pos = np.empty(flat.shape[0] + 1, INDEX_DTYPE)
    kernel.mark(flat, pos)
    stored = int(pos[-1])
    data = np.empty((stored, flat.shape[1]), x.dtype)
    indices = np.empty(stored, INDEX_DTYPE)
    kernel.fill(flat, pos, data, indices)
    return RowSparse(data.reshape((stored, *x.shape[1:])), indices, x.shape)


def row_sparse_to_dense(rsp: RowSparse, out: np.ndarray | None = None) -> np.ndarray:
    """The dense array of ``rsp`` (kernel ``cast_rsp_dense``), written into ``out`` if given."""
    if out is None:
        out = np.empty(rsp.shape, rsp.dtype)
    kernel = get_kernel("cast_rsp_dense", (dtype_name(rsp.dtype),), size=out.size)
    kernel.scatter(as_rows(rsp.data), rsp.indices, as_rows(out, written=True))
    return out


def dense_to_csr(x: np.ndarray) -> CSR:
    """The non-zeros of 2-D ``x`` in csr form (kernel ``cast_dense_csr``)."""
    if x.ndim != 2:
        raise SparsegenError(f"csr storage needs a 2-D array, got shape {x.shape}")
    kernel = get_kernel("cast_dense_csr", (dtype_name(x.dtype),), size=x.size)
    x = np.ascontiguousarray(x)
    indptr = np.empty(x.shape[0] + 1, INDEX_DTYPE)
    kernel.count(x, indptr)
    nnz = int(indptr[-1])
    data = np.empty(nnz, x.dtype)
    indices = np.empty(nnz, INDEX_DTYPE)
    kernel.fill(x, indptr, data, indices)
    return CSR(data, indices, indptr, (x.shape[0], x.shape[1]))


def csr_to_dense(m: CSR, out: np.ndarray | None = None) -> np.ndarray:
    """The dense matrix of ``m`` (kernel ``cast_csr_dense``), written into ``out`` if given."""
    if out is None:
        out = np.empty(m.shape, m.dtype)
    kernel = get_kernel("cast_csr_dense", (dtype_name(m.dtype),), size=out.size)
    kernel.scatter(m.data, m.indices, m.indptr, as_rows(out, written=True))
    return out
