"""LBSGD (MXNet's ``LBSGD``): large-batch SGD that sums ``batch_scale`` gradients per weight
before a step, with a warm-up of the learning rate (``linear``, ``power2``, ``sqrt``) or a
LARS-like factor per layer (``lars``); the steps run the ``sgd`` / ``sgd_mom`` rules' kernels."""

from __future__ import annotations

import math
from typing import Any

from ..errors import SparsegenError
from ..ndarray import NDArray
from ..ndarray.optim_arrays import check_weight
from ..ndarray.optim_multi import sum_sq
from ..params import integer
from .base import Optimizer
from .hyper import Hyper, positive, unit

STRATEGIES = ("linear", "power2", "sqrt", "lars")
"""LBSGD's warm-up strategies."""


def warmup_multiplier(strategy: str, nup: int, nwup: int, batch_scale: float) -> float:
    """The learning-rate factor after ``nup`` updates of a ``nwup``-update warm-up towards
    ``batch_scale`` (MXNet's ``LBSGD._get_lbmult``)."""
    if nup >= nwup:
        return float(batch_scale)
    if nwup <= 1:
        return 1.0
    growth = float(batch_scale) - 1.0
    if strategy == "linear":
        return 1.0 + growth * nup / nwup
    if strategy == "power2":
        return 1.0 + growth * (nup * nup) / (nwup * nwup)
    if strategy == "sqrt":
        return 1.0 + growth * math.sqrt(float(nup) / nwup)
    return 1.0


def lars_multiplier(weight_sq: float, grad_sq: float, wd: float) -> float:
    """LBSGD's ``lars`` factor: ``sqrt(|w|^2 / (|g|^2 + wd*|w|^2 + 1e-18))`` within
    ``[0.01, 100]`` (squared norms, as MXNet's ``LBSGD._get_lars``)."""
    ratio = math.sqrt(weight_sq / (grad_sq + wd * weight_sq + 1e-18))
    return min(max(ratio, 0.01), 100.0)


@Optimizer.register
class LBSGD(Optimizer):
    """Large-batch SGD with momentum and weight decay: the gradients of ``batch_scale``
    updates of a weight are summed; every ``batch_scale``-th update steps with their mean and
    ``lr`` times the warm-up factor (``warmup_multiplier`` over ``warmup_epochs *
    updates_per_epoch`` updates, counted from ``begin_epoch``; ``lars``: ``lars_multiplier``);
    the other updates leave the weight unchanged."""

    momentum: Any = Hyper(unit, "momentum")
    batch_scale: Any = Hyper(positive, "batch_scale")

    def __init__(self, momentum: float = 0.0, multi_precision: bool = False,
                 warmup_strategy: str = "linear", warmup_epochs: int = 5, batch_scale: int = 1,
                 updates_per_epoch: int = 32, begin_epoch: int = 0, num_epochs: int = 60,
                 **kwargs: Any) -> None:
        super().__init__(multi_precision=multi_precision, **kwargs)
        if warmup_strategy not in STRATEGIES:
            raise SparsegenError(f"LBSGD: warmup_strategy must be one of {STRATEGIES}, got "
                                 f"{warmup_strategy!r}")
        self.momentum = momentum
        self.lazy_update = True  # MXNet's sgd_update / sgd_mom_update default
        self.warmup_strategy = warmup_strategy
        self.warmup_epochs = integer(warmup_epochs, "LBSGD: warmup_epochs")
        self.batch_scale = batch_scale
        self.updates_per_epoch = integer(updates_per_epoch, "LBSGD: updates_per_epoch")
        self.init_updates = integer(begin_epoch, "LBSGD: begin_epoch") * self.updates_per_epoch
        self.num_epochs = integer(num_epochs, "LBSGD: num_epochs")
        self.cumgrads: dict[Any, dict[str, Any]] = {}

    def create_state(self, index: Any, weight: NDArray) -> NDArray | None:
        """Zero momentum stored like the weight, or ``None`` without momentum."""
        check_weight(weight, every_row=False)
        return None if self.momentum == 0.0 else self._zeros(weight, weight.stype)

    def _cumulated(self, index: Any, grad: NDArray) -> dict[str, Any]:
        """The gradient sum and update count of ``index`` with ``grad`` added (not stored)."""
        held = self.cumgrads.get(index)
        fresh = grad if self.batch_scale == 1 else grad.copy()  # kept: the caller reuses grad
        if held and held["num_cums"] > 0:
            total = fresh if held["cum_grad"] is None else held["cum_grad"] + grad
            return {"cum_grad": total, "num_cums": held["num_cums"] + 1}
        return {"cum_grad": fresh, "num_cums": self.init_updates + 1}

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        """One LBSGD update in place (a step every ``batch_scale`` updates)."""
        states = () if state is None else (state,)
        self._begin(index, weight, grad, states)
        lr, wd = self._get_lr(index), self._get_wd(index)  # before the count, as MXNet
        cumulated = self._cumulated(index, grad)
        if cumulated["num_cums"] % self.batch_scale != 0:
            self.cumgrads[index] = cumulated
            self._update_count(index)
            return
        mean = cumulated["cum_grad"] / self.batch_scale
        if self.warmup_strategy == "lars":
            factor = lars_multiplier(float(sum_sq(weight).asscalar()),
                                     float(sum_sq(mean).asscalar()), wd)
        else:
            factor = warmup_multiplier(self.warmup_strategy, cumulated["num_cums"],
                                       self.warmup_epochs * self.updates_per_epoch,
                                       self.batch_scale)
        hyper = {"lr": lr * factor, "momentum": self.momentum, "wd": wd,
                 "rescale_grad": self.rescale_grad, "clip_gradient": self._clip_bound()}
        if not states:
            del hyper["momentum"]
        self._launch(index, "sgd_mom" if states else "sgd", weight, mean, states, hyper,
                     {"lr": "lr (times the warm-up factor)"})
        self.cumgrads[index] = {"cum_grad": None, "num_cums": cumulated["num_cums"]}
