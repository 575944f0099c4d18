"""Gradients of ``batch_dot`` (batch_dots of the output gradient and the other operand) and
``cumsum`` (the running sums of the output gradient taken from the end)."""

from __future__ import annotations

from typing import Any

from ... import ndarray as nd
from ...ndarray.dispatch import densified
from ...tape import Node, differentiable
from .registry import gradient


@gradient("batch_dot", "batch_dot_transpose_a", "batch_dot_transpose_b",
          "batch_dot_transpose_a_transpose_b")
@differentiable
def _batch_dot(node: Node, out_grads: list[Any]) -> tuple[Any, Any]:
    a, b = node.inputs
    ta, tb = node.params["transpose_a"], node.params["transpose_b"]
    g = densified(out_grads[0])
    grad_a = grad_b = None
    if node.wanted[0]:
        grad_a = (nd.batch_dot(b, g, transpose_a=tb, transpose_b=True) if ta
                  else nd.batch_dot(g, b, transpose_b=not tb))
    if node.wanted[1]:
        grad_b = (nd.batch_dot(g, a, transpose_a=True, transpose_b=ta) if tb
                  else nd.batch_dot(a, g, transpose_a=not ta))
    return grad_a, grad_b


@gradient("cumsum")
@differentiable
def _cumsum(node: Node, out_grads: list[Any]) -> tuple[Any]:
    axis = node.params["axis"]
    g = densified(out_grads[0])
    return (nd.flip(nd.cumsum(nd.flip(g, axis=axis), axis=axis), axis=axis),)
