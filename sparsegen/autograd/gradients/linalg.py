"""Gradients of ``dot`` and ``FullyConnected``.

``dot(csr, w)`` gives ``w`` the gradient ``csrᵀ · g``, computed by the csrᵀ·dense kernel as
row_sparse when ``w``'s gradient buffer is row_sparse (MXNet's sparse gradient), else dense.
"""

from __future__ import annotations

import math
from typing import Any

from ... import ndarray as nd
from ...tape import Node, differentiable
from ...ndarray.dispatch import densified
from .registry import gradient


def wants_row_sparse(array: Any) -> bool:
    """Whether ``array`` is a variable whose gradient buffer is row_sparse."""
    return array._grad is not None and array._grad.stype == "row_sparse"


def _dot(x: Any, y: Any, transpose_a: bool, transpose_b: bool) -> Any:
    """``op(x) · op(y)`` dense, in a form the dot kernels serve (dense·csr transposed on the
    left runs as the transpose of csrᵀ·dense)."""
    if x.stype == "default" and y.stype == "csr" and transpose_a:
        return nd.transpose(nd.dot(y, x, transpose_a=not transpose_b, forward_stype="default"))
    return densified(nd.dot(x, y, transpose_a=transpose_a, transpose_b=transpose_b))


@gradient("dot", "dot_transpose_a", "dot_transpose_b", "dot_transpose_a_transpose_b")
@differentiable
def _dot_gradient(node: Node, out_grads: list[Any]) -> tuple[Any, Any]:
    a, b = node.inputs
    ta, tb = node.params["transpose_a"], node.params["transpose_b"]
    g = densified(out_grads[0])
    if a.ndim == 1 or b.ndim == 1:  # a vector (never transposed) is a row on the left, a column
        a2 = a.reshape((1, -1)) if a.ndim == 1 else a  # on the right: the matrix gradients
        b2 = b.reshape((-1, 1)) if b.ndim == 1 else b
        g2 = g.reshape((a2.shape[1 if ta else 0], b2.shape[0 if tb else 1]))
        return ((_dot(b2, g2, tb, True) if ta else _dot(g2, b2, False, not tb)).reshape(a.shape)
                if node.wanted[0] else None,
                (_dot(g2, a2, True, ta) if tb else _dot(a2, g2, not ta, False)).reshape(b.shape)
                if node.wanted[1] else None)
    grad_a = grad_b = None
    if node.wanted[0]:
        grad_a = _dot(b, g, tb, True) if ta else _dot(g, b, False, not tb)
    if node.wanted[1] and a.stype == "csr" and not ta and not tb:
        # csrᵀ · g: row_sparse for a row_sparse buffer or a row_sparse b inside the graph
        # (MXNet's: the gradient of the FM's _square_sum(v) keeps the batch's rows)
        sparse = wants_row_sparse(b) or (b._grad is None and b.stype == "row_sparse")
        grad_b = nd.dot(a, g, transpose_a=True,
                        forward_stype="row_sparse" if sparse else "default")
    elif node.wanted[1]:
        grad_b = _dot(g, a, True, ta) if tb else _dot(a, g, not ta, False)
    return grad_a, grad_b


@gradient("FullyConnected")
@differentiable
def _fully_connected(node: Node, out_grads: list[Any]) -> tuple[Any, ...]:
    data, weight = node.inputs[:2]
    k = weight.shape[1]
    rows = data.shape[0] if node.params["flatten"] else math.prod(data.shape[:-1])
    g = densified(out_grads[0]).reshape((rows, weight.shape[0]))
    flat = data if data.stype != "default" else data.reshape((rows, k))  # sparse data is 2-D
    grad_data = nd.dot(g, weight).reshape(data.shape) if node.wanted[0] else None
    grad_weight = _dot(g, flat, True, False) if node.wanted[1] else None
    if len(node.inputs) == 2:
        return grad_data, grad_weight
    return grad_data, grad_weight, nd.sum(g, axis=0) if node.wanted[2] else None
