"""``mx.nd._internal``: MXNet's internal operators that sparse code calls by name, and the fused
ops sparsegen's Gluon losses run (``_sigmoid_bce``)."""

from __future__ import annotations

# -- arith --
from .arith import UNION_FUNCTIONS
# -- elemwise --
from .elemwise import INTERNAL_UNARY_OPS
# -- reduce --
from .reduce import square_sum as _square_sum
# -- loss --
from .nn import _sigmoid_bce, _sigmoid_bce_grad
# -- scatter --
from .scatter import _scatter_elemwise_div, _scatter_minus_scalar, _scatter_plus_scalar

globals().update(UNION_FUNCTIONS)
globals().update(INTERNAL_UNARY_OPS)

__all__ = ["_scatter_elemwise_div", "_scatter_minus_scalar", "_scatter_plus_scalar",
           "_sigmoid_bce", "_sigmoid_bce_grad", "_square_sum", *UNION_FUNCTIONS,
           *INTERNAL_UNARY_OPS]
