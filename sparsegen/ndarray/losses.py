"""``smooth_l1`` and ``softmax_cross_entropy`` of MXNet 1.9.1, composed of elementwise, softmax,
pick and reduce ops (their kernels; gradients through those ops' rules)."""

from __future__ import annotations

from typing import Any

from ..errors import InvalidValue
from ..params import real
from . import arith, elemwise, reduce
from .composed import delivered
from .dispatch import densified
from .indexing import array_arg, pick
from .ndarray import NDArray
from .nn import log_softmax


def smooth_l1(data: NDArray, scalar: Any = 1.0, out: NDArray | None = None) -> NDArray:
    """``0.5 (σx)²`` where ``|x| < 1/σ²``, else ``|x| - 0.5/σ²`` elementwise (σ: ``scalar``),
    as ``mxnet.nd.smooth_l1``; its gradient is ``σ²x`` inside, ``sign(x)`` outside."""
    x = densified(array_arg(data, "data", "smooth_l1"))
    sigma2 = real(scalar, "smooth_l1: scalar") ** 2
    if sigma2 == 0:
        raise InvalidValue("smooth_l1: scalar must not be 0 (the threshold is 1 / scalar²)")
    magnitude = elemwise.abs(x)
    result = arith.where(magnitude < 1.0 / sigma2, elemwise.square(x) * (0.5 * sigma2),
                         magnitude - 0.5 / sigma2)
    return delivered("smooth_l1", result, out)


def softmax_cross_entropy(data: NDArray, label: NDArray,
                          out: NDArray | None = None) -> NDArray:
    """``-Σ_i log softmax(data[i])[label[i]]`` over the batch, shape ``(1,)``, as
    ``mxnet.nd.softmax_cross_entropy`` (``data``: (batch, classes); ``label``: (batch,) class
    ids, clipped into range)."""
    data = densified(array_arg(data, "data", "softmax_cross_entropy"))
    label = densified(array_arg(label, "label", "softmax_cross_entropy"))
    if data.ndim != 2 or label.shape != data.shape[:1]:
        raise InvalidValue(f"softmax_cross_entropy: data must be (batch, classes) and label "
                           f"(batch,), got {data.shape} and {label.shape}")
    picked = pick(log_softmax(data, axis=-1), label, axis=-1)
    result = reduce.sum(-picked).reshape((1,))
    return delivered("softmax_cross_entropy", result, out)


__all__ = ["smooth_l1", "softmax_cross_entropy"]
