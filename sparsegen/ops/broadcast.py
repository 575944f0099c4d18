"""Broadcasting binary ops (MXNet's ``broadcast_<op>``): dense operands through strided views
(kernel ``strided``), or flat maps when the shapes already agree; csr times or divided by a
dense row or column vector keeps csr (kernel ``bcast_csr``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..device import contiguous, empty_like
from ..formats import CSR
from ..opnames import ARITH_BINARY_OPS, COMPARE_OPS, STRIDED_BINARY_OPS
from . import arith, compare, elemwise
from .layout import dtype_name, kernel
from .rule import Rules, StorageRule
from .strided import binary_view, broadcast


def _flat(a: Any, b: Any, fn: str) -> Any:
    """``a <fn> b`` of one shape: the flat map of the kernel that holds ``fn``."""
    if fn in COMPARE_OPS:
        return compare.arrays(a, b, fn)
    if fn in ARITH_BINARY_OPS:
        return arith.binary(a, b, fn)
    return elemwise.dense_binary(a, b, fn)


def dense(a: Any, b: Any, fn: str, shape: Sequence[int]) -> Any:
    """``a <fn> b`` for two dense arrays of one dtype broadcast to ``shape`` (numpy's rules, which
    the front end has checked)."""
    shape = tuple(shape)
    if a.shape == b.shape == shape:
        return _flat(a, b, fn)
    return binary_view(fn, contiguous(a), broadcast(a.shape, shape),
                       contiguous(b), broadcast(b.shape, shape), shape)


def csr_dense(a: CSR, b: Any, fn: str, shape: Sequence[int]) -> CSR:
    """``a <fn> b`` for fn in mul, div, csr ``a`` and a dense ``b`` that is a row vector (``(n,)``
    or ``(1, n)``), a column vector ``(m, 1)``, a single value, or (mul) of ``a``'s shape: csr
    with ``a``'s index arrays (values where ``a`` stores none stay zero, as MXNet), unless ``0
    <fn> b`` is nan somewhere (``0 * inf``, ``0 / 0``): then the result also stores those
    positions, holding nan (MXNet leaves 0 there)."""
    rows, cols = a.shape
    if b.shape == a.shape and rows > 1 and cols > 1:
        return elemwise.sparse_dense_mul(a, b, fn)
    lead, last = (1, *b.shape)[-2:]
    by_row = lead == rows > 1  # a column vector: one value per row
    step = int((lead if by_row else last) > 1)
    v = contiguous(b).reshape(-1)
    image = elemwise.nan_zero_image(v, fn)
    if image is not None:
        if by_row or not step:
            return elemwise.csr_nan_by_row(a, v, image, fn, step)
        return elemwise.csr_nan_by_col(a, v, image, fn)
    out = empty_like(a.data, a.data.shape, a.dtype)
    scale = kernel("bcast_csr", (dtype_name(a.dtype),), a.data, a.data.size)
    getattr(scale, f"{fn}_by_{'row' if by_row else 'col'}")(
        a.data, a.indices, a.indptr, v, step, out)
    return CSR(out, a.indices, a.indptr, a.shape)


STORAGE_RULES: Rules = {
    **{(f"broadcast_{fn}{suffix}", ("default", "default")): StorageRule("default", dense)
       for fn in STRIDED_BINARY_OPS for suffix in ("", "->default")},
    **{(f"broadcast_{fn}", ("csr", "default")): StorageRule("csr", csr_dense)
       for fn in ("mul", "div")},
}
"""Broadcasting rules, as MXNet 1.9.1's: ``broadcast_<op>`` of two dense arrays (``->default``:
the name the front end uses for a csr operand the csr kernel cannot serve, so it falls back);
csr ``*`` / ``/`` a dense vector -> csr."""
