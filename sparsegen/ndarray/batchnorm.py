"""``mx.nd.BatchNorm`` (MXNet 1.9.1 semantics), composed of reductions and broadcast arithmetic
and recorded as one node, whose gradient rule (``autograd/gradients/batchnorm.py``) is MXNet's
backward: it also updates ``moving_mean`` / ``moving_var`` in place, as MXNet's backward pass
does after a training forward.

Training mode (``autograd.record()``, or ``train_mode``) normalises by the batch's mean and
biased variance over every axis but ``axis``; inference mode and ``use_global_stats`` by the
moving statistics. ``fix_gamma`` scales by 1 (gamma's gradient is zero, and a gamma that takes
a gradient is set to 1 in a recorded forward, as MXNet's). The second and third
outputs (``output_mean_var``) are the mean and the inverse standard deviation
``1 / sqrt(var + eps)``, as MXNet's are.
"""

from __future__ import annotations

from typing import Any

from .. import tape
from ..errors import InvalidValue, NotSupported
from ..params import flag, real
from .arith import broadcast_add, broadcast_mul, broadcast_sub
from .elemwise import rsqrt, square
from .indexing import array_arg, axis_arg
from .ndarray import NDArray
from .output import dense_inputs, recorded
from .reduce import mean as reduce_mean
from .shape import expand_dims
from .storage import assign


def channels(values: NDArray, axis: int, ndim: int) -> NDArray:
    """A ``(c,)`` array shaped to broadcast along ``axis`` of an ``ndim``-dimensional array."""
    for _ in range(axis):
        values = expand_dims(values, axis=0)
    for _ in range(ndim - 1 - axis):
        values = expand_dims(values, axis=-1)
    return values


def BatchNorm(data: NDArray, gamma: NDArray, beta: NDArray, moving_mean: NDArray,  # noqa: N802
              moving_var: NDArray, eps: float = 1e-3, momentum: float = 0.9,
              fix_gamma: bool = True, use_global_stats: bool = False,
              output_mean_var: bool = False, axis: int = 1, cudnn_off: bool = False,
              min_calib_range: float | None = None,
              max_calib_range: float | None = None) -> Any:
    """``gamma · (data - mean) / sqrt(var + eps) + beta`` per channel of ``axis``, as
    ``mxnet.nd.BatchNorm``: batch statistics in training mode (``moving_mean`` and
    ``moving_var`` then move by ``momentum`` in the backward pass), the moving ones otherwise;
    with ``output_mean_var`` a list [output, mean, inverse std]."""
    op = "BatchNorm"
    arrays = [array_arg(a, name, op) for a, name in zip(
        (data, gamma, beta, moving_mean, moving_var),
        ("data", "gamma", "beta", "moving_mean", "moving_var"))]
    if min_calib_range is not None or max_calib_range is not None:
        raise NotSupported(f"{op}: min_calib_range / max_calib_range are for quantized "
                           "graphs, which sparsegen does not run")
    if arrays[0].ndim < 2:
        raise InvalidValue(f"{op}: data of shape {arrays[0].shape} needs at least 2 dimensions")
    a = axis_arg(axis, arrays[0].ndim, op)
    c = arrays[0].shape[a]
    for array, name in zip(arrays[1:], ("gamma", "beta", "moving_mean", "moving_var")):
        if array.shape != (c,):
            raise InvalidValue(f"{op}: {name} has shape {array.shape}, the data's {c} channels "
                               f"(axis {a}) need ({c},)")
    params = {"eps": real(eps, f"{op}: eps", low=0.0),
              "momentum": real(momentum, f"{op}: momentum"),
              "fix_gamma": flag(fix_gamma, f"{op}: fix_gamma"),
              "use_global_stats": flag(use_global_stats, f"{op}: use_global_stats"),
              "axis": a, "cudnn_off": flag(cudnn_off, f"{op}: cudnn_off")}
    want_stats = flag(output_mean_var, f"{op}: output_mean_var")
    if params["fix_gamma"] and any(array.stype != "default" for array in arrays):
        raise NotSupported(f"{op}: fix_gamma=True is not supported for sparse arrays (as in "
                           "MXNet); pass fix_gamma=False or dense arrays")
    x, g, b, mm, mv = dense_inputs(op, *arrays)
    params["training"] = tape.is_training() and not params["use_global_stats"]
    if params["fix_gamma"] and tape.is_recording() and tape.tracked(arrays[1]):
        assign(arrays[1], 1.0)  # MXNet sets a gamma that takes a gradient to 1

    def forward() -> list[NDArray]:
        if params["training"]:
            mean = reduce_mean(x, axis=a, exclude=True)
            centered = broadcast_sub(x, channels(mean, a, x.ndim))
            var = reduce_mean(square(centered), axis=a, exclude=True)
        else:
            mean, var = mm.copy(), mv
            centered = broadcast_sub(x, channels(mean, a, x.ndim))
        invstd = rsqrt(var + params["eps"])
        scale = invstd if params["fix_gamma"] else g * invstd
        out = broadcast_add(broadcast_mul(centered, channels(scale, a, x.ndim)),
                            channels(b, a, x.ndim))
        params.update(mean=mean, var=var, invstd=invstd, centered=centered)
        return [out, mean, invstd] if want_stats else [out]

    outputs = recorded(op, tuple(arrays), forward, params)
    return outputs if want_stats else outputs[0]


__all__ = ["BatchNorm"]
