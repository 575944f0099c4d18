"""dot on csr, row_sparse and dense storage, on the generated ``dot_*`` kernels.

The registry's op rules pick one function here per (op, input storage types), the op name
carrying the transpose flags and ``forward_stype``; every function is called with the flags as
keywords, and only ``dense_dense`` (which serves all four orientations) reads them. Operands
arrive validated: dtypes equal, shapes agreeing (see ``output_shape``).
"""

from __future__ import annotations

import math
import weakref
from typing import Any

from ..device import contiguous, copy, empty_like, to_host
from ..errors import SparsegenError
from ..formats import CSR, INDEX_DTYPE, RowSparse
from .cast import dense_to_csr, dense_to_row_sparse, row_sparse_to_dense
from .gather import transpose
from .layout import as_rows, dtype_name, kernel
from .radix import sort_by_column
from .rule import Rules, StorageRule


def output_shape(lhs: tuple[int, ...], rhs: tuple[int, ...], transpose_a: bool,
                 transpose_b: bool) -> tuple[int, ...]:
    """The shape of ``dot(lhs, rhs)`` as MXNet defines it, or an error naming both shapes.

    The reduced axis is the first of a transposed lhs, else its last; the last of a transposed
    rhs, else its first. Two vectors give shape ``(1,)`` and cannot be transposed.
    """
    flags = f"transpose_a={transpose_a}, transpose_b={transpose_b}"
    if not lhs or not rhs:
        raise SparsegenError(
            f"dot needs arrays of at least 1 dimension, got shapes {lhs} and {rhs}"
        )
    if len(lhs) == 1 and len(rhs) == 1 and (transpose_a or transpose_b):
        raise SparsegenError(f"dot cannot transpose vectors: shapes {lhs} and {rhs} with {flags}")
    lhs_k, lhs_rest = (lhs[0], lhs[1:]) if transpose_a else (lhs[-1], lhs[:-1])
    rhs_k, rhs_rest = (rhs[-1], rhs[:-1]) if transpose_b else (rhs[0], rhs[1:])
    if lhs_k != rhs_k:
        raise SparsegenError(
            f"dot shape mismatch: lhs {lhs} and rhs {rhs} with {flags}: the lhs reduces "
            f"{lhs_k} elements, the rhs {rhs_k}"
        )
    return (*lhs_rest, *rhs_rest) or (1,)


# -- dense · dense ------------------------------------------------------------------------------
def dense_dense(lhs: Any, rhs: Any, transpose_a: bool = False,
                transpose_b: bool = False) -> Any:
    """``dot`` of dense arrays of any rank (kernel ``dot_dense``), as ``mxnet.nd.dot``."""
    shape = output_shape(lhs.shape, rhs.shape, transpose_a, transpose_b)
    k = lhs.shape[0] if transpose_a else lhs.shape[-1]
    m = math.prod(lhs.shape[1:] if transpose_a else lhs.shape[:-1])
    n = math.prod(rhs.shape[:-1] if transpose_b else rhs.shape[1:])
    a = contiguous(lhs).reshape((k, m) if transpose_a else (m, k))
    b = transpose(contiguous(rhs).reshape(n, k)) if transpose_b else contiguous(rhs).reshape(k, n)
    out = empty_like(lhs, (m, n), lhs.dtype)
    product = kernel("dot_dense", (dtype_name(lhs.dtype),), lhs, m * n + k * (m + n))
    (product.tn if transpose_a else product.nn)(a, b, out)
    return out.reshape(shape)


def dense_dense_to_row_sparse(lhs: Any, rhs: Any, transpose_a: bool = False,
                              transpose_b: bool = False) -> RowSparse:
    """``dense_dense`` stored as row_sparse (``forward_stype='row_sparse'``)."""
    return dense_to_row_sparse(dense_dense(lhs, rhs, transpose_a, transpose_b))


def dense_dense_to_csr(lhs: Any, rhs: Any, transpose_a: bool = False,
                       transpose_b: bool = False) -> CSR:
    """``dense_dense`` stored as csr (``forward_stype='csr'``)."""
    return dense_to_csr(dense_dense(lhs, rhs, transpose_a, transpose_b))


# -- csr · x ------------------------------------------------------------------------------------
def csr_dense(lhs: CSR, rhs: Any, **flags: bool) -> Any:
    """``csr · dense`` -> dense (kernel ``dot_csr_dense``)."""
    b = as_rows(rhs)
    out = empty_like(b, (lhs.shape[0], b.shape[1]), lhs.dtype)
    size = out.size + lhs.indices.size * b.shape[1]
    kernel("dot_csr_dense", (dtype_name(lhs.dtype),), b, size).matmul(
        lhs.data, lhs.indices, lhs.indptr, b, out
    )
    return out


