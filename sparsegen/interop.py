"""Sparse arrays to and from (values, indices) pairs, scipy.sparse and PyTorch, through DLPack.

These are sparsegen's explicit zero-copy paths, for the values only. A sparse array owns its
index arrays: what comes in is validated exactly as ``mx.nd.sparse`` constructors validate it
and the ids are copied (they are small beside the values), so no later write to the source's
ids reaches the kernels, which trust validated indices. What goes out shows sparsegen's ids
read-only for good (numpy, scipy) or as copies (torch, whose sparse tensors let them be
written). The values are shared wherever the layouts agree (read-only numpy arrays are copied,
as kernels cannot take them): later writes to them are seen on both sides. A shared source must
keep its memory: resizing it (torch ``resize_``, numpy ``resize(refcheck=False)``) frees what
the array reads; copy instead (the ``mx.nd.sparse`` constructors copy everything).

PyTorch is optional: only the torch functions import it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import formats
from .context import Context
from .context import resolve as resolve_context
from .errors import SparsegenError
from .ndarray.dlpack import dlpack_numpy, torch_module, torch_tensor
from .ndarray.ndarray import NDArray
from .ops.sort import csr_rows
from .ndarray.sparse import BaseSparseNDArray, CSRNDArray, RowSparseNDArray, _from_scipy


def as_numpy(array: Any, what: str = "array") -> np.ndarray:
    """``array`` (numpy, a dense NDArray, a torch tensor or any CPU DLPack array) as numpy,
    sharing its memory."""
    if isinstance(array, np.ndarray):
        return array
    if isinstance(array, BaseSparseNDArray):
        raise SparsegenError(f"{what} must be dense, got a {array.stype} array")
    if isinstance(array, NDArray):
        return _host_storage(array, what)
    if not hasattr(array, "__dlpack__"):
        return np.asarray(array)
    return dlpack_numpy(array, what)


def _host_storage(array: NDArray, what: str) -> Any:
    """The storage of a CPU array, whose buffers numpy can share; a GPU array raises."""
    if array.context.device_type == "gpu":
        raise SparsegenError(
            f"{what}: the array is on {array.context}, and only host memory can be shared with "
            "numpy or scipy; copy it first (.as_in_context(mx.cpu()) or .asnumpy())"
        )
    return array._storage


def _kernel_ready(values: np.ndarray) -> np.ndarray:
    """``values``, or a copy when read-only: numpy does not pass read-only arrays to kernels."""
    return values if values.flags.writeable else values.copy()


# -- (values, indices) pairs and scipy.sparse ------------------------------------------------------
def from_pair(values: Any, indices: Any, shape: Any = None,
              ctx: Context | None = None) -> RowSparseNDArray:
    """A ``RowSparseNDArray`` over ``values`` (k, ...) stored at row ids ``indices`` (k,), sharing
    the values' memory when they are C-contiguous; the ids are a validated copy (``shape``
    inferred if omitted)."""
    storage = formats.row_sparse(_kernel_ready(as_numpy(values, "values")),
                                 as_numpy(indices, "indices"),
                                 None if shape is None else formats.check_shape(shape))
    return RowSparseNDArray(storage, resolve_context(ctx))


def to_pair(array: RowSparseNDArray) -> tuple[np.ndarray, np.ndarray]:
    """The stored rows and their int64 ids as numpy arrays sharing memory (ids read-only for
    good: ``flags.writeable = True`` raises)."""
    if not isinstance(array, RowSparseNDArray):
        raise SparsegenError(f"to_pair needs a row_sparse array, got {_kind(array)}")
    storage = _host_storage(array, "to_pair")
    return storage.data.view(), formats.frozen(storage.indices)  # a view cannot be resized


def to_scipy(array: CSRNDArray) -> Any:
    """A ``scipy.sparse.csr_matrix`` sharing the csr array's memory (index arrays read-only for
    good).

    ``CSRNDArray.asscipy()`` is MXNet's copying version."""
    import scipy.sparse

    if not isinstance(array, CSRNDArray):
        raise SparsegenError(f"to_scipy needs a csr array, got {_kind(array)}")
    s = _host_storage(array, "to_scipy")
    if s.dtype == np.float16:
        raise SparsegenError("scipy.sparse does not support float16: use x.astype('float32')")
    matrix = scipy.sparse.csr_matrix(s.shape, dtype=s.dtype)
    matrix.data, matrix.indices, matrix.indptr = s.data, formats.frozen(s.indices), formats.frozen(s.indptr)
    matrix.has_sorted_indices = True  # validated: sorted and unique in each row
    matrix.has_canonical_format = True
    return matrix


