"""``mx.nd.contrib``: MXNet's contrib operators that sparse code uses."""

from __future__ import annotations

# -- arith --
from .arith import quadratic

__all__ = ["quadratic"]
