"""Nesterov accelerated gradient (MXNet's NAG: nag_mom_update, or sgd_update without momentum)."""

from __future__ import annotations

from typing import Any

from ..ndarray import NDArray
from .arrays import check_weight
from .base import Optimizer
from .hyper import Hyper, unit


@Optimizer.register
class NAG(Optimizer):
    """NAG: ``g = clip(rescale_grad*grad) + wd*weight; mom = momentum*mom - lr*g;
    weight += momentum*mom - lr*g``; without momentum MXNet's sgd_update (lazy for a
    row_sparse gradient). The momentum state is dense; MXNet's nag_mom_update has no row_sparse
    kernel, so a row_sparse gradient updates every row (converted to dense, with a warning).
    """

    momentum: Any = Hyper(unit, "momentum")
    _master_last = True  # MXNet keeps (momentum, master copy)

    def __init__(self, momentum: float = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.momentum = momentum

    def create_state(self, index: Any, weight: NDArray) -> NDArray | None:
        """Zero dense momentum, or ``None`` without momentum."""
        check_weight(weight, every_row=False)
        return None if self.momentum == 0.0 else self._zeros(weight, "default")

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: NDArray | None) -> None:
        """One NAG step in place."""
        states = () if state is None else (state,)
        _, lr, wd = self._begin(index, weight, grad, states)
        hyper = {"lr": lr, "momentum": self.momentum, "wd": wd,
                 "rescale_grad": self.rescale_grad, "clip_gradient": self._clip_bound()}
        if not states:
            del hyper["momentum"]
        self._launch(index, "nag_mom" if states else "sgd", weight, grad, states, hyper)

    def _lazy(self, weight: NDArray, states: tuple[NDArray, ...]) -> bool:
        return True  # sgd_update's default lazy_update; nag_mom has no row_sparse kernel