def csr_row_sparse(lhs: CSR, rhs: RowSparse, **flags: bool) -> Any:
    """``csr · row_sparse`` -> dense (kernel ``dot_csr_rsp``); row ids of any size. Each entry's
    rhs row comes from one merge walk of the csr's distinct columns with the rhs row ids, on the
    csr's column sort, which the product's gradient (csrᵀ · g) and the other products of the
    same csr reuse (``_column_sort``)."""
    b = as_rows(rhs.data)
    dtype = dtype_name(lhs.dtype)
    nnz = lhs.indices.size
    out = empty_like(b, (lhs.shape[0], b.shape[1]), lhs.dtype)
    product = kernel("dot_csr_rsp", (dtype,), b, out.size + nnz * b.shape[1])
    src, _, ids, starts = _column_sort(kernel("dot_csrT", (dtype,), b, nnz), lhs, nnz)
    pos = empty_like(lhs.indices, (nnz,), INDEX_DTYPE)
    product.locate(ids, starts, src, rhs.indices, pos)
    product.matmul_at(lhs.data, pos, lhs.indptr, b, out)
    return out


# -- csrᵀ · x -----------------------------------------------------------------------------------
def _csr_t(lhs: CSR, rhs_rows: Any, rhs_ids: Any) -> RowSparse:
    """``csrᵀ · rhs`` as row_sparse over the columns holding an entry that meets a rhs row:
    every csr row for a dense rhs (``rhs_ids`` None), else the rows ``rhs_ids`` stored.

    The scratch size for a row_sparse rhs (its rows' entry count) is read on the host."""
    product = kernel("dot_csrT", (dtype_name(lhs.dtype),), rhs_rows,
                     lhs.indices.size * rhs_rows.shape[1])
    used = lhs.indices.size
    if rhs_ids is not None:
        indptr, ids = to_host(lhs.indptr), to_host(rhs_ids)
        used = int((indptr[ids + 1] - indptr[ids]).sum())
    if rhs_ids is None:
        src, erow, ids, starts = _column_sort(product, lhs, used)
        ids = copy(ids)  # the result's own: the sort is kept for the next product
    else:
        src, erow, ids, starts = sort_by_column(product, lhs, rhs_ids, used)
    out = empty_like(rhs_rows, (ids.size, rhs_rows.shape[1]), lhs.dtype)
    product.values(lhs.data, src, erow, starts, rhs_rows, out)
    return RowSparse(out, ids, (lhs.shape[1], rhs_rows.shape[1]))


_COLUMN_SORTS: dict[int, tuple[Any, Any, tuple[Any, Any, Any, Any]]] = {}
"""The last column sorts of csr index arrays still alive, by ``id(indices)``: (a weak
reference to the indices, the indptr, the sort)."""


def _column_sort(product: Any, lhs: CSR, used: int) -> tuple[Any, Any, Any, Any]:
    """``sort_by_column`` of every row of ``lhs``, done once per index array: csr · rsp and
    csrᵀ · g for several g, and for a csr with the same structure (``square(x)`` shares ``x``'s
    indices), reuse it (read-only: a result copies what it keeps)."""
    key = id(lhs.indices)
    hit = _COLUMN_SORTS.get(key)
    if hit is not None and hit[0]() is lhs.indices and hit[1] is lhs.indptr:
        return hit[2]
    result = sort_by_column(product, lhs, None, used)
    try:
        ref = weakref.ref(lhs.indices, lambda _, sorts=_COLUMN_SORTS: sorts.pop(key, None))
    except TypeError:  # an index buffer without weak references: no reuse
        return result
    _COLUMN_SORTS[key] = (ref, lhs.indptr, result)
    return result


def distinct_columns(lhs: CSR) -> Any:
    """The sorted distinct column ids of ``lhs`` (read-only), from its column sort, which its
    products then reuse (``_column_sort``)."""
    nnz = lhs.indices.size
    return _column_sort(kernel("dot_csrT", (dtype_name(lhs.dtype),), lhs.data, nnz), lhs, nnz)[2]


def csr_t_dense(lhs: CSR, rhs: Any, **flags: bool) -> RowSparse:
    """``csrᵀ · dense`` -> row_sparse over the columns that hold an entry (explicit zeros
    included, as MXNet), in two phases: index set (sort by column), then values."""
    return _csr_t(lhs, as_rows(rhs), None)


def csr_t_dense_to_dense(lhs: CSR, rhs: Any, **flags: bool) -> Any:
    """``csrᵀ · dense`` -> dense (``forward_stype='default'``)."""
    return row_sparse_to_dense(csr_t_dense(lhs, rhs))


def csr_t_row_sparse(lhs: CSR, rhs: RowSparse, **flags: bool) -> RowSparse:
    """``csrᵀ · row_sparse`` -> row_sparse over the columns that hold an entry in a csr row
    the rhs stores (as MXNet)."""
    return _csr_t(lhs, as_rows(rhs.data), rhs.indices)


