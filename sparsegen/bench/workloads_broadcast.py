"""W11 / W12: csr (200,000 x 2,000, 0.5%) times a dense row vector (1, n) / column vector (m, 1),
kept csr (MXNet's broadcast_mul with a csr lhs), against scipy's and PyTorch's sparse multiply."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse

import sparsegen as mx

from .harness import Workload
from .peers import torch


def _matrix(quick: bool) -> scipy.sparse.csr_matrix:
    rows, cols = (5_000, 200) if quick else (200_000, 2_000)
    return scipy.sparse.random(rows, cols, density=0.005, format="csr", dtype=np.float32,
                               random_state=np.random.default_rng(9))


def _values(result: Any) -> np.ndarray:
    """The stored values of any implementation's result in row-major order, outside the timing."""
    if isinstance(result, mx.nd.NDArray):
        return result.data.asnumpy()
    if scipy.sparse.issparse(result):
        return result.tocsr().data
    return result.coalesce().values().numpy()  # a torch COO tensor


def _check(expected: Any, got: Any) -> None:
    np.testing.assert_allclose(_values(got), _values(expected), rtol=1e-6)


def _workload(wid: str, by: str, quick: bool) -> Workload:
    matrix = _matrix(quick)
    rows, cols = matrix.shape
    shape = (1, cols) if by == "row" else (rows, 1)
    vector = (np.random.default_rng(10).random(shape, dtype=np.float32) + 0.5)

    def sparsegen_impl():
        csr, v = mx.nd.sparse.csr_matrix(matrix), mx.nd.array(vector)
        return lambda: csr * v

    def scipy_impl():
        return lambda: matrix.multiply(vector)

    impls = {"sparsegen": sparsegen_impl, "scipy": scipy_impl}
    th = torch()
    if th is not None:
        def torch_impl():
            entries = matrix.tocoo()
            coo = th.sparse_coo_tensor(
                th.from_numpy(np.vstack((entries.row, entries.col)).astype(np.int64)),
                th.from_numpy(entries.data), matrix.shape).coalesce()
            v = th.from_numpy(vector)
            return lambda: coo * v
        impls["torch"] = torch_impl
    nnz = matrix.nnz
    moved = nnz * (4 + 8 + 4) + (rows + 1) * 8 + vector.size * 4
    vector_shape = "(1, n)" if by == "row" else "(m, 1)"
    title = f"csr ({rows:,} x {cols:,}, {nnz:,} stored) * dense {vector_shape} -> csr"
    workload = Workload(wid, title, moved, impls, _check)
    workload.notes.append("scipy's csr.multiply and PyTorch's COO * dense return COO results; "
                          "sparsegen keeps the input's csr index arrays and writes values only")
    return workload


def w11_csr_row(quick: bool = False) -> Workload:
    """W11: csr times a dense row vector (each stored value scaled by its column's factor)."""
    return _workload("W11", "row", quick)


def w12_csr_col(quick: bool = False) -> Workload:
    """W12: csr times a dense column vector (each stored value scaled by its row's factor)."""
    return _workload("W12", "col", quick)
