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

from ...opnames import ELEMWISE_UNARY
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


def _horner(coefficients: tuple[float, ...], w: Expr, dt: str) -> Expr:
    """The polynomial with ``coefficients`` (highest degree first) at ``w``."""
    p = _const(coefficients[0], dt)
    for c in coefficients[1:]:
        p = _const(c, dt) + p * w
    return p


_ERFINV_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                   0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)
"""Giles' single-precision erfinv approximation ("Approximating the erfinv function", 2010),
in ``w = -log(1 - x^2)`` shifted by 2.5 (``w < 5``) and in ``sqrt(w) - 3``."""


def _erfinv(x: Expr, dt: str) -> Expr:
    """The inverse of erf: Giles' approximation refined by Newton steps on ``erf`` (on
    ``log(erfc)`` for ``|x| > 0.5``, where ``1 - |x|`` is exact), two in float32 and four in
    float64; ``+-1``
    give ``+-inf``, ``|x| > 1`` and nan give nan, the sign of zero is kept."""
    one, a = _const(1, dt), tirx.abs(x)
    w = -tirx.log((one - a) * (one + a))
    central = _horner(_ERFINV_CENTRAL, w - _const(2.5, dt), dt)
    tail = _horner(_ERFINV_TAIL, tirx.sqrt(w) - _const(3, dt), dt)
    y = T.Select(w < _const(5, dt), central, tail) * a
    slope = _const(2 / math.sqrt(math.pi), dt)
    for step in range(4 if dt == "float64" else 2):
        # Newton on erf(y) = a, and above 0.5 on log(erfc(y)) = log(1 - a): nearly quadratic in
        # the tail, so the steps converge there too (on erfc itself they crawl). Each step binds
        # the previous estimate to a variable: written out, the expression would grow 4x a step
        v = tirx.Var(f"erfinv_y{step}", dt)
        erfc = _libm("erfc")(v, dt)
        tail_error = (tirx.log(erfc) - tirx.log(one - a)) * erfc
        error = T.Select(a > _const(0.5, dt), -tail_error, _libm("erf")(v, dt) - a)
        y = tirx.Let(v, y, v - error / (slope * tirx.exp(-v * v)))
    inner = tirx.copysign(T.Select(a < one, y, _const(float("inf"), dt)), x)
    return T.Select(a > one, _const(float("nan"), dt), T.Select(tirx.isnan(x), x, inner))


_PSI_SERIES = (-1 / 12, 1 / 120, -1 / 252, 1 / 240, -1 / 132, 691 / 32760, -1 / 12)
"""The asymptotic series of digamma: the coefficients of ``t^-2, t^-4, ...`` (Bernoulli
numbers ``B_2k / 2k``)."""


def _digamma_positive(x: Expr, dt: str) -> Expr:
    """digamma for ``x > 0``: shifted to ``t = x + 6`` below 6 (``psi(x) = psi(x + 6) - sum
    1 / (x + k)``), then ``log t - 1 / 2t`` and the series in ``1 / t^2``."""
    six = _const(6, dt)
    shift = x < six
    t = T.Select(shift, x + six, x)
    inv2 = _const(1, dt) / (t * t)
    series = _const(0, dt)
    for c in reversed(_PSI_SERIES):
        series = (series + _const(c, dt)) * inv2
    value = tirx.log(t) - _const(0.5, dt) / t + series
    correction = _const(0, dt)
    for k in range(6):
        correction = correction + _const(1, dt) / (x + _const(k, dt))
    return T.Select(shift, value - correction, value)


def _digamma(x: Expr, dt: str) -> Expr:
    """digamma (psi), the derivative of gammaln: the series for ``x > 0``, the reflection
    ``psi(1 - x) - pi / tan(pi x)`` below; inf at 0, the negative integers and -inf (the poles,
    as MXNet's gradients take them), inf for inf, nan for nan."""
    pi = _const(math.pi, dt)
    zero = _const(0, dt)
    reflected = _digamma_positive(_const(1, dt) - x, dt) - pi / tirx.tan(pi * x)
    pole = (x <= zero) & (tirx.floor(x) == x)
    value = T.Select(x > zero, _digamma_positive(x, dt), reflected)
    return T.Select(pole, _const(float("inf"), dt), value)


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
    "erf": _libm("erf"),
    "erfinv": _erfinv,
    "softsign": lambda x, dt: x / (_const(1, dt) + tirx.abs(x)),
    "gamma": _libm("tgamma"),
    "gammaln": _libm("lgamma"),
    "reciprocal": lambda x, dt: _const(1, dt) / x,
    "rcbrt": lambda x, dt: _const(1, dt) / _libm("cbrt")(x, dt),
    "digamma": _digamma,
}
"""Unary ops by MXNet name: ``(x, compute dtype) -> expression`` (float16 computes in float32)."""

_INTEGER_OPS = {"abs", "sign", "square", "negative", "relu"}
"""Unary ops that stay in integer arithmetic on integer dtypes (wrapping, as MXNet)."""

_ROUNDING = {"floor", "ceil", "round", "rint", "fix", "trunc"}
"""Rounding ops: the identity on integer dtypes."""

_INT64_LIMIT = 9.2233720368547758e18  # 2**63 as float64


def _float_to_int(y: Expr, dtype: str) -> Expr:
    """float64 -> ``dtype``: nan -> 0, saturate to int64, then wrap (C's integer narrowing).
    ``y`` is bound to a variable once (it is read four times)."""
    limit, v = _const(_INT64_LIMIT, "float64"), tirx.Var("y", "float64")
    as_int64 = T.Select(
        tirx.isnan(v),
        _const(0, "int64"),
        T.Select(
            v >= limit,
            _const(2**63 - 1, "int64"),
            T.Select(v <= -limit, _const(-(2**63), "int64"), T.Cast("int64", v)),
        ),
    )
    bound = tirx.Let(v, y, as_int64)
    return bound if dtype == "int64" else T.Cast(dtype, bound)


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
    """One flat map ``(x, out)`` per unary op (``opnames.ELEMWISE_UNARY``, in its order)."""
    return {fn: unary_map(partial(unary, fn, dtype), dtype) for fn in ELEMWISE_UNARY}
