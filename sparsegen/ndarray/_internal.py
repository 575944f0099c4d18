"""``mx.nd._internal``: MXNet's internal operators that sparse code calls by name, and the fused
ops sparsegen's Gluon losses run (``_sigmoid_bce``)."""

from __future__ import annotations

# -- reduce --
from .reduce import square_sum as _square_sum
# -- loss --
from .nn import _sigmoid_bce, _sigmoid_bce_grad

__all__ = ["_sigmoid_bce", "_sigmoid_bce_grad", "_square_sum"]
