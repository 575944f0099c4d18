"""``hard_sigmoid`` and ``SoftmaxActivation`` of MXNet 1.9.1, composed of elementwise, where and
softmax ops (their kernels; gradients through those ops' rules)."""

from __future__ import annotations

from typing import Any

from ..errors import InvalidValue
from ..params import real
from .composed import delivered
from .dispatch import densified
from .arith import where
from .indexing import array_arg, choice_arg
from .ndarray import NDArray
from .nn import softmax


def hard_sigmoid(data: NDArray, alpha: Any = 0.2, beta: Any = 0.5,
                 out: NDArray | None = None) -> NDArray:
    """``clip(alpha · x + beta, 0, 1)`` elementwise, as ``mxnet.nd.hard_sigmoid``; the
    gradient is ``alpha`` strictly inside ``(0, 1)``, 0 at and beyond the ends (MXNet's), so the
    clip is two ``where``s (clip's own gradient keeps the ends)."""
    x = densified(array_arg(data, "data", "hard_sigmoid"))
    line = x * real(alpha, "hard_sigmoid: alpha") + real(beta, "hard_sigmoid: beta")
    zero = line * 0
    result = where(line > 0, where(line < 1, line, zero + 1), zero)
    return delivered("hard_sigmoid", result, out)


def SoftmaxActivation(data: NDArray, mode: str = "instance",  # noqa: N802
                      out: NDArray | None = None) -> NDArray:
    """The softmax of each instance (``mode='instance'``: everything after axis 0) or across
    the channels (``'channel'``: axis 1) at every position, as ``mxnet.nd.SoftmaxActivation``."""
    x = densified(array_arg(data, "data", "SoftmaxActivation"))
    mode = choice_arg(mode, "mode", ("instance", "channel"), "SoftmaxActivation")
    if x.ndim < 2:
        raise InvalidValue(f"SoftmaxActivation: data must have at least 2 dimensions, got "
                           f"shape {x.shape}")
    if mode == "instance":
        result = softmax(x.reshape((x.shape[0], -1)), axis=-1).reshape(x.shape)
    else:
        result = softmax(x, axis=1)
    return delivered("SoftmaxActivation", result, out)


__all__ = ["SoftmaxActivation", "hard_sigmoid"]
