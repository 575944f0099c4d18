"""MXNet's ``Test`` optimizer (``mx.optimizer.create('test')``), which MXNet's distributed
kvstore tests set on the store: ``weight += rescale_grad * grad; state = weight``."""

from __future__ import annotations

from typing import Any

from ..ndarray import NDArray
from ..ndarray.optim_arrays import check_weight
from .base import Optimizer
from .inputs import state_tuple


@Optimizer.register
class Test(Optimizer):
    """``weight += rescale_grad * grad`` (every row), then ``state = weight``: the
    accumulation MXNet's distributed tests check sums against."""

    def create_state(self, index: Any, weight: NDArray) -> NDArray:
        """A dense zero array of the weight's shape and dtype."""
        check_weight(weight, every_row=False)
        return self._zeros(weight, "default")

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        """One step in place."""
        states = state_tuple(state, 1, "Test")
        self._begin(index, weight, grad, states)
        self._launch(index, "accumulate", weight, grad, states,
                     {"rescale_grad": self.rescale_grad})
