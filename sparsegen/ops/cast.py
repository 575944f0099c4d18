"""cast_storage between dense buffers and the row_sparse / csr formats, on generated kernels."""

from __future__ import annotations

from typing import Any

from ..device import contiguous, deep_copy, empty_like, item
from ..errors import SparsegenError
from ..formats import CSR, INDEX_DTYPE, RowSparse
from .layout import as_rows, dtype_name, kernel
from .rule import STYPES, Rules, StorageRule


def dense_to_row_sparse(x: Any) -> RowSparse:
    """The rows of ``x`` that hold a non-zero, compacted (kernel ``cast_dense_rsp``)."""
    if x.ndim < 1:
        raise SparsegenError(f"row_sparse storage needs at least 1 dimension, got shape {x.shape}")
    cast = kernel("cast_dense_rsp", (dtype_name(x.dtype),), x, x.size)
    flat = as_rows(x)
    pos = empty_like(x, (flat.shape[0] + 1,), INDEX_DTYPE)
    cast.mark(flat, pos)
    stored = item(pos, -1)
    data = empty_like(x, (stored, flat.shape[1]), x.dtype)
    indices = empty_like(x, (stored,), INDEX_DTYPE)
    cast.fill(flat, pos, data, indices)
    return RowSparse(data.reshape((stored, *x.shape[1:])), indices, x.shape)


def row_sparse_to_dense(rsp: RowSparse, out: Any = None) -> Any:
    """The dense array of ``rsp`` (kernel ``cast_rsp_dense``), written into ``out`` if given."""
    if out is None:
        out = empty_like(rsp.data, rsp.shape, rsp.dtype)
    kernel("cast_rsp_dense", (dtype_name(rsp.dtype),), out, out.size).scatter(as_rows(rsp.data), rsp.indices, as_rows(out, written=True))
    return out


def dense_to_csr(x: Any) -> CSR:
    """The non-zeros of 2-D ``x`` in csr form (kernel ``cast_dense_csr``)."""
    if x.ndim != 2:
        raise SparsegenError(f"csr storage needs a 2-D array, got shape {x.shape}")
    cast = kernel("cast_dense_csr", (dtype_name(x.dtype),), x, x.size)
    x = contiguous(x)
    indptr = empty_like(x, (x.shape[0] + 1,), INDEX_DTYPE)
    cast.count(x, indptr)
    nnz = item(indptr, -1)
    data = empty_like(x, (nnz,), x.dtype)
    indices = empty_like(x, (nnz,), INDEX_DTYPE)
    cast.fill(x, indptr, data, indices)
    return CSR(data, indices, indptr, (x.shape[0], x.shape[1]))


def csr_to_dense(m: CSR, out: Any = None) -> Any:
    """The dense matrix of ``m`` (kernel ``cast_csr_dense``), written into ``out`` if given."""
    if out is None:
        out = empty_like(m.data, m.shape, m.dtype)
    kernel("cast_csr_dense", (dtype_name(m.dtype),), out, out.size).scatter(m.data, m.indices, m.indptr, as_rows(out, written=True))
    return out


STORAGE_RULES: Rules = {
    ("cast_storage->row_sparse", ("default",)): StorageRule("row_sparse", dense_to_row_sparse),
    ("cast_storage->default", ("row_sparse",)): StorageRule("default", row_sparse_to_dense),
    ("cast_storage->csr", ("default",)): StorageRule("csr", dense_to_csr),
    ("cast_storage->default", ("csr",)): StorageRule("default", csr_to_dense),
    **{(f"cast_storage->{stype}", (stype,)): StorageRule(stype, deep_copy) for stype in STYPES},
}
"""``cast_storage`` to each storage type (the op name carries it): dense <-> row_sparse and
dense <-> csr have kernels, a cast to the same type copies; csr <-> row_sparse goes through
dense (the front end's two steps)."""
