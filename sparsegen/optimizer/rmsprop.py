"""RMSProp (MXNet's rmsprop_update, and rmspropalex_update when centered)."""

from __future__ import annotations

from typing import Any

from ..ndarray import NDArray
from ..ndarray.optim_arrays import check_weight
from ..params import flag
from .base import Optimizer
from .hyper import Hyper, clip_bound, gradient_clip, positive, unit
from .inputs import state_tuple


@Optimizer.register
class RMSProp(Optimizer):
    """RMSProp: ``g = clip(rescale_grad*grad + wd*weight); n = (1-gamma1)*g*g + gamma1*n;
    weight -= lr*g/sqrt(n + epsilon)`` (Tieleman & Hinton), or with ``centered`` Graves's
    version with the states ``n, g, delta`` (MXNet's rmspropalex_update). ``clip_weights``
    clamps the new weight. MXNet has no row_sparse kernel for either: a row_sparse gradient
    updates every row (its rows converted to dense), with a ``StorageFallbackWarning``.
    """

    gamma1: Any = Hyper(unit, "gamma1")
    gamma2: Any = Hyper(unit, "gamma2")
    epsilon: Any = Hyper(positive, "epsilon")
    centered: Any = Hyper(flag, "centered")
    clip_weights: Any = Hyper(gradient_clip, "clip_weights")

    def __init__(self, learning_rate: float = 0.001, gamma1: float = 0.9, gamma2: float = 0.9,
                 epsilon: float = 1e-8, centered: bool = False, clip_weights: float | None = None,
                 **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.gamma1 = gamma1
        self.gamma2 = gamma2
        self.epsilon = epsilon
        self.centered = centered
        self.clip_weights = clip_weights

    def create_state(self, index: Any, weight: NDArray) -> tuple[NDArray, ...]:
        """Zero ``(n,)``, or ``(n, g, delta)`` when centered, stored like the weight."""
        check_weight(weight, every_row=False)
        return tuple(self._zeros(weight, weight.stype) for _ in range(3 if self.centered else 1))

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        """One RMSProp step in place."""
        states = state_tuple(state, 3 if self.centered else 1, "RMSProp")
        _, lr, wd = self._begin(index, weight, grad, states)
        hyper = {"lr": lr, "gamma1": self.gamma1, "gamma2": self.gamma2,
                 "epsilon": self.epsilon, "wd": wd, "rescale_grad": self.rescale_grad,
                 "clip_gradient": self._clip_bound(),
                 "clip_weights": clip_bound(self.clip_weights)}
        if not self.centered:
            del hyper["gamma2"]
        self._launch(index, "rmspropalex" if self.centered else "rmsprop", weight, grad, states,
                     hyper)