def csr_t_row_sparse_to_dense(lhs: CSR, rhs: RowSparse, **flags: bool) -> Any:
    """``csrᵀ · row_sparse`` -> dense (``forward_stype='default'``)."""
    return row_sparse_to_dense(csr_t_row_sparse(lhs, rhs))


# -- dense · csr --------------------------------------------------------------------------------
def _dense_times_csr(name: str, lhs: Any, rhs: CSR, columns: int) -> Any:
    """A dense product of ``lhs`` and the csr ``rhs`` (or its transpose) by kernel ``name``."""
    a = contiguous(lhs)
    out = empty_like(a, (a.shape[0], columns), lhs.dtype)
    size = out.size + rhs.indices.size * a.shape[0]
    kernel(name, (dtype_name(lhs.dtype),), a, size).matmul(
        a, rhs.data, rhs.indices, rhs.indptr, out
    )
    return out


def dense_csr(lhs: Any, rhs: CSR, **flags: bool) -> Any:
    """``dense · csr`` -> dense (kernel ``dot_dense_csr``, ``forward_stype='default'``)."""
    return _dense_times_csr("dot_dense_csr", lhs, rhs, rhs.shape[1])


def dense_csr_to_csr(lhs: Any, rhs: CSR, **flags: bool) -> CSR:
    """``dense · csr`` -> csr as MXNet on CPU: every output row stores every column that holds
    an entry of the csr, zeros included."""
    a = contiguous(lhs)
    size = a.shape[0] * (rhs.indices.size + 1)
    product = kernel("dot_dense_csr", (dtype_name(lhs.dtype),), a, size)
    nnz = rhs.indices.size
    src, _, columns, starts = sort_by_column(product, rhs, None, nnz)
    ranks = empty_like(a, (nnz,), INDEX_DTYPE)
    product.rank(starts, src, ranks)
    m = a.shape[0]
    data = empty_like(a, (m, columns.size), lhs.dtype)
    indices = empty_like(a, (m, columns.size), INDEX_DTYPE)
    indptr = empty_like(a, (m + 1,), INDEX_DTYPE)
    product.values(a, rhs.data, rhs.indptr, ranks, columns, data, indices, indptr)
    return CSR(data.reshape(-1), indices.reshape(-1), indptr, (m, rhs.shape[1]))


def dense_csr_t(lhs: Any, rhs: CSR, **flags: bool) -> Any:
    """``dense · csrᵀ`` -> dense (kernel ``dot_dense_csrT``)."""
    return _dense_times_csr("dot_dense_csrT", lhs, rhs, rhs.shape[0])


def dense_csr_t_to_csr(lhs: Any, rhs: CSR, **flags: bool) -> CSR:
    """``dense · csrᵀ`` -> csr: MXNet on CPU gives csr here (its dense fallback, cast back)."""
    return dense_to_csr(dense_csr_t(lhs, rhs))


_FLAGS = ("", "_transpose_a", "_transpose_b", "_transpose_a_transpose_b")
_KINDS = (  # flags, input stypes, output stype without forward_stype, {output stype: impl}
    ("", ("csr", "default"), "default", {"default": csr_dense}),
    ("_transpose_a", ("csr", "default"), "row_sparse",
     {"row_sparse": csr_t_dense, "default": csr_t_dense_to_dense}),
    ("", ("csr", "row_sparse"), "default", {"default": csr_row_sparse}),
    ("_transpose_a", ("csr", "row_sparse"), "row_sparse",
     {"row_sparse": csr_t_row_sparse, "default": csr_t_row_sparse_to_dense}),
    ("", ("default", "csr"), "csr", {"csr": dense_csr_to_csr, "default": dense_csr}),
    ("_transpose_b", ("default", "csr"), "csr",
     {"csr": dense_csr_t_to_csr, "default": dense_csr_t}),
    *((flags, ("default", "default"), "default",
       {"default": dense_dense, "row_sparse": dense_dense_to_row_sparse,
        "csr": dense_dense_to_csr})
      for flags in _FLAGS),
)
STORAGE_RULES: Rules = {
    (f"dot{flags}{forward}", stypes): StorageRule(stype, impls[stype])
    for flags, stypes, default, impls in _KINDS
    for forward, stype in (("", default), *((f"->{s}", s) for s in impls))
}
"""dot storage rules: the op name carries the transpose flags and forward_stype (``dot``,
``dot_transpose_a->default``, ...); without ``->stype`` the output is MXNet's for the inputs.
These are MXNet's sparse kernels on CPU (plus dense·csrᵀ -> csr, a fallback there); any other
combination runs the dense rule with a StorageFallbackWarning."""
