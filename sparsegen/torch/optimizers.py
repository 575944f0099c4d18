"""torch optimizers on sparsegen's generated kernels: SGD (momentum, lazy), Adam (lazy and
standard), AdamW, Adagrad, RowWiseAdagrad, Ftrl, Lion. Each matches the torch optimizer of the
same name where torch has one (docs/torch.md says where a lazy update differs)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from ..errors import SparsegenError
from ..updates import UpdateRule, get_rule
from .optimizer import RuleOptimizer


def _nonnegative(value: Any, name: str) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not value >= 0:
        raise SparsegenError(f"{name} must be a number >= 0, got {value!r}")
    return float(value)


def _betas(betas: Any) -> tuple[float, float]:
    if (not isinstance(betas, (tuple, list)) or len(betas) != 2
            or not all(isinstance(b, (int, float)) and 0 <= b < 1 for b in betas)):
        raise SparsegenError(f"betas must be two numbers in [0, 1), got {betas!r}")
    return float(betas[0]), float(betas[1])


class SGD(RuleOptimizer):
    """torch.optim.SGD (momentum, dampening, Nesterov, weight decay); a sparse gradient
    updates only its rows when ``lazy`` (torch keeps no momentum for sparse gradients), else
    every row."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False,
                 lazy: bool = True) -> None:
        for value, name in ((lr, "lr"), (momentum, "momentum"), (dampening, "dampening"),
                            (weight_decay, "weight_decay")):
            _nonnegative(value, name)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise SparsegenError("nesterov momentum needs momentum > 0 and dampening 0")
        super().__init__(params, "torch_sgd_momentum", lazy, lr=lr, momentum=momentum,
                         dampening=dampening, weight_decay=weight_decay, nesterov=nesterov)

    def _derived(self) -> tuple[str, ...]:
        return ("wd",)

    def _rule_for(self, group: dict[str, Any]) -> UpdateRule:
        return get_rule("torch_sgd_momentum" if group["momentum"] else "sgd")

    def _hyper(self, group: dict[str, Any], state: dict[str, Any]) -> dict[str, float]:
        if not group["momentum"]:  # MXNet's sgd: weight = (1 - lr*wd)*weight - lr*grad
            return {"lr": group["lr"], "wd": group["weight_decay"],
                    "rescale_grad": group["rescale_grad"], "clip_gradient": group["clip_gradient"]}
        return {"lr": group["lr"], "momentum": group["momentum"],
                "dampening": 0.0 if state["step"] == 1 else group["dampening"],
                "nesterov": float(group["nesterov"]), "wd": group["weight_decay"],
                "rescale_grad": group["rescale_grad"], "clip_gradient": group["clip_gradient"]}


