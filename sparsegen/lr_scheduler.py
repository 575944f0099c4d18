"""``mx.lr_scheduler``: learning rates as a function of the update count (MXNet 1.9.1's
``FactorScheduler``, ``MultiFactorScheduler``, ``PolyScheduler`` and ``CosineScheduler``, each
with an optional linear or constant warmup).

A scheduler is called with ``num_update``, the largest update count of any weight (the
optimizer's ``num_update``). Factor and multi-factor schedules keep how far they have decayed
(as MXNet's: calls are expected in non-decreasing ``num_update``). Setting ``base_lr`` (the
optimizer does when given both ``learning_rate`` and ``lr_scheduler``) sets the current rate,
the end of the warmup and the start of a poly or cosine decay.
"""

from __future__ import annotations

import logging
import math
from typing import Any

from .errors import InvalidType, InvalidValue
from .params import real

__all__ = ["CosineScheduler", "FactorScheduler", "LRScheduler", "MultiFactorScheduler",
           "PolyScheduler"]

_LOG = logging.getLogger(__name__)


def _count(value: Any, name: str, low: int) -> int:
    """An int (not a bool) of at least ``low``: ``InvalidType`` / ``InvalidValue`` otherwise."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise InvalidType(f"{name} must be an int, got {value!r} ({type(value).__name__})")
    if value < low:
        raise InvalidValue(f"{name} must be at least {low}, got {value}")
    return value


def _factor(value: Any) -> float:
    """A decay factor: a real <= 1 (MXNet: 'Factor must be no more than 1 to make lr reduce')."""
    factor = real(value, "factor")
    if factor > 1.0:
        raise InvalidValue(f"factor must be no more than 1 (the learning rate only decreases), "
                           f"got {value}")
    return factor


class LRScheduler:
    """The base class: ``base_lr`` and the warmup of ``warmup_steps`` updates from
    ``warmup_begin_lr`` (``warmup_mode`` ``'linear'`` rises in equal steps to ``base_lr``,
    ``'constant'`` stays at ``warmup_begin_lr``)."""

    def __init__(self, base_lr: float = 0.01, warmup_steps: int = 0, warmup_begin_lr: float = 0,
                 warmup_mode: str = "linear") -> None:
        self.warmup_steps = _count(warmup_steps, "warmup_steps", 0)
        self.warmup_begin_lr = real(warmup_begin_lr, "warmup_begin_lr")
        if warmup_mode not in ("linear", "constant"):
            raise InvalidValue(f"warmup_mode must be 'linear' or 'constant', got {warmup_mode!r}")
        self.warmup_mode = warmup_mode
        self.base_lr = base_lr

    @property
    def base_lr(self) -> float:
        """The current learning rate after warmup (decaying schedules lower it)."""
        return self._lr

    @base_lr.setter
    def base_lr(self, value: float) -> None:
        lr = real(value, "base_lr")
        if self.warmup_begin_lr > lr:
            raise InvalidValue(f"base_lr ({lr:g}) must be at least warmup_begin_lr "
                               f"({self.warmup_begin_lr:g})")
        self._lr = self._start = self.warmup_final_lr = lr

    def get_warmup_lr(self, num_update: int) -> float:
        """The learning rate at ``num_update`` (< ``warmup_steps``) during warmup."""
        if not 0 <= num_update < self.warmup_steps:
            raise InvalidValue(f"get_warmup_lr: num_update must be in [0, {self.warmup_steps}), "
                               f"got {num_update}")
        if self.warmup_mode == "constant":
            return self.warmup_begin_lr
        rise = (self.warmup_final_lr - self.warmup_begin_lr) * num_update / self.warmup_steps
        return self.warmup_begin_lr + rise

    def __call__(self, num_update: int) -> float:
        """The learning rate at update count ``num_update``."""
        raise NotImplementedError("an LRScheduler subclass defines __call__")


class FactorScheduler(LRScheduler):
    """``base_lr * factor**k`` after ``k`` whole ``step``s past warmup (``num_update >
    k*step``), never below ``stop_factor_lr``."""

    def __init__(self, step: int, factor: float = 1, stop_factor_lr: float = 1e-8,
                 base_lr: float = 0.01, warmup_steps: int = 0, warmup_begin_lr: float = 0,
                 warmup_mode: str = "linear") -> None:
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        self.step = _count(step, "step", 1)
        self.factor = _factor(factor)
        self.stop_factor_lr = real(stop_factor_lr, "stop_factor_lr")
        self.count = 0

    def __call__(self, num_update: int) -> float:
        """The learning rate at update count ``num_update``."""
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while num_update > self.count + self.step:
            self.count += self.step
            self._lr = max(self._lr * self.factor, self.stop_factor_lr)
            _LOG.info("Update[%d]: learning rate now %0.5e", num_update, self._lr)
        return self._lr


class MultiFactorScheduler(LRScheduler):
    """``base_lr * factor**k`` with ``k`` the number of steps in the increasing list ``step``
    that ``num_update`` has passed (``num_update > step[i]``)."""

    def __init__(self, step: list[int], factor: float = 1, base_lr: float = 0.01,
                 warmup_steps: int = 0, warmup_begin_lr: float = 0,
                 warmup_mode: str = "linear") -> None:
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if not isinstance(step, list) or not step:
            raise InvalidType(f"step must be a non-empty list of ints, got {step!r}")
        for i, s in enumerate(step):
            _count(s, f"step[{i}]", 1)
            if i and s <= step[i - 1]:
                raise InvalidValue(f"step must be an increasing list of ints, got {step}")
        self.step = step
        self.factor = _factor(factor)
        self.cur_step_ind = 0
        self.count = 0

    def __call__(self, num_update: int) -> float:
        """The learning rate at update count ``num_update``."""
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while self.cur_step_ind < len(self.step) and num_update > self.step[self.cur_step_ind]:
            self.count = self.step[self.cur_step_ind]
            self.cur_step_ind += 1
            self._lr *= self.factor
            _LOG.info("Update[%d]: learning rate now %0.5e", num_update, self._lr)
        return self._lr


class _Decay(LRScheduler):
    """A decay from ``base_lr`` to ``final_lr`` over the ``max_update - warmup_steps`` updates
    after warmup, then ``final_lr`` (also when first called past ``max_update``: MXNet then
    returns ``base_lr``)."""

    def __init__(self, max_update: int, base_lr: float, final_lr: float, warmup_steps: int,
                 warmup_begin_lr: float, warmup_mode: str) -> None:
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        self.max_update = _count(max_update, "max_update", 1)
        self.final_lr = real(final_lr, "final_lr")
        self.max_steps = self.max_update - self.warmup_steps
        if self.max_steps < 1:
            raise InvalidValue(f"max_update ({max_update}) must exceed warmup_steps "
                               f"({warmup_steps})")

    def _shape(self, progress: float) -> float:
        """The share of ``base_lr - final_lr`` left at ``progress`` in [0, 1]."""
        raise NotImplementedError

    def __call__(self, num_update: int) -> float:
        """The learning rate at update count ``num_update``."""
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        progress = (min(num_update, self.max_update) - self.warmup_steps) / self.max_steps
        self._lr = self.final_lr + (self._start - self.final_lr) * self._shape(progress)
        return self._lr


class PolyScheduler(_Decay):
    """``final_lr + (base_lr - final_lr) * (1 - progress)**pwr`` after warmup, ``progress`` the
    share of the ``max_update - warmup_steps`` decay updates done; ``final_lr`` after."""

    def __init__(self, max_update: int, base_lr: float = 0.01, pwr: float = 2,
                 final_lr: float = 0, warmup_steps: int = 0, warmup_begin_lr: float = 0,
                 warmup_mode: str = "linear") -> None:
        super().__init__(max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr,
                         warmup_mode)
        self.power = real(pwr, "pwr")

    def _shape(self, progress: float) -> float:
        return (1.0 - progress) ** self.power


class CosineScheduler(_Decay):
    """``final_lr + (base_lr - final_lr) * (1 + cos(pi * progress)) / 2`` after warmup,
    ``progress`` as in ``PolyScheduler``; ``final_lr`` after."""

    def __init__(self, max_update: int, base_lr: float = 0.01, final_lr: float = 0,
                 warmup_steps: int = 0, warmup_begin_lr: float = 0,
                 warmup_mode: str = "linear") -> None:
        super().__init__(max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr,
                         warmup_mode)

    def _shape(self, progress: float) -> float:
        return (1.0 + math.cos(math.pi * progress)) / 2.0
