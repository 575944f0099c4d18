"""``TorchRuleOptimizer``: a ``torch.optim.Optimizer`` whose step runs an update rule's generated
kernel on each parameter in place (DLPack, no copy): ``lazy`` (only a sparse gradient's rows),
``std`` (every row, a sparse gradient's missing rows as zeros) or ``dense``."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import torch

from .. import kernels
from ..errors import SparsegenError
from ..ops.optim import launch
from ..updates import UpdateRule, get_rule
from .coalesce import FLOATS, array, check_ids, coalesce, row_ids

INF = float("inf")


def number(value: Any, name: str) -> float:
    """``value`` as a float: a real number or a one-element tensor (torch takes tensor lrs)."""
    if torch.is_tensor(value) and value.numel() == 1 and not value.is_complex():
        return float(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    raise SparsegenError(f"{name} must be a number, got {value!r}")


class TorchRuleOptimizer(torch.optim.Optimizer):
    """Any update rule as a torch optimizer: its hyper-parameters are the param group's entries
    of the same names (``rescale_grad`` 1 and ``clip_gradient`` inf unless given); its states
    are zero tensors in ``state[p]`` under their names, with ``state[p]["step"]`` counting the
    parameter's updates. ``lazy``: a sparse gradient updates only its rows; ``maximize``: the
    gradient's negation is applied (the rule must take ``rescale_grad``)."""

    settings: dict[str, Any] = {"differentiable": False}
    """Group entries torch's optimizers (and their checkpoints) carry that this one runs only
    at the value given; a group holding another value is refused."""

    state_keys: dict[str, str] = {}
    """The ``state[p]`` keys of rule states that torch's optimizer of the same update names
    otherwise, so that its checkpoints load as they are."""

    def __init__(self, params: Iterable[Any], rule: UpdateRule | str, lazy: bool = True,
                 **defaults: Any) -> None:
        self.rule = get_rule(rule) if isinstance(rule, str) else rule
        if not isinstance(self.rule, UpdateRule):
            raise SparsegenError(f"rule must be an UpdateRule or a rule name, got {rule!r}")
        defaults = {"rescale_grad": 1.0, "clip_gradient": INF, "maximize": False, **defaults,
                    "lazy": lazy}
        missing = [h for h in self.rule.hyper if h not in defaults and h not in self._derived()]
        if missing:
            raise SparsegenError(f"rule {self.rule.name!r} needs hyper-parameters {missing}")
        super().__init__(params, defaults)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """torch's ``add_param_group``, refusing a group whose settings are out of range."""
        if isinstance(param_group, dict):
            self.check_group({**self.defaults, **param_group})
        super().add_param_group(param_group)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """torch's ``load_state_dict`` (a checkpoint of torch's optimizer of the same update
        too): entries the saved groups lack take this optimizer's defaults, and groups out of
        range are refused before anything changes."""
        groups = [{**self.defaults, **group} for group in state_dict["param_groups"]]
        for group in groups:
            self.check_group(group)
        super().load_state_dict({**state_dict, "param_groups": groups})

    def check_group(self, group: dict[str, Any]) -> None:
        """Refuses a param group (defaults filled in) whose entries this optimizer cannot run,
        naming the entry and its value."""
        for key in ("lazy", "maximize"):
            if not isinstance(group[key], bool):
                raise SparsegenError(f"{key} must be True or False, got {group[key]!r}")
        if group["maximize"] and "rescale_grad" not in self.rule.hyper:
            raise SparsegenError(f"maximize needs a rule that takes rescale_grad; rule "
                                 f"{self.rule.name!r} takes {list(self.rule.hyper)}")
        for key, value in self.settings.items():
            if key in group and group[key] != value:
                raise SparsegenError(f"{type(self).__name__} runs only {key}={value!r}, got "
                                     f"{key}={group[key]!r}")
        for name in self.rule.hyper:
            if name not in self._derived():
                number(group[name], name)

    def _derived(self) -> tuple[str, ...]:
        """Hyper-parameters ``_hyper`` computes rather than reads from the group."""
        return ()

    def _hyper(self, group: dict[str, Any], state: dict[str, Any],
               fresh: bool) -> dict[str, Any]:
        """The rule's hyper-parameters for one step of a parameter (its group and state;
        ``fresh``: its states were made for this step)."""
        return {h: group[h] for h in self.rule.hyper}

    def _rule_for(self, group: dict[str, Any]) -> UpdateRule:
        """The rule a group runs (a subclass may pick one by the group's settings)."""
        return self.rule

    def _keys(self, rule: UpdateRule) -> list[str]:
        """The ``state[p]`` keys of the rule's element states, then its row states."""
        return [self.state_keys.get(name, name) for name in (*rule.states, *rule.row_states)]

    def _init_state(self, rule: UpdateRule, p: Any, state: dict[str, Any]) -> None:
        """Zero states for parameter ``p``'s first step under the rule."""
        for i, key in enumerate(self._keys(rule)):
            state[key] = (torch.zeros_like(p, memory_format=torch.contiguous_format)
                          if i < len(rule.states) else p.new_zeros(_rows(p)))

    @torch.no_grad()
    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter with a gradient; returns ``closure()`` if given."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            rule = self._rule_for(group)
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                before = dict(state)
                try:
                    self._update(rule, group, p, state)
                except BaseException:  # a refused gradient leaves the state as it was
                    state.clear()
                    state.update(before)
                    raise
        return loss

    def _update(self, rule: UpdateRule, group: dict[str, Any], p: Any,
                state: dict[str, Any]) -> None:
        """One step of parameter ``p`` with its state (made on its first step)."""
        keys = self._keys(rule)
        present = [key for key in keys if key in state]
        if present and len(present) < len(keys):
            raise SparsegenError(f"a parameter's state holds {present} but not "
                                 f"{[k for k in keys if k not in state]}: rule {rule.name!r} "
                                 f"keeps {keys} (was it saved by another optimizer?)")
        fresh = not present
        if fresh:
            self._init_state(rule, p, state)
        state["step"] = int(state.get("step", 0)) + 1  # torch's SGD keeps no step
        hyper = self._hyper(group, state, fresh)
        if group["maximize"]:
            hyper["rescale_grad"] = -number(hyper["rescale_grad"], "rescale_grad")
        values = {h: number(value, h) for h, value in hyper.items()}
        arrays = [_state(state, key, p, i < len(rule.states)) for i, key in enumerate(keys)]
        _run(rule, p, p.grad, arrays, values, group["lazy"])


