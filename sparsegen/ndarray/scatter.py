"""``mx.nd._internal``'s scatter ops: a row_sparse (csr) lhs keeps its stored positions, and only
they are computed (``_scatter_elemwise_div``, ``_scatter_plus_scalar``,
``_scatter_minus_scalar``), as MXNet 1.9.1."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InvalidType, InvalidValue
from .dispatch import check_out, densified, invoke
from .elemwise import _cast_scalar, _check_int_divisor, elemwise_div
from .ndarray import NDArray


def _array(op: str, name: str, value: Any) -> NDArray:
    if not isinstance(value, NDArray):
        raise InvalidType(f"{op}: {name} must be an NDArray, got {type(value).__name__}")
    return value


def _scatter_elemwise_div(lhs: NDArray, rhs: NDArray, out: NDArray | None = None) -> NDArray:
    """``lhs / rhs`` of one shape: row_sparse ``lhs`` gives row_sparse over its own rows (``rhs``
    of any storage type), other ``lhs`` a dense result (as ``elemwise_div`` of dense forms)."""
    op = "_scatter_elemwise_div"
    lhs, rhs = _array(op, "lhs", lhs), _array(op, "rhs", rhs)
    if lhs.shape != rhs.shape or lhs.dtype != rhs.dtype:
        raise InvalidValue(f"{op}: lhs ({lhs.shape}, {np.dtype(lhs.dtype).name}) and rhs "
                           f"({rhs.shape}, {np.dtype(rhs.dtype).name}) must have one shape and "
                           "dtype")
    if lhs.stype != "row_sparse":
        return elemwise_div(densified(lhs), densified(rhs), out=out)
    _check_int_divisor(op, np.dtype(lhs.dtype), rhs)
    check_out(op, out, lhs.shape, lhs.dtype, lhs.context)
    return invoke(op, (lhs, densified(rhs)), out=out, fn="div")


def _scatter_scalar(fn: str, data: NDArray, scalar: Any, out: NDArray | None) -> NDArray:
    op = f"_scatter_{'plus' if fn == 'add' else 'minus'}_scalar"
    data = _array(op, "data", data)
    s = _cast_scalar(scalar, np.dtype(data.dtype), op)
    check_out(op, out, data.shape, data.dtype, data.context)
    return invoke(f"_{fn}_scalar", (data,), out=out, fn=f"{fn}_scalar", scalar=s)


def _scatter_plus_scalar(data: NDArray, scalar: Any = 0.0, out: NDArray | None = None) -> NDArray:
    """``data + scalar`` at the stored positions only: row_sparse and csr keep their storage
    (absent rows stay 0), dense adds everywhere."""
    return _scatter_scalar("add", data, scalar, out)


def _scatter_minus_scalar(data: NDArray, scalar: Any = 0.0,
                          out: NDArray | None = None) -> NDArray:
    """``data - scalar`` at the stored positions only, as ``_scatter_plus_scalar``."""
    return _scatter_scalar("sub", data, scalar, out)


__all__ = ["_scatter_elemwise_div", "_scatter_minus_scalar", "_scatter_plus_scalar"]
