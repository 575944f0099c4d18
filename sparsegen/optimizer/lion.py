"""Lion (rule ``lion`` of sparsegen.updates) as an ``mx.optimizer`` (MXNet 1.9.1 has none)."""

from __future__ import annotations

from typing import Any

from .base import Optimizer
from .hyper import Hyper, unit
from .rule import RuleOptimizer


@Optimizer.register
class Lion(RuleOptimizer):
    """Lion: ``g = clip(rescale_grad*grad); weight -= lr * (sign(beta1*mom + (1-beta1)*g) +
    wd*weight); mom = beta2*mom + (1-beta2)*g``; lazy for row_sparse gradients by default."""

    rule = "lion"
    beta1: Any = Hyper(unit, "beta1")
    beta2: Any = Hyper(unit, "beta2")

    def __init__(self, learning_rate: float = 1e-4, beta1: float = 0.9, beta2: float = 0.99,
                 lazy_update: bool = True, **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, lazy_update=lazy_update, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
