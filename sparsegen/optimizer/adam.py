"""Adam (MXNet's adam_update), bias correction per weight index."""

from __future__ import annotations

import math
from typing import Any

from ..ndarray import NDArray
from ..ndarray.optim_arrays import check_weight
from .base import Optimizer
from .hyper import Hyper, positive, unit
from .inputs import state_tuple


@Optimizer.register
class Adam(Optimizer):
    """Adam (MXNet's adam_update), bias correction folded into the learning rate per index:
    ``lr_t = lr * sqrt(1 - beta2**t) / (1 - beta1**t)`` with ``t`` the index's update count.

    ``g = clip(rescale_grad*grad + wd*weight); mean = beta1*mean + (1-beta1)*g;
    var = beta2*var + (1-beta2)*g*g; weight -= lr_t * mean / (sqrt(var) + epsilon)``.
    """

    beta1: Any = Hyper(unit, "beta1")
    beta2: Any = Hyper(unit, "beta2")
    epsilon: Any = Hyper(positive, "epsilon")

    def __init__(self, learning_rate: float = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-8, lazy_update: bool = True, **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lazy_update = lazy_update

    def create_state(self, index: Any, weight: NDArray) -> tuple[NDArray, NDArray]:
        """Zero mean and variance, row_sparse for a row_sparse weight when ``lazy_update``."""
        check_weight(weight, every_row=False)
        stype = weight.stype if self.lazy_update else "default"
        return self._zeros(weight, stype), self._zeros(weight, stype)

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        """One Adam step in place."""
        states = state_tuple(state, 2, "Adam")
        t, lr, wd = self._begin(index, weight, grad, states)
        lr *= math.sqrt(1.0 - self.beta2**t) / (1.0 - self.beta1**t)
        self._launch(index, "adam", weight, grad, states,
                     {"lr": lr, "beta1": self.beta1, "beta2": self.beta2,
                      "epsilon": self.epsilon, "wd": wd, "rescale_grad": self.rescale_grad,
                      "clip_gradient": self._clip_bound()},
                     labels={"lr": "lr (bias-corrected)"})
