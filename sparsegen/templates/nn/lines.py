"""Maps over the lines of an axis and activations (kernel ``nn_lines``): softmax and log_softmax
of each line of a ``(pre, n, post)`` view (one ``rows`` block per line), Activation's softrelu
and softsign (flat maps), the sigmoid binary cross-entropy of logits and its gradient (flat
maps of two and three buffers), and FullyConnected's bias (added to each row in place).

float16 computes in float32. A line holding nan gives nan everywhere (its maximum is nan).
"""

from __future__ import annotations

from collections.abc import Callable

import tvm
from tvm import tirx
from tvm.script import tirx as T

from .. import element_bytes
from ..columns import cols
from ..flat import binary_map, ternary_map, unary_map

Expr = tvm.ir.Expr

SOFTRELU_LINEAR_ABOVE = 20.0
"""softrelu(x) is x above this (MXNet's threshold: log1p(exp(x)) rounds to x there)."""


def _compute_type(dtype: str) -> str:
    return "float32" if dtype == "float16" else dtype


def _in_compute(dtype: str, f: Callable[..., Expr]) -> Callable[..., Expr]:
    """``f`` (of expressions in the compute dtype, then that dtype) on elements of ``dtype``."""
    ct = _compute_type(dtype)
    if ct == dtype:
        return lambda *xs: f(*xs, ct)
    return lambda *xs: T.Cast(dtype, f(*(T.Cast(ct, x) for x in xs), ct))


def _sigmoid_bce(x: Expr, z: Expr, ct: str) -> Expr:
    """``max(x, 0) - x z + log1p(exp(-|x|))``: the cross entropy of ``sigmoid(x)`` and ``z``."""
    zero = tirx.const(0, ct)
    return (T.Select(x > zero, x, zero) - x * z
            + tirx.log1p(tirx.exp(zero - tirx.abs(x))))


def _sigmoid_bce_grad(g: Expr, x: Expr, z: Expr, ct: str) -> Expr:
    """``g * ([x > 0] - z - sigmoid(-|x|) sign(x))``, the derivative of ``_sigmoid_bce`` in
    ``x`` as the composed loss has it (``sigmoid(x) - z`` but ``-z`` at 0; nan for nan)."""
    zero, one = tirx.const(0, ct), tirx.const(1, ct)
    s = one / (one + tirx.exp(tirx.abs(x)))  # sigmoid(-|x|)
    slope = T.Select(x > zero, one - s, T.Select(x < zero, s, zero))
    return g * (T.Select(tirx.isnan(x), x, slope) - z)


def _softrelu(x: Expr, ct: str) -> Expr:
    return T.Select(x > tirx.const(SOFTRELU_LINEAR_ABOVE, ct), x, tirx.log1p(tirx.exp(x)))


def _softsign(x: Expr, ct: str) -> Expr:
    return x / (tirx.const(1, ct) + tirx.abs(x))


def _line_map(dtype: str, log: bool) -> tvm.tirx.PrimFunc:
    """``(x[pre,n,post], t, out)``: (log-)softmax of ``x / t`` along the middle axis."""
    itemsize = element_bytes(dtype)
    ct = _compute_type(dtype)

    def value(x: Expr, t: Expr) -> Expr:
        return T.Cast(ct, x) / T.Cast(ct, t)

    def result(v: Expr, top: Expr, total: Expr) -> Expr:
        r = v - top - tirx.log(total) if log else tirx.exp(v - top) / total
        return T.Cast(dtype, r)

    @T.prim_func(s_tir=True)
    def func(x: T.handle, t: T.float64, out: T.handle):
        T.func_attr({"tirx.noalias": True})
        pre = T.int64()
        n = T.int64()
        post = T.int64()
        X = T.match_buffer(x, (pre, n, post), dtype, align=itemsize)
        Out = T.match_buffer(out, (pre, n, post), dtype, align=itemsize)
        for line in T.serial(pre * post):
            with T.sblock("rows"):
                vl = T.axis.spatial(pre * post, line)
                T.reads(X[vl // post, 0:n, vl % post])
                T.writes(Out[vl // post, 0:n, vl % post])
                acc = T.alloc_buffer((2,), ct, scope="local")  # maximum, sum of exponentials
                acc[0] = tirx.const(-float("inf"), ct)
                for i in T.serial(n):
                    if (value(X[vl // post, i, vl % post], t) > acc[0]
                            or tirx.isnan(value(X[vl // post, i, vl % post], t))):
                        acc[0] = value(X[vl // post, i, vl % post], t)
                acc[1] = T.Cast(ct, 0)
                for i in T.serial(n):
                    acc[1] = acc[1] + tirx.exp(value(X[vl // post, i, vl % post], t) - acc[0])
                for i in T.serial(n):
                    Out[vl // post, i, vl % post] = result(
                        value(X[vl // post, i, vl % post], t), acc[0], acc[1])

    return func


def lines(dtype: str) -> dict[str, tvm.tirx.PrimFunc]:
    """``softmax`` / ``log_softmax (x[pre,n,post], t, out)`` along the middle axis at temperature
    ``t``; ``softrelu`` / ``softsign (x, out)`` flat maps; ``sigmoid_bce (x, z, out)`` and
    ``sigmoid_bce_grad (g, x, z, out)``; ``bias (x[m,n], b[n])``: ``x[i] += b`` in place."""
    itemsize = element_bytes(dtype)

    @T.macro
    def add(x, r, b, j):
        x[r, j] = x[r, j] + b[j]

    @T.prim_func(s_tir=True)
    def bias(x: T.handle, b: T.handle):
        T.func_attr({"tirx.noalias": True})
        m = T.int64()
        n = T.int64()
        X = T.match_buffer(x, (m, n), dtype, align=itemsize)
        B = T.match_buffer(b, (n,), dtype, align=itemsize)
        for i in T.serial(m):
            with T.sblock("rows"):
                vi = T.axis.spatial(m, i)
                T.reads(X[vi, 0:n], B[0:n])
                T.writes(X[vi, 0:n])
                cols.each(n, add, X, vi, B)

    return {
        "softmax": _line_map(dtype, False),
        "log_softmax": _line_map(dtype, True),
        "softrelu": unary_map(_in_compute(dtype, _softrelu), dtype),
        "softsign": unary_map(_in_compute(dtype, _softsign), dtype),
        "sigmoid_bce": binary_map(_in_compute(dtype, _sigmoid_bce), dtype),
        "sigmoid_bce_grad": ternary_map(_in_compute(dtype, _sigmoid_bce_grad), dtype),
        "bias": bias,
    }
