"""W4 (csr · dense -> dense) and W5 (csrᵀ · dense -> row_sparse) from WORKLOADS.md.

Every implementation reads the same dense numpy buffer (torch through ``torch.from_numpy``,
sparsegen through ``mx.nd.from_numpy`` of a view, no copy), so none finds the rows another one
left in the cache in memory of its own: at the small scaling size the gathered rows (13 MB) fit
in a 32 MB L3. sparsegen's csr is its own copy (``csr_matrix`` copies, as MXNet's). The buffers
are numpy allocations, with transparent huge pages where numpy asks for them (4 MB and more).
Each implementation allocates its output on every call, as a user's call would.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse

import sparsegen as mx

from .harness import Workload
from .outputs import check_dense, rows_checker
from .peers import mkl, numba_kernels, torch

INDEX_BYTES = 8


def _csr(rows: int, cols: int, per_row: int, seed: int) -> scipy.sparse.csr_matrix:
    """``rows`` x ``cols`` float32 csr, ``per_row`` distinct uniform columns per row (sorted)."""
    rng = np.random.default_rng(seed)
    # per_row draws with rejection of duplicates: uniform, distinct, vectorised
    picks = np.sort(rng.integers(0, cols, size=(rows, per_row * 2)), axis=1)
    keep = np.ones_like(picks, bool)
    keep[:, 1:] = picks[:, 1:] != picks[:, :-1]
    indices = np.concatenate([row[k][:per_row] for row, k in zip(picks, keep)]).astype(np.int64)
    indptr = np.arange(rows + 1, dtype=np.int64) * per_row
    data = rng.random(indices.size, dtype=np.float32) + 0.5
    return scipy.sparse.csr_matrix((data, indices, indptr), shape=(rows, cols))


def _sizes(quick: bool) -> tuple[int, int, int, int]:
    return (512, 100_000, 16, 128) if quick else (4_096, 1_000_000, 64, 128)


def w4_arrays(quick: bool = False, rows: int | None = None
              ) -> tuple[scipy.sparse.csr_matrix, np.ndarray]:
    """W4's csr (``rows`` rows when given) and dense rhs."""
    default, cols, per_row, d = _sizes(quick)
    a = _csr(default if rows is None else rows, cols, per_row, seed=4)
    return a, np.random.default_rng(40).random((cols, d), dtype=np.float32)


def w4_dot(quick: bool = False, rows: int | None = None,
           arrays: tuple[scipy.sparse.csr_matrix, np.ndarray] | None = None) -> Workload:
    """W4: csr (4,096 x 1,000,000, 64 uniform entries per row) · dense (1,000,000 x 128); the
    csr has ``rows`` rows when given; ``arrays`` (as ``w4_arrays`` makes them) are used as they
    are when given."""
    a, b = w4_arrays(quick, rows) if arrays is None else arrays
    (rows, cols), d = a.shape, b.shape[1]
    per_row = a.nnz // rows

    def sparsegen_impl():
        lhs = mx.nd.sparse.csr_matrix((a.data, a.indices, a.indptr), shape=a.shape)
        rhs = mx.nd.from_numpy(b.view())  # b's memory; the view, not b, turns read-only
        return lambda: mx.nd.dot(lhs, rhs)

    def scipy_impl():
        return lambda: a @ b

    impls = {"sparsegen": sparsegen_impl, "scipy": scipy_impl}
    th = torch()
    if th is not None:
        def torch_impl():
            lhs = th.sparse_csr_tensor(th.from_numpy(a.indptr), th.from_numpy(a.indices),
                                       th.from_numpy(a.data), size=a.shape)
            rhs = th.from_numpy(b)
            return lambda: lhs @ rhs
        impls["torch"] = torch_impl
    nb = numba_kernels()
    if nb is not None:
        for name, ahead in (("numba", 0), ("numba+prefetch", nb.AHEAD)):
            def numba_impl(ahead=ahead):
                def run():
                    out = np.empty((rows, d), np.float32)
                    nb.csr_dense(a.data, a.indices, a.indptr, b, out, ahead)
                    return out
                return run
            impls[name] = numba_impl
    sdm = mkl()
    if sdm is not None:
        impls["MKL"] = lambda: lambda: sdm.dot_product_mkl(a, b)
    moved = a.nnz * (d * 4 + 4 + INDEX_BYTES) + (rows + 1) * INDEX_BYTES + rows * d * 4
    return Workload("W4", f"csr ({rows:,} x {cols:,}, {per_row} per row) · dense ({cols:,} x {d})",
                    moved, impls, check_dense,
                    ["bytes: every gathered rhs row, the csr arrays and the output once"])


def w5_dot_t(quick: bool = False) -> Workload:
    """W5: the W4 csr, transposed, · dense (4,096 x 128) -> row_sparse (its distinct columns)."""
    rows, cols, per_row, d = _sizes(quick)
    a = _csr(rows, cols, per_row, seed=4)
    b = np.random.default_rng(50).random((rows, d), dtype=np.float32)
    stored = np.unique(a.indices).size

    def sparsegen_impl():
        lhs = mx.nd.sparse.csr_matrix((a.data, a.indices, a.indptr), shape=a.shape)
        rhs = mx.nd.from_numpy(b.view())
        return lambda: mx.nd.sparse.dot(lhs, rhs, transpose_a=True)

    def scipy_impl():
        def run():  # compacted: product over the distinct columns only, not a 1M-row dense result
            ids, inverse = np.unique(a.indices, return_inverse=True)
            compact = scipy.sparse.csr_matrix((a.data, inverse, a.indptr), shape=(rows, ids.size))
            return ids, compact.T @ b
        return run

    impls = {"sparsegen": sparsegen_impl, "scipy": scipy_impl}
    th = torch()
    if th is not None:
        def torch_impl():
            indices, data = th.from_numpy(a.indices), th.from_numpy(a.data)
            row_of = th.from_numpy(np.repeat(np.arange(rows), np.diff(a.indptr)))
            rhs = th.from_numpy(b)

            def run():  # compacted the same way: (distinct columns x rows) COO times dense
                ids, inverse = th.unique(indices, return_inverse=True)
                lhs_t = th.sparse_coo_tensor(th.stack([inverse, row_of]), data,
                                             size=(ids.numel(), rows))
                return ids, th.sparse.mm(lhs_t, rhs)
            return run
        impls["torch"] = torch_impl
    nb = numba_kernels()
    if nb is not None:
        impls["numba"] = lambda: lambda: nb.csr_t_dense(a.data, a.indices, a.indptr, cols, b)
    sdm = mkl()
    if sdm is not None:
        def mkl_impl():
            def run():  # compacted as scipy's, then MKL's product of the scipy transpose
                ids, inverse = np.unique(a.indices, return_inverse=True)
                compact = scipy.sparse.csr_matrix((a.data, inverse, a.indptr),
                                                  shape=(rows, ids.size))
                return ids, sdm.dot_product_mkl(compact.T.tocsr(), b)
            return run
        impls["MKL"] = mkl_impl
    moved = (a.nnz * (4 + INDEX_BYTES) + (rows + 1) * INDEX_BYTES + b.nbytes
             + stored * (d * 4 + INDEX_BYTES))
    return Workload("W5", f"csrᵀ ({cols:,} x {rows:,}) · dense ({rows:,} x {d}) -> row_sparse "
                    f"({stored:,} rows)", moved, impls, rows_checker(1e-4),
                    ["bytes: the csr and rhs read once, the stored rows and ids written once",
                     "scipy and torch compute over the distinct columns (np/torch.unique + remap), "
                     "never a 1M-row dense product"])
