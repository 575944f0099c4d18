"""``Updater``: an optimizer applied to weights by index, their states kept between updates."""

from __future__ import annotations

from typing import Any

from ..ndarray import NDArray
from .base import Optimizer
from .inputs import check_index


class Updater:
    """Applies an optimizer to weights by index, creating each state on first use (MXNet's
    ``Updater``, called as ``updater(index, grad, weight)``)."""

    def __init__(self, optimizer: Optimizer) -> None:
        self.optimizer = optimizer
        self.states: dict[Any, Any] = {}

    def __call__(self, index: Any, grad: NDArray, weight: NDArray) -> None:
        check_index(index)
        state = self.states.get(index)
        if index not in self.states:
            state = self.optimizer.create_state_multi_precision(index, weight)
        self.optimizer.update_multi_precision(index, weight, grad, state)
        self.states[index] = state  # kept only once an update has succeeded


def get_updater(optimizer: Optimizer) -> Updater:
    """An ``Updater`` for ``optimizer``."""
    return Updater(optimizer)
