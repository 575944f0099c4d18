"""``mx.nd.contrib``'s arithmetic ops, MXNet 1.9.1 semantics: ``allclose``, ``div_sqrt_dim``,
``gradientmultiplier``, ``round_ste``, ``sign_ste``.

Composed of ops that run generated kernels. ``gradientmultiplier`` and the straight-through
estimators are recorded as one node each (``_contrib_<name>``, ``storage_rules.COMPOSED_OPS``)
whose gradient rule is in ``autograd/gradients/contrib.py``: the head gradient times ``scalar``,
and the head gradient itself.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import InvalidType, InvalidValue
from ..params import flag, real
from . import elemwise, reduce
from .contrib_index import delivered
from .indexing import array_arg
from .ndarray import NDArray
from .output import recorded


def allclose(a: NDArray, b: NDArray, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = True, out: NDArray | None = None) -> NDArray:
    """1 (uint8, shape ``()``) when ``|a - b| <= atol + rtol * |b|`` everywhere (equal values,
    infinities included, and with ``equal_nan`` nan against nan count as close), else 0, as
    ``mxnet.nd.contrib.allclose``; ``a`` and ``b`` need one shape and one dtype."""
    op = "allclose"
    a, b = array_arg(a, "a", op), array_arg(b, "b", op)
    rtol, atol = real(rtol, f"{op}: rtol"), real(atol, f"{op}: atol")
    equal_nan = flag(equal_nan, f"{op}: equal_nan")
    if a.shape != b.shape:
        raise InvalidValue(f"{op}: a has shape {a.shape}, b {b.shape}; they must match")
    if a.dtype != b.dtype:
        raise InvalidType(f"{op}: a has dtype {a.dtype.__name__}, b {b.dtype.__name__}; they "
                          "must match")
    x, y = (v.tostype("default").astype("float64").reshape((v.size,)) for v in (a, b))
    close = (abs(x - y) <= atol + rtol * abs(y)) + (x == y)
    if equal_nan:
        close = close + (x != x) * (y != y)
    every = reduce.min(close != 0) if x.size else reduce.sum(x) == 0  # nothing differs
    return delivered(op, every.astype("uint8").reshape(()), out)


def div_sqrt_dim(data: NDArray, out: NDArray | None = None) -> NDArray:
    """``data / sqrt(data.shape[-1])`` in ``data``'s dtype (integers truncated, as MXNet), as
    ``mxnet.nd.contrib.div_sqrt_dim``; the gradient is the head gradient over the same."""
    data = array_arg(data, "data", "div_sqrt_dim")
    if data.ndim == 0:
        raise InvalidValue("div_sqrt_dim: data must have at least 1 dimension, got shape ()")
    scale = math.sqrt(data.shape[-1])
    if np.dtype(data.dtype).kind != "f":
        result = (data.astype("float64") / scale).astype(data.dtype) if scale else data.copy()
    else:
        result = data / scale if scale else data.copy()
    return delivered("div_sqrt_dim", result, out)


def gradientmultiplier(data: NDArray, scalar: float = 1.0, is_int: bool = True,
                       out: NDArray | None = None) -> NDArray:
    """``data`` itself (a copy, its storage type kept) whose gradient is the head gradient times
    ``scalar``, as ``mxnet.nd.contrib.gradientmultiplier`` (a gradient reversal layer with a
    negative ``scalar``); ``is_int`` is MXNet's flag for the scalar's type and changes nothing."""
    op = "gradientmultiplier"
    data = array_arg(data, "data", op)
    params = {"scalar": real(scalar, f"{op}: scalar"), "is_int": flag(is_int, f"{op}: is_int")}
    return delivered(op, recorded(f"_contrib_{op}", (data,), data.copy, params), out)


def round_ste(data: NDArray, out: NDArray | None = None) -> NDArray:
    """``round(data)`` (halves away from zero; csr and row_sparse kept) whose gradient is the
    head gradient unchanged (a straight-through estimator), as ``mxnet.nd.contrib.round_ste``."""
    data = array_arg(data, "data", "round_ste")
    result = recorded("_contrib_round_ste", (data,), lambda: elemwise.round(data), {})
    return delivered("round_ste", result, out)


def sign_ste(data: NDArray, out: NDArray | None = None) -> NDArray:
    """``sign(data)`` (csr and row_sparse kept) whose gradient is the head gradient unchanged
    (a straight-through estimator), as ``mxnet.nd.contrib.sign_ste``."""
    data = array_arg(data, "data", "sign_ste")
    result = recorded("_contrib_sign_ste", (data,), lambda: elemwise.sign(data), {})
    return delivered("sign_ste", result, out)


__all__ = ["allclose", "div_sqrt_dim", "gradientmultiplier", "round_ste", "sign_ste"]
