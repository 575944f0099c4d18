"""The broadcasting core of ``broadcast_<op>`` and of the NDArray operators between arrays of
different shapes (MXNet's ``NDArray.__add__`` etc. call the broadcast ops): numpy's shape rule,
one dtype, and the choice of rule (csr ``*`` / ``/`` a dense vector keeps csr; every other
sparse operand falls back to dense with a ``StorageFallbackWarning``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InvalidValue, SparsegenError
from .dispatch import check_out, invoke
from .ndarray import NDArray

_CSR_KEEPING = ("mul", "div")
"""Ops whose csr (op) dense-vector result stays csr (MXNet 1.9.1's broadcast_mul / div)."""


def result_shape(op: str, lhs: tuple[int, ...], rhs: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast shape of ``lhs`` and ``rhs`` (numpy's rule); incompatible shapes raise."""
    try:
        return tuple(int(d) for d in np.broadcast_shapes(lhs, rhs))
    except ValueError:
        raise InvalidValue(f"{op}: operands could not be broadcast together with shapes {lhs} "
                           f"and {rhs}") from None


def _keeps_csr(fn: str, lhs: NDArray, rhs: NDArray, shape: tuple[int, ...]) -> bool:
    """Whether kernel ``bcast_csr`` (or the csr * dense product) serves ``lhs <fn> rhs``: csr
    ``lhs``, dense ``rhs`` of at most 2 dimensions that does not grow the result, and (div) a
    vector or single value rather than a full matrix."""
    if fn not in _CSR_KEEPING or lhs.stype != "csr" or rhs.stype != "default":
        return False
    if rhs.ndim not in (1, 2) or shape != lhs.shape:
        return False
    return fn == "mul" or 1 in (1, *rhs.shape)[-2:]


def binary(fn: str, lhs: Any, rhs: Any, out: NDArray | None = None,
           op: str | None = None) -> NDArray:
    """``lhs <fn> rhs`` broadcast (MXNet's ``broadcast_<fn>``) for two NDArrays of one dtype."""
    op = op or f"broadcast_{fn}"
    for name, value in (("lhs", lhs), ("rhs", rhs)):
        if not isinstance(value, NDArray):
            raise SparsegenError(f"{op}: {name} must be an NDArray, got {type(value).__name__}")
    dtype, other = np.dtype(lhs.dtype), np.dtype(rhs.dtype)
    if other != dtype:
        raise SparsegenError(f"{op}: lhs and rhs must have one dtype (MXNet does not promote), "
                             f"got {dtype.name} and {other.name}")
    shape = result_shape(op, lhs.shape, rhs.shape)
    check_out(op, out, shape, dtype, lhs.context)
    dense_only = lhs.stype == "csr" and not _keeps_csr(fn, lhs, rhs, shape)
    rule = f"broadcast_{fn}->default" if dense_only else f"broadcast_{fn}"
    return invoke(rule, (lhs, rhs), out=out, fn=fn, shape=shape)
