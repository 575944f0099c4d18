"""Gradients of the elementwise ops: unary maps, ops with a scalar, binary ops (broadcasting
ones sum their gradient back to each operand's shape), add_n, where, clip, quadratic, casts."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ... import ndarray as nd
from ...opnames import ELEMWISE_UNARY_DENSE, ELEMWISE_UNARY_SPARSE
from ...tape import Node, differentiable
from ...ndarray.dispatch import densified
from .registry import gradient


def unbroadcast(grad: Any, shape: tuple[int, ...]) -> Any:
    """``grad`` summed over the dimensions a broadcast to its shape added or stretched."""
    shape = tuple(shape)
    if tuple(grad.shape) == shape:
        return grad
    lead = grad.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + k for k, n in enumerate(shape)
                                      if n == 1 and grad.shape[lead + k] != 1)
    return nd.sum(grad, axis=axes, keepdims=True).reshape(shape) if axes else grad.reshape(shape)


_UNARY: dict[str, Callable[[Any, Any, Any], Any]] = {
    # d(op)/dx times g, from the input x and the output y
    "abs": lambda x, y, g: g * nd.sign(x),
    "sqrt": lambda x, y, g: g / (y * 2),
    "square": lambda x, y, g: g * x * 2,
    "negative": lambda x, y, g: -g,
    "relu": lambda x, y, g: g * nd.where(x == x, x > 0, x),  # nan passes on, as MXNet's
    "sin": lambda x, y, g: g * nd.cos(x),
    "sinh": lambda x, y, g: g * nd.cosh(x),
    "tan": lambda x, y, g: g * (y * y + 1),
    "tanh": lambda x, y, g: g * (1 - y * y),
    "arcsin": lambda x, y, g: g / nd.sqrt(1 - x * x),
    "arcsinh": lambda x, y, g: g / nd.sqrt(x * x + 1),
    "arctan": lambda x, y, g: g / (x * x + 1),
    "arctanh": lambda x, y, g: g / (1 - x * x),
    "expm1": lambda x, y, g: g * (y + 1),
    "log1p": lambda x, y, g: g / (x + 1),
    "cbrt": lambda x, y, g: g / (y * y * 3),
    "degrees": lambda x, y, g: g * (180 / math.pi),
    "radians": lambda x, y, g: g * (math.pi / 180),
    "exp": lambda x, y, g: g * y,
    "log": lambda x, y, g: g / x,
    "log10": lambda x, y, g: g / (x * math.log(10)),
    "log2": lambda x, y, g: g / (x * math.log(2)),
    "rsqrt": lambda x, y, g: g * y * y * y * -0.5,
    "cos": lambda x, y, g: -g * nd.sin(x),
    "cosh": lambda x, y, g: g * nd.sinh(x),
    "arccos": lambda x, y, g: -g / nd.sqrt(1 - x * x),
    "arccosh": lambda x, y, g: g / nd.sqrt(x * x - 1),
    "sigmoid": lambda x, y, g: g * y * (1 - y),
    "erf": lambda x, y, g: g * nd.exp(-x * x) * (2 / math.sqrt(math.pi)),
    "erfinv": lambda x, y, g: g * nd.exp(y * y) * (math.sqrt(math.pi) / 2),
    "softsign": lambda x, y, g: g / nd.square(nd.abs(x) + 1),
    "gamma": lambda x, y, g: g * y * nd._internal._digamma(x),
    "gammaln": lambda x, y, g: g * nd._internal._digamma(x),
    "reciprocal": lambda x, y, g: -g * y * y,
    "rcbrt": lambda x, y, g: -g * y / (x * 3),
}
assert set(_UNARY) | {"sign", "floor", "ceil", "round", "rint", "fix", "trunc"} == set(
    ELEMWISE_UNARY_SPARSE) | set(ELEMWISE_UNARY_DENSE)


_DENSE_BACKWARD = frozenset(ELEMWISE_UNARY_DENSE)
"""Unary ops whose backward MXNet runs on dense forms: a sparse head gradient is densified, so
``0 · f'(x)`` is nan where ``f'`` is infinite (rsqrt, log at 0), as there."""


@gradient(*_UNARY)
@differentiable
def _unary(node: Node, out_grads: list[Any]) -> tuple[Any]:
    head = densified(out_grads[0]) if node.op in _DENSE_BACKWARD else out_grads[0]
    return (_UNARY[node.op](node.inputs[0], node.output(), head),)


_SCALAR: dict[str, Callable[[Any, Any, float, Any], Any]] = {
    # d(x <op> s)/dx times g, from x, the output y and the scalar s
    "add_scalar": lambda x, y, s, g: g,
    "sub_scalar": lambda x, y, s, g: g,
    "rsub_scalar": lambda x, y, s, g: -g,
    "mul_scalar": lambda x, y, s, g: g * s,
    "div_scalar": lambda x, y, s, g: g / s,
    "rdiv_scalar": lambda x, y, s, g: -g * y / x,
    "power_scalar": lambda x, y, s, g: g * s * x ** (s - 1),
    "rpower_scalar": lambda x, y, s, g: g * y * math.log(s),
    "maximum_scalar": lambda x, y, s, g: g * (x >= s),
    "minimum_scalar": lambda x, y, s, g: g * (x <= s),
    "mod_scalar": lambda x, y, s, g: g,
    "rmod_scalar": lambda x, y, s, g: -g * nd.floor(s / x),
}


@gradient(*(f"_{name}" for name in _SCALAR))
@differentiable
def _scalar(node: Node, out_grads: list[Any]) -> tuple[Any]:
    s = node.params["scalar"]
    s = s.item() if hasattr(s, "item") else s
    return (_SCALAR[node.params["fn"]](node.inputs[0], node.output(), s, out_grads[0]),)


_BINARY: dict[str, Callable[[Any, Any, Any, Any], tuple[Any, Any]]] = {
    # (d/da, d/db) of a <op> b times g, from a, b and the output y
    "add": lambda a, b, y, g: (g, g),
    "sub": lambda a, b, y, g: (g, -g),
    "mul": lambda a, b, y, g: (g * b, g * a),
    "div": lambda a, b, y, g: (g / b, -g * y / b),
    "power": lambda a, b, y, g: (g * b * a ** (b - 1), g * y * nd.log(a)),
    "maximum": lambda a, b, y, g: (g * (a >= b), g * (a < b)),
    "minimum": lambda a, b, y, g: (g * (a <= b), g * (a > b)),
    "hypot": lambda a, b, y, g: (g * a / y, g * b / y),
    "mod": lambda a, b, y, g: (g, -g * nd.floor(a / b)),
}


@gradient(*(f"elemwise_{fn}" for fn in ("add", "sub", "mul", "div")),
          *(f"broadcast_{fn}" for fn in _BINARY), "_maximum", "_minimum", "_hypot")
@differentiable
def _binary(node: Node, out_grads: list[Any]) -> tuple[Any, Any]:
    a, b = node.inputs
    g = out_grads[0]
    if node.params["fn"] not in ("add", "sub", "mul", "div"):
        # MXNet runs these backwards on dense forms (hypot's 0 / 0 is nan off the stored rows)
        a, b, g = densified(a), densified(b), densified(g)
    elif g.stype != "default" and any(x.stype not in ("default", g.stype) for x in (a, b)):
        g = densified(g)  # products of two different sparse storages have no kernel
    grads = _BINARY[node.params["fn"]](a, b, node.output(), g)
    return tuple(unbroadcast(grad, x.shape) for grad, x in zip(grads, node.inputs))


@gradient("add_n")
@differentiable
def _add_n(node: Node, out_grads: list[Any]) -> tuple[Any, ...]:
    return (out_grads[0],) * len(node.inputs)


@gradient("where")
@differentiable
def _where(node: Node, out_grads: list[Any]) -> tuple[Any, Any, Any]:
    condition = densified(node.inputs[0])
    g = densified(out_grads[0])
    zero = nd.zeros_like(g)
    return None, nd.where(condition, g, zero), nd.where(condition, zero, g)


@gradient("clip")
@differentiable
def _clip(node: Node, out_grads: list[Any]) -> tuple[Any]:
    x = node.inputs[0]
    inside = (x >= node.params["a_min"]) * (x <= node.params["a_max"])
    return (out_grads[0] * inside,)


@gradient("quadratic")
@differentiable
def _quadratic(node: Node, out_grads: list[Any]) -> tuple[Any]:
    x, p = node.inputs[0], node.params  # d(a x² + b x + c)/dx = 2 a x + b
    return (out_grads[0] * (x * (2 * p["a"]) + p["b"]),)


@gradient("Cast")
def _cast(node: Node, out_grads: list[Any]) -> tuple[Any]:
    x = node.inputs[0]
    g = out_grads[0]
    return (g.astype(x.dtype) if g.dtype != x.dtype else g,)


@gradient("cast_storage")
@differentiable
def _cast_storage(node: Node, out_grads: list[Any]) -> tuple[Any]:
    return (out_grads[0],)  # the dtype is kept; the buffer's storage is the caller's affair
