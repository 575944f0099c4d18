"""``mx.optimizer.contrib``: GroupAdaGrad (MXNet's contrib optimizer), AdaGrad with one
history value per row."""

from __future__ import annotations

from typing import Any

from ..errors import SparsegenError
from ..ndarray import NDArray, clip, mean, sqrt, square, zeros  # clip ...: as MXNet's module
from ..ndarray.optim_arrays import check_weight
from .base import Optimizer
from .hyper import Hyper, positive

__all__ = ["GroupAdaGrad"]


@Optimizer.register
class GroupAdaGrad(Optimizer):
    """AdaGrad with a learning rate per row (MXNet's ``contrib.group_adagrad_update``):
    ``g = clip(rescale_grad*grad); history += mean(g*g over the row);
    weight -= lr * g / sqrt(history + eps)``.

    ``history`` has shape ``(rows, 1)`` (dense; MXNet stores it like the weight). A
    row_sparse gradient updates only its rows. Weight decay is refused, as in MXNet."""

    float_stable_eps: Any = Hyper(positive, "eps")

    def __init__(self, eps: float = 1e-5, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.float_stable_eps = eps
        self.lazy_update = True

    def create_state(self, index: Any, weight: NDArray) -> NDArray:
        """Zero ``history`` of shape ``(rows, 1)``."""
        check_weight(weight, every_row=False)
        if len(weight.shape) != 2:
            raise SparsegenError(f"GroupAdaGrad: weight must be 2-D (rows of a table), got "
                                 f"shape {weight.shape}")
        return zeros((weight.shape[0], 1), weight.context, dtype=weight.dtype)

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        """One GroupAdaGrad step in place."""
        if not isinstance(state, NDArray) or state.shape != (weight.shape[0], 1):
            raise SparsegenError(f"GroupAdaGrad: state must be the (rows, 1) history from "
                                 f"create_state, got {getattr(state, 'shape', state)!r}")
        _, lr, wd = self._begin(index, weight, grad, (state,))
        if wd != 0:
            raise SparsegenError(f"GroupAdaGrad: weight decay is not supported, got wd={wd} "
                                 f"for index {index!r}")
        self._launch(index, "group_adagrad", weight, grad, (state.reshape((weight.shape[0],)),),
                     {"lr": lr, "epsilon": self.float_stable_eps,
                      "rescale_grad": self.rescale_grad, "clip_gradient": self._clip_bound()})
