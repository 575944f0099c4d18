"""DCASGD (MXNet's DCASGD optimizer): SGD with delay compensation for asynchronous training."""

from __future__ import annotations

from typing import Any

from ..ndarray import NDArray
from ..ndarray.optim_arrays import check_weight
from .base import Optimizer
from .hyper import Hyper, at_least_0, unit
from .inputs import state_tuple


@Optimizer.register
class DCASGD(Optimizer):
    """DCASGD (Zheng et al., 2017): ``g = clip(rescale_grad*grad);
    mom = momentum*mom - lr*(g + wd*weight + lamda*g*g*(weight - previous));
    previous = weight; weight += mom``.

    The state is ``(mom, previous)`` as in MXNet: ``mom`` is ``None`` when ``momentum`` is 0
    (the update then starts from zeros each step), ``previous`` a copy of the weight. Every row
    is updated (a row_sparse gradient's missing rows are zeros)."""

    momentum: Any = Hyper(unit, "momentum")
    lamda: Any = Hyper(at_least_0, "lamda")

    def __init__(self, momentum: float = 0.0, lamda: float = 0.04, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.momentum = momentum
        self.lamda = lamda

    def create_state(self, index: Any, weight: NDArray) -> tuple[NDArray | None, NDArray]:
        """``(zero momentum or None when momentum is 0, a copy of the weight)``."""
        check_weight(weight, every_row=False)
        mom = None if self.momentum == 0.0 else self._zeros(weight, "default")
        return mom, weight.copy()

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        """One DCASGD step in place."""
        mom, previous = state_tuple(state, 2, "DCASGD")
        states = (self._zeros(weight, "default") if mom is None else mom, previous)
        _, lr, wd = self._begin(index, weight, grad, states)
        self._launch(index, "dcasgd", weight, grad, states,
                     {"lr": lr, "momentum": self.momentum, "lamda": self.lamda, "wd": wd,
                      "rescale_grad": self.rescale_grad, "clip_gradient": self._clip_bound()})
