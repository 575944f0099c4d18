"""Nadam (MXNet's Nadam optimizer), its momentum schedule per weight index."""

from __future__ import annotations

from typing import Any

from ..ndarray import NDArray
from ..ndarray.optim_arrays import check_weight
from .base import Optimizer
from .hyper import Hyper, at_least_0, positive, unit
from .inputs import state_tuple


@Optimizer.register
class Nadam(Optimizer):
    """Nadam (Dozat 2016): Adam with Nesterov momentum. With ``t`` the index's update count,
    ``momentum_t = beta1 * (1 - 0.5 * 0.96**(t*schedule_decay))`` and ``m_schedule`` the
    product of ``momentum_1 .. momentum_t``:

    ``g = clip(rescale_grad*grad + wd*weight); mean = beta1*mean + (1-beta1)*g;
    var = beta2*var + (1-beta2)*g*g; m = (1-momentum_t)*g/(1-m_schedule) +
    momentum_{t+1}*mean/(1-m_schedule*momentum_{t+1});
    weight -= lr * m / (sqrt(var/(1-beta2**t)) + epsilon)``.

    Both states are dense, as in MXNet (dense arithmetic there): a row_sparse gradient updates
    every row (converted to dense, with a warning). ``m_schedule`` is kept per weight index
    (MXNet keeps one for all indices, so there it depends on how many other weights updated).
    """

    beta1: Any = Hyper(unit, "beta1")
    beta2: Any = Hyper(unit, "beta2")
    epsilon: Any = Hyper(positive, "epsilon")
    schedule_decay: Any = Hyper(at_least_0, "schedule_decay")

    def __init__(self, learning_rate: float = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-8, schedule_decay: float = 0.004, **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.schedule_decay = schedule_decay
        self.m_schedule: dict[Any, float] = {}

    def create_state(self, index: Any, weight: NDArray) -> tuple[NDArray, NDArray]:
        """Zero dense ``mean`` and ``var``."""
        check_weight(weight, every_row=False)
        return self._zeros(weight, "default"), self._zeros(weight, "default")

    def _momentum(self, t: int) -> float:
        return self.beta1 * (1.0 - 0.5 * 0.96 ** (t * self.schedule_decay))

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        """One Nadam step in place (the index's ``m_schedule`` advances once it has run)."""
        states = state_tuple(state, 2, "Nadam")
        t, lr, wd = self._begin(index, weight, grad, states)
        momentum_t, momentum_next = self._momentum(t), self._momentum(t + 1)
        m_schedule = self.m_schedule.get(index, 1.0) * momentum_t
        self._launch(index, "nadam", weight, grad, states,
                     {"lr": lr, "beta1": self.beta1, "beta2": self.beta2,
                      "epsilon": self.epsilon, "wd": wd, "rescale_grad": self.rescale_grad,
                      "clip_gradient": self._clip_bound(), "momentum_t": momentum_t,
                      "momentum_next": momentum_next, "grad_scale": 1.0 / (1.0 - m_schedule),
                      "mean_scale": 1.0 / (1.0 - m_schedule * momentum_next),
                      "var_scale": 1.0 / (1.0 - self.beta2**t)})
        self.m_schedule[index] = m_schedule
