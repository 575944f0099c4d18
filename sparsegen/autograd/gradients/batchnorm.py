"""The gradient of ``BatchNorm``, as MXNet 1.9.1's backward pass: through the batch statistics
after a training forward (and then the moving statistics move by ``momentum``, in place, as
MXNet's backward updates them), through the moving ones otherwise; gamma's gradient is zero
with ``fix_gamma``; the mean / inverse-std outputs pass no gradient."""

from __future__ import annotations

from typing import Any

from ... import ndarray as nd
from ...ndarray.batchnorm import channels
from ...ndarray.dispatch import densified
from ...tape import Node
from .registry import gradient


@gradient("BatchNorm")
def _batch_norm(node: Node, out_grads: list[Any]) -> tuple[Any, ...]:
    p = node.params
    data, gamma, _, moving_mean, moving_var = node.inputs
    a, ndim = p["axis"], data.ndim
    dy = densified(out_grads[0])
    xhat = nd.broadcast_mul(p["centered"], channels(p["invstd"], a, ndim))
    dbeta = nd.sum(dy, axis=a, exclude=True)
    dgamma = nd.sum(dy * xhat, axis=a, exclude=True)
    scale = p["invstd"] if p["fix_gamma"] else densified(gamma) * p["invstd"]
    if p["training"]:
        m = data.size // max(data.shape[a], 1)
        dy = dy - nd.broadcast_add(channels(dbeta / m, a, ndim),
                                   nd.broadcast_mul(xhat, channels(dgamma / m, a, ndim)))
        momentum = p["momentum"]
        moving_mean[:] = moving_mean * momentum + p["mean"] * (1 - momentum)
        moving_var[:] = moving_var * momentum + p["var"] * (1 - momentum)
    dx = nd.broadcast_mul(dy, channels(scale, a, ndim))
    return dx, nd.zeros_like(dgamma) if p["fix_gamma"] else dgamma, dbeta, None, None
