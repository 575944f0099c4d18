"""``mx.contrib.amp.amp``: MXNet's automatic mixed precision, out of scope in sparsegen."""

from __future__ import annotations

from ...errors import NotSupported

__all__: list[str] = []


def __getattr__(name: str) -> object:
    """Any AMP function raises ``NotSupported`` naming it (docs/mxnet-differences.md)."""
    if name.startswith("__"):
        raise AttributeError(name)
    raise NotSupported(
        f"mx.contrib.amp.{name}: automatic mixed precision is out of scope in sparsegen "
        "(docs/mxnet-differences.md, 'Out of scope'); train in float32 or float64")
