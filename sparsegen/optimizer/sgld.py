"""SGLD (MXNet's SGLD optimizer): a gradient step plus Gaussian noise from ``mx.random``."""

from __future__ import annotations

import math
from typing import Any

from ..ndarray import NDArray, clip
from ..ndarray.optim_arrays import check_weight
from ..ndarray.random import normal
from .base import Optimizer


@Optimizer.register
class SGLD(Optimizer):
    """Stochastic gradient Langevin dynamics: ``g = clip(rescale_grad*grad);
    weight += -lr/2 * (g + wd*weight) + N(0, sqrt(lr))``, the noise drawn with
    ``mx.random.normal`` (so ``mx.random.seed`` repeats it).

    No state. The step is dense arithmetic, as MXNet's (a sparse weight or gradient takes part
    in it as its dense form); the weight is written once, after the whole step is computed.
    """

    def create_state(self, index: Any, weight: NDArray) -> None:
        """None: SGLD keeps no state."""
        check_weight(weight, every_row=False)

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        """One SGLD step in place."""
        _, lr, wd = self._begin(index, weight, grad, ())
        g = grad * self.rescale_grad
        if self.clip_gradient is not None:
            g = clip(g, -self.clip_gradient, self.clip_gradient)
        noise = normal(0, math.sqrt(lr), shape=weight.shape, dtype=weight.dtype,
                       ctx=weight.context)
        weight[:] = weight + (-lr / 2 * (g + wd * weight) + noise)
        self._update_count(index)
