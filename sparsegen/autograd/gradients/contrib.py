"""Gradients of ``mx.nd.contrib``'s recorded ops, as MXNet 1.9.1's backward passes:
``gradientmultiplier`` scales the head gradient, the straight-through estimators pass it on."""

from __future__ import annotations

from typing import Any

from ...tape import Node, differentiable
from .registry import gradient


@gradient("_contrib_gradientmultiplier")
@differentiable
def _gradientmultiplier(node: Node, out_grads: list[Any]) -> tuple[Any]:
    return (out_grads[0] * node.params["scalar"],)


@gradient("_contrib_round_ste", "_contrib_sign_ste")
@differentiable
def _straight_through(node: Node, out_grads: list[Any]) -> tuple[Any]:
    return (out_grads[0],)
