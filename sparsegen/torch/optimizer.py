"""``RuleOptimizer``: a ``torch.optim.Optimizer`` whose step runs an update rule's generated
kernel on each parameter in place (DLPack, no copy): ``lazy`` (only a sparse gradient's rows),
``std`` (every row, a sparse gradient's missing rows as zeros) or ``dense``."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import torch

from .. import kernels
from ..errors import SparsegenError
from ..updates import UpdateRule, get_rule
from .coalesce import coalesce

INF = float("inf")

class RuleOptimizer(torch.optim.Optimizer):
    """Any update rule as a torch optimizer: its hyper-parameters are the param group's entries
    of the same names (``rescale_grad`` 1 and ``clip_gradient`` inf unless given); its states
    are zero tensors in ``state[p]`` under their names, with ``state[p]["step"]`` counting the
    parameter's updates. ``lazy``: a sparse gradient updates only its rows."""

    def __init__(self, params: Iterable[Any], rule: UpdateRule | str, lazy: bool = True,
                 **defaults: Any) -> None:
        self.rule = get_rule(rule) if isinstance(rule, str) else rule
        if not isinstance(self.rule, UpdateRule):
            raise SparsegenError(f"rule must be an UpdateRule or a rule name, got {rule!r}")
        if not isinstance(lazy, bool):
            raise SparsegenError(f"lazy must be True or False, got {lazy!r}")
        defaults = {"rescale_grad": 1.0, "clip_gradient": INF, **defaults, "lazy": lazy}
        missing = [h for h in self.rule.hyper if h not in defaults and h not in self._derived()]
        if missing:
            raise SparsegenError(f"rule {self.rule.name!r} needs hyper-parameters {missing}")
        super().__init__(params, defaults)

    def _derived(self) -> tuple[str, ...]:
        """Hyper-parameters ``_hyper`` computes rather than reads from the group."""
        return ()

    def _hyper(self, group: dict[str, Any], state: dict[str, Any]) -> dict[str, float]:
        """The rule's hyper-parameters for one step of a parameter (its group and state)."""
        return {h: group[h] for h in self.rule.hyper}

    def _rule_for(self, group: dict[str, Any]) -> UpdateRule:
        """The rule a group runs (a subclass may pick one by the group's settings)."""
        return self.rule

    def _init_state(self, rule: UpdateRule, p: Any, state: dict[str, Any]) -> None:
        state["step"] = 0
        for name in rule.states:
            state[name] = torch.zeros_like(p, memory_format=torch.contiguous_format)
        for name in rule.row_states:
            state[name] = p.new_zeros(p.shape[0] if p.dim() else 1)

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
        """One step of parameter ``p`` with its state (created on its first step)."""
        if "step" not in state or not all(name in state for name in
                                           (*rule.states, *rule.row_states)):
            self._init_state(rule, p, state)
        state["step"] = int(state["step"]) + 1
        hyper = self._hyper(group, state)
        values = [float(hyper[h]) for h in rule.hyper]
        arrays = [self._contiguous(state, name) for name in (*rule.states, *rule.row_states)]
        _run(rule, p, p.grad, arrays, values, group["lazy"])

    @staticmethod
    def _contiguous(state: dict[str, Any], name: str) -> Any:
        tensor = state[name]
        if not tensor.is_contiguous():  # a loaded state_dict may hold views
            state[name] = tensor = tensor.contiguous()
        return tensor


def _run(rule: UpdateRule, p: Any, grad: Any, states: list[Any], hyper: list[float],
         lazy: bool) -> None:
    """The rule's kernel on parameter ``p`` (viewed as rows) in place."""
    if not p.is_contiguous():
        raise SparsegenError("a parameter must be contiguous to be updated in place")
    rows = p.shape[0] if p.dim() else 1
    weight = p.detach().view(rows, -1)
    family = _family(rule.name, str(p.dtype).removeprefix("torch."))
    element = len(rule.states)
    arrays = [s.view(rows, -1) if i < element else s for i, s in enumerate(states)]
    if grad.is_sparse:
        if "lazy" not in rule.functions:
            grad = grad.to_dense()
        else:
            ids, values = coalesce(grad, rows)
            function = family.lazy if lazy or "std" not in rule.functions else family.std
            function(weight, values, ids, *arrays, *hyper)
            return
    if "dense" not in rule.functions:
        raise SparsegenError(f"rule {rule.name!r} has no dense function: it takes sparse "
                             "gradients only")
    function = family.dense
    function(weight, grad.contiguous().view(rows, -1), *arrays, *hyper)


_FAMILIES: dict[tuple[str, str, str], Any] = {}


def _family(name: str, dtype: str) -> Any:
    """``sparsegen.kernels.get(optim_<name>, dtype)``, memoised per rule digest."""
    key = (name, dtype, get_rule(name).digest)
    family = _FAMILIES.get(key)
    if family is None:
        family = _FAMILIES[key] = kernels.get(f"optim_{name}", dtype)
    return family
