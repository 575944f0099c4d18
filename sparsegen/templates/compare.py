"""Comparison kernels: ``out[i] = 1 if a[i] <op> b[i] else 0`` over flat buffers, in the element
dtype (MXNet 1.9.1 gives 1 / 0 in the input dtype), against a second buffer or a scalar.

IEEE semantics on every target: nan compares unequal to everything (``not_equal`` is written as
the negation of ``equal``, so no backend's ordered / unordered choice decides it) and ``-0.0``
equals ``0.0``. float16 compares in float32, which is exact. The reflected ``s < x`` is
``x > s``: the caller swaps the op, so there are no reflected functions.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import tvm
from tvm import tirx
from tvm.script import tirx as T

from ..opnames import COMPARE_OPS
from .elemwise.arith import _const
from .flat import binary_map, scalar_map

Expr = tvm.ir.Expr

_TESTS: dict[str, tuple[Callable[[Expr, Expr], Expr], bool]] = {
    "equal": (tirx.EQ, False),
    "not_equal": (tirx.EQ, True),
    "greater": (tirx.GT, False),
    "greater_equal": (tirx.GE, False),
    "lesser": (tirx.LT, False),
    "lesser_equal": (tirx.LE, False),
}
"""Each op of ``opnames.COMPARE_OPS`` as its test and whether the result negates it."""


def compare(fn: str, dtype: str, a: Expr, b: Expr) -> Expr:
    """``1`` if ``a <fn> b`` else ``0``, in ``dtype``."""
    if dtype == "float16":
        a, b = T.Cast("float32", a), T.Cast("float32", b)
    one, zero = _const(1, dtype), _const(0, dtype)
    test, negated = _TESTS[fn]
    return T.Select(test(a, b), zero, one) if negated else T.Select(test(a, b), one, zero)


def dense(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """Flat comparison maps: ``<op> (a, b, out)`` of two buffers and ``<op>_scalar (x, s, out)``
    of a buffer and a scalar; used on dense buffers and on the stored values of sparse ones."""
    funcs = {fn: binary_map(partial(compare, fn, dtype), dtype) for fn in COMPARE_OPS}
    funcs.update({f"{fn}_scalar": scalar_map(partial(compare, fn, dtype), dtype)
                  for fn in COMPARE_OPS})
    return funcs