class Adam(RuleOptimizer):
    """torch.optim.Adam (L2 ``weight_decay`` added to the gradient). ``lazy`` with a sparse
    gradient: torch.optim.SparseAdam's update of the gradient's rows (epsilon not bias-scaled,
    as SparseAdam); otherwise every row (a sparse gradient's missing rows as zeros), as Adam on
    the dense gradient. ``step`` counts per parameter."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: Any = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, lazy: bool = False) -> None:
        _nonnegative(lr, "lr"), _nonnegative(eps, "eps"), _nonnegative(weight_decay,
                                                                       "weight_decay")
        super().__init__(params, "adam", lazy, lr=lr, betas=_betas(betas), eps=eps,
                         weight_decay=weight_decay)

    def _derived(self) -> tuple[str, ...]:
        return ("beta1", "beta2", "epsilon", "wd")

    def _hyper(self, group: dict[str, Any], state: dict[str, Any]) -> dict[str, float]:
        beta1, beta2 = group["betas"]
        c1, c2 = 1.0 - beta1 ** state["step"], 1.0 - beta2 ** state["step"]
        sparse_rows = group["lazy"] and state.get("sparse", False)
        eps = group["eps"] if sparse_rows else group["eps"] * math.sqrt(c2)
        return {"lr": group["lr"] * math.sqrt(c2) / c1, "beta1": beta1, "beta2": beta2,
                "epsilon": eps, "wd": group["weight_decay"],
                "rescale_grad": group["rescale_grad"], "clip_gradient": group["clip_gradient"]}

    def _update(self, rule: UpdateRule, group: dict[str, Any], p: Any,
                state: dict[str, Any]) -> None:
        state["sparse"] = bool(p.grad.is_sparse)  # the gradient's kind picks the eps convention
        super()._update(rule, group, p, state)


class AdamW(RuleOptimizer):
    """torch.optim.AdamW: decoupled weight decay ``weight *= 1 - lr*weight_decay`` with the Adam
    step (rule ``adamw``, MXNet's contrib adamw_update, with ``eta = 1``)."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: Any = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, lazy: bool = False) -> None:
        _nonnegative(lr, "lr"), _nonnegative(eps, "eps"), _nonnegative(weight_decay,
                                                                       "weight_decay")
        super().__init__(params, "adamw", lazy, lr=lr, betas=_betas(betas), eps=eps,
                         weight_decay=weight_decay)

    def _derived(self) -> tuple[str, ...]:
        return ("eta", "beta1", "beta2", "epsilon", "wd")

    def _hyper(self, group: dict[str, Any], state: dict[str, Any]) -> dict[str, float]:
        beta1, beta2 = group["betas"]
        c1, c2 = 1.0 - beta1 ** state["step"], 1.0 - beta2 ** state["step"]
        return {"lr": group["lr"] * math.sqrt(c2) / c1, "eta": 1.0, "beta1": beta1,
                "beta2": beta2, "epsilon": group["eps"] * math.sqrt(c2),
                "wd": group["lr"] * group["weight_decay"], "rescale_grad": group["rescale_grad"],
                "clip_gradient": group["clip_gradient"]}


class Adagrad(RuleOptimizer):
    """torch.optim.Adagrad (``lr_decay``, ``weight_decay``, ``initial_accumulator_value``,
    ``eps``); a sparse gradient updates only its rows (as torch does)."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lr_decay: float = 0.0,
                 weight_decay: float = 0.0, initial_accumulator_value: float = 0.0,
                 eps: float = 1e-10, lazy: bool = True) -> None:
        for value, name in ((lr, "lr"), (lr_decay, "lr_decay"), (weight_decay, "weight_decay"),
                            (initial_accumulator_value, "initial_accumulator_value"),
                            (eps, "eps")):
            _nonnegative(value, name)
        super().__init__(params, "torch_adagrad", lazy, lr=lr, lr_decay=lr_decay,
                         weight_decay=weight_decay,
                         initial_accumulator_value=initial_accumulator_value, eps=eps)

    def _derived(self) -> tuple[str, ...]:
        return ("epsilon", "wd")

    def _init_state(self, rule: UpdateRule, p: Any, state: dict[str, Any]) -> None:
        super()._init_state(rule, p, state)
        group = next(g for g in self.param_groups if any(q is p for q in g["params"]))
        state["sum"].fill_(group["initial_accumulator_value"])

    def _hyper(self, group: dict[str, Any], state: dict[str, Any]) -> dict[str, float]:
        return {"lr": group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"]),
                "epsilon": group["eps"], "wd": group["weight_decay"],
                "rescale_grad": group["rescale_grad"], "clip_gradient": group["clip_gradient"]}


class RowWiseAdagrad(RuleOptimizer):
    """RowWiseAdagrad (rule ``rowwise_adagrad``): one accumulator per row, the mean of the
    row's squared gradient; a sparse gradient updates only its rows."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, eps: float = 1e-10,
                 lazy: bool = True) -> None:
        _nonnegative(lr, "lr"), _nonnegative(eps, "eps")
        super().__init__(params, "rowwise_adagrad", lazy, lr=lr, epsilon=eps)


class Ftrl(RuleOptimizer):
    """FTRL-Proximal (MXNet's ftrl_update: ``lamda1``, ``beta``, ``wd``); a sparse gradient
    updates only its rows when ``lazy``."""

    def __init__(self, params: Iterable[Any], lr: float = 0.1, lamda1: float = 0.01,
                 beta: float = 1.0, wd: float = 0.0, lazy: bool = True) -> None:
        for value, name in ((lr, "lr"), (lamda1, "lamda1"), (beta, "beta"), (wd, "wd")):
            _nonnegative(value, name)
        super().__init__(params, "ftrl", lazy, lr=lr, lamda1=lamda1, beta=beta, wd=wd)


class Lion(RuleOptimizer):
    """Lion (rule ``lion``): ``weight -= lr * (sign(beta1*m + (1-beta1)*g) + wd*weight);
    m = beta2*m + (1-beta2)*g``."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-4, betas: Any = (0.9, 0.99),
                 weight_decay: float = 0.0, lazy: bool = True) -> None:
        _nonnegative(lr, "lr"), _nonnegative(weight_decay, "weight_decay")
        super().__init__(params, "lion", lazy, lr=lr, betas=_betas(betas),
                         weight_decay=weight_decay)

    def _derived(self) -> tuple[str, ...]:
        return ("beta1", "beta2", "wd")

    def _hyper(self, group: dict[str, Any], state: dict[str, Any]) -> dict[str, float]:
        beta1, beta2 = group["betas"]
        return {"lr": group["lr"], "beta1": beta1, "beta2": beta2, "wd": group["weight_decay"],
                "rescale_grad": group["rescale_grad"], "clip_gradient": group["clip_gradient"]}
