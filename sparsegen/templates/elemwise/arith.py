"""Elementwise arithmetic expressions shared by every elementwise template.

Arithmetic follows MXNet 1.9.1: every op computes in the element dtype (float16 through float32,
rounded once), integer division truncates toward zero, and ``x <op> 0`` at a position stored in
one operand only is written out in IEEE arithmetic (TVM's simplifier would fold it).
"""

from __future__ import annotations

from collections.abc import Callable

import tvm
from tvm import tirx
from tvm.script import tirx as T

Expr = tvm.ir.Expr

UNION_OPS = ("add", "sub")
"""Binary ops whose sparse result stores the union of the operands' positions."""


def _is_float(dtype: str) -> bool:
    return dtype.startswith("float")


def _is_unsigned(dtype: str) -> bool:
    return dtype.startswith("uint")


def _const(value: float | int, dtype: str) -> Expr:
    return tirx.const(value, dtype)


def _in_compute_type(dtype: str, build: Callable[..., Expr], *args: Expr) -> Expr:
    """``build(*args)`` evaluated in float32 for float16 (MXNet's half_t arithmetic), else as is."""
    if dtype != "float16":
        return build(*args)
    return T.Cast("float16", build(*(T.Cast("float32", a) for a in args)))


def _int_div(dtype: str, a: Expr, b: Expr) -> Expr:
    """``a / b`` truncated toward zero; 0 for ``b == 0`` and wrapping ``-a`` for ``b == -1``, so the
    kernel never traps (the front end refuses integer division by zero before calling it)."""
    zero, one = _const(0, dtype), _const(1, dtype)
    if _is_unsigned(dtype):
        return T.Select(b == zero, zero, tirx.truncdiv(a, T.Select(b == zero, one, b)))
    minus_one = _const(-1, dtype)
    safe = T.Select((b == zero) | (b == minus_one), one, b)
    return T.Select(b == zero, zero, T.Select(b == minus_one, zero - a, tirx.truncdiv(a, safe)))


def binary(fn: str, dtype: str, a: Expr, b: Expr) -> Expr:
    """``a <fn> b`` for fn in add, sub, mul, div, in ``dtype``."""
    if fn == "div" and not _is_float(dtype):
        return _int_div(dtype, a, b)
    ops = {
        "add": lambda x, y: x + y,
        "sub": lambda x, y: x - y,
        "mul": lambda x, y: x * y,
        "div": lambda x, y: x / y,
    }
    return _in_compute_type(dtype, ops[fn], a, b)


def _float_with_zero(fn: str, dt: str, x: Expr, zero_first: bool) -> Expr:
    """``x <fn> 0`` (``0 <fn> x`` when ``zero_first``) in IEEE arithmetic, written out because
    TVM's simplifier folds ``x * 0`` to 0 and ``x + 0`` to ``x``: ``x * 0`` is a zero with the
    sign of ``x`` (the target's default nan for inf, nan itself for nan), ``x + 0`` and ``0 - x``
    turn -0.0 into +0, and a nan operand passes unchanged (its sign included)."""
    zero = _const(0, dt)
    if fn == "mul":
        # finite: a zero with x's sign; else a real multiplication by a zero the simplifier
        # cannot see, so inf * 0 is the target's default nan and a nan operand stays itself
        signed_zero = tirx.copysign(zero, x)
        return T.Select(tirx.isfinite(x), signed_zero, x * signed_zero)
    if fn == "add":
        return T.Select(x == zero, zero, x)
    if zero_first:  # 0 - x: -x, but +0 for both zeros and nan unchanged
        return T.Select(x == zero, zero, T.Select(tirx.isnan(x), x, -x))
    return x  # x - 0 is x, -0.0 and nan included


def with_zero(fn: str, dtype: str, x: Expr, zero_first: bool = False) -> Expr:
    """``x <fn> 0`` (``0 <fn> x`` when ``zero_first``) in ``dtype``, for fn in add, sub, mul: the
    value at a position stored in one operand only."""
    if not _is_float(dtype):
        zero = _const(0, dtype)
        return binary(fn, dtype, zero, x) if zero_first else binary(fn, dtype, x, zero)
    compute = "float32" if dtype == "float16" else dtype
    return _in_compute_type(dtype, lambda v: _float_with_zero(fn, compute, v, zero_first), x)



def clip(dtype: str, x: Expr, lo: Expr, hi: Expr) -> Expr:
    """MXNet's clip: ``hi`` if ``x > hi``, else ``lo`` if ``x < lo``, else ``x`` (nan stays nan)."""
    return _in_compute_type(
        dtype, lambda v, a, b: T.Select(v > b, b, T.Select(v < a, a, v)), x, lo, hi
    )


SCALAR_OPS: dict[str, Callable[[str, Expr, Expr], Expr]] = {
    "add_scalar": lambda dt, x, s: binary("add", dt, x, s),
    "sub_scalar": lambda dt, x, s: binary("sub", dt, x, s),
    "rsub_scalar": lambda dt, x, s: binary("sub", dt, s, x),
    "mul_scalar": lambda dt, x, s: binary("mul", dt, x, s),
    "div_scalar": lambda dt, x, s: binary("div", dt, x, s),
    "rdiv_scalar": lambda dt, x, s: binary("div", dt, s, x),
}
"""``x <op> s`` and the reflected ``s <op> x``."""


def nonfinite(dtype: str, x: Expr) -> Expr:
    """Whether ``x`` is inf, -inf or nan (never for integer dtypes)."""
    if not _is_float(dtype):
        return tirx.const(False, "bool")
    return tirx.bitwise_not(tirx.isfinite(T.Cast("float32", x) if dtype == "float16" else x))
