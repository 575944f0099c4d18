"""SGD with momentum (MXNet's sgd_update and sgd_mom_update)."""

from __future__ import annotations

from typing import Any

from ..ndarray import NDArray
from ..ndarray.optim_arrays import check_weight
from .base import Optimizer
from .hyper import Hyper, unit


@Optimizer.register
class SGD(Optimizer):
    """SGD with momentum and weight decay (MXNet's sgd_update / sgd_mom_update):

    ``mom = momentum*mom - lr*wd*weight - lr*clip(rescale_grad*grad); weight += mom``, or
    without momentum ``weight = (1 - lr*wd)*weight - lr*clip(rescale_grad*grad)``. With a
    row_sparse gradient and ``lazy_update`` only the gradient's rows change; the momentum state
    is row_sparse for a row_sparse weight when ``lazy_update``, else dense.
    """

    momentum: Any = Hyper(unit, "momentum")
    _master_last = True  # MXNet keeps (momentum, master copy)
    _momentum_rule = "sgd_mom"  # the update rule of an update with a momentum state

    def __init__(self, momentum: float = 0.0, lazy_update: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.momentum = momentum
        self.lazy_update = lazy_update

    def create_state(self, index: Any, weight: NDArray) -> NDArray | None:
        """Zero momentum of the weight's shape, or ``None`` without momentum."""
        check_weight(weight, every_row=False)
        if self.momentum == 0.0:
            return None
        return self._zeros(weight, weight.stype if self.lazy_update else "default")

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: NDArray | None) -> None:
        """One SGD step in place (a given state runs the momentum update, as in MXNet)."""
        states = () if state is None else (state,)
        _, lr, wd = self._begin(index, weight, grad, states)
        hyper = {"lr": lr, "momentum": self.momentum, "wd": wd,
                 "rescale_grad": self.rescale_grad, "clip_gradient": self._clip_bound()}
        if not states:
            del hyper["momentum"]
        self._launch(index, self._momentum_rule if states else "sgd", weight, grad, states,
                     hyper)



@Optimizer.register
class ccSGD(SGD):  # noqa: N801 - MXNet's name
    """MXNet's deprecated name of ``SGD`` (``create('ccsgd')``), kept for old scripts."""
