"""``mx.nd._internal``: MXNet's internal operators that sparse code calls by name, and the fused
ops sparsegen's Gluon losses run (``_sigmoid_bce``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import InvalidType, InvalidValue
from .ndarray import NDArray

# -- arith --
from .arith import UNION_FUNCTIONS, maximum, minimum
# -- elemwise --
from .elemwise import INTERNAL_UNARY_OPS
# -- reduce --
from .reduce import square_sum as _square_sum
# -- loss --
from .nn import _sigmoid_bce, _sigmoid_bce_grad
# -- slicing --
from .slicing import _slice_assign, _slice_assign_scalar
# -- scatter --
from .scatter import _scatter_elemwise_div, _scatter_minus_scalar, _scatter_plus_scalar
# -- sampling --
from .random import sample_unique_zipfian as _sample_unique_zipfian
# -- logical, creation and other internal ops (logical.py, internal_ops.py, histogram.py) --
from .histogram import _histogram
from .internal_ops import INTERNAL
from .logical import INTERNAL_LOGICAL

SCALAR_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "_plus_scalar": lambda x, s: x + s, "_minus_scalar": lambda x, s: x - s,
    "_rminus_scalar": lambda x, s: s - x, "_mul_scalar": lambda x, s: x * s,
    "_div_scalar": lambda x, s: x / s, "_rdiv_scalar": lambda x, s: s / x,
    "_mod_scalar": lambda x, s: x % s, "_rmod_scalar": lambda x, s: s % x,
    "_power_scalar": lambda x, s: x ** s, "_rpower_scalar": lambda x, s: s ** x,
    "_equal_scalar": lambda x, s: x == s, "_not_equal_scalar": lambda x, s: x != s,
    "_greater_scalar": lambda x, s: x > s, "_greater_equal_scalar": lambda x, s: x >= s,
    "_lesser_scalar": lambda x, s: x < s, "_lesser_equal_scalar": lambda x, s: x <= s,
    "_maximum_scalar": maximum, "_minimum_scalar": minimum,
}
"""MXNet's ops of an array and a scalar (what NDArray's and Symbol's operators write) and what
each computes, on arrays or on Python numbers."""

ARRAY_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "_mod": lambda x, y: x % y, "_power": lambda x, y: x ** y, "_equal": lambda x, y: x == y,
    "_not_equal": lambda x, y: x != y, "_greater": lambda x, y: x > y,
    "_greater_equal": lambda x, y: x >= y, "_lesser": lambda x, y: x < y,
    "_lesser_equal": lambda x, y: x <= y,
}
"""MXNet's ops of two arrays behind the operators that no ``mx.nd`` function names."""


def _scalar_op(name: str, compute: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    def op(data: NDArray, scalar: Any, is_int: Any = None) -> Any:
        return compute(data, scalar)

    op.__name__ = name
    op.__doc__ = f"MXNet's ``{name}``: ``data`` with the number ``scalar``."
    return op


def _array_op(name: str, compute: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    def op(lhs: NDArray, rhs: NDArray) -> Any:
        return compute(lhs, rhs)

    op.__name__ = name
    op.__doc__ = f"MXNet's ``{name}`` of two arrays of one shape."
    return op


globals().update({name: _scalar_op(name, f) for name, f in SCALAR_OPS.items()})
def _identity_with_attr_like_rhs(lhs: NDArray, rhs: NDArray) -> NDArray:
    """``lhs`` (a copy), which MXNet's graphs use to give it ``rhs``'s shape and dtype: in a
    symbol, shape inference then passes shapes between the two (``rhs`` gets no gradient)."""
    if not isinstance(lhs, NDArray) or not isinstance(rhs, NDArray):
        raise InvalidType("_identity_with_attr_like_rhs: lhs and rhs must be NDArrays")
    if lhs.shape != rhs.shape:
        raise InvalidValue(f"_identity_with_attr_like_rhs: lhs has shape {lhs.shape}, rhs "
                           f"{rhs.shape}")
    return lhs.copy()


globals().update({name: _array_op(name, f) for name, f in ARRAY_OPS.items()})
globals().update(UNION_FUNCTIONS)
globals().update(INTERNAL_UNARY_OPS)
globals().update(INTERNAL_LOGICAL)
globals().update(INTERNAL)

__all__ = [*SCALAR_OPS, *ARRAY_OPS, "_histogram", "_identity_with_attr_like_rhs",
           "_sample_unique_zipfian", "_scatter_elemwise_div", "_scatter_minus_scalar",
           "_scatter_plus_scalar", "_sigmoid_bce", "_sigmoid_bce_grad", "_slice_assign",
           "_slice_assign_scalar", "_square_sum",
           *UNION_FUNCTIONS, *INTERNAL_UNARY_OPS, *INTERNAL_LOGICAL, *INTERNAL]
