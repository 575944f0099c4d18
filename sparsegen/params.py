"""Checks of scalar parameters (hyper-parameters, flags, bounds) where a user sets them.

Every check raises ``MXNetError`` naming the parameter and printing the value it was given, and
returns the value in the form the caller stores (``float``, ``int`` or ``bool``).
"""

from __future__ import annotations

import functools
import math
import numbers
from typing import Any

import numpy as np

from .errors import SparsegenError


def _shown(value: Any) -> str:
    """``repr(value)``, shortened past 60 characters (a 400-digit int, a long list)."""
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:57]}..."


def _is_real(value: Any) -> bool:
    """A real number that is not a bool (``True`` is not a learning rate)."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def real(value: Any, name: str, *, low: float = -math.inf, low_open: bool = False,
         high: float | None = None, high_open: bool = False, allow_inf: bool = False) -> float:
    """``value`` as a float: a real number, not nan, finite unless ``allow_inf``, within
    ``[low, high]`` (an end is excluded when ``low_open`` / ``high_open``)."""
    if not _is_real(value):
        raise SparsegenError(f"{name} must be a real number, got {_shown(value)} "
                             f"({type(value).__name__})")
    try:
        number = float(value)
    except OverflowError:  # an int beyond float64
        number = math.inf if value > 0 else -math.inf
    if math.isnan(number) or (math.isinf(number) and not allow_inf):
        raise SparsegenError(f"{name} must be a finite number, got {_shown(value)}")
    too_low = number <= low if low_open else number < low
    too_high = high is not None and (number >= high if high_open else number > high)
    if too_low or too_high:
        if high is None:
            span = f"{'>' if low_open else '>='} {low:g}"
        else:
            span = f"in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
        raise SparsegenError(f"{name} must be {span}, got {_shown(value)}")
    return number


def items(value: Any) -> tuple[Any, ...]:
    """``value`` as a tuple of its items: a tuple, a list, a range or a 1-D numpy array give
    theirs, any other value is one item (MXNet takes shapes, axes and sizes in these forms)."""
    if isinstance(value, (tuple, list, range)) or (isinstance(value, np.ndarray)
                                                   and value.ndim == 1):
        return tuple(value)
    return (value,)


def integer(value: Any, name: str, low: int = 0) -> int:
    """``value`` as an int: an integral number (not a bool) of at least ``low``."""
    if not isinstance(value, numbers.Integral) or isinstance(value, (bool, np.bool_)):
        raise SparsegenError(f"{name} must be an integer, got {_shown(value)} "
                             f"({type(value).__name__})")
    if value < low:
        raise SparsegenError(f"{name} must be at least {low}, got {value!r}")
    return int(value)


def flag(value: Any, name: str) -> bool:
    """``value`` as a bool: ``True`` / ``False`` (numpy's too) or the integers 0 and 1."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral) and value in (0, 1):
        return bool(value)
    raise SparsegenError(f"{name} must be a boolean, got {_shown(value)} ({type(value).__name__})")


@functools.lru_cache(maxsize=None)
def _largest(dtype: Any) -> float:
    """The largest finite value of a floating dtype (``np.finfo`` costs microseconds a call)."""
    return float(np.finfo(dtype).max)


def representable(value: float, name: str, dtype: np.dtype) -> float:
    """``value`` unchanged if it is finite in ``dtype`` (a kernel parameter or the weight's
    dtype), else ``MXNetError``: a value that overflows turns every result into inf or nan."""
    limit = _largest(dtype)
    if not abs(value) <= limit:
        raise SparsegenError(f"{name} = {value!r} is not finite in {np.dtype(dtype).name} "
                             f"(largest {limit:g}); every updated value would be inf or nan")
    return value


__all__ = ["flag", "integer", "real", "representable"]
