"""The numba peers: W1-W7 as a performance engineer writes them (``prange`` over rows, software
prefetch of rows at random ids through LLVM's ``llvm.prefetch``), for ``sparsegen bench``.

Importing this module needs numba (the ``[bench]`` extra); ``peers.numba_kernels`` returns it or
``None``. Every function writes into arrays the caller allocates, except where the output size
depends on the data (W5, W6, W7): those allocate as a user's call would.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic

AHEAD = 8
"""Entries ahead whose rows the ``+prefetch`` kernels prefetch."""

LINE = 16
"""float32 elements per 64-byte cache line: one prefetch per line of a row."""


@intrinsic
def prefetch(typingctx: Any, arr: Any, row: Any, col: Any) -> Any:
    """Prefetch the cache line holding ``arr[row, col]`` (a 2-D C array) for reading, into all
    cache levels (``llvm.prefetch(ptr, 0, 3, 1)``)."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        at = [context.cast(builder, value, ty, types.intp)
              for value, ty in zip(args[1:], signature.args[1:])]
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, at, wraparound=False)
        i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
            "llvm.prefetch.p0")
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return types.void(arr, row, col), codegen


@njit(inline="always")
def _prefetch_row(arr: np.ndarray, row: int) -> None:
    for q in range(0, arr.shape[1], LINE):
        prefetch(arr, row, q)


# -- W1 retain: a binary search per requested row, rows copied in parallel ----------------------
@njit(parallel=True)
def retain(data: np.ndarray, indices: np.ndarray, req: np.ndarray, out: np.ndarray) -> None:
    """``out[r] = data[s]`` where ``indices[s] == req[r]``, else zeros."""
    k = indices.size
    for r in prange(req.size):
        s = np.searchsorted(indices, req[r])
        if s < k and indices[s] == req[r]:
            out[r, :] = data[s, :]
        else:
            out[r, :] = 0


# -- W2 lazy SGD with momentum, W3 lazy Adam ----------------------------------------------------
@njit(parallel=True)
def sgd_mom(w: np.ndarray, m: np.ndarray, ids: np.ndarray, grad: np.ndarray, lr: float,
            momentum: float, wd: float, ahead: int) -> None:
    """``m[i] = momentum * m[i] - lr * wd * w[i] - lr * g; w[i] += m[i]`` for each grad row."""
    n = ids.size
    for r in prange(n):
        if ahead and r + ahead < n:
            _prefetch_row(w, ids[r + ahead])
            _prefetch_row(m, ids[r + ahead])
        i = ids[r]
        for j in range(w.shape[1]):
            mom = momentum * m[i, j] - (lr * wd) * w[i, j] - lr * grad[r, j]
            m[i, j] = mom
            w[i, j] += mom


@njit(parallel=True)
def adam(w: np.ndarray, mean: np.ndarray, var: np.ndarray, ids: np.ndarray, grad: np.ndarray,
         lr: float, beta1: float, beta2: float, eps: float, ahead: int) -> None:
    """Adam's lazy update of the grad rows, ``lr`` already bias-corrected."""
    n = ids.size
    for r in prange(n):
        if ahead and r + ahead < n:
            _prefetch_row(w, ids[r + ahead])
            _prefetch_row(mean, ids[r + ahead])
            _prefetch_row(var, ids[r + ahead])
        i = ids[r]
        for j in range(w.shape[1]):
            g = grad[r, j]
            mu = beta1 * mean[i, j] + (1 - beta1) * g
            nu = beta2 * var[i, j] + (1 - beta2) * g * g
            mean[i, j] = mu
            var[i, j] = nu
            w[i, j] -= lr * mu / (np.sqrt(nu) + eps)


# -- W4 csr · dense, W5 csrᵀ · dense -> row_sparse -----------------------------------------------
@njit(parallel=True)
def csr_dense(data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, rhs: np.ndarray,
              out: np.ndarray, ahead: int) -> None:
    """``out = csr @ rhs``, a row of ``out`` per task, rhs rows prefetched ``ahead`` entries on."""
    nnz = indices.size
    for i in prange(indptr.size - 1):
        out[i, :] = 0
        for p in range(indptr[i], indptr[i + 1]):
            if ahead and p + ahead < nnz:
                _prefetch_row(rhs, indices[p + ahead])
            v = data[p]
            c = indices[p]
            for j in range(rhs.shape[1]):
                out[i, j] += v * rhs[c, j]


