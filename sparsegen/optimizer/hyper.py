"""Optimizer hyper-parameters: an attribute checked whenever it is set, and its checks."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ..errors import SparsegenError
from ..params import real

Check = Callable[[Any, str], Any]
"""``check(value, name)``: the value to store, or raise naming the parameter."""


def at_least_0(value: Any, name: str) -> float:
    """A finite real >= 0."""
    return real(value, name, low=0.0)


def positive(value: Any, name: str) -> float:
    """A finite real > 0."""
    return real(value, name, low=0.0, low_open=True)


def unit(value: Any, name: str) -> float:
    """A real in [0, 1)."""
    return real(value, name, low=0.0, high=1.0, high_open=True)


def lr_at_least_0(value: Any, name: str) -> float | None:
    """A learning rate >= 0, or ``None`` (the scheduler's)."""
    return None if value is None else at_least_0(value, name)


def lr_positive(value: Any, name: str) -> float | None:
    """A learning rate > 0, or ``None`` (the scheduler's)."""
    return None if value is None else positive(value, name)


def gradient_clip(value: Any, name: str) -> float | None:
    """A gradient clip bound: ``None`` or any real (inf, or <= 0: no clipping)."""
    return None if value is None else real(value, name, allow_inf=True)


def clip_bound(value: float | None) -> float:
    """The kernels' bound of a clip parameter: the value when positive, else no clipping (inf,
    MXNet's rule for ``None`` and values <= 0)."""
    return float(value) if value is not None and value > 0 else math.inf


def scheduler(value: Any, name: str) -> Any:
    """``None`` or a callable of the update count."""
    if value is not None and not callable(value):
        raise SparsegenError(f"{name} must be None or a callable of the update count, "
                             f"got {type(value).__name__}")
    return value


def multipliers(value: Any, name: str) -> dict[Any, float]:
    """A dict of weight indices or names to multipliers (finite, >= 0)."""
    if not isinstance(value, dict):
        raise SparsegenError(f"{name} must be a dict of weight indices or names to multipliers, "
                             f"got {type(value).__name__}")
    return {key: at_least_0(v, f"{name}[{key!r}]") for key, v in value.items()}


class Hyper:
    """An optimizer attribute whose value is checked whenever it is set (``check(value, name)``
    returns the value stored), so ``opt.lr = 'x'`` raises where it is written."""

    def __init__(self, check: Check, label: str | None = None) -> None:
        self.check = check
        self.label = label

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        self.label = self.label or name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        try:
            return obj.__dict__[self.name]
        except KeyError:
            raise AttributeError(f"{type(obj).__name__} has no {self.name} yet") from None

    def __set__(self, obj: Any, value: Any) -> None:
        obj.__dict__[self.name] = self.check(value, self.label)
