"""AdaDelta (MXNet's AdaDelta optimizer)."""

from __future__ import annotations

from typing import Any

from ..ndarray import NDArray
from ..ndarray.optim_arrays import check_weight
from .base import Optimizer
from .hyper import Hyper, positive, unit
from .inputs import state_tuple


@Optimizer.register
class AdaDelta(Optimizer):
    """AdaDelta (Zeiler 2012): ``g = clip(rescale_grad*grad); acc_g = rho*acc_g + (1-rho)*g*g;
    delta = sqrt(acc_delta + epsilon) / sqrt(acc_g + epsilon) * g;
    acc_delta = rho*acc_delta + (1-rho)*delta*delta; weight -= delta + wd*weight``.

    No learning rate. Both accumulators are dense, as in MXNet, whose AdaDelta is dense
    arithmetic: a row_sparse gradient updates every row (converted to dense, with a warning).
    """

    rho: Any = Hyper(unit, "rho")
    epsilon: Any = Hyper(positive, "epsilon")

    def __init__(self, rho: float = 0.90, epsilon: float = 1e-5, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rho = rho
        self.epsilon = epsilon

    def create_state(self, index: Any, weight: NDArray) -> tuple[NDArray, NDArray]:
        """Zero dense ``acc_g`` and ``acc_delta``."""
        check_weight(weight, every_row=False)
        return self._zeros(weight, "default"), self._zeros(weight, "default")

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        """One AdaDelta step in place."""
        states = state_tuple(state, 2, "AdaDelta")
        _, _, wd = self._begin(index, weight, grad, states)
        self._launch(index, "adadelta", weight, grad, states,
                     {"rho": self.rho, "epsilon": self.epsilon, "wd": wd,
                      "rescale_grad": self.rescale_grad, "clip_gradient": self._clip_bound()})
