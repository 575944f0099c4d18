"""LAMB (MXNet's LAMB: lamb_update_phase1, the norms of weight and step, lamb_update_phase2)."""

from __future__ import annotations

import math
from typing import Any

from ..ndarray import NDArray
from ..ndarray.optim_arrays import check_weight
from ..ndarray.optim_run import never, run
from ..ndarray.reduce import norm
from ..params import flag
from .base import Optimizer
from .hyper import Hyper, gradient_clip, positive, unit
from .inputs import state_tuple


def _norm(array: NDArray) -> float:
    """The 2-norm of an array's values (its stored values: absent ones are zeros), by
    ``mx.nd.norm``, read to the host."""
    return float(norm(array if array.stype == "default" else array.data).asscalar())


@Optimizer.register
class LAMB(Optimizer):
    """LAMB (You et al. 2019): phase 1 ``g = clip(rescale_grad*grad); mean = beta1*mean +
    (1-beta1)*g; var = beta2*var + (1-beta2)*g*g; step = mean_hat / (sqrt(var_hat) + epsilon)
    + wd*weight`` (``mean_hat = mean / (1 - beta1**t)``, ``var_hat`` likewise, or the moments
    themselves without ``bias_correction``); phase 2 ``r1 = ||weight||`` clamped to
    ``[lower_bound, upper_bound]`` (each when given and > 0), ``r2 = ||step||``,
    ``weight -= lr * (r1 / r2 if r1 > 0 and r2 > 0 else 1) * step``.

    States are stored like the weight; MXNet has no row_sparse kernel, so a row_sparse gradient
    updates every row (converted to dense, with a warning). The two norms are read to the host
    to scale the learning rate of phase 2.
    """

    beta1: Any = Hyper(unit, "beta1")
    beta2: Any = Hyper(unit, "beta2")
    epsilon: Any = Hyper(positive, "epsilon")
    lower_bound: Any = Hyper(gradient_clip, "lower_bound")
    upper_bound: Any = Hyper(gradient_clip, "upper_bound")
    bias_correction: Any = Hyper(flag, "bias_correction")

    def __init__(self, learning_rate: float = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-6, lower_bound: float | None = None,
                 upper_bound: float | None = None, bias_correction: bool = True,
                 **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        self.bias_correction = bias_correction

    def create_state(self, index: Any, weight: NDArray) -> tuple[NDArray, NDArray]:
        """Zero ``mean`` and ``var``, stored like the weight."""
        check_weight(weight, every_row=False)
        return self._zeros(weight, weight.stype), self._zeros(weight, weight.stype)

    def _ratio(self, weight: NDArray, step: NDArray) -> float:
        """Phase 2's trust ratio ``r1 / r2`` (1 where either norm is 0)."""
        r1, r2 = _norm(weight), _norm(step)
        if self.lower_bound is not None and self.lower_bound > 0:
            r1 = max(r1, self.lower_bound)
        if self.upper_bound is not None and self.upper_bound > 0:
            r1 = min(r1, self.upper_bound)
        return r1 / r2 if r1 > 0 and r2 > 0 else 1.0

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        """One LAMB step in place (phase 2 checks its learning rate after phase 1 has run)."""
        mean, var = state_tuple(state, 2, "LAMB")
        t, lr, wd = self._begin(index, weight, grad, (mean, var))
        corrected = self.bias_correction
        step = self._zeros(weight, "default")
        run("LAMB", "lamb", weight, grad, (mean, var, step),
            {"beta1": self.beta1, "beta2": self.beta2, "epsilon": self.epsilon, "wd": wd,
             "rescale_grad": self.rescale_grad, "clip_gradient": self._clip_bound(),
             "mean_scale": 1.0 / (1.0 - self.beta1**t) if corrected else 1.0,
             "var_scale": 1.0 / (1.0 - self.beta2**t) if corrected else 1.0}, never)
        run("LAMB", "sgd", weight, step, (),
            {"lr": lr * self._ratio(weight, step), "wd": 0.0, "rescale_grad": 1.0,
             "clip_gradient": math.inf}, never, labels={"lr": "lr (times the trust ratio)"})
        self._update_count(index)
