"""The gradient rule of every differentiable op, keyed by the op's name in ``rules.OP_RULES``.

A rule is ``gradient(node, out_grads) -> one gradient per input`` (``None``: that input gets
none), written with the front end's ops, so gradients run on the generated kernels like the
forward pass. Ops whose gradient is zero everywhere (comparisons, rounding, arg*) are listed
in ``ZERO``; an op with no rule raises when a backward pass reaches it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..tape import Gradient, Node

_RULES: dict[str, Gradient] = {}


def gradient(*ops: str) -> Callable[[Gradient], Gradient]:
    """Register the decorated function as the gradient rule of ``ops``."""

    def register(function: Gradient) -> Gradient:
        for op in ops:
            _RULES[op] = function
        return function

    return register


def _zero(node: Node, out_grads: list[Any]) -> tuple[None, ...]:
    return (None,) * len(node.inputs)


ZERO = (
    "argmax", "argmin", "argsort", "ceil", "equal", "fix", "floor", "greater", "greater_equal",
    "lesser", "lesser_equal", "not_equal", "rint", "round", "sign", "trunc", "one_hot",
    "_equal_scalar", "_greater_equal_scalar", "_greater_scalar", "_lesser_equal_scalar",
    "_lesser_scalar", "_not_equal_scalar", "broadcast_equal", "broadcast_greater",
    "broadcast_greater_equal", "broadcast_lesser", "broadcast_lesser_equal", "broadcast_not_equal",
    "broadcast_logical_and", "broadcast_logical_or", "broadcast_logical_xor", "getnnz",
)
"""Ops whose gradient is zero (MXNet registers zero gradients for them)."""
for _op in ZERO:
    _RULES[_op] = _zero


def gradient_of(op: str) -> Gradient | None:
    """The gradient rule of ``op`` (``name->stype`` variants share their op's), or None."""
    return _RULES.get(op.split("->", 1)[0])


# imported on the first recorded op (tape.record), when the front end is loaded
from . import elemwise, linalg, nn, reduce, shape  # noqa: E402,F401 - they register rules