def from_scipy(matrix: Any, ctx: Context | None = None) -> CSRNDArray:
    """A ``CSRNDArray`` from any scipy sparse matrix or array; a canonical csr shares its values
    (its ids are validated copies), anything else (duplicates, other formats) is converted into
    new buffers."""
    import scipy.sparse

    if not scipy.sparse.issparse(matrix):
        raise SparsegenError(f"from_scipy needs a scipy.sparse matrix, got {type(matrix).__name__}")
    if matrix.format == "csr" and matrix.has_canonical_format:
        storage = formats.csr(_kernel_ready(matrix.data), matrix.indices, matrix.indptr,
                              matrix.shape)
    else:
        storage = _from_scipy(matrix, None)
    return CSRNDArray(storage, resolve_context(ctx))


# -- PyTorch ---------------------------------------------------------------------------------------
def to_torch(array: NDArray) -> Any:
    """The array as a torch tensor sharing its values: dense -> strided, row_sparse -> sparse COO
    (one sparse dimension, rows stored whole), csr -> sparse CSR. A sparse tensor's index
    tensors are copies (torch lets them be written, and sparsegen's kernels trust its own)."""
    if not isinstance(array, NDArray):
        torch_module()  # a missing PyTorch is named first
        raise SparsegenError(f"to_torch needs a sparsegen NDArray, got {_kind(array)}")
    return torch_tensor(array._storage)


def from_torch(tensor: Any, ctx: Context | None = None) -> NDArray:
    """A sparsegen array from a CPU torch tensor, sharing the values where the layout allows.

    strided -> ``NDArray``; sparse COO with one sparse dimension -> ``RowSparseNDArray``
    (coalesced first if it is not); other 2-D COO and sparse CSR -> ``CSRNDArray``. Index
    tensors are copied into int64 ids the array owns.
    """
    torch = torch_module()
    if not isinstance(tensor, torch.Tensor):
        raise SparsegenError(f"from_torch needs a torch.Tensor, got {type(tensor).__name__}")
    if tensor.device.type != "cpu":
        raise SparsegenError(f"the tensor is on {tensor.device}; move it to the CPU first (.cpu())")
    tensor = tensor.detach()
    if tensor.layout == torch.strided:
        values = as_numpy(tensor, "tensor")
        formats.check_dtype(values.dtype, "tensor")
        return NDArray(values, resolve_context(ctx))
    if tensor.layout == torch.sparse_coo:
        coalesced = tensor if tensor.is_coalesced() else tensor.coalesce()
        if coalesced.sparse_dim() == 1:
            return from_pair(coalesced.values(), coalesced.indices()[0], tuple(coalesced.shape),
                             ctx)
        if coalesced.dim() != 2:
            raise SparsegenError(
                f"a sparse COO tensor converts to row_sparse (one sparse dimension) or csr (2-D); "
                f"got {coalesced.sparse_dim()} sparse dimensions of shape {tuple(coalesced.shape)}"
            )
        tensor = coalesced.to_sparse_csr()
    if tensor.layout != torch.sparse_csr:
        raise SparsegenError(f"unsupported torch layout {tensor.layout}; convert to strided, "
                             "sparse COO or sparse CSR first")
    storage = formats.csr(as_numpy(tensor.values(), "values"),
                          as_numpy(tensor.col_indices(), "col_indices"),
                          as_numpy(tensor.crow_indices(), "crow_indices"), tuple(tensor.shape),
                          sort_rows=csr_rows)
    return CSRNDArray(storage, resolve_context(ctx))


def _kind(array: Any) -> str:
    return f"a {array.stype} array" if isinstance(array, NDArray) else type(array).__name__


__all__ = ["as_numpy", "from_pair", "from_scipy", "from_torch", "to_pair", "to_scipy", "to_torch"]
