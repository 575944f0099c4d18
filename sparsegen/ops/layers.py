"""FullyConnected, Activation, softmax and log_softmax on the generated kernels: ``dot_dense`` /
``dot_csr_dense`` with ``nn_lines.bias`` for FullyConnected, ``ew_unary`` (relu, sigmoid, tanh)
and ``nn_lines`` (softrelu, softsign, softmax lines, the sigmoid cross entropy) for the rest.
Operands arrive validated."""

from __future__ import annotations

import math
from typing import Any

from ..device import contiguous, empty_like
from ..formats import CSR
from .dot import csr_dense, dense_dense
from .gather import lines, transpose
from .layout import dtype_name, kernel
from .rule import Rules, StorageRule

ACTIVATIONS = ("relu", "sigmoid", "softrelu", "softsign", "tanh")
"""MXNet's Activation act_type values."""


def _lines_kernel(x: Any) -> Any:
    return kernel("nn_lines", (dtype_name(x.dtype),), x, x.size)


def _with_bias(out: Any, bias: Any) -> Any:
    if bias is not None and out.size:
        _lines_kernel(out).bias(out, contiguous(bias).reshape(-1))
    return out


def fully_connected(data: Any, weight: Any, bias: Any = None, flatten: bool = True) -> Any:
    """``data · weightᵀ + bias`` (MXNet's FullyConnected on dense data): ``flatten`` reads
    ``data`` as (batch, everything else), else its last axis is the input axis."""
    hidden, k = weight.shape
    rows = data.shape[:1] if flatten else data.shape[:-1]
    out = dense_dense(contiguous(data).reshape(math.prod(rows), k), weight, transpose_b=True)
    return _with_bias(out, bias).reshape(*rows, hidden)


def fully_connected_csr(data: CSR, weight: Any, bias: Any = None, flatten: bool = True) -> Any:
    """``data · weightᵀ + bias`` for csr ``data`` (kernel ``dot_csr_dense`` on the transposed
    weight)."""
    return _with_bias(csr_dense(data, transpose(weight)), bias)


def activation(x: Any, act_type: str) -> Any:
    """MXNet's Activation of every element of a dense float buffer."""
    out = empty_like(x, x.shape, x.dtype)
    flat = contiguous(x).reshape(-1)
    if act_type in ("softrelu", "softsign"):
        getattr(_lines_kernel(x), act_type)(flat, out.reshape(-1))
    else:
        getattr(kernel("ew_unary", (dtype_name(x.dtype),), x, x.size), act_type)(
            flat, out.reshape(-1))
    return out


def softmax(x: Any, axis: int = -1, temperature: float = 1.0, log: bool = False) -> Any:
    """softmax (``log``: log_softmax) of ``x / temperature`` along ``axis``."""
    pre, n, post = lines(x.shape, axis)
    out = empty_like(x, x.shape, x.dtype)
    if out.size:
        getattr(_lines_kernel(x), "log_softmax" if log else "softmax")(
            contiguous(x).reshape(pre, n, post), float(temperature), out.reshape(pre, n, post))
    return out


def sigmoid_bce(x: Any, z: Any) -> Any:
    """``max(x, 0) - x z + log1p(exp(-|x|))`` elementwise: the binary cross entropy of
    ``sigmoid(x)`` and labels ``z`` (dense float buffers of one shape and dtype)."""
    out = empty_like(x, x.shape, x.dtype)
    if out.size:
        _lines_kernel(x).sigmoid_bce(contiguous(x).reshape(-1), contiguous(z).reshape(-1),
                                     out.reshape(-1))
    return out


def sigmoid_bce_grad(g: Any, x: Any, z: Any) -> Any:
    """``g * (sigmoid(x) - z)`` elementwise (``-g z`` at ``x = 0``, as the composed loss's
    gradient has it): the gradient of ``sigmoid_bce`` in ``x``."""
    out = empty_like(x, x.shape, x.dtype)
    if out.size:
        _lines_kernel(x).sigmoid_bce_grad(contiguous(g).reshape(-1), contiguous(x).reshape(-1),
                                          contiguous(z).reshape(-1), out.reshape(-1))
    return out


_DENSE1, _DENSE2, _DENSE3 = ("default",), ("default",) * 2, ("default",) * 3
STORAGE_RULES: Rules = {
    **{("FullyConnected", stypes): StorageRule("default", fully_connected)
       for stypes in (_DENSE2, _DENSE3)},
    **{("FullyConnected", ("csr", *stypes)): StorageRule("default", fully_connected_csr)
       for stypes in (_DENSE1, _DENSE2)},
    ("Activation", _DENSE1): StorageRule("default", activation),
    ("softmax", _DENSE1): StorageRule("default", softmax),
    ("_sigmoid_bce", _DENSE2): StorageRule("default", sigmoid_bce),
    ("_sigmoid_bce_grad", _DENSE3): StorageRule("default", sigmoid_bce_grad),
}
"""Layer rules, as MXNet 1.9.1's: FullyConnected on csr data has a sparse kernel; every other
sparse input falls back to dense."""
