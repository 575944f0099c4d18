"""torch optimizers on sparsegen's generated kernels: SGD (momentum, lazy), Adam (lazy and
standard), AdamW, Adagrad, RowWiseAdagrad, Ftrl, Lion. Each matches the torch optimizer of the
same name where torch has one (docs/torch.md says where a lazy update differs), takes its
arguments, and loads its checkpoints."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from ..errors import SparsegenError
from ..updates import UpdateRule, get_rule
from .optimizer import TorchRuleOptimizer, number


def _nonnegative(group: dict[str, Any], *names: str) -> None:
    """Refuses a group whose entries ``names`` are not numbers >= 0."""
    for name in names:
        if not number(group[name], name) >= 0:
            raise SparsegenError(f"{name} must be a number >= 0, got {group[name]!r}")


def _betas(group: dict[str, Any]) -> tuple[float, float]:
    """The group's ``betas``: two numbers in [0, 1)."""
    betas = group["betas"]
    if not isinstance(betas, (tuple, list)) or len(betas) != 2:
        raise SparsegenError(f"betas must be two numbers in [0, 1), got {betas!r}")
    beta1, beta2 = (number(b, "betas") for b in betas)
    if not (0 <= beta1 < 1 and 0 <= beta2 < 1):
        raise SparsegenError(f"betas must be two numbers in [0, 1), got {betas!r}")
    return beta1, beta2


class SGD(TorchRuleOptimizer):
    """torch.optim.SGD (momentum, dampening, Nesterov, weight decay, maximize); a sparse
    gradient updates only its rows when ``lazy`` (torch keeps no momentum for sparse
    gradients), else every row."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False,
                 maximize: bool = False, lazy: bool = True) -> None:
        super().__init__(params, "torch_sgd_momentum", lazy, lr=lr, momentum=momentum,
                         dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
                         maximize=maximize)

    def check_group(self, group: dict[str, Any]) -> None:
        """Also: lr, momentum, dampening and weight_decay >= 0; Nesterov's conditions."""
        super().check_group(group)
        _nonnegative(group, "lr", "momentum", "dampening", "weight_decay")
        if not isinstance(group["nesterov"], bool):
            raise SparsegenError(f"nesterov must be True or False, got {group['nesterov']!r}")
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise SparsegenError(f"nesterov momentum needs momentum > 0 and dampening 0, got "
                                 f"momentum={group['momentum']!r}, "
                                 f"dampening={group['dampening']!r}")

    def _derived(self) -> tuple[str, ...]:
        return ("nesterov", "wd")

    def _rule_for(self, group: dict[str, Any]) -> UpdateRule:
        return get_rule("torch_sgd_momentum" if group["momentum"] else "sgd")

    def _hyper(self, group: dict[str, Any], state: dict[str, Any],
               fresh: bool) -> dict[str, Any]:
        if not group["momentum"]:  # MXNet's sgd: weight = (1 - lr*wd)*weight - lr*grad
            return {"lr": group["lr"], "wd": group["weight_decay"],
                    "rescale_grad": group["rescale_grad"], "clip_gradient": group["clip_gradient"]}
        return {"lr": group["lr"], "momentum": group["momentum"],  # a new buffer starts as g
                "dampening": 0.0 if fresh else group["dampening"],
                "nesterov": float(group["nesterov"]), "wd": group["weight_decay"],
                "rescale_grad": group["rescale_grad"], "clip_gradient": group["clip_gradient"]}


class _AdamBase(TorchRuleOptimizer):
    """What Adam and AdamW share: torch's state names, betas, and the ranges of lr, eps and
    weight_decay."""

    state_keys = {"mean": "exp_avg", "var": "exp_avg_sq"}

    def check_group(self, group: dict[str, Any]) -> None:
        """Also: lr, eps and weight_decay >= 0; betas in [0, 1)."""
        super().check_group(group)
        _nonnegative(group, "lr", "eps", "weight_decay")
        _betas(group)


class Adam(_AdamBase):
    """torch.optim.Adam (L2 ``weight_decay`` added to the gradient). ``lazy`` with a sparse
    gradient: torch.optim.SparseAdam's update of the gradient's rows (epsilon not bias-scaled,
    as SparseAdam); otherwise every row (a sparse gradient's missing rows as zeros), as Adam on
    the dense gradient. ``step`` counts per parameter."""

    settings = {**TorchRuleOptimizer.settings, "amsgrad": False, "decoupled_weight_decay": False}

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: Any = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, maximize: bool = False,
                 lazy: bool = False) -> None:
        super().__init__(params, "adam", lazy, lr=lr, betas=betas, eps=eps,
                         weight_decay=weight_decay, maximize=maximize)

    def _derived(self) -> tuple[str, ...]:
        return ("beta1", "beta2", "epsilon", "wd")

    def _hyper(self, group: dict[str, Any], state: dict[str, Any],
               fresh: bool) -> dict[str, Any]:
        beta1, beta2 = _betas(group)
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


