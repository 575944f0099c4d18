"""power, maximum, minimum, hypot, mod, the logical ops, ``where`` and ``contrib.quadratic`` on
dense buffers (and quadratic on csr stored values), on kernels ``ew_arith`` and ``where``; every
result is freshly allocated, a sparse one shares the input's index arrays."""

from __future__ import annotations

from typing import Any

from ..device import contiguous, copy, empty_like
from ..formats import CSR
from ..opnames import ARITH_SCALAR_OPS
from .elemwise import Storage, _flat, _map_kernel, _name
from .layout import as_rows, kernel
from .rule import Rules, StorageRule


def _kernel(values: Any) -> Any:
    return kernel("ew_arith", (_name(values),), values, values.size)


def binary(a: Any, b: Any, fn: str) -> Any:
    """``a <fn> b`` (an ``ARITH_BINARY_OPS`` name) for two dense arrays of one shape and dtype."""
    out = empty_like(a, a.shape, a.dtype)
    getattr(_kernel(a), fn)(_flat(a), _flat(b), out.reshape(-1))
    return out


def scalar(x: Storage, fn: str, scalar: Any) -> Storage:
    """``x <fn> scalar`` (an ``ARITH_SCALAR_OPS`` name), ``scalar`` already in ``x``'s dtype."""
    return _map_kernel(x, "ew_arith", fn, scalar)


def quadratic(x: Storage, a: float, b: float, c: float) -> Storage:
    """``x * (a * x + b) + c`` of every value; on csr only the stored values (exact for c 0)."""
    return _map_kernel(x, "ew_arith", "quadratic", a, b, c)


def _where_kernel(values: Any, cond: Any) -> Any:
    return kernel("where", (_name(values), _name(cond)), values, values.size)


def where(cond: Any, x: Any, y: Any) -> Any:
    """``x`` where ``cond`` is non-zero, else ``y``: ``cond`` of the values' shape, or one value
    per row (1-D, of ``x``'s first dimension); ``x`` and ``y`` of one shape and dtype."""
    out = empty_like(x, x.shape, x.dtype)
    if out.size == 0:
        return out
    select = _where_kernel(x, cond)
    if cond.shape == x.shape:
        select.dense(_flat(cond), _flat(x), _flat(y), out.reshape(-1))
    else:
        select.rows(contiguous(cond), as_rows(x), as_rows(y), as_rows(out, written=True))
    return out


def where_csr(cond: CSR, x: Any, y: Any) -> Any:
    """``where`` with a csr condition of the values' (2-D) shape: a copy of ``y`` with ``x``
    written at the stored non-zero conditions."""
    out = copy(y)
    _where_kernel(x, cond.data).csr(cond.data, cond.indices, cond.indptr, contiguous(x), out)
    return out


STORAGE_RULES: Rules = {
    **{(f"_{fn}", ("default",)): StorageRule("default", scalar) for fn in ARITH_SCALAR_OPS},
    ("where", ("default", "default", "default")): StorageRule("default", where),
    ("where", ("csr", "default", "default")): StorageRule("default", where_csr),
    ("quadratic", ("default",)): StorageRule("default", quadratic),
    ("quadratic", ("csr",)): StorageRule("csr", quadratic),
    ("quadratic->default", ("default",)): StorageRule("default", quadratic),
}
"""Storage rules of the scalar power, maximum, minimum, mod and hypot ops, where and quadratic,
as MXNet 1.9.1's: the scalar ops dense only; ``where`` by a dense or csr condition -> dense;
quadratic keeps csr when ``c`` is 0 (the front end asks for ``quadratic->default``
otherwise)."""
