"""The table of gradient rules (one per differentiable op) and the decorator that fills it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...tape import Gradient, Node, differentiable

GRADIENTS: dict[str, Gradient] = {}
"""The gradient rule of each op, by name (filled by the family modules)."""


def gradient(*ops: str) -> Callable[[Gradient], Gradient]:
    """Register the decorated function as the gradient rule of ``ops``."""

    def register(function: Gradient) -> Gradient:
        for op in ops:
            GRADIENTS[op] = function
        return function

    return register


@differentiable
def _zero(node: Node, out_grads: list[Any]) -> tuple[None, ...]:
    return (None,) * len(node.inputs)


ZERO = (
    "argmax", "argmin", "argsort", "ceil", "equal", "fix", "floor", "greater", "greater_equal",
    "lesser", "lesser_equal", "not_equal", "rint", "round", "sign", "trunc", "one_hot",
    "_equal_scalar", "_greater_equal_scalar", "_greater_scalar", "_lesser_equal_scalar",
    "_lesser_scalar", "_not_equal_scalar", "broadcast_equal", "broadcast_greater",
    "broadcast_greater_equal", "broadcast_lesser", "broadcast_lesser_equal", "broadcast_not_equal",
    "broadcast_logical_and", "broadcast_logical_or", "broadcast_logical_xor", "getnnz",
    "_sample_uniform", "_sample_normal", "_sample_gamma", "_sample_exponential", "_sample_poisson",
    "_sample_negative_binomial", "_sample_generalized_negative_binomial",
)
"""Ops whose gradient is zero (MXNet registers zero gradients for them; the samplers with array
parameters too)."""
for _op in ZERO:
    GRADIENTS[_op] = _zero


def gradient_of(op: str) -> Gradient | None:
    """The gradient rule of ``op`` (``name->stype`` variants share their op's), or None."""
    return GRADIENTS.get(op.split("->", 1)[0])

