"""Checks on the numbers a user hands to the dense creation functions and to assignments.

MXNet converts whatever it is given with C casts: ``None`` becomes nan, ``300`` stored as uint8
becomes 44 and nan stored as int32 becomes -2147483648. Here a value that is not a number, or a
number the destination dtype cannot hold, raises instead, naming the argument and the value.
Array-likes of numeric strings (``["1", "2.5"]``, as read from a text file) are read as numpy
reads them, as MXNet does; a bare string is not a number.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InvalidType, SparsegenError
from ..formats import preview

_NOT_NUMBERS = (str, bytes, dict, set, frozenset)


def _not_numbers(source: Any, what: str, detail: str = "") -> InvalidType:
    shown = repr(source)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    return InvalidType(f"{what} must be a number or an array-like of numbers, got "
                     f"{type(source).__name__} {shown}{detail}")


def _parsed(strings: np.ndarray, source: Any, what: str) -> np.ndarray:
    """The numbers an array of numeric strings spells: int64 when every one is an integer,
    else float64; a string that is no number raises ``InvalidType`` naming it."""
    for kind in (np.int64, np.float64):
        try:
            return strings.astype(kind)
        except (ValueError, OverflowError):
            continue
    bad = next(v for v in strings.ravel().tolist() if not _is_number(v))
    raise _not_numbers(source, what, f" ({bad!r} is not a number)")


def _is_number(text: str | bytes) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _numeric(source: Any, what: str) -> np.ndarray:
    """``source`` as a numpy array of numbers (bool, int, float or complex), or ``InvalidType``
    (a ``TypeError``)."""
    if source is None or isinstance(source, _NOT_NUMBERS):
        raise _not_numbers(source, what)
    try:
        raw = np.asarray(source)
    except (TypeError, ValueError) as err:  # ragged nested lists, objects numpy cannot read
        raise _not_numbers(source, what, f" ({err})") from None
    if raw.dtype.kind in "US":  # numeric strings ("1", "2.5" read from a file), as numpy reads them
        raw = _parsed(raw, source, what)
    if raw.dtype.kind == "O":  # numbers that numpy kept as objects: Python ints beyond int64
        if not all(isinstance(v, (int, float, np.number)) and not isinstance(v, complex)
                   for v in raw.ravel().tolist()):
            raise _not_numbers(source, what)
    elif raw.dtype.kind not in "biufc":
        raise _not_numbers(source, what)
    if raw.dtype.kind == "c":
        raise SparsegenError(
            f"{what} holds complex values {preview(raw)}; sparsegen arrays are real, so pass "
            "the part you mean explicitly (.real or abs())"
        )
    return raw


def check_fits(raw: np.ndarray, dtype: np.dtype, what: str) -> None:
    """Raise ``MXNetError`` when an integer ``dtype`` cannot hold every value of ``raw``: nan,
    inf, or numbers outside its range (fractions are truncated, as MXNet and numpy do)."""
    if dtype.kind not in "iu" or raw.size == 0 or raw.dtype.kind == "b":
        return
    if raw.dtype.kind in "fO":
        as_float = raw.astype(np.float64)
        bad = ~np.isfinite(as_float)
        if bad.any():
            raise SparsegenError(
                f"{what}: {preview(raw[bad])} has no {dtype.name} value (nan and inf are not "
                "integers)"
            )
    info = np.iinfo(dtype)
    bad = (raw < info.min) | (raw > info.max)
    if np.any(bad):
        raise SparsegenError(
            f"{what}: {preview(np.asarray(raw)[bad])} does not fit in {dtype.name} "
            f"(range [{info.min}, {info.max}])"
        )


def user_values(source: Any, dtype: np.dtype, what: str) -> np.ndarray:
    """``source`` (a number, nested lists, a numpy array) as a new C-contiguous array of
    ``dtype``; not numbers -> ``TypeError``, values ``dtype`` cannot hold -> ``MXNetError``."""
    raw = _numeric(source, what)
    check_fits(raw, dtype, what)
    return np.array(raw, dtype=dtype, order="C")
