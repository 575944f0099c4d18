"""W9 (csr sum over axis 0, column sums) and W10 (row_sparse sum over axis 1, a dense vector).

scipy / numpy and torch read the same numpy buffers; sparsegen reads its own copies. Each
implementation returns a fresh dense vector per call.
"""

from __future__ import annotations

import numpy as np

import sparsegen as mx

from .harness import Workload
from .peers import torch
from .outputs import check_dense
from .workloads_dot import INDEX_BYTES, _csr

RSP_COLS = 128


def w9_csr_sum(quick: bool = False) -> Workload:
    """W9: csr (100,000 x 50,000, 32 uniform entries per row) summed over axis 0."""
    rows, cols, per_row = (2_000, 5_000, 8) if quick else (100_000, 50_000, 32)
    a = _csr(rows, cols, per_row, seed=9)

    def sparsegen_impl():
        x = mx.nd.sparse.csr_matrix((a.data, a.indices, a.indptr), shape=a.shape)
        return lambda: mx.nd.sum(x, axis=0)

    impls = {"sparsegen": sparsegen_impl, "scipy": lambda: lambda: np.asarray(a.sum(axis=0))[0]}
    th = torch()
    if th is not None:
        def torch_impl():
            t = th.sparse_csr_tensor(th.from_numpy(a.indptr), th.from_numpy(a.indices),
                                     th.from_numpy(a.data), a.shape, check_invariants=False)
            return lambda: th.sum(t, dim=0, keepdim=True).to_dense().reshape(-1)
        impls["torch"] = torch_impl
    moved = a.nnz * (4 + INDEX_BYTES) + (rows + 1) * INDEX_BYTES + cols * 4
    title = f"csr ({rows:,} x {cols:,}, {per_row} entries per row) sum over axis 0"
    return Workload("W9", title, moved, impls, check_dense)


def w10_rsp_sum(quick: bool = False) -> Workload:
    """W10: row_sparse (1,000,000 x 128), 50,000 random stored rows, summed over axis 1."""
    rows, stored = (20_000, 1_000) if quick else (1_000_000, 50_000)
    rng = np.random.default_rng(10)
    ids = np.sort(rng.choice(rows, stored, replace=False)).astype(np.int64)
    data = rng.standard_normal((stored, RSP_COLS), dtype=np.float32)

    def sparsegen_impl():
        x = mx.nd.sparse.row_sparse_array((data, ids), shape=(rows, RSP_COLS))
        return lambda: mx.nd.sum(x, axis=1)

    def numpy_impl():
        def run():
            out = np.zeros(rows, np.float32)
            out[ids] = data.sum(axis=1)
            return out
        return run

    impls = {"sparsegen": sparsegen_impl, "numpy": numpy_impl}
    th = torch()
    if th is not None:
        def torch_impl():
            t = th.sparse_coo_tensor(th.from_numpy(ids)[None], th.from_numpy(data),
                                     (rows, RSP_COLS), check_invariants=False).coalesce()
            return lambda: th.sparse.sum(t, dim=1).to_dense()
        impls["torch"] = torch_impl
    moved = data.nbytes + ids.nbytes + rows * 4
    title = f"row_sparse ({rows:,} x {RSP_COLS}), {stored:,} random rows, sum over axis 1"
    return Workload("W10", title, moved, impls, check_dense)