def _rows(p: Any) -> int:
    """The rows a parameter is updated as (its first dimension; a scalar is one row)."""
    return p.shape[0] if p.dim() else 1


def _state(state: dict[str, Any], key: str, p: Any, element: bool) -> Any:
    """``state[key]`` as the kernel takes it: checked against parameter ``p`` (its shape, or
    one value per row; its dtype and device), made contiguous (a loaded state_dict may hold
    views)."""
    tensor = state[key]
    shape = tuple(p.shape) if element else (_rows(p),)
    if (not torch.is_tensor(tensor) or tuple(tensor.shape) != shape or tensor.dtype != p.dtype
            or tensor.device != p.device):
        got = (f"{tuple(tensor.shape)} {tensor.dtype} on {tensor.device}"
               if torch.is_tensor(tensor) else repr(tensor))
        raise SparsegenError(f"state {key!r} of a {tuple(p.shape)} {p.dtype} parameter on "
                             f"{p.device} must be a {shape} {p.dtype} tensor there, got {got}")
    if not tensor.is_contiguous():
        state[key] = tensor = tensor.contiguous()
    return tensor


def _run(rule: UpdateRule, p: Any, grad: Any, states: list[Any], hyper: dict[str, float],
         lazy: bool) -> None:
    """The rule's kernel on parameter ``p`` (viewed as rows) in place (``ops.optim.launch``, the
    launch ``mx.optimizer`` shares)."""
    if not p.is_contiguous():
        raise SparsegenError("a parameter must be contiguous to be updated in place")
    if p.dtype not in FLOATS:
        raise SparsegenError(f"a parameter's dtype must be float16, float32 or float64 (the "
                             f"kernels' dtypes), got {p.dtype}")
    rows = _rows(p)
    sparse = grad.is_sparse and rule.sparse_gradients
    if grad.is_sparse and not sparse:
        grad = grad.to_dense()
    if not sparse and "dense" not in rule.functions:
        raise SparsegenError(f"rule {rule.name!r} has no dense function: it takes sparse "
                             "gradients only")
    if p.numel() == 0:  # nothing to update; a sparse gradient's row ids are still checked
        if grad.is_sparse:
            check_ids(array(row_ids(grad)), rows)
        return
    weight = p.detach().view(rows, -1)
    element = len(rule.states)
    arrays = [s.view(rows, -1) if i < element else s for i, s in enumerate(states)]
    functions = _functions(rule.name, _dtype(p))
    if sparse:
        ids, values = coalesce(grad, rows)
        launch(functions, rule, weight, values, ids, arrays, hyper, lazy)
    else:
        launch(functions, rule, weight, grad.contiguous().view(rows, -1), None, arrays, hyper,
               lazy)


def _dtype(p: Any) -> str:
    """A torch tensor's dtype by its numpy name (``float32``)."""
    return str(p.dtype).removeprefix("torch.")


_FUNCTIONS: dict[tuple[str, str], tuple[UpdateRule, Any]] = {}


def _functions(name: str, dtype: str) -> Any:
    """``sparsegen.kernels.get(optim_<name>, dtype, check=False)``, memoised while rule
    ``name`` stays registered as it is. Unchecked: the row ids its lazy and std functions take
    come from ``coalesce``, which checked them where they live; the arrays' shapes, dtypes and
    devices are the parameter's (torch ties its gradient's to it, ``_state`` its states')."""
    rule = get_rule(name)
    hit = _FUNCTIONS.get((name, dtype))
    if hit is None or hit[0] is not rule:
        hit = _FUNCTIONS[(name, dtype)] = (rule, kernels.get(f"optim_{name}", dtype, check=False))
    return hit[1]
