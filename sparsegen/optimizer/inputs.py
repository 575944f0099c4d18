"""The state and index arguments of an optimizer update: their checks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import InvalidValue, SparsegenError


def state_tuple(state: Any, count: int, name: str) -> tuple[Any, ...]:
    """``state`` as a tuple of ``count`` states (what ``create_state`` returned)."""
    states = tuple(state) if isinstance(state, (tuple, list)) else (state,)
    if len(states) != count:
        raise SparsegenError(f"{name} takes {count} states (from create_state), got "
                             f"{'None' if state is None else len(states)}")
    return states


def check_index(index: Any) -> None:
    """An index names one weight: hashable, not a list (lists go through
    ``update_multi_precision`` or an ``Updater``: ``aggregated``)."""
    if isinstance(index, (list, tuple)):
        raise SparsegenError(f"index must name one weight (an int or a name), got {index!r}: "
                             "a list of indices (an aggregated update) is taken by "
                             "update_multi_precision and by an Updater")
    try:
        hash(index)
    except TypeError:
        raise SparsegenError(
            f"index must be an int or a name, got {type(index).__name__}"
        ) from None


def aggregated(index: Sequence[Any], weight: Any, grad: Any,
               state: Any) -> list[tuple[Any, Any, Any, Any]]:
    """(index, weight, grad, state) per weight of an aggregated update (MXNet's ``multi_*``
    updates: lists of one length), checked before any weight changes."""
    lists = {"weight": weight, "grad": grad, "state": state}
    for name, value in lists.items():
        if not isinstance(value, (list, tuple)) or len(value) != len(index):
            raise InvalidValue(f"an aggregated update of {len(index)} indices takes a list of "
                               f"{len(index)} for {name}, got {type(value).__name__}"
                               f"{f' of {len(value)}' if isinstance(value, (list, tuple)) else ''}")
    for i, w, g in zip(index, weight, grad):
        check_index(i)
        if getattr(w, "shape", None) != getattr(g, "shape", None):
            raise InvalidValue(f"aggregated update: weight {i!r} has shape "
                               f"{getattr(w, 'shape', None)}, its grad "
                               f"{getattr(g, 'shape', None)}")
    return list(zip(index, weight, grad, state))
