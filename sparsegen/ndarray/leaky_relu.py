"""``mx.nd.LeakyReLU`` (MXNet 1.9.1's act_types leaky, prelu, elu, selu, rrelu, gelu) composed
of recorded elementwise ops (comparison, ``where``, ``expm1``, ``erf``, broadcast products), so
autograd differentiates it with no rule of its own, ``gamma`` of prelu included.
"""

from __future__ import annotations

import math
from typing import Any

from .. import tape
from ..errors import InvalidValue
from ..params import real
from .arith import broadcast_mul, where
from .elemwise import UNARY_OPS
from .indexing import array_arg, choice_arg
from .ndarray import NDArray
from .random import uniform
from .shape import expand_dims
from .dispatch import densified

ACT_TYPES = ("elu", "gelu", "leaky", "prelu", "rrelu", "selu")
"""MXNet's LeakyReLU act_type values."""
SELU_ALPHA, SELU_LAMBDA = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
"""selu's constants (MXNet's, from Klambauer et al.)."""


def _prelu_slope(data: NDArray, gamma: Any) -> NDArray:
    """``gamma`` (one slope, or one per channel: axis 1) shaped to broadcast against ``data``."""
    gamma = densified(array_arg(gamma, "gamma", "LeakyReLU"))
    channels = data.shape[1] if data.ndim > 1 else 1
    if gamma.size not in (1, channels) or gamma.ndim != 1:
        raise InvalidValue(f"LeakyReLU: prelu's gamma must have shape (1,) or ({channels},) "
                           f"(one slope per channel of axis 1), got {gamma.shape}")
    if gamma.size == 1 or data.ndim < 2:
        return gamma.reshape((1,) * max(data.ndim, 1))
    slope = expand_dims(gamma, axis=0)  # (not reshape, which reads 0 channels as "keep")
    for _ in range(data.ndim - 2):
        slope = expand_dims(slope, axis=-1)
    return slope


def LeakyReLU(data: NDArray, gamma: NDArray | None = None, act_type: str = "leaky",  # noqa: N802
              slope: float = 0.25, lower_bound: float = 0.125, upper_bound: float = 0.334,
              out: NDArray | None = None) -> NDArray:
    """``x`` where ``x > 0``, else ``act_type``'s negative part, as ``mxnet.nd.LeakyReLU``:
    leaky ``slope · x``, prelu ``gamma · x``, elu ``slope · (eˣ - 1)``, selu ``λ·α·(eˣ - 1)``
    (and ``λ·x`` above 0), rrelu ``r · x`` with ``r`` drawn from U(lower_bound, upper_bound)
    per element when training, their mean otherwise; gelu is ``x / 2 · (1 + erf(x / √2))``
    everywhere."""
    data = densified(array_arg(data, "data", "LeakyReLU"))
    act_type = choice_arg(act_type, "act_type", ACT_TYPES, "LeakyReLU")
    if out is not None:
        raise InvalidValue("LeakyReLU: out is not supported; use the returned array")
    if act_type == "gelu":  # MXNet's: x / 2 · (1 + erf(x / √2))
        return data * (UNARY_OPS["erf"](data * (1 / math.sqrt(2))) + 1) * 0.5
    positive = data > 0
    if act_type == "leaky":
        negative = data * real(slope, "LeakyReLU: slope")
    elif act_type == "prelu":
        negative = broadcast_mul(data, _prelu_slope(data, gamma))
    elif act_type == "elu":
        negative = UNARY_OPS["expm1"](data) * real(slope, "LeakyReLU: slope")
    elif act_type == "selu":
        return where(positive, data, UNARY_OPS["expm1"](data) * SELU_ALPHA) * SELU_LAMBDA
    else:
        low = real(lower_bound, "LeakyReLU: lower_bound")
        high = real(upper_bound, "LeakyReLU: upper_bound", low=low)
        rate = (uniform(low, high, shape=data.shape, dtype=data.dtype, ctx=data.context)
                if tape.is_training() else (low + high) / 2)
        negative = data * rate
    return where(positive, data, negative)


__all__ = ["LeakyReLU"]
