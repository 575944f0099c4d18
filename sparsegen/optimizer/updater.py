"""``Updater``: an optimizer applied to weights by index, their states kept between updates."""

from __future__ import annotations

import pickle
from typing import Any

from ..errors import InvalidValue
from ..ndarray import NDArray
from .base import Optimizer
from .inputs import aggregated, check_index


class Updater:
    """Applies an optimizer to weights by index, creating each state on first use (MXNet's
    ``Updater``, called as ``updater(index, grad, weight)``)."""

    def __init__(self, optimizer: Optimizer) -> None:
        self.optimizer = optimizer
        self.states: dict[Any, Any] = {}

    def __call__(self, index: Any, grad: Any, weight: Any) -> None:
        """Update ``weight`` from ``grad`` (or, given lists, each weight of an aggregated
        update in turn)."""
        if isinstance(index, (list, tuple)):
            steps = aggregated(index, weight, grad, [None] * len(index))
        else:
            check_index(index)
            steps = [(index, weight, grad, None)]
        for i, w, g, _ in steps:
            self.optimizer._set_current_context(w.context.device_id)
            state = (self.states[i] if i in self.states
                     else self.optimizer.create_state_multi_precision(i, w))
            self.optimizer.update_multi_precision(i, w, g, state)
            self.states[i] = state  # kept only once an update has succeeded

    def get_states(self, dump_optimizer: bool = False) -> bytes:
        """The states pickled (with the optimizer when ``dump_optimizer``), as MXNet's."""
        return pickle.dumps((self.states, self.optimizer) if dump_optimizer else self.states)

    def set_states(self, states: bytes) -> None:
        """Restore states (and the optimizer, if pickled with it) from ``get_states``."""
        loaded = pickle.loads(states)
        states_, optimizer = loaded if isinstance(loaded, tuple) else (loaded, self.optimizer)
        if not isinstance(states_, dict) or not isinstance(optimizer, Optimizer):
            raise InvalidValue("Updater.set_states: the bytes do not hold optimizer states "
                               "(get_states writes them)")
        self.optimizer, self.states = optimizer, states_


def get_updater(optimizer: Optimizer) -> Updater:
    """An ``Updater`` for ``optimizer``."""
    return Updater(optimizer)
