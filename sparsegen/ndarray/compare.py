"""Comparison operators of ``mx.nd`` (``equal``, ``not_equal``, ``greater``, ``greater_equal``,
``lesser``, ``lesser_equal``) and the ``== != > >= < <=`` of NDArray: 1 / 0 in the input dtype.

Storage types as MXNet 1.9.1 (the registry's comparison rules): two arrays give a dense result,
sparse operands falling back to dense with a ``StorageFallbackWarning``; ``x <op> s`` keeps the
storage type of ``x`` when ``0 <op> s`` is false, else it is dense (a fallback for sparse ``x``).
See docs/operators.md and docs/mxnet-differences.md.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import SparsegenError
from ..opnames import COMPARE_OPS
from . import broadcast
from .dispatch import invoke
from .elemwise import _cast_scalar, _is_scalar, _operand_error
from .ndarray import NDArray

_PYTHON: dict[str, Callable[[Any, Any], bool]] = {
    "equal": operator.eq, "not_equal": operator.ne, "greater": operator.gt,
    "greater_equal": operator.ge, "lesser": operator.lt, "lesser_equal": operator.le,
}
_REFLECTED = {"equal": "equal", "not_equal": "not_equal", "greater": "lesser",
              "greater_equal": "lesser_equal", "lesser": "greater", "lesser_equal": "greater_equal"}
"""``s <op> x`` is ``x <reflected op> s``."""


def _arrays(fn: str, lhs: NDArray, rhs: NDArray) -> NDArray:
    dtype, other = np.dtype(lhs.dtype), np.dtype(rhs.dtype)
    if other != dtype:
        raise SparsegenError(f"{fn}: lhs and rhs must have one dtype (MXNet does not promote), "
                             f"got {dtype.name} and {other.name}")
    if lhs.shape != rhs.shape:
        return broadcast.binary(fn, lhs, rhs, op=fn)
    return invoke(fn, (lhs, rhs), fn=fn)


def _integer_operand(fn: str, dtype: np.dtype, value: Any) -> tuple[str, int]:
    """``(op, scalar)`` for an integer array compared with ``value``: the scalar truncated and
    wrapped into ``dtype`` as MXNet converts it; a nan or infinite ``value`` gives numpy's
    constant answer, as an in-range comparison that is always true or always false."""
    if isinstance(value, (int, np.integer)) or math.isfinite(float(value)):
        return fn, _cast_scalar(value, dtype, fn)
    always = _PYTHON[fn](0.0, float(value))  # the same for every finite element
    return ("lesser_equal" if always else "greater"), int(np.iinfo(dtype).max)


def _scalar(fn: str, array: NDArray, value: Any) -> NDArray:
    """``array <fn> value``: sparse storage is kept when ``0 <fn> value`` is false, in the
    array's dtype (the scalar as the kernel sees it)."""
    dtype = np.dtype(array.dtype)
    if dtype.kind == "f":
        s: float | int = _cast_scalar(value, dtype, fn)
    else:
        fn, s = _integer_operand(fn, dtype, value)
    op = f"_{fn}_scalar" if not _PYTHON[fn](0, s) else f"_{fn}_scalar->default"
    return invoke(op, (array,), fn=fn, scalar=s)


def _compare(fn: str, lhs: Any, rhs: Any) -> Any:
    if isinstance(lhs, NDArray):
        if isinstance(rhs, NDArray):
            return _arrays(fn, lhs, rhs)
        if _is_scalar(rhs):
            return _scalar(fn, lhs, rhs)
        raise _operand_error(fn, rhs)
    if not _is_scalar(lhs):
        raise _operand_error(fn, lhs)
    if isinstance(rhs, NDArray):
        return _scalar(_REFLECTED[fn], rhs, lhs)
    if _is_scalar(rhs):
        return int(_PYTHON[fn](lhs, rhs))
    raise _operand_error(fn, rhs)


def _function(fn: str, symbol: str) -> Callable[[Any, Any], Any]:
    def op(lhs: Any, rhs: Any) -> Any:
        return _compare(fn, lhs, rhs)

    op.__name__ = op.__qualname__ = fn
    op.__doc__ = (f"``lhs {symbol} rhs`` elementwise as 1 / 0 in the input dtype, as "
                  f"``mxnet.nd.{fn}`` (arrays of one shape and dtype, or an array and a scalar; "
                  "two scalars give 1 or 0).")
    return op


COMPARE_FUNCTIONS: dict[str, Callable[[Any, Any], Any]] = {
    fn: _function(fn, symbol) for fn, symbol in zip(COMPARE_OPS, ("==", "!=", ">", ">=", "<", "<="))
}
"""The comparison functions by MXNet name."""

equal = COMPARE_FUNCTIONS["equal"]
not_equal = COMPARE_FUNCTIONS["not_equal"]
greater = COMPARE_FUNCTIONS["greater"]
greater_equal = COMPARE_FUNCTIONS["greater_equal"]
lesser = COMPARE_FUNCTIONS["lesser"]
lesser_equal = COMPARE_FUNCTIONS["lesser_equal"]

__all__ = list(COMPARE_OPS)
