"""LARS (MXNet's ``LARS``): SGD with a learning rate per layer from the weight's and the
gradient's norms, by the ``multi_sum_sq`` and ``multi_lars`` ops, then the ``sgd`` /
``sgd_mom`` rules' kernels."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ndarray import NDArray, array
from ..ndarray.optim_multi import multi_lars, sum_sq
from .base import Optimizer
from .hyper import Hyper, at_least_0, multipliers
from .sgd import SGD

UNSCALED_SUFFIXES = ("gamma", "beta", "bias")
"""Weights whose names end so keep the plain learning rate (MXNet's LARS skips them)."""


@Optimizer.register
class LARS(SGD):
    """LARS (You et al. 2017): SGD with momentum and weight decay whose learning rate is, per
    weight, ``lr * eta * |w| / (|g|*rescale_grad + wd*|w| + eps)`` when both norms are
    positive (``lr`` for weights named ``*gamma``, ``*beta``, ``*bias``). With
    ``momentum_correction`` the momentum is scaled by ``lr_t / lr_{t-1}`` when a learning-rate
    schedule changes the rate between steps. Weights not named ``*_weight`` get no weight
    decay by default (MXNet's LARS)."""

    eta: Any = Hyper(at_least_0, "eta")
    eps: Any = Hyper(at_least_0, "eps")

    def __init__(self, momentum: float = 0.0, lazy_update: bool = True, eta: float = 0.001,
                 eps: float = 0.0, momentum_correction: bool = True, **kwargs: Any) -> None:
        super().__init__(momentum=momentum, lazy_update=lazy_update, **kwargs)
        self.eta, self.eps = eta, eps
        self.momentum_correction = bool(momentum_correction)
        self.last_lr: float | None = None
        self.cur_lr: float | None = None
        self._lr_step: int | None = None  # the num_update cur_lr belongs to

    def set_wd_mult(self, args_wd_mult: dict[Any, float]) -> None:
        """Weight-decay multipliers; named weights not ending in ``_weight`` get 0 (MXNet's
        LARS), then the symbol's ``__wd_mult__`` and ``args_wd_mult``."""
        checked = multipliers(args_wd_mult, "wd_mult")
        self.wd_mult = {n: 0.0 for n in self.idx2name.values()
                        if isinstance(n, str) and not n.endswith("_weight")}
        self.wd_mult.update(self._symbol_multipliers("__wd_mult__"))
        self.wd_mult.update(checked)

    def _layer_lr(self, index: Any, weight: NDArray, grad: NDArray, lr: float,
                  wd: float) -> float:
        """The LARS learning rate of weight ``index`` (``multi_lars`` of the norms)."""
        name = self.idx2name.get(index, str(index))
        if isinstance(name, str) and name.endswith(UNSCALED_SUFFIXES):
            return lr
        ctx = weight.context
        scaled = multi_lars(array([lr], ctx=ctx, dtype=np.float32), sum_sq(weight),
                            sum_sq(grad), array([wd], ctx=ctx, dtype=np.float32), eta=self.eta,
                            eps=self.eps, rescale_grad=self.rescale_grad)
        return float(scaled.asscalar())

    def _rates(self, num_update: int) -> tuple[float, float]:
        """(last, current) base learning rate once step ``num_update`` has begun: they move
        when the step does (MXNet moves them once per aggregated update call)."""
        lr = self._lr_at(num_update)
        if self._lr_step == num_update and self.cur_lr is not None:
            return self.last_lr if self.last_lr is not None else lr, self.cur_lr
        return (lr if self.cur_lr is None else self.cur_lr), lr

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: NDArray | None) -> None:
        """One LARS step in place."""
        states = () if state is None else (state,)
        count, lr, wd = self._begin(index, weight, grad, states)
        num_update = self._next_count(index)[1]
        last, current = self._rates(num_update)
        momentum = self.momentum
        if self.momentum_correction and last != 0:
            momentum = momentum * current / last
        hyper = {"lr": self._layer_lr(index, weight, grad, lr, wd), "momentum": momentum,
                 "wd": wd, "rescale_grad": self.rescale_grad,
                 "clip_gradient": self._clip_bound()}
        if not states:
            del hyper["momentum"]
        self._launch(index, "sgd_mom" if states else "sgd", weight, grad, states, hyper,
                     {"lr": "lr (times the LARS ratio)", "momentum": "momentum (corrected)"})
        self.last_lr, self.cur_lr, self._lr_step = last, current, num_update
