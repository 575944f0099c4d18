"""Adamax (MXNet's Adamax optimizer), bias correction per weight index."""

from __future__ import annotations

from typing import Any

from ..ndarray import NDArray
from ..ndarray.optim_arrays import check_weight
from .base import Optimizer
from .hyper import Hyper, unit
from .inputs import state_tuple


@Optimizer.register
class Adamax(Optimizer):
    """Adamax (Kingma & Ba, section 7): ``g = clip(rescale_grad*grad + wd*weight);
    mean = beta1*mean + (1-beta1)*g; u = max(beta2*u, |g|); weight -= lr_t * mean / u`` with
    ``lr_t = lr / (1 - beta1**t)``, ``t`` the index's update count.

    Both states are dense, as in MXNet, whose Adamax is dense arithmetic: a row_sparse gradient
    updates every row (converted to dense, with a warning).
    """

    beta1: Any = Hyper(unit, "beta1")
    beta2: Any = Hyper(unit, "beta2")

    def __init__(self, learning_rate: float = 0.002, beta1: float = 0.9, beta2: float = 0.999,
                 **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2

    def create_state(self, index: Any, weight: NDArray) -> tuple[NDArray, NDArray]:
        """Zero dense ``mean`` and ``u``."""
        check_weight(weight, every_row=False)
        return self._zeros(weight, "default"), self._zeros(weight, "default")

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        """One Adamax step in place."""
        states = state_tuple(state, 2, "Adamax")
        t, lr, wd = self._begin(index, weight, grad, states)
        self._launch(index, "adamax", weight, grad, states,
                     {"lr": lr / (1.0 - self.beta1**t), "beta1": self.beta1,
                      "beta2": self.beta2, "wd": wd, "rescale_grad": self.rescale_grad,
                      "clip_gradient": self._clip_bound()},
                     labels={"lr": "lr (bias-corrected)"})
