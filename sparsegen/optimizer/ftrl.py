"""FTRL-Proximal (MXNet's ftrl_update)."""

from __future__ import annotations

from typing import Any

from ..ndarray import NDArray
from ..ndarray.optim_arrays import check_weight
from .base import Optimizer
from .hyper import Hyper, at_least_0, lr_positive, positive
from .inputs import state_tuple


@Optimizer.register
class Ftrl(Optimizer):
    """FTRL-Proximal (MXNet's ftrl_update): ``g = clip(rescale_grad*grad);
    z += g - (sqrt(n + g*g) - sqrt(n)) * weight / lr; n += g*g;
    weight = (sign(z)*lamda1 - z) / ((beta + sqrt(n)) / lr + wd) * (|z| > lamda1)``.

    A row_sparse gradient updates only its rows when weight and states are all row_sparse;
    otherwise every row is recomputed (MXNet's dense fallback).
    """

    lr: Any = Hyper(lr_positive, "learning_rate (lr)")  # the update divides by it
    lamda1: Any = Hyper(at_least_0, "lamda1")
    beta: Any = Hyper(at_least_0, "beta")

    def __init__(self, lamda1: float = 0.01, learning_rate: float = 0.1, beta: float = 1,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.lamda1 = lamda1
        self.beta = beta
        self.lr = learning_rate

    def create_state(self, index: Any, weight: NDArray) -> tuple[NDArray, NDArray]:
        """Zero ``z`` and ``n``, stored like the weight (weight's dtype; MXNet's is float32)."""
        check_weight(weight, every_row=False)
        return self._zeros(weight, weight.stype), self._zeros(weight, weight.stype)

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        """One FTRL step in place."""
        states = state_tuple(state, 2, "Ftrl")
        _, lr, wd = self._begin(index, weight, grad, states)
        positive(lr, f"Ftrl: the learning rate of weight {index!r} (the update divides by it)")
        self._launch(index, "ftrl", weight, grad, states,
                     {"lr": lr, "lamda1": self.lamda1, "beta": self.beta, "wd": wd,
                      "rescale_grad": self.rescale_grad, "clip_gradient": self._clip_bound()})

    def _lazy(self, weight: NDArray, states: tuple[NDArray, ...]) -> bool:
        return weight.stype == "row_sparse" and all(s.stype == "row_sparse" for s in states)
