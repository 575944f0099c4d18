"""batch_dot and cumsum on their generated kernels (``nn_batch_dot``, ``nn_cumsum``). Operands
arrive validated (shapes agreeing, dtypes the kernels take)."""

from __future__ import annotations

import math
from typing import Any

from ..device import contiguous, empty_like
from .layout import dtype_name, kernel
from .rule import Rules, StorageRule
from .strided import copy_view, transposed


def batch_dot(lhs: Any, rhs: Any, transpose_a: bool = False, transpose_b: bool = False) -> Any:
    """``op(lhs[i]) · op(rhs[i])`` for every batch entry ``i`` (the leading axes), as MXNet's
    batch_dot: operands of shape ``(*batch, m, k)`` (``(*batch, k, m)`` transposed)."""
    batch = lhs.shape[:-2]
    b = math.prod(batch)
    m = lhs.shape[-1] if transpose_a else lhs.shape[-2]
    k = lhs.shape[-2] if transpose_a else lhs.shape[-1]
    n = rhs.shape[-2] if transpose_b else rhs.shape[-1]
    a = contiguous(lhs).reshape((b, k, m) if transpose_a else (b, m, k))
    if transpose_b:  # (b, n, k) -> (b, k, n), as dot_dense's caller does
        r = copy_view(contiguous(rhs).reshape(-1), (b, k, n), transposed((b, n, k), (0, 2, 1)))
    else:
        r = contiguous(rhs).reshape(b, k, n)
    out = empty_like(lhs, (b, m, n), lhs.dtype)
    if out.size:
        product = kernel("nn_batch_dot", (dtype_name(lhs.dtype),), lhs, b * (m * n + k * (m + n)))
        (product.tn if transpose_a else product.nn)(a, r, out)
    return out.reshape(*batch, m, n)


def cumsum(x: Any, axis: int) -> Any:
    """The running sums of ``x`` along ``axis`` (in ``x``'s dtype)."""
    pre, n = math.prod(x.shape[:axis]), x.shape[axis]
    post = math.prod(x.shape[axis + 1:])
    out = empty_like(x, x.shape, x.dtype)
    if out.size:
        kernel("nn_cumsum", (dtype_name(x.dtype),), x, x.size).lines(
            contiguous(x).reshape(pre, n, post), out.reshape(pre, n, post))
    return out


_DENSE1, _DENSE2 = ("default",), ("default",) * 2
STORAGE_RULES: Rules = {
    **{(op, _DENSE2): StorageRule("default", batch_dot)
       for op in ("batch_dot", "batch_dot_transpose_a", "batch_dot_transpose_b",
                  "batch_dot_transpose_a_transpose_b")},
    ("cumsum", _DENSE1): StorageRule("default", cumsum),
}
"""batch_dot (the op name carries the transpose flags, as dot's) and cumsum: dense only, as
MXNet 1.9.1 (sparse inputs fall back to dense)."""
