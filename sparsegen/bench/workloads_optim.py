"""W2 (lazy SGD with momentum), W3 (lazy Adam) and W8 (tiny ``rsp * 2.0``) from WORKLOADS.md."""

from __future__ import annotations

from typing import Any

import numpy as np

import sparsegen as mx

from .harness import Workload
from .peers import numba_kernels, torch

COLS = 128
ROW_BYTES = COLS * 4
INDEX_BYTES = 8
LR, MOMENTUM, WD = 0.01, 0.9, 1e-4
BETA1, BETA2, EPS = 0.9, 0.999, 1e-8
_CACHE_NOTE = ("every call updates the same 20k rows: in an L3 larger than their 50-70 MB per "
               "implementation they stay cached between calls, for every implementation alike")


def _shapes(quick: bool) -> tuple[int, int]:
    return (20_000, 400) if quick else (1_000_000, 20_000)


def _inputs(seed: int, quick: bool,
            touched: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weight (rows x 128), gradient row ids (sorted, unique; ``touched`` of them, else the
    workload's count) and gradient rows, float32."""
    rows, default = _shapes(quick)
    touched = default if touched is None else touched
    rng = np.random.default_rng(seed)
    weight = rng.standard_normal((rows, COLS), dtype=np.float32)
    ids = np.sort(rng.choice(rows, touched, replace=False)).astype(np.int64)
    grad = rng.standard_normal((touched, COLS), dtype=np.float32)
    return weight, ids, grad


def _check_rows(ids: np.ndarray) -> Any:
    """Compare the updated weight rows of two implementations (runners return their weight)."""

    def check(expected: Any, got: Any) -> None:
        if expected is not None and got is not None:
            np.testing.assert_allclose(np.asarray(got)[ids], np.asarray(expected)[ids],
                                       rtol=1e-4, atol=1e-5)

    return check


def _sparsegen_impl(optimizer: Any, weight: np.ndarray, ids: np.ndarray, grad: np.ndarray) -> Any:
    def prepare():
        w = mx.nd.array(weight)
        g = mx.nd.sparse.row_sparse_array((grad, ids), shape=weight.shape)
        state = optimizer.create_state(0, w)

        def run():
            optimizer.update(0, w, g, state)
            return w
        return run
    return prepare


def w2_sgd(quick: bool = False) -> Workload:
    """W2: SGD momentum 0.9, wd 1e-4, lazy: weight (1,000,000 x 128), grad rsp with 20,000 rows."""
    weight, ids, grad = _inputs(2, quick)

    def numpy_impl():
        w, m = weight.copy(), np.zeros_like(weight)

        def run():
            rows = w[ids]
            mom = MOMENTUM * m[ids] - (LR * WD) * rows - LR * grad
            m[ids] = mom
            w[ids] = rows + mom
            return w
        return run

    optimizer = mx.optimizer.SGD(learning_rate=LR, momentum=MOMENTUM, wd=WD, lazy_update=True)
    impls = {"sparsegen": _sparsegen_impl(optimizer, weight, ids, grad), "numpy": numpy_impl}
    th = torch()
    if th is not None:
        def torch_impl():
            w, t_ids, g = th.from_numpy(weight.copy()), th.from_numpy(ids), th.from_numpy(grad)
            m = th.zeros_like(w)

            def run():
                rows = w.index_select(0, t_ids)
                mom = m.index_select(0, t_ids).mul_(MOMENTUM).add_(rows, alpha=-LR * WD)
                mom.add_(g, alpha=-LR)
                m.index_copy_(0, t_ids, mom)
                w.index_copy_(0, t_ids, rows.add_(mom))
                return w.numpy()
            return run
        impls["torch"] = torch_impl
    nb = numba_kernels()
    if nb is not None:
        for name, ahead in (("numba", 0), ("numba+prefetch", nb.AHEAD)):
            def numba_impl(ahead=ahead):
                w, m = weight.copy(), np.zeros_like(weight)

                def run():
                    nb.sgd_mom(w, m, ids, grad, LR, MOMENTUM, WD, ahead)
                    return w
                return run
            impls[name] = numba_impl
    moved = ids.size * (5 * ROW_BYTES + INDEX_BYTES)  # grad read; weight, momentum read + written
    workload = Workload("W2", "lazy SGD, momentum 0.9, wd 1e-4: (1M x 128) weight, 20k grad rows",
                        moved, impls, _check_rows(ids))
    workload.notes.append(_CACHE_NOTE)
    return workload


def _numba_adam(nb: Any, weight: np.ndarray, ids: np.ndarray, grad: np.ndarray,
                ahead: int) -> Any:
    """The numba Adam peer (rows prefetched ``ahead`` entries on; 0: none)."""

    def prepare():
        w, m, v = weight.copy(), np.zeros_like(weight), np.zeros_like(weight)
        t = [0]

        def run():
            t[0] += 1
            lr = LR * np.sqrt(1 - BETA2 ** t[0]) / (1 - BETA1 ** t[0])
            nb.adam(w, m, v, ids, grad, lr, BETA1, BETA2, EPS, ahead)
            return w
        return run
    return prepare


def w3_adam(quick: bool = False, touched: int | None = None) -> Workload:
    """W3: Adam lazy, weight (1,000,000 x 128), grad rsp with 20,000 rows (or ``touched``)."""
    weight, ids, grad = _inputs(3, quick, touched)
    optimizer = mx.optimizer.Adam(learning_rate=LR, beta1=BETA1, beta2=BETA2, epsilon=EPS)

    def numpy_impl():
        w, m, v = weight.copy(), np.zeros_like(weight), np.zeros_like(weight)
        t = [0]

        def run():
            t[0] += 1
            lr = LR * np.sqrt(1 - BETA2 ** t[0]) / (1 - BETA1 ** t[0])
            mean = BETA1 * m[ids] + (1 - BETA1) * grad
            var = BETA2 * v[ids] + (1 - BETA2) * grad * grad
            m[ids] = mean
            v[ids] = var
            w[ids] -= np.float32(lr) * mean / (np.sqrt(var) + EPS)
            return w
        return run

    impls = {"sparsegen": _sparsegen_impl(optimizer, weight, ids, grad), "numpy": numpy_impl}
    th = torch()
    if th is not None:
        def torch_index_impl():
            w, t_ids, g = th.from_numpy(weight.copy()), th.from_numpy(ids), th.from_numpy(grad)
            m, v = th.zeros_like(w), th.zeros_like(w)
            t = [0]

            def run():
                t[0] += 1
                lr = LR * np.sqrt(1 - BETA2 ** t[0]) / (1 - BETA1 ** t[0])
                mean = m.index_select(0, t_ids).mul_(BETA1).add_(g, alpha=1 - BETA1)
                var = v.index_select(0, t_ids).mul_(BETA2).addcmul_(g, g, value=1 - BETA2)
                m.index_copy_(0, t_ids, mean)
                v.index_copy_(0, t_ids, var)
                w.index_add_(0, t_ids, mean.div_(var.sqrt_().add_(EPS)), alpha=-lr)
                return w.numpy()
            return run

        def torch_sparse_adam_impl():
            param = th.nn.Parameter(th.from_numpy(weight.copy()))
            opt = th.optim.SparseAdam([param], lr=LR, betas=(BETA1, BETA2), eps=EPS)
            sparse_grad = th.sparse_coo_tensor(th.from_numpy(ids)[None], th.from_numpy(grad),
                                               weight.shape, check_invariants=True).coalesce()

            def run():
                param.grad = sparse_grad
                opt.step()
                return param.detach().numpy()
            return run

        impls["torch"] = torch_index_impl
        impls["torch SparseAdam"] = torch_sparse_adam_impl
    nb = numba_kernels()
    if nb is not None:
        for name, ahead in (("numba", 0), ("numba+prefetch", nb.AHEAD)):
            impls[name] = _numba_adam(nb, weight, ids, grad, ahead)
    moved = ids.size * (7 * ROW_BYTES + INDEX_BYTES)  # grad; weight, mean, var read + written
    workload = Workload("W3", f"lazy Adam: ({weight.shape[0]:,} x 128) weight, {ids.size:,} grad "
                        "rows", moved, impls, _check_rows(ids))
    workload.notes.append(_CACHE_NOTE)
    return workload


def w8_tiny(quick: bool = False) -> Workload:
    """W8: rsp (10 x 4) with 2 stored rows, times a scalar: the time of one call from Python."""
    data = np.array([[1, 2, 3, 4], [5, 6, 7, 8]], np.float32)
    ids = np.array([1, 7], np.int64)

    def sparsegen_impl():
        rsp = mx.nd.sparse.row_sparse_array((data, ids), shape=(10, 4))
        return lambda: rsp * 2.0

    def numpy_impl():
        return lambda: (data * 2.0, ids)

    def kernel_call_impl():
        from ..ops.layout import kernel

        scale = kernel("ew_dense", ("float32",), data, data.size).mul_scalar
        values, out = data.reshape(-1), np.empty(data.size, np.float32)
        return lambda: scale(values, 2.0, out)

    impls = {"sparsegen": sparsegen_impl, "kernel call": kernel_call_impl, "numpy": numpy_impl}
    th = torch()
    if th is not None:
        def torch_impl():
            t = th.sparse_coo_tensor(th.from_numpy(ids)[None], th.from_numpy(data), (10, 4),
                                     check_invariants=True).coalesce()
            return lambda: t * 2.0
        impls["torch"] = torch_impl
    moved = 2 * data.nbytes + 2 * ids.nbytes
    workload = Workload("W8", "rsp (10 x 4), 2 stored rows, times 2.0: one call from Python",
                        moved, impls, repeats=3000)
    workload.notes.append("per-call time; the numpy peer scales the stored rows only; "
                          "'kernel call' is the kernel function sparsegen's call runs, called "
                          "directly on the stored values (what the front end adds is the rest)")
    return workload
