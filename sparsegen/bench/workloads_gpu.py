"""W1-W7 from WORKLOADS.md on GPU 0: sparsegen's ``gpu(0)`` arrays against PyTorch CUDA tensors.

Inputs, sizes and byte counts are the CPU suite's (same seeds, same helpers). Every input is
copied to the GPU while an implementation is prepared; a timed call leaves its result in GPU
memory, and the checks read results back outside the timed calls. ``th`` is the ``torch``
module when it runs on a CUDA GPU here, else ``None`` (sparsegen alone).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import sparsegen as mx

from . import workloads_dot, workloads_elemwise, workloads_optim
from .harness import Runner, Workload

GPU = mx.gpu(0)
COLS = 128
ROW_BYTES = COLS * 4
INDEX_BYTES = 8


def host(result: Any) -> Any:
    """A result as numpy: a dense array, or an ``(ids, rows)`` pair for row_sparse results."""
    if isinstance(result, mx.nd.NDArray):
        if result.stype == "row_sparse":
            return result.indices.asnumpy(), result.data.asnumpy()
        return result.asnumpy()
    if isinstance(result, tuple):
        return tuple(host(part) for part in result)
    return result.detach().cpu().numpy()  # a torch tensor


def _close(rtol: float, atol: float) -> Callable[[Any, Any], None]:
    """A check that two results agree: integer parts exactly, float parts within tolerance."""

    def check(expected: Any, got: Any) -> None:
        expected, got = host(expected), host(got)
        pairs = zip(expected, got) if isinstance(expected, tuple) else [(expected, got)]
        for e, g in pairs:
            if np.issubdtype(e.dtype, np.integer):
                np.testing.assert_array_equal(g, e)
            else:
                np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)

    return check


def _workload(wid: str, title: str, moved: int, sparsegen: Callable[[], Runner],
              torch: Callable[[], Runner] | None, check: Callable[[Any, Any], None],
              notes: list[str] | None = None) -> Workload:
    impls = {"sparsegen": sparsegen, **({"torch": torch} if torch is not None else {})}
    return Workload(wid, title, moved, impls, check, notes or [])


def w1_retain(quick: bool, th: Any) -> Workload:
    """W1: retain 50,000 of the 100,000 stored rows of an rsp (1,000,000 x 128)."""
    rows, stored, kept = (10_000, 1_000, 500) if quick else (1_000_000, 100_000, 50_000)
    rng = np.random.default_rng(1)
    indices = np.sort(rng.choice(rows, stored, replace=False)).astype(np.int64)
    data = rng.random((stored, COLS), dtype=np.float32)
    req = np.sort(rng.choice(indices, kept, replace=False)).astype(np.int64)

    def sparsegen_impl() -> Runner:
        rsp = mx.nd.sparse.row_sparse_array((data, indices), shape=(rows, COLS), ctx=GPU)
        ids = mx.nd.array(req, ctx=GPU, dtype="int64")
        return lambda: mx.nd.sparse.retain(rsp, ids)

    def torch_impl() -> Runner:
        t_idx, t_data, t_req = (th.from_numpy(a).cuda() for a in (indices, data, req))

        def run() -> Any:
            pos = th.clamp(th.searchsorted(t_idx, t_req), max=t_idx.numel() - 1)
            found = t_idx[pos] == t_req
            out = th.zeros((t_req.numel(), COLS), device=t_data.device)
            out[found] = t_data.index_select(0, pos[found])
            return t_req, out
        return run

    return _workload("W1", f"retain {kept:,} of {stored:,} stored rows ({rows:,} x {COLS})",
                     kept * (2 * ROW_BYTES + 2 * INDEX_BYTES), sparsegen_impl,
                     torch_impl if th else None, _close(0, 0))


def _optimizer_impl(optimizer: Any, weight: np.ndarray, ids: np.ndarray,
                    grad: np.ndarray) -> Callable[[], Runner]:
    def prepare() -> Runner:
        w = mx.nd.array(weight, ctx=GPU)
        g = mx.nd.sparse.row_sparse_array((grad, ids), shape=weight.shape, ctx=GPU)
        state = optimizer.create_state(0, w)

        def run() -> Any:
            optimizer.update(0, w, g, state)
            return w
        return run
    return prepare


def w2_sgd(quick: bool, th: Any) -> Workload:
    """W2: lazy SGD, momentum 0.9, wd 1e-4: weight (1,000,000 x 128), 20,000 gradient rows."""
    o = workloads_optim
    weight, ids, grad = o._inputs(2, quick)
    sgd = mx.optimizer.SGD(learning_rate=o.LR, momentum=o.MOMENTUM, wd=o.WD, lazy_update=True)

    def torch_impl() -> Runner:
        w, t_ids, g = (th.from_numpy(a).cuda() for a in (weight, ids, grad))
        m = th.zeros_like(w)

        def run() -> Any:
            rows = w.index_select(0, t_ids)
            mom = m.index_select(0, t_ids).mul_(o.MOMENTUM).add_(rows, alpha=-o.LR * o.WD)
            mom.add_(g, alpha=-o.LR)
            m.index_copy_(0, t_ids, mom)
            w.index_copy_(0, t_ids, rows.add_(mom))
            return w
        return run

    return _workload("W2", f"lazy SGD, momentum 0.9, wd 1e-4: ({len(weight):,} x {COLS}) weight, "
                     f"{ids.size:,} grad rows", ids.size * (5 * ROW_BYTES + INDEX_BYTES),
                     _optimizer_impl(sgd, weight, ids, grad), torch_impl if th else None,
                     _close(1e-4, 1e-5))


def w3_adam(quick: bool, th: Any) -> Workload:
    """W3: lazy Adam, the shapes of W2."""
    o = workloads_optim
    weight, ids, grad = o._inputs(3, quick)
    adam = mx.optimizer.Adam(learning_rate=o.LR, beta1=o.BETA1, beta2=o.BETA2, epsilon=o.EPS)

    def torch_impl() -> Runner:
        w, t_ids, g = (th.from_numpy(a).cuda() for a in (weight, ids, grad))
        m, v = th.zeros_like(w), th.zeros_like(w)
        t = [0]

        def run() -> Any:
            t[0] += 1
            lr = o.LR * np.sqrt(1 - o.BETA2 ** t[0]) / (1 - o.BETA1 ** t[0])
            mean = m.index_select(0, t_ids).mul_(o.BETA1).add_(g, alpha=1 - o.BETA1)
            var = v.index_select(0, t_ids).mul_(o.BETA2).addcmul_(g, g, value=1 - o.BETA2)
            m.index_copy_(0, t_ids, mean)
            v.index_copy_(0, t_ids, var)
            w.index_add_(0, t_ids, mean.div_(var.sqrt_().add_(o.EPS)), alpha=-lr)
            return w
        return run

    return _workload("W3", f"lazy Adam: ({len(weight):,} x {COLS}) weight, {ids.size:,} grad rows",
                     ids.size * (7 * ROW_BYTES + INDEX_BYTES),
                     _optimizer_impl(adam, weight, ids, grad), torch_impl if th else None,
                     _close(1e-4, 1e-5))


def _csr_on_gpu(a: Any) -> Any:
    return mx.nd.sparse.csr_matrix((a.data, a.indices, a.indptr), shape=a.shape, ctx=GPU)


def w4_dot(quick: bool, th: Any) -> Workload:
    """W4: csr (4,096 x 1,000,000, 64 uniform entries per row) · dense (1,000,000 x 128)."""
    rows, cols, per_row, d = workloads_dot._sizes(quick)
    a = workloads_dot._csr(rows, cols, per_row, seed=4)
    b = np.random.default_rng(40).random((cols, d), dtype=np.float32)

    def sparsegen_impl() -> Runner:
        lhs, rhs = _csr_on_gpu(a), mx.nd.array(b, ctx=GPU)
        return lambda: mx.nd.dot(lhs, rhs)

    def torch_impl() -> Runner:
        lhs = th.sparse_csr_tensor(th.from_numpy(a.indptr), th.from_numpy(a.indices),
                                   th.from_numpy(a.data), size=a.shape,
                                   check_invariants=False).cuda()
        rhs = th.from_numpy(b).cuda()
        return lambda: lhs @ rhs

    moved = a.nnz * (d * 4 + 4 + INDEX_BYTES) + (rows + 1) * INDEX_BYTES + rows * d * 4
    return _workload("W4", f"csr ({rows:,} x {cols:,}, {per_row} per row) · dense ({cols:,} x {d})",
                     moved, sparsegen_impl, torch_impl if th else None, _close(1e-4, 1e-4),
                     ["bytes: every gathered rhs row, the csr arrays and the output once"])


def w5_dot_t(quick: bool, th: Any) -> Workload:
    """W5: the W4 csr, transposed, · dense (4,096 x 128) -> row_sparse (its distinct columns)."""
    rows, cols, per_row, d = workloads_dot._sizes(quick)
    a = workloads_dot._csr(rows, cols, per_row, seed=4)
    b = np.random.default_rng(50).random((rows, d), dtype=np.float32)
    stored = np.unique(a.indices).size

    def sparsegen_impl() -> Runner:
        lhs, rhs = _csr_on_gpu(a), mx.nd.array(b, ctx=GPU)
        return lambda: mx.nd.sparse.dot(lhs, rhs, transpose_a=True)

    def torch_impl() -> Runner:
        indices, data, rhs = (th.from_numpy(x).cuda() for x in (a.indices, a.data, b))
        row_of = th.from_numpy(np.repeat(np.arange(rows), np.diff(a.indptr))).cuda()

        def run() -> Any:  # over the distinct columns only, as the CPU suite's peers
            ids, inverse = th.unique(indices, return_inverse=True)
            lhs_t = th.sparse_coo_tensor(th.stack([inverse, row_of]), data,
                                         size=(ids.numel(), rows))
            return ids, th.sparse.mm(lhs_t, rhs)
        return run

    moved = (a.nnz * (4 + INDEX_BYTES) + (rows + 1) * INDEX_BYTES + b.nbytes
             + stored * (d * 4 + INDEX_BYTES))
    notes = ["torch computes over the distinct columns (torch.unique + remap)"] if th else []
    return _workload("W5", f"csrᵀ ({cols:,} x {rows:,}) · dense ({rows:,} x {d}) -> row_sparse "
                     f"({stored:,} rows)", moved, sparsegen_impl, torch_impl if th else None,
                     _close(1e-4, 1e-4), notes)


def w6_add(quick: bool, th: Any) -> Workload:
    """W6: rsp + rsp, (1,000,000 x 128), 50,000 random stored rows each."""
    rows, operands = workloads_elemwise._inputs(quick)

    def sparsegen_impl() -> Runner:
        a, b = (mx.nd.sparse.row_sparse_array((data, ids), shape=(rows, COLS), ctx=GPU)
                for ids, data in operands)
        return lambda: a + b

    def torch_impl() -> Runner:
        a, b = (th.sparse_coo_tensor(th.from_numpy(ids)[None], th.from_numpy(data),
                                     (rows, COLS)).coalesce().cuda()
                for ids, data in operands)

        def run() -> Any:
            total = (a + b).coalesce()
            return total.indices()[0], total.values()
        return run

    (ids_a, _), (ids_b, _) = operands
    union = np.union1d(ids_a, ids_b).size
    return _workload("W6", f"rsp + rsp ({rows:,} x {COLS}), {ids_a.size:,} random rows each",
                     (ids_a.size + ids_b.size + union) * (ROW_BYTES + INDEX_BYTES),
                     sparsegen_impl, torch_impl if th else None, _close(1e-6, 1e-6))


def w7_cast(quick: bool, th: Any) -> Workload:
    """W7: dense (100,000 x 128) with 10% non-zero rows -> row_sparse."""
    rows = 2_000 if quick else 100_000
    rng = np.random.default_rng(7)
    x = np.zeros((rows, COLS), np.float32)
    nonzero = np.sort(rng.choice(rows, rows // 10, replace=False))
    x[nonzero] = rng.random((nonzero.size, COLS), dtype=np.float32) + 0.5

    def sparsegen_impl() -> Runner:
        dense = mx.nd.array(x, ctx=GPU)
        return lambda: dense.tostype("row_sparse")

    def torch_impl() -> Runner:
        t = th.from_numpy(x).cuda()

        def run() -> Any:
            idx = (t != 0).any(dim=1).nonzero().squeeze(1)
            return idx, t.index_select(0, idx)
        return run

    return _workload("W7", f"dense ({rows:,} x {COLS}), 10% non-zero rows -> row_sparse",
                     x.nbytes + nonzero.size * (ROW_BYTES + INDEX_BYTES), sparsegen_impl,
                     torch_impl if th else None, _close(0, 0))


WORKLOADS: dict[str, Callable[[bool, Any], Workload]] = {
    "W1": w1_retain, "W2": w2_sgd, "W3": w3_adam, "W4": w4_dot, "W5": w5_dot_t, "W6": w6_add,
    "W7": w7_cast,
}
"""Workload id -> factory taking ``quick`` and the CUDA-capable ``torch`` (or ``None``)."""
