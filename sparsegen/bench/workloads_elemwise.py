"""W6 from WORKLOADS.md: row_sparse + row_sparse, (1,000,000 x 128), 50,000 random rows each."""

from __future__ import annotations

import numpy as np

import sparsegen as mx

from .harness import Workload
from .outputs import rows_checker
from .peers import numba_kernels, torch

COLS = 128
ROW_BYTES = COLS * 4
INDEX_BYTES = 8


def _inputs(quick: bool) -> tuple[int, list[tuple[np.ndarray, np.ndarray]]]:
    """The row count and two (sorted unique row ids, float32 rows) operands."""
    rows, stored = (20_000, 1_000) if quick else (1_000_000, 50_000)
    rng = np.random.default_rng(6)
    return rows, [
        (np.sort(rng.choice(rows, stored, replace=False)).astype(np.int64),
         rng.standard_normal((stored, COLS), dtype=np.float32))
        for _ in range(2)
    ]


def w6_add(quick: bool = False) -> Workload:
    """W6: rsp + rsp with a fresh result per call (the union of the stored rows)."""
    rows, operands = _inputs(quick)
    (ids_a, data_a), (ids_b, data_b) = operands

    def sparsegen_impl():
        a, b = (mx.nd.sparse.row_sparse_array((data, ids), shape=(rows, COLS))
                for ids, data in operands)
        return lambda: a + b

    def numpy_impl():
        def run():
            ids = np.union1d(ids_a, ids_b)
            out = np.zeros((ids.size, COLS), np.float32)
            out[np.searchsorted(ids, ids_a)] += data_a
            out[np.searchsorted(ids, ids_b)] += data_b
            return ids, out
        return run

    impls = {"sparsegen": sparsegen_impl, "numpy": numpy_impl}
    th = torch()
    if th is not None:
        def torch_impl():
            a, b = (th.sparse_coo_tensor(th.from_numpy(ids)[None], th.from_numpy(data),
                                         (rows, COLS), check_invariants=False).coalesce()
                    for ids, data in operands)
            return lambda: (a + b).coalesce()
        impls["torch"] = torch_impl
    nb = numba_kernels()
    if nb is not None:
        impls["numba"] = lambda: lambda: nb.rsp_add(ids_a, data_a, ids_b, data_b)
    union = np.union1d(ids_a, ids_b).size
    moved = (ids_a.size + ids_b.size + union) * (ROW_BYTES + INDEX_BYTES)
    title = f"rsp + rsp ({rows:,} x {COLS}), {ids_a.size:,} random rows each"
    workload = Workload("W6", title, moved, impls, rows_checker(1e-6))
    workload.notes.append(
        f"every implementation allocates its {union * ROW_BYTES / 1e6:.0f} MB result per call; "
        "numpy and sparsegen allocate with numpy, whose buffers of 4 MB and more get transparent "
        "huge pages (madvise), torch's do not"
    )
    return workload