@njit
def _by_column(data: np.ndarray, indices: np.ndarray, indptr: np.ndarray,
               cols: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The distinct columns, and the entries' rows and values in column order (a counting
    sort): ``(ids, offsets, rows, values)``."""
    count = np.zeros(cols + 1, np.int64)
    for p in range(indices.size):
        count[indices[p] + 1] += 1
    stored = 0
    for c in range(cols):
        if count[c + 1]:
            stored += 1
    ids = np.empty(stored, np.int64)
    offsets = np.empty(stored + 1, np.int64)
    slot = np.empty(cols, np.int64)
    s, total = 0, 0
    offsets[0] = 0
    for c in range(cols):
        if count[c + 1]:
            ids[s] = c
            slot[c] = total
            total += count[c + 1]
            s += 1
            offsets[s] = total
    rows = np.empty(indices.size, np.int64)
    values = np.empty(indices.size, data.dtype)
    for i in range(indptr.size - 1):
        for p in range(indptr[i], indptr[i + 1]):
            q = slot[indices[p]]
            rows[q] = i
            values[q] = data[p]
            slot[indices[p]] = q + 1
    return ids, offsets, rows, values


@njit(parallel=True)
def csr_t_dense(data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, cols: int,
                rhs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``csr.T @ rhs`` over the distinct columns: ``(ids, rows)`` of the row_sparse result."""
    ids, offsets, rows, values = _by_column(data, indices, indptr, cols)
    out = np.empty((ids.size, rhs.shape[1]), rhs.dtype)
    for s in prange(ids.size):
        out[s, :] = 0
        for q in range(offsets[s], offsets[s + 1]):
            v = values[q]
            r = rows[q]
            for j in range(rhs.shape[1]):
                out[s, j] += v * rhs[r, j]
    return ids, out


# -- W6 rsp + rsp, W7 dense -> row_sparse -------------------------------------------------------
@njit
def _union(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A serial merge: the union of two sorted id lists and each id's position in ``a`` and in
    ``b`` (-1 where absent)."""
    ids = np.empty(a.size + b.size, np.int64)
    sa = np.empty(a.size + b.size, np.int64)
    sb = np.empty(a.size + b.size, np.int64)
    i = j = n = 0
    while i < a.size or j < b.size:
        x = a[i] if i < a.size else np.iinfo(np.int64).max
        y = b[j] if j < b.size else np.iinfo(np.int64).max
        ids[n] = min(x, y)
        sa[n] = i if x <= y else -1
        sb[n] = j if y <= x else -1
        i += x <= y
        j += y <= x
        n += 1
    return ids[:n], sa[:n], sb[:n]


@njit(parallel=True)
def rsp_add(ids_a: np.ndarray, data_a: np.ndarray, ids_b: np.ndarray,
            data_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``a + b`` of two row_sparse arrays: ``(ids, rows)`` of the union."""
    ids, sa, sb = _union(ids_a, ids_b)
    out = np.empty((ids.size, data_a.shape[1]), data_a.dtype)
    for r in prange(ids.size):
        if sa[r] >= 0 and sb[r] >= 0:
            out[r, :] = data_a[sa[r], :] + data_b[sb[r], :]
        elif sa[r] >= 0:
            out[r, :] = data_a[sa[r], :]
        else:
            out[r, :] = data_b[sb[r], :]
    return ids, out


@njit(parallel=True)
def dense_to_rsp(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows of ``x`` holding a non-zero (nan counts), as ``(ids, rows)``."""
    n = x.shape[0]
    keep = np.zeros(n, np.int64)
    for i in prange(n):
        for j in range(x.shape[1]):
            if not x[i, j] == 0:
                keep[i] = 1
                break
    pos = np.empty(n + 1, np.int64)
    pos[0] = 0
    for i in range(n):
        pos[i + 1] = pos[i] + keep[i]
    ids = np.empty(pos[n], np.int64)
    out = np.empty((pos[n], x.shape[1]), x.dtype)
    for i in prange(n):
        if keep[i]:
            ids[pos[i]] = i
            out[pos[i], :] = x[i, :]
    return ids, out
