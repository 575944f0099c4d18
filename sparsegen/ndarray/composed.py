"""What the ``mx.nd`` ops composed of other ops share: writing a composed result into ``out``."""

from __future__ import annotations

from .dispatch import deliver
from .ndarray import NDArray


def delivered(op: str, result: NDArray, out: NDArray | None) -> NDArray:
    """``result`` (a composed op's array), or written into ``out`` (checked: its shape and
    dtype; it keeps its storage type) and ``out`` returned."""
    if out is None:
        return result
    return deliver(op, result._storage, result.stype, result.context, (), out)
