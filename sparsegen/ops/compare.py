"""Comparisons on dense buffers and on the stored values of row_sparse / csr formats (kernel
``cmp_dense``); every result is freshly allocated, a sparse one shares the input's indices."""

from __future__ import annotations

from typing import Any

from ..device import empty_like
from ..opnames import COMPARE_OPS
from .elemwise import Storage, _flat, _map_kernel, _name
from .layout import kernel
from .rule import STYPES, Rules, StorageRule


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


STORAGE_RULES: Rules = {
    **{(fn, ("default", "default")): StorageRule("default", arrays) for fn in COMPARE_OPS},
    **{(f"_{fn}_scalar", (stype,)): StorageRule(stype, scalar)
       for fn in COMPARE_OPS for stype in STYPES},
    **{(f"_{fn}_scalar->default", ("default",)): StorageRule("default", scalar)
       for fn in COMPARE_OPS},
}
"""Comparison storage rules, as MXNet 1.9.1's: two arrays give a dense result (sparse operands
fall back to dense). ``x <op> s`` keeps the storage type of ``x`` when ``0 <op> s`` is false
(``_<op>_scalar``, stored values only); otherwise the front end asks for
``_<op>_scalar->default``, which has a dense kernel only, so sparse ``x`` falls back to it."""
