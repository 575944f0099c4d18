"""``mx.nd._internal``: MXNet's internal operators that sparse code calls by name."""

from __future__ import annotations

# -- reduce --
from .reduce import square_sum as _square_sum

__all__ = ["_square_sum"]
