"""``mx.nd.IdentityAttachKLSparseReg`` of MXNet 1.9.1: the data itself forward (activations of a
sigmoid layer), recorded as one node whose gradient rule (in ``autograd/gradients/svm.py``)
adds the gradient of a KL sparseness penalty against the moving average of each hidden unit's
activation, which the backward pass moves by ``momentum`` in place (the auxiliary state
``moving_avg``, as MXNet's)."""

from __future__ import annotations

from typing import Any

from ..errors import InvalidValue
from ..params import real
from .indexing import array_arg
from .ndarray import NDArray
from .output import dense_inputs, recorded


def IdentityAttachKLSparseReg(data: NDArray, moving_avg: NDArray,  # noqa: N802
                              sparseness_target: Any = 0.1, penalty: Any = 0.001,
                              momentum: Any = 0.9) -> NDArray:
    """``data`` ((batch, hidden, ...)); its gradient is the head gradient plus
    ``penalty · (-ρ / ρ̂ + (1 - ρ) / (1 - ρ̂))`` per hidden unit (axis 1), ``ρ`` the
    ``sparseness_target`` and ``ρ̂`` the ``moving_avg`` (shape ``(hidden,)``) after the backward
    pass moved it to ``momentum · ρ̂ + (1 - momentum) · mean activation``."""
    op = "IdentityAttachKLSparseReg"
    data = array_arg(data, "data", op)
    moving_avg = array_arg(moving_avg, "moving_avg", op)
    if data.ndim < 2 or moving_avg.shape != (data.shape[1],):
        raise InvalidValue(f"{op}: data must be (batch, hidden, ...) and moving_avg (hidden,), "
                           f"got {data.shape} and {moving_avg.shape}")
    params = {"sparseness_target": real(sparseness_target, f"{op}: sparseness_target",
                                        low=0.0, high=1.0),
              "penalty": real(penalty, f"{op}: penalty"),
              "momentum": real(momentum, f"{op}: momentum", low=0.0, high=1.0)}
    dense = dense_inputs(op, data)[0]
    return recorded(op, (data, moving_avg), lambda: dense.copy(), params)


__all__ = ["IdentityAttachKLSparseReg"]