class AdamW(_AdamBase):
    """torch.optim.AdamW: decoupled weight decay ``weight *= 1 - lr*weight_decay`` with the Adam
    step (rule ``adamw``, MXNet's contrib adamw_update, with ``eta = 1``)."""

    settings = {**TorchRuleOptimizer.settings, "amsgrad": False, "decoupled_weight_decay": True}

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: Any = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, maximize: bool = False,
                 lazy: bool = False) -> None:
        super().__init__(params, "adamw", lazy, lr=lr, betas=betas, eps=eps,
                         weight_decay=weight_decay, maximize=maximize)

    def _derived(self) -> tuple[str, ...]:
        return ("eta", "beta1", "beta2", "epsilon", "wd")

    def _hyper(self, group: dict[str, Any], state: dict[str, Any],
               fresh: bool) -> dict[str, Any]:
        beta1, beta2 = _betas(group)
        c1, c2 = 1.0 - beta1 ** state["step"], 1.0 - beta2 ** state["step"]
        return {"lr": group["lr"] * math.sqrt(c2) / c1, "eta": 1.0, "beta1": beta1,
                "beta2": beta2, "epsilon": group["eps"] * math.sqrt(c2),
                "wd": group["lr"] * group["weight_decay"], "rescale_grad": group["rescale_grad"],
                "clip_gradient": group["clip_gradient"]}


class Adagrad(TorchRuleOptimizer):
    """torch.optim.Adagrad (``lr_decay``, ``weight_decay``, ``initial_accumulator_value``,
    ``eps``, ``maximize``); a sparse gradient updates only its rows (as torch does)."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, lr_decay: float = 0.0,
                 weight_decay: float = 0.0, initial_accumulator_value: float = 0.0,
                 eps: float = 1e-10, maximize: bool = False, lazy: bool = True) -> None:
        super().__init__(params, "torch_adagrad", lazy, lr=lr, lr_decay=lr_decay,
                         weight_decay=weight_decay,
                         initial_accumulator_value=initial_accumulator_value, eps=eps,
                         maximize=maximize)

    def check_group(self, group: dict[str, Any]) -> None:
        """Also: lr, lr_decay, weight_decay, initial_accumulator_value and eps >= 0."""
        super().check_group(group)
        _nonnegative(group, "lr", "lr_decay", "weight_decay", "initial_accumulator_value",
                     "eps")

    def _derived(self) -> tuple[str, ...]:
        return ("epsilon", "wd")

    def _init_state(self, rule: UpdateRule, p: Any, state: dict[str, Any]) -> None:
        super()._init_state(rule, p, state)
        group = next(g for g in self.param_groups if any(q is p for q in g["params"]))
        state["sum"].fill_(number(group["initial_accumulator_value"],
                                  "initial_accumulator_value"))

    def _hyper(self, group: dict[str, Any], state: dict[str, Any],
               fresh: bool) -> dict[str, Any]:
        return {"lr": group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"]),
                "epsilon": group["eps"], "wd": group["weight_decay"],
                "rescale_grad": group["rescale_grad"], "clip_gradient": group["clip_gradient"]}


class RowWiseAdagrad(TorchRuleOptimizer):
    """RowWiseAdagrad (rule ``rowwise_adagrad``): one accumulator per row, the mean of the
    row's squared gradient; a sparse gradient updates only its rows."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-2, eps: float = 1e-10,
                 lazy: bool = True) -> None:
        super().__init__(params, "rowwise_adagrad", lazy, lr=lr, epsilon=eps)

    def check_group(self, group: dict[str, Any]) -> None:
        """Also: lr and epsilon >= 0."""
        super().check_group(group)
        _nonnegative(group, "lr", "epsilon")


class Ftrl(TorchRuleOptimizer):
    """FTRL-Proximal (MXNet's ftrl_update: ``lamda1``, ``beta``, ``wd``); a sparse gradient
    updates only its rows when ``lazy``."""

    def __init__(self, params: Iterable[Any], lr: float = 0.1, lamda1: float = 0.01,
                 beta: float = 1.0, wd: float = 0.0, lazy: bool = True) -> None:
        super().__init__(params, "ftrl", lazy, lr=lr, lamda1=lamda1, beta=beta, wd=wd)

    def check_group(self, group: dict[str, Any]) -> None:
        """Also: lr, lamda1, beta and wd >= 0."""
        super().check_group(group)
        _nonnegative(group, "lr", "lamda1", "beta", "wd")


class Lion(TorchRuleOptimizer):
    """Lion (rule ``lion``): ``weight -= lr * (sign(beta1*m + (1-beta1)*g) + wd*weight);
    m = beta2*m + (1-beta2)*g``."""

    def __init__(self, params: Iterable[Any], lr: float = 1e-4, betas: Any = (0.9, 0.99),
                 weight_decay: float = 0.0, lazy: bool = True) -> None:
        super().__init__(params, "lion", lazy, lr=lr, betas=betas, weight_decay=weight_decay)

    def check_group(self, group: dict[str, Any]) -> None:
        """Also: lr and weight_decay >= 0; betas in [0, 1)."""
        super().check_group(group)
        _nonnegative(group, "lr", "weight_decay")
        _betas(group)

    def _derived(self) -> tuple[str, ...]:
        return ("beta1", "beta2", "wd")

    def _hyper(self, group: dict[str, Any], state: dict[str, Any],
               fresh: bool) -> dict[str, Any]:
        beta1, beta2 = _betas(group)
        return {"lr": group["lr"], "beta1": beta1, "beta2": beta2, "wd": group["weight_decay"],
                "rescale_grad": group["rescale_grad"], "clip_gradient": group["clip_gradient"]}
