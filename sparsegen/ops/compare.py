"""Comparisons on dense buffers and on the stored values of row_sparse / csr formats (kernel
``cmp_dense``); every result is freshly allocated, a sparse one shares the input's indices."""

from __future__ import annotations

from typing import Any

from ..device import empty_like
from .elemwise import Storage, _flat, _map_kernel, _name
from .layout import kernel


def _kernel(values: Any) -> Any:
    return kernel("cmp_dense", (_name(values),), values, values.size)


def arrays(a: Any, b: Any, fn: str) -> Any:
    """``a <fn> b`` as 1 / 0 in their dtype, for two dense arrays of one shape and dtype."""
    out = empty_like(a, a.shape, a.dtype)
    getattr(_kernel(a), fn)(_flat(a), _flat(b), out.reshape(-1))
    return out


def scalar(x: Storage, fn: str, scalar: Any) -> Storage:
    """``x <fn> scalar`` as 1 / 0 in the dtype of ``x`` (``scalar`` already in that dtype); on
    sparse storage only the stored values, exact where ``0 <fn> scalar`` is false."""
    return _map_kernel(x, "cmp_dense", f"{fn}_scalar", scalar)
