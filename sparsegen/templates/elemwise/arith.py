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
    """``a <fn> b`` for fn in add, sub, mul, div and the ``MORE_BINARY`` ops, in ``dtype``."""
    if fn in MORE_BINARY:
        return MORE_BINARY[fn](dtype, a, b)
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
    value at a position stored in one operand only; the other ``SPARSE_UNION_OPS`` (maximum,
    minimum, hypot) are their own element with an explicit zero."""
    if fn in MORE_BINARY:
        zero = _const(0, dtype)
        return binary(fn, dtype, zero, x) if zero_first else binary(fn, dtype, x, zero)
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


# -- power, maximum, minimum, hypot, mod, logical ops (MXNet 1.9.1's mshadow_op semantics) --
def _saturated(dtype: str, value: Expr) -> Expr:
    """A float64 ``value`` as the integer ``dtype``, truncated toward zero: out-of-range values
    saturate and nan gives 0 (a plain conversion of those is undefined, MXNet's garbage)."""
    info = tvm.DataType(dtype)
    bits = info.bits - (0 if _is_unsigned(dtype) else 1)
    low = 0.0 if _is_unsigned(dtype) else -float(2 ** bits)
    high = float(2 ** bits)  # exclusive: the largest float64 below it converts exactly
    return T.Select(tirx.isnan(value), _const(0, dtype),
                    T.Select(value >= _const(high, "float64"), _const(2 ** bits - 1, dtype),
                             T.Select(value <= _const(low, "float64"), _const(int(low), dtype),
                                      T.Cast(dtype, value))))


def _in_float(dtype: str, build: Callable[..., Expr], *args: Expr) -> Expr:
    """``build(*args)`` in the float compute type: float32 for float16, float64 for integer
    dtypes (converted back truncating and saturating), else the dtype itself."""
    if _is_float(dtype):
        return _in_compute_type(dtype, build, *args)
    return _saturated(dtype, build(*(T.Cast("float64", a) for a in args)))


def power(dtype: str, a: Expr, b: Expr) -> Expr:
    """``a ** b``: C's ``pow`` in the float compute type (integers through float64, as MXNet)."""
    return _in_float(dtype, tirx.pow, a, b)


def _compute_type(dtype: str) -> str:
    """The dtype float arithmetic of ``dtype`` elements runs in (float32 for float16)."""
    return "float32" if dtype == "float16" else dtype


def _extreme(greater: bool) -> Callable[[str, Expr, Expr], Expr]:
    """MXNet's maximum / minimum: ``a`` if it is nan, else the larger / smaller, ``b`` on ties
    (so ``maximum(-0.0, 0.0)`` is ``0.0`` and ``maximum(0.0, -0.0)`` is ``-0.0``)."""
    def element(dtype: str, a: Expr, b: Expr) -> Expr:
        def pick(x: Expr, y: Expr) -> Expr:
            wins = x > y if greater else x < y
            return T.Select(tirx.isnan(x) | wins, x, y) if _is_float(dtype) else \
                T.Select(wins, x, y)

        return _in_compute_type(dtype, pick, a, b)

    return element


def hypot(dtype: str, a: Expr, b: Expr) -> Expr:
    """``sqrt(a*a + b*b)`` without overflow: inf if either is infinite (nan or not), else scaled
    by the larger magnitude; integers through float64."""
    ct = _compute_type(dtype) if _is_float(dtype) else "float64"

    def scaled(x: Expr, y: Expr) -> Expr:
        big, small = tirx.max(tirx.abs(x), tirx.abs(y)), tirx.min(tirx.abs(x), tirx.abs(y))
        one = _const(1, ct)
        ratio = small / T.Select(big == _const(0, ct), one, big)
        return T.Select(tirx.isinf(x) | tirx.isinf(y), _const(float("inf"), ct),
                        T.Select(tirx.isnan(x) | tirx.isnan(y), x + y,
                                 big * tirx.sqrt(one + ratio * ratio)))

    return _in_float(dtype, scaled, a, b)


def _signs_differ(r: Expr, b: Expr, zero: Expr) -> Expr:
    """Whether a non-zero remainder ``r`` and the divisor ``b`` have opposite signs."""
    return ((r < zero) & (b > zero)) | ((r > zero) & (b < zero))


def mod(dtype: str, a: Expr, b: Expr) -> Expr:
    """MXNet's mod: the remainder with the sign of ``b`` (Python's ``%``), 0 where ``b`` is 0;
    integer ``b == -1`` gives 0 without trapping on the most negative ``a``."""
    zero = _const(0, dtype)
    if not _is_float(dtype):
        one = _const(1, dtype)
        unsafe = (b == zero) if _is_unsigned(dtype) else (b == zero) | (b == _const(-1, dtype))
        r = tirx.truncmod(a, T.Select(unsafe, one, b))
        if _is_unsigned(dtype):
            return T.Select(unsafe, zero, r)
        return T.Select(unsafe, zero, T.Select(_signs_differ(r, b, zero), r + b, r))
    z = _const(0, _compute_type(dtype))

    def python_mod(x: Expr, y: Expr) -> Expr:
        r = tirx.truncmod(x, y)  # C fmod: frem on LLVM
        return T.Select(y == z, z, T.Select(_signs_differ(r, y, z), r + y, r))

    return _in_compute_type(dtype, python_mod, a, b)


def nonzero(dtype: str, x: Expr) -> Expr:
    """Whether ``x`` (of ``dtype``, not float16) is not 0, nan included: a float ``!=`` is an
    ordered comparison on LLVM, false for nan, and TVM's simplifier turns ``not x == 0`` into it."""
    zero = _const(0, dtype)
    return tirx.isnan(x) | (x != zero) if _is_float(dtype) else x != zero


def _logical(test: Callable[[Expr, Expr], Expr]) -> Callable[[str, Expr, Expr], Expr]:
    """``1`` if ``test(a != 0, b != 0)`` else ``0``, in the dtype (nan counts as true)."""
    def element(dtype: str, a: Expr, b: Expr) -> Expr:
        if dtype == "float16":
            a, b = T.Cast("float32", a), T.Cast("float32", b)
        ct = _compute_type(dtype)
        return T.Select(test(nonzero(ct, a), nonzero(ct, b)), _const(1, dtype), _const(0, dtype))

    return element


MORE_BINARY: dict[str, Callable[[str, Expr, Expr], Expr]] = {
    "power": power,
    "maximum": _extreme(True),
    "minimum": _extreme(False),
    "hypot": hypot,
    "mod": mod,
    "logical_and": _logical(lambda x, y: x & y),
    "logical_or": _logical(lambda x, y: x | y),
    "logical_xor": _logical(lambda x, y: (x | y) & tirx.Not(x & y)),
}
"""The binary ops beyond add, sub, mul, div (``opnames.ARITH_BINARY_OPS``): name ->
``element(dtype, a, b)``."""


SCALAR_OPS: dict[str, Callable[[str, Expr, Expr], Expr]] = {
    "add_scalar": lambda dt, x, s: binary("add", dt, x, s),
    "sub_scalar": lambda dt, x, s: binary("sub", dt, x, s),
    "rsub_scalar": lambda dt, x, s: binary("sub", dt, s, x),
    "mul_scalar": lambda dt, x, s: binary("mul", dt, x, s),
    "div_scalar": lambda dt, x, s: binary("div", dt, x, s),
    "rdiv_scalar": lambda dt, x, s: binary("div", dt, s, x),
}
"""``x <op> s`` and the reflected ``s <op> x`` (``opnames.ELEMWISE_SCALAR_OPS``)."""


ARITH_SCALAR: dict[str, Callable[[str, Expr, Expr], Expr]] = {
    "power_scalar": power,
    "rpower_scalar": lambda dt, x, s: power(dt, s, x),
    "maximum_scalar": MORE_BINARY["maximum"],
    "minimum_scalar": MORE_BINARY["minimum"],
    "mod_scalar": mod,
    "rmod_scalar": lambda dt, x, s: mod(dt, s, x),
}
"""``x <op> s`` and the reflected ``s ** x``, ``s % x`` of kernel ``ew_arith``
(``opnames.ARITH_SCALAR_OPS``: MXNet's ``_power_scalar``, ``_rpower_scalar``, ...)."""


def quadratic(dtype: str, x: Expr, a: Expr, b: Expr, c: Expr) -> Expr:
    """MXNet's ``contrib.quadratic``: ``x * (a * x + b) + c`` for float64 scalars holding float32
    values, in float32 for float16 / float32, float64 for float64 and integer dtypes (converted
    back truncating and saturating)."""
    ct = "float32" if dtype in ("float16", "float32") else "float64"
    v, p, q, r = (T.Cast(ct, e) for e in (x, a, b, c))
    value = v * (p * v + q) + r
    return T.Cast(dtype, value) if _is_float(dtype) else _saturated(dtype, value)


def nonfinite(dtype: str, x: Expr) -> Expr:
    """Whether ``x`` is inf, -inf or nan (never for integer dtypes)."""
    if not _is_float(dtype):
        return tirx.const(False, "bool")
    return tirx.bitwise_not(tirx.isfinite(T.Cast("float32", x) if dtype == "float16" else x))
