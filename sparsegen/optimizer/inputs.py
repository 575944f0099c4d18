"""The state and index arguments of an optimizer update: their checks."""

from __future__ import annotations

from typing import Any

from ..errors import SparsegenError


def state_tuple(state: Any, count: int, name: str) -> tuple[Any, ...]:
    """``state`` as a tuple of ``count`` states (what ``create_state`` returned)."""
    states = tuple(state) if isinstance(state, (tuple, list)) else (state,)
    if len(states) != count:
        raise SparsegenError(f"{name} takes {count} states (from create_state), got "
                             f"{'None' if state is None else len(states)}")
    return states


def check_index(index: Any) -> None:
    """An index names one weight: hashable, not a list (aggregated updates are not supported)."""
    if isinstance(index, (list, tuple)):
        raise SparsegenError(f"index must name one weight (an int or a name), got {index!r}: "
                             "aggregated updates of a list of indices are not supported")
    try:
        hash(index)
    except TypeError:
        raise SparsegenError(
            f"index must be an int or a name, got {type(index).__name__}"
        ) from None
