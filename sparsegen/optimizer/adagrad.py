"""AdaGrad (MXNet's AdaGrad; its row_sparse update is MXNet's _sparse_adagrad_update)."""

from __future__ import annotations

from typing import Any

from ..errors import SparsegenError
from ..ndarray import NDArray
from ..ndarray.optim_arrays import check_weight
from .base import Optimizer
from .hyper import Hyper, positive
from .inputs import state_tuple


@Optimizer.register
class AdaGrad(Optimizer):
    """AdaGrad: ``g = clip(rescale_grad*grad); history += g*g;
    weight -= lr * (g / sqrt(history + eps) + wd*weight)``.

    A row_sparse gradient updates its rows only and refuses ``wd != 0``, as MXNet's sparse
    ``adagrad_update`` does.
    """

    float_stable_eps: Any = Hyper(positive, "eps (float_stable_eps)")

    def __init__(self, eps: float = 1e-7, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index: Any, weight: NDArray) -> NDArray:
        """Zero history, stored like the weight (in the weight's dtype; MXNet's is float32)."""
        check_weight(weight, every_row=False)
        return self._zeros(weight, weight.stype)

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        """One AdaGrad step in place."""
        states = state_tuple(state, 1, "AdaGrad")
        _, lr, wd = self._begin(index, weight, grad, states)
        if grad.stype == "row_sparse" and wd != 0:
            raise SparsegenError(
                f"AdaGrad with a row_sparse gradient does not support weight decay (as MXNet's "
                f"sparse adagrad_update); got wd={wd}"
            )
        self._launch(index, "adagrad", weight, grad, states,
                     {"lr": lr, "epsilon": self.float_stable_eps, "wd": wd,
                      "rescale_grad": self.rescale_grad, "clip_gradient": self._clip_bound()},
                     labels={"epsilon": "eps"})

    def _lazy(self, weight: NDArray, states: tuple[NDArray, ...]) -> bool:
        return True
