"""The matrix and array helpers of ``mx.test_utils`` (MXNet 1.9.1's names and signatures):
large-tensor builders on ``mx.nd`` (``create_2d_tensor``, ``create_vector``,
``get_identity_mat``, ``get_identity_mat_batch``) and numpy test inputs (well-conditioned
matrices with real eigenvalues, orthonormal and symmetric matrices, uniform arrays), plus
``shuffle_csr_column_indices`` and ``collapse_sum_like``. Random values come from numpy's global
generator, as MXNet's helpers draw theirs: they build test inputs, they are not ops."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import ndarray as nd
from .errors import InvalidValue
from .params import integer


def create_2d_tensor(rows: int, columns: int, dtype: Any = np.int64) -> nd.NDArray:
    """A ``(rows, columns)`` array whose row ``i`` holds ``i`` (MXNet's large-tensor test
    input): ``arange`` broadcast along the columns."""
    column = nd.arange(0, integer(rows, "create_2d_tensor: rows"), dtype=dtype).reshape((rows, 1))
    return nd.broadcast_to(column, shape=(rows, integer(columns, "create_2d_tensor: columns")))


def create_vector(size: int, dtype: Any = np.int64) -> nd.NDArray:
    """``arange(size)`` of ``dtype`` (MXNet's large-vector test input)."""
    return nd.arange(0, integer(size, "create_vector: size"), dtype=dtype)


def get_identity_mat(size: int) -> nd.NDArray:
    """The float32 identity matrix of ``size`` rows."""
    return nd.eye(integer(size, "get_identity_mat: size"))


def get_identity_mat_batch(size: int) -> nd.NDArray:
    """Two identity matrices of ``size`` rows stacked: shape ``(2, size, size)``."""
    identity = get_identity_mat(size)
    return nd.stack(identity, identity)


def random_uniform_arrays(*shapes: Sequence[int], low: float = 0.0, high: float = 1.0,
                          dtype: Any = np.float32) -> list[np.ndarray]:
    """One numpy array of ``dtype`` per shape, uniform in ``[low, high)``."""
    return [np.random.uniform(low, high, size=shape).astype(dtype) for shape in shapes]


def _square_size(n: Any, what: str) -> int:
    return integer(n, f"{what}: n", low=1)


def new_matrix_with_real_eigvals_2d(n: int) -> np.ndarray:
    """A random ``n x n`` matrix ``Q^-1 D Q`` with real eigenvalues ``D`` in ``[-10, 10)`` and
    ``Q`` well conditioned (2-norm condition number below 3)."""
    n = _square_size(n, "new_matrix_with_real_eigvals_2d")
    while True:
        v = np.random.uniform(-1.0, 1.0, (n, 1))
        v /= np.linalg.norm(v)
        q = (np.eye(n) - 2 * v @ v.T) @ np.diag(np.random.uniform(-1.0, 1.0, n))
        if np.linalg.cond(q, 2) < 3:
            break
    return np.linalg.inv(q) @ np.diag(np.random.uniform(-10.0, 10.0, n)) @ q


def _batched(make: Any, shape: Sequence[int]) -> np.ndarray:
    shape = tuple(shape)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise InvalidValue(f"shape {shape} must end in two equal dimensions (square matrices)")
    count = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return np.array([make(shape[-1]) for _ in range(count)]).reshape(shape)


def new_matrix_with_real_eigvals_nd(shape: Sequence[int]) -> np.ndarray:
    """A stack of ``new_matrix_with_real_eigvals_2d`` matrices of ``shape`` (``(..., n, n)``)."""
    return _batched(new_matrix_with_real_eigvals_2d, shape)


def new_orthonormal_matrix_2d(n: int) -> np.ndarray:
    """A random ``n x n`` orthonormal matrix (the Q of a QR factorization)."""
    x = np.random.randn(_square_size(n, "new_orthonormal_matrix_2d"), n)
    return np.linalg.qr(x.T @ x)[0]


def new_sym_matrix_with_real_eigvals_2d(n: int) -> np.ndarray:
    """A random symmetric ``n x n`` matrix ``Q^T D Q``, eigenvalues ``D`` in ``[-10, 10)``."""
    q = new_orthonormal_matrix_2d(n)
    return q.T @ np.diag(np.random.uniform(-10.0, 10.0, n)) @ q


def new_sym_matrix_with_real_eigvals_nd(shape: Sequence[int]) -> np.ndarray:
    """A stack of ``new_sym_matrix_with_real_eigvals_2d`` matrices of ``shape``."""
    return _batched(new_sym_matrix_with_real_eigvals_2d, shape)


def shuffle_csr_column_indices(csr: Any) -> None:
    """Shuffle the column ids within each row of a scipy csr matrix in place, its values left
    where they are (as MXNet's: an unsorted csr with each row's columns); a sparsegen
    ``CSRNDArray`` keeps its sorted ids and values (docs/mxnet-differences.md)."""
    if isinstance(csr, nd.NDArray):
        if csr.stype != "csr":
            raise InvalidValue(f"shuffle_csr_column_indices: csr must be a csr array, got "
                               f"{csr.stype}")
        return
    indptr, indices = np.asarray(csr.indptr), csr.indices
    for row in range(len(indptr) - 1):
        np.random.shuffle(indices[indptr[row]:indptr[row + 1]])


def collapse_sum_like(a: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    """``a`` summed over the axes that ``shape`` (broadcastable to ``a``) lacks or holds as 1,
    reshaped to ``shape`` (the gradient of a broadcast)."""
    a, shape = np.asarray(a), tuple(shape)
    if len(shape) > a.ndim:
        raise InvalidValue(f"collapse_sum_like: shape {shape} has more dimensions than a "
                           f"{a.shape}")
    if a.size == 0 or int(np.prod(shape)) == 0:
        return np.zeros(shape, dtype=a.dtype)
    lead = a.ndim - len(shape)
    axes = list(range(lead))
    for i, size in enumerate(shape):
        if size != a.shape[lead + i]:
            if size != 1:
                raise InvalidValue(f"collapse_sum_like: shape {shape} does not broadcast to "
                                   f"{a.shape}")
            axes.append(lead + i)
    return np.sum(a, axis=tuple(axes)).reshape(shape)


__all__ = ["collapse_sum_like", "create_2d_tensor", "create_vector", "get_identity_mat",
           "get_identity_mat_batch", "new_matrix_with_real_eigvals_2d",
           "new_matrix_with_real_eigvals_nd", "new_orthonormal_matrix_2d",
           "new_sym_matrix_with_real_eigvals_2d", "new_sym_matrix_with_real_eigvals_nd",
           "random_uniform_arrays", "shuffle_csr_column_indices"]
