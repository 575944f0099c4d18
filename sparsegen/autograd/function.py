"""``autograd.Function``: a user-written forward and backward pass, recorded as one node."""

from __future__ import annotations

from typing import Any

from .. import tape
from ..errors import SparsegenError
from . import state


class Function:
    """Subclass and define ``forward(*inputs)`` and ``backward(*output_grads)`` (one gradient
    per input), then call an instance once, as ``mxnet.autograd.Function``."""

    def __init__(self) -> None:
        self._used = False
        self.saved_tensors: tuple[Any, ...] = ()

    def save_for_backward(self, *args: Any) -> None:
        """Keep ``args`` for ``backward`` (as ``self.saved_tensors``)."""
        self.saved_tensors = args

    def forward(self, *inputs: Any) -> Any:
        """The outputs (an NDArray or a tuple of them) of ``inputs``."""
        raise NotImplementedError(f"{type(self).__name__} must define forward")

    def backward(self, *output_grads: Any) -> Any:
        """The gradients of the inputs (an NDArray or a tuple, one per input)."""
        raise NotImplementedError(f"{type(self).__name__} must define backward")

    def __call__(self, *inputs: Any) -> Any:
        if self._used:
            raise SparsegenError("an autograd.Function instance can be called once; create "
                                 "another instance for another call")
        self._used = True
        with state.pause(state.is_training()):
            outputs = self.forward(*inputs)
        listed = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        tape.record(type(self).__name__, inputs, listed, gradient=self._gradient)
        return outputs

    def _gradient(self, node: tape.Node, out_grads: list[Any]) -> tuple[Any, ...]:
        grads = self.backward(*out_grads)
        grads = tuple(grads) if isinstance(grads, (list, tuple)) else (grads,)
        if len(grads) != len(node.inputs):
            raise SparsegenError(f"{type(self).__name__}.backward returned {len(grads)} "
                                 f"gradients for {len(node.inputs)} inputs")
        return grads
