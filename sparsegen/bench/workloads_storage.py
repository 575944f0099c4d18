"""W1 (retain) and W7 (dense -> row_sparse) from WORKLOADS.md."""

from __future__ import annotations

import numpy as np

import sparsegen as mx

from .harness import Workload
from .outputs import rows_checker
from .peers import numba_kernels, torch

ROW_BYTES = 128 * 4
INDEX_BYTES = 8


def w1_retain(quick: bool = False) -> Workload:
    """W1: rsp (1,000,000 x 128) with 100,000 stored rows; retain 50,000 of its row ids."""
    rows, stored, kept = (10_000, 1_000, 500) if quick else (1_000_000, 100_000, 50_000)
    rng = np.random.default_rng(1)
    indices = np.sort(rng.choice(rows, stored, replace=False)).astype(np.int64)
    data = rng.random((stored, 128), dtype=np.float32)
    req = np.sort(rng.choice(indices, kept, replace=False)).astype(np.int64)

    def sparsegen_impl():
        rsp = mx.nd.sparse.row_sparse_array((data, indices), shape=(rows, 128))
        ids = mx.nd.array(req, dtype="int64")
        return lambda: mx.nd.sparse.retain(rsp, ids)

    def numpy_impl():
        def run():
            pos = np.minimum(np.searchsorted(indices, req), indices.size - 1)
            found = indices[pos] == req
            out = np.zeros((req.size, 128), np.float32)
            out[found] = data[pos[found]]
            return req, out
        return run

    impls = {"sparsegen": sparsegen_impl, "numpy": numpy_impl}
    th = torch()
    if th is not None:
        def torch_impl():
            t_idx, t_data, t_req = th.from_numpy(indices), th.from_numpy(data), th.from_numpy(req)

            def run():
                pos = th.clamp(th.searchsorted(t_idx, t_req), max=t_idx.numel() - 1)
                found = t_idx[pos] == t_req
                out = th.zeros((t_req.numel(), 128))
                out[found] = t_data.index_select(0, pos[found])
                return t_req, out
            return run
        impls["torch"] = torch_impl
    nb = numba_kernels()
    if nb is not None:
        def numba_impl():
            def run():
                out = np.empty((req.size, 128), np.float32)
                nb.retain(data, indices, req, out)
                return req, out
            return run
        impls["numba"] = numba_impl
    moved = kept * (2 * ROW_BYTES + 2 * INDEX_BYTES)
    return Workload("W1", "retain 50k of 100k stored rows (1M x 128)", moved, impls, rows_checker(0))


def w7_cast(quick: bool = False) -> Workload:
    """W7: dense (100,000 x 128) with 10% non-zero rows -> row_sparse."""
    rows = 2_000 if quick else 100_000
    rng = np.random.default_rng(7)
    x = np.zeros((rows, 128), np.float32)
    nonzero = np.sort(rng.choice(rows, rows // 10, replace=False))
    x[nonzero] = rng.random((nonzero.size, 128), dtype=np.float32) + 0.5

    def sparsegen_impl():
        dense = mx.nd.array(x)
        return lambda: dense.tostype("row_sparse")

    def numpy_impl():
        def run():
            idx = np.flatnonzero(x.any(axis=1))
            return idx, x[idx]
        return run

    impls = {"sparsegen": sparsegen_impl, "numpy": numpy_impl}
    th = torch()
    if th is not None:
        def torch_impl():
            t = th.from_numpy(x)

            def run():
                idx = (t != 0).any(dim=1).nonzero().squeeze(1)
                return idx, t.index_select(0, idx)
            return run
        impls["torch"] = torch_impl
    nb = numba_kernels()
    if nb is not None:
        impls["numba"] = lambda: lambda: nb.dense_to_rsp(x)
    moved = x.nbytes + nonzero.size * (ROW_BYTES + INDEX_BYTES)
    return Workload("W7", "dense (100k x 128), 10% non-zero rows -> row_sparse", moved, impls, rows_checker(0))
