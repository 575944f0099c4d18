"""Nesterov accelerated gradient (MXNet's NAG: nag_mom_update, or sgd_update without momentum)."""

from __future__ import annotations

from typing import Any

from ..ndarray import NDArray
from ..ndarray.optim_arrays import check_weight
from .base import Optimizer
from .sgd import SGD


@Optimizer.register
class NAG(SGD):
    """NAG: ``g = clip(rescale_grad*grad) + wd*weight; mom = momentum*mom - lr*g;
    weight += momentum*mom - lr*g``; without momentum SGD's update (lazy for a row_sparse
    gradient, as MXNet's sgd_update by default). The momentum state is dense; MXNet's
    nag_mom_update has no row_sparse kernel, so a row_sparse gradient updates every row
    (converted to dense, with a warning).
    """

    _momentum_rule = "nag_mom"

    def __init__(self, momentum: float = 0.0, **kwargs: Any) -> None:
        super().__init__(momentum=momentum, lazy_update=True, **kwargs)

    def create_state(self, index: Any, weight: NDArray) -> NDArray | None:
        """Zero dense momentum, or ``None`` without momentum."""
        check_weight(weight, every_row=False)
        return None if self.momentum == 0.0 else self._zeros(weight, "default")
