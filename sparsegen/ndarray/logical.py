"""``logical_not`` and MXNet's internal logical ops of two arrays of one shape
(``_logical_and``, ...) and of an array and a number (``_logical_and_scalar``, ...), composed of
the comparison and logical kernels; 1 / 0 in the input dtype, no gradient (as MXNet's)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import InvalidType, InvalidValue
from . import arith
from .composed import delivered
from .dispatch import densified
from .elemwise import _is_scalar
from .indexing import array_arg
from .ndarray import NDArray

LOGICAL = {"and": arith.logical_and, "or": arith.logical_or, "xor": arith.logical_xor}
"""MXNet's logical binary ops by their short name."""


def logical_not(data: NDArray, out: NDArray | None = None) -> NDArray:
    """1 where ``data`` is 0, else 0, in ``data``'s dtype, as ``mxnet.nd.logical_not``."""
    data = densified(array_arg(data, "data", "logical_not"))
    return delivered("logical_not", data == 0, out)


def _arrays(fn: str) -> Callable[..., NDArray]:
    name = f"_logical_{fn}"

    def op(lhs: NDArray, rhs: NDArray, out: NDArray | None = None) -> NDArray:
        lhs, rhs = array_arg(lhs, "lhs", name), array_arg(rhs, "rhs", name)
        if lhs.shape != rhs.shape:
            raise InvalidValue(f"{name}: lhs and rhs must have one shape, got {lhs.shape} and "
                               f"{rhs.shape}")
        return delivered(name, LOGICAL[fn](lhs, rhs), out)

    op.__name__ = name
    op.__doc__ = f"MXNet's ``{name}``: 1 / 0 of ``lhs {fn} rhs`` elementwise (one shape)."
    return op


def _scalar(fn: str) -> Callable[..., NDArray]:
    name = f"_logical_{fn}_scalar"

    def op(data: NDArray, scalar: Any, is_int: Any = None,
           out: NDArray | None = None) -> NDArray:
        data = array_arg(data, "data", name)
        if not _is_scalar(scalar):
            raise InvalidType(f"{name}: scalar must be a number, got {type(scalar).__name__}")
        return delivered(name, LOGICAL[fn](data, scalar), out)

    op.__name__ = name
    op.__doc__ = f"MXNet's ``{name}``: 1 / 0 of ``data {fn} scalar`` elementwise."
    return op


INTERNAL_LOGICAL = {**{f"_logical_{fn}": _arrays(fn) for fn in LOGICAL},
                    **{f"_logical_{fn}_scalar": _scalar(fn) for fn in LOGICAL}}
"""``mx.nd._internal``'s logical ops, by MXNet's names."""

__all__ = ["logical_not"]
