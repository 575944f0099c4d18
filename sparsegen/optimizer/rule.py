"""``RuleOptimizer``: an ``mx.optimizer.Optimizer`` whose update is an update rule
(sparsegen.updates), so that a user's rule works wherever an optimizer does: ``register``,
``create``, ``get_updater``, ``gluon.Trainer``, ``Module`` and the kvstore."""

from __future__ import annotations

from typing import Any

from ..errors import SparsegenError
from ..ndarray import NDArray, zeros
from ..ndarray.optim_arrays import check_weight
from ..updates import UpdateRule, get_rule
from .base import Optimizer
from .inputs import state_tuple


class RuleOptimizer(Optimizer):
    """An optimizer running rule ``rule`` (an ``UpdateRule`` or a registered rule's name; a
    class attribute of a subclass, or the ``rule`` argument). Its hyper-parameters are, by name:
    ``lr``, ``wd`` (with their schedules and multipliers), ``rescale_grad``, ``clip_gradient``,
    and attributes of the optimizer (``hyper`` keyword values, or a subclass's); a subclass may
    override ``hyper`` (bias corrections, say). States are zeros, stored like the weight when
    ``lazy_update`` (a row_sparse gradient then updates only its rows)."""

    rule: Any = None

    def __init__(self, rule: UpdateRule | str | None = None, lazy_update: bool = True,
                 hyper: dict[str, float] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        chosen = rule if rule is not None else type(self).rule
        if chosen is None:
            raise SparsegenError("RuleOptimizer needs a rule (argument or class attribute)")
        self.rule = get_rule(chosen) if isinstance(chosen, str) else chosen
        if not isinstance(self.rule, UpdateRule):
            raise SparsegenError(f"rule must be an UpdateRule or a rule name, got {chosen!r}")
        for name, value in (hyper or {}).items():
            if name not in self.rule.hyper or name in ("lr", "wd", "rescale_grad",
                                                       "clip_gradient"):
                raise SparsegenError(f"hyper: {name!r} is not a settable hyper-parameter of "
                                     f"rule {self.rule.name!r} ({list(self.rule.hyper)})")
            setattr(self, name, float(value))
        self.lazy_update = lazy_update

    def create_state(self, index: Any, weight: NDArray) -> Any:
        """Zero states of the weight's shape (row_sparse for a row_sparse weight when
        ``lazy_update``), then dense zero row states (one value per row); ``None`` for a rule
        without states."""
        check_weight(weight, every_row=False)
        stype = weight.stype if self.lazy_update else "default"
        states = tuple(self._zeros(weight, stype) for _ in self.rule.states) + tuple(
            zeros(weight.shape[:1], weight.context, dtype=weight.dtype)
            for _ in self.rule.row_states)
        return None if not states else states[0] if len(states) == 1 else states

    def hyper(self, index: Any, count: int, lr: float, wd: float) -> dict[str, float]:
        """The rule's hyper-parameters by name for update ``count`` of weight ``index``."""
        known = {"lr": lr, "wd": wd, "rescale_grad": self.rescale_grad,
                 "clip_gradient": self._clip_bound()}
        values = {}
        for name in self.rule.hyper:
            value = known[name] if name in known else getattr(self, name, None)
            if value is None:
                raise SparsegenError(f"{type(self).__name__}: hyper-parameter {name!r} of rule "
                                     f"{self.rule.name!r} is not set")
            values[name] = value
        return values

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        """One step of the rule in place."""
        count = len(self.rule.states) + len(self.rule.row_states)
        states = () if count == 0 and state is None else state_tuple(
            state, count, type(self).__name__)
        t, lr, wd = self._begin(index, weight, grad, states)
        values = self.hyper(index, t, lr, wd)
        self._launch(index, self.rule.name, weight, grad, states,
                     {name: values[name] for name in self.rule.hyper})
