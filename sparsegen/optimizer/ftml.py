"""FTML (MXNet's FTML optimizer and ftml_update), the schedule per weight index."""

from __future__ import annotations

from typing import Any

from ..ndarray import NDArray
from ..ndarray.optim_arrays import check_weight
from ..ndarray.optim_ops import ftml_scales
from .base import Optimizer
from .hyper import Hyper, positive, unit
from .inputs import state_tuple


@Optimizer.register
class FTML(Optimizer):
    """FTML, Follow the Moving Leader (Zheng & Kwok, 2017), as MXNet's ``ftml_update``:
    ``g = clip(rescale_grad*grad + wd*weight); v = beta2*v + (1-beta2)*g*g;
    d_t = (1 - beta1**t) / lr * (sqrt(v / (1 - beta2**t)) + epsilon);
    z = beta1*z + (1-beta1)*g - (d_t - beta1*d)*weight; d = d_t; weight = -z / d_t``,
    ``t`` the index's update count.

    The states ``(d, v, z)`` are dense, as in MXNet, whose operator has no sparse kernel: a
    row_sparse gradient updates every row (converted to dense, with a warning).
    """

    beta1: Any = Hyper(unit, "beta1")
    beta2: Any = Hyper(unit, "beta2")
    epsilon: Any = Hyper(positive, "epsilon")

    def __init__(self, beta1: float = 0.6, beta2: float = 0.999, epsilon: float = 1e-8,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon

    def create_state(self, index: Any, weight: NDArray) -> tuple[NDArray, NDArray, NDArray]:
        """Zero dense ``d``, ``v`` and ``z``."""
        check_weight(weight, every_row=False)
        return tuple(self._zeros(weight, "default") for _ in range(3))  # type: ignore[return-value]

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        """One FTML step in place."""
        states = state_tuple(state, 3, "FTML")
        t, lr, wd = self._begin(index, weight, grad, states)
        self._launch(index, "ftml", weight, grad, states,
                     {"beta1": self.beta1, "beta2": self.beta2, "epsilon": self.epsilon,
                      "wd": wd, "rescale_grad": self.rescale_grad,
                      "clip_gradient": self._clip_bound(),
                      **ftml_scales(lr, self.beta1, self.beta2, t)})
