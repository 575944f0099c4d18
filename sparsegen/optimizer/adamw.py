"""AdamW (rule ``adamw`` of sparsegen.updates, MXNet's contrib ``adamw_update``) as an
``mx.optimizer``: bias correction folded into ``lr`` per weight index."""

from __future__ import annotations

import math
from typing import Any

from .base import Optimizer
from .hyper import Hyper, at_least_0, positive, unit
from .rule import RuleOptimizer


@Optimizer.register
class AdamW(RuleOptimizer):
    """AdamW: ``g = clip(rescale_grad*grad); mean = beta1*mean + (1-beta1)*g;
    var = beta2*var + (1-beta2)*g*g; weight -= eta * (lr_t * mean / (sqrt(var) + epsilon) +
    wd*weight)`` with ``lr_t = lr * sqrt(1 - beta2**t) / (1 - beta1**t)``."""

    rule = "adamw"
    beta1: Any = Hyper(unit, "beta1")
    beta2: Any = Hyper(unit, "beta2")
    epsilon: Any = Hyper(positive, "epsilon")
    eta: Any = Hyper(at_least_0, "eta")

    def __init__(self, learning_rate: float = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-8, eta: float = 1.0, lazy_update: bool = True,
                 **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, lazy_update=lazy_update, **kwargs)
        self.beta1, self.beta2, self.epsilon, self.eta = beta1, beta2, epsilon, eta

    def hyper(self, index: Any, count: int, lr: float, wd: float) -> dict[str, float]:
        """The rule's values with the bias correction of update ``count`` in ``lr``."""
        values = super().hyper(index, count, lr, wd)
        values["lr"] = lr * math.sqrt(1.0 - self.beta2**count) / (1.0 - self.beta1**count)
        return values
