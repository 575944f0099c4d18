"""Unary math by MXNet name, and one flat map ``(x, out)`` per op (kernel ``ew_unary``).

Unary math on integer dtypes computes in float64 and converts back (saturating to int64, then
wrapping to the dtype, never undefined); float16 computes in float32.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable
from functools import partial

import tvm
from tvm import tirx
from tvm.script import tirx as T

from ..flat import unary_map
from .arith import Expr, _const, _is_float, _is_unsigned

def _libm(name: str) -> Callable[[Expr, str], Expr]:
    """A C math library function (float32 ``namef`` or float64 ``name``): used where TVM's own
    lowering is inaccurate (tanh, atanh near 0) or missing (expm1, cbrt)."""

    def call(x: Expr, dt: str) -> Expr:
        return tirx.call_pure_extern(dt, name + ("f" if dt == "float32" else ""), x)

    return call


def _round_half_away(x: Expr, dt: str) -> Expr:
    """C ``round`` (MXNet's ``round``): halves go away from zero; ``x - trunc(x)`` is exact."""
    t = tirx.trunc(x)
    return T.Select(tirx.abs(x - t) >= _const(0.5, dt), t + tirx.copysign(_const(1, dt), x), t)


def _rint(x: Expr, dt: str) -> Expr:
    """MXNet's ``rint``: the nearer of ``floor(x)`` and ``ceil(x)``, ``floor`` on a tie, so halves
    go toward -inf (``rint(1.5) = 1``, ``rint(-2.5) = -3``); ``inf`` stays, nan stays nan."""
    lo, hi = tirx.floor(x), tirx.ceil(x)
    return T.Select(x - lo <= hi - x, lo, hi)


def _sign(x: Expr, dt: str) -> Expr:
    zero, one = _const(0, dt), _const(1, dt)
    if _is_unsigned(dt):
        return T.Select(x > zero, one, zero)
    # +0 for both zeros (MXNet, numpy); x itself for nan (numpy's sign(nan) is nan)
    return T.Select(x > zero, one, T.Select(x < zero, _const(-1, dt), T.Select(x == zero, zero, x)))


def _relu(x: Expr, dt: str) -> Expr:
    """MXNet's relu: ``x`` if ``x > 0`` or nan, else +0 (also for -0.0)."""
    if _is_unsigned(dt):
        return x
    return T.Select((x > _const(0, dt)) | tirx.isnan(x), x, _const(0, dt))


def _degrees_factor(dt: str, numerator: float, denominator: float) -> Expr:
    """``numerator / denominator`` as MXNet's float32 constant (both rounded to float32, then
    divided in float32) for float16 / float32, as the correctly rounded float64 for float64."""
    if dt == "float64":
        return _const(numerator / denominator, dt)
    return _const(_f32(_f32(numerator) / _f32(denominator)), dt)


def _f32(value: float) -> float:
    """``value`` rounded to float32 (exact for float32 division of float32 operands)."""
    return struct.unpack("f", struct.pack("f", value))[0]


def _abs(x: Expr, dt: str) -> Expr:
    return x if _is_unsigned(dt) else tirx.abs(x)


def _intrinsic(f: Callable[[Expr], Expr]) -> Callable[[Expr, str], Expr]:
    return lambda x, dt: f(x)


FLOAT_UNARY: dict[str, Callable[[Expr, str], Expr]] = {
    "abs": _abs,
    "sign": _sign,
    "sqrt": _intrinsic(tirx.sqrt),
    "square": lambda x, dt: x * x,
    "negative": lambda x, dt: _const(0, dt) - x if not _is_float(dt) else -x,
    "relu": _relu,
    "sin": _intrinsic(tirx.sin),
    "sinh": _intrinsic(tirx.sinh),
    "tan": _intrinsic(tirx.tan),
    "tanh": _libm("tanh"),
    "arcsin": _intrinsic(tirx.asin),
    "arcsinh": _intrinsic(tirx.asinh),
    "arctan": _intrinsic(tirx.atan),
    "arctanh": _libm("atanh"),
    "floor": _intrinsic(tirx.floor),
    "ceil": _intrinsic(tirx.ceil),
    "round": _round_half_away,
    "rint": _rint,
    "fix": _intrinsic(tirx.trunc),
    "trunc": _intrinsic(tirx.trunc),
    "expm1": _libm("expm1"),
    "log1p": _intrinsic(tirx.log1p),
    "cbrt": _libm("cbrt"),
    "degrees": lambda x, dt: x * _degrees_factor(dt, 180.0, math.pi),
    "radians": lambda x, dt: x * _degrees_factor(dt, math.pi, 180.0),
    "exp": _intrinsic(tirx.exp),
    "log": _intrinsic(tirx.log),
    "log10": _intrinsic(tirx.log10),
    "log2": _intrinsic(tirx.log2),
    "rsqrt": _intrinsic(tirx.rsqrt),
    "cos": _intrinsic(tirx.cos),
    "cosh": _intrinsic(tirx.cosh),
    "arccos": _intrinsic(tirx.acos),
    "arccosh": _intrinsic(tirx.acosh),
    "sigmoid": lambda x, dt: _const(1, dt) / (_const(1, dt) + tirx.exp(-x)),
}
"""Unary ops by MXNet name: ``(x, compute dtype) -> expression`` (float16 computes in float32)."""

_INTEGER_OPS = {"abs", "sign", "square", "negative", "relu"}
"""Unary ops that stay in integer arithmetic on integer dtypes (wrapping, as MXNet)."""

_ROUNDING = {"floor", "ceil", "round", "rint", "fix", "trunc"}
"""Rounding ops: the identity on integer dtypes."""

_INT64_LIMIT = 9.2233720368547758e18  # 2**63 as float64


def _float_to_int(y: Expr, dtype: str) -> Expr:
    """float64 -> ``dtype``: nan -> 0, saturate to int64, then wrap (C's integer narrowing)."""
    limit = _const(_INT64_LIMIT, "float64")
    as_int64 = T.Select(
        tirx.isnan(y),
        _const(0, "int64"),
        T.Select(
            y >= limit,
            _const(2**63 - 1, "int64"),
            T.Select(y <= -limit, _const(-(2**63), "int64"), T.Cast("int64", y)),
        ),
    )
    return as_int64 if dtype == "int64" else T.Cast(dtype, as_int64)


def unary(fn: str, dtype: str, x: Expr) -> Expr:
    """The unary op ``fn`` applied to ``x`` of ``dtype``, result in ``dtype``."""
    build = FLOAT_UNARY[fn]
    if dtype == "float16":
        return T.Cast("float16", build(T.Cast("float32", x), "float32"))
    if _is_float(dtype) or fn in _INTEGER_OPS:
        return build(x, dtype)
    if fn in _ROUNDING:
        return x
    return _float_to_int(build(T.Cast("float64", x), "float64"), dtype)



def unary_maps(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """One flat map ``(x, out)`` per unary op of ``FLOAT_UNARY``."""
    return {fn: unary_map(partial(unary, fn, dtype), dtype) for fn in FLOAT_UNARY}
