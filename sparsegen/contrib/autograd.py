"""``mx.contrib.autograd``: MXNet's first autograd interface (``train_section``,
``compute_gradient``, ``grad_and_loss``), kept by MXNet 1.9.1 beside ``mx.autograd`` and
written here over it: a training section records and trains, as ``autograd.record()``."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .. import autograd
from ..errors import InvalidType
from ..ndarray import NDArray, zeros_like


def set_is_training(is_train: bool) -> bool:
    """Set recording and training together (``is_train``); the recording state before."""
    previous = autograd.is_recording()
    autograd.set_recording(bool(is_train))
    autograd.set_training(bool(is_train))
    return previous


class TrainingStateScope:
    """A ``with`` scope that records and trains (``enter_state`` True) or does neither."""

    def __init__(self, enter_state: bool) -> None:
        self._enter_state = bool(enter_state)
        self._prev: bool | None = None

    def __enter__(self) -> None:
        self._prev = set_is_training(self._enter_state)

    def __exit__(self, *exc: Any) -> None:
        if self._prev != self._enter_state:
            set_is_training(bool(self._prev))


def train_section() -> TrainingStateScope:
    """A scope whose ops are recorded in training mode (``autograd.record()``)."""
    return TrainingStateScope(True)


def test_section() -> TrainingStateScope:
    """A scope inside a training section whose ops are neither recorded nor trained."""
    return TrainingStateScope(False)


test_section.__test__ = False  # type: ignore[attr-defined]  # MXNet's name; not a test


def mark_variables(variables: Any, gradients: Any, grad_reqs: Any = "write") -> None:
    """``autograd.mark_variables``: gradients of ``variables`` go to ``gradients``."""
    autograd.mark_variables(variables, gradients, grad_reqs)


def backward(outputs: Any, out_grads: Any = None, retain_graph: bool = False) -> None:
    """``autograd.backward`` of a list of outputs."""
    if not isinstance(outputs, (list, tuple)):
        raise InvalidType(f"backward: outputs must be a list or tuple of NDArrays, got "
                          f"{type(outputs).__name__}")
    autograd.backward(list(outputs), out_grads, retain_graph)


def compute_gradient(outputs: Any) -> None:
    """``backward(outputs)`` (MXNet's deprecated name)."""
    backward(outputs)


def grad_and_loss(func: Callable[..., Any], argnum: Any = None) -> Callable[..., Any]:
    """``func`` wrapped to return (gradients of its arguments, or of those ``argnum`` names,
    its output), recorded in a training section."""

    @functools.wraps(func)
    def wrapped(*args: Any) -> tuple[list[NDArray], Any]:
        chosen = args if argnum is None else [
            args[i] for i in (argnum if isinstance(argnum, list) else [argnum])]
        for position, x in enumerate(chosen):
            if not isinstance(x, NDArray):
                raise InvalidType(f"grad_and_loss: argument {position} to differentiate must "
                                  f"be an NDArray, got {type(x).__name__}")
        grads = [zeros_like(x) for x in chosen]
        mark_variables(list(chosen), grads)
        with train_section():
            outputs = func(*args)
        compute_gradient([outputs] if isinstance(outputs, NDArray) else outputs)
        return grads, outputs

    return wrapped


def grad(func: Callable[..., Any], argnum: Any = None) -> Callable[..., list[NDArray]]:
    """``func`` wrapped to return the gradients of its arguments (or of those ``argnum``
    names)."""
    with_loss = grad_and_loss(func, argnum)

    @functools.wraps(func)
    def wrapped(*args: Any) -> list[NDArray]:
        return with_loss(*args)[0]

    return wrapped


__all__ = ["TrainingStateScope", "backward", "compute_gradient", "grad", "grad_and_loss",
           "mark_variables", "set_is_training", "test_section", "train_section"]
