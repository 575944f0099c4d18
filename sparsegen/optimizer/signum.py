"""Signum and signSGD (MXNet's signum_update and signsgd_update)."""

from __future__ import annotations

from typing import Any

from ..ndarray import NDArray
from ..ndarray.optim_arrays import check_weight
from .base import Optimizer
from .hyper import Hyper, at_least_0, unit


@Optimizer.register
class Signum(Optimizer):
    """Signum: ``mom = momentum*mom - (1-momentum)*(wd*weight + clip(rescale_grad*grad));
    weight = (1 - lr*wd_lh)*weight + lr*sign(mom)``; without momentum signSGD,
    ``weight = (1 - lr*(wd + wd_lh))*weight - lr*sign(grad)``. The momentum state is stored
    like the weight; MXNet has no row_sparse kernel, so a row_sparse gradient updates every row
    (converted to dense, with a warning).
    """

    momentum: Any = Hyper(unit, "momentum")
    wd_lh: Any = Hyper(at_least_0, "wd_lh")

    def __init__(self, learning_rate: float = 0.01, momentum: float = 0.9, wd_lh: float = 0.0,
                 **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.momentum = momentum
        self.wd_lh = wd_lh

    def create_state(self, index: Any, weight: NDArray) -> NDArray | None:
        """Zero momentum stored like the weight, or ``None`` without momentum."""
        check_weight(weight, every_row=False)
        return None if self.momentum == 0.0 else self._zeros(weight, weight.stype)

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: NDArray | None) -> None:
        """One Signum (or signSGD) step in place."""
        states = () if state is None else (state,)
        _, lr, wd = self._begin(index, weight, grad, states)
        if not states:
            self._launch(index, "signsgd", weight, grad, states,
                         {"lr": lr, "wd": wd + self.wd_lh})
            return
        self._launch(index, "signum", weight, grad, states,
                     {"lr": lr, "momentum": self.momentum, "wd": wd,
                      "rescale_grad": self.rescale_grad, "clip_gradient": self._clip_bound(),
                      "wd_lh": self.wd_lh})
