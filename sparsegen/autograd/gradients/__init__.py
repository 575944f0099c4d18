"""The gradient rule of every differentiable op, keyed by the op's name in
``storage_rules.STORAGE_RULES``.

A gradient rule is ``gradient(node, out_grads) -> one gradient per input`` (``None``: that input
gets none), written with the front end's ops, so gradients run on the generated kernels like the
forward pass. Ops whose gradient is zero everywhere (comparisons, rounding, arg*) are listed
in ``ZERO``; an op with none raises when a backward pass reaches it.
"""

from .registry import GRADIENTS, ZERO, gradient, gradient_of
# the family modules register their gradient rules
from . import (batch, batchnorm, contrib, conv, elemwise, indexing, linalg,  # noqa: E402,F401
               linalg_ops, nn, output, reduce, rnn, shape, signal, svm)

__all__ = ["GRADIENTS", "ZERO", "gradient", "gradient_of"]
