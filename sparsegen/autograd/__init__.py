"""``mx.autograd``: record ops, then compute gradients of their results, as MXNet 1.9.1.

``with autograd.record():`` links every op's outputs to a node of the graph (``sparsegen/tape.py``);
``backward`` runs the gradient rule of each node (``gradients/``, on the generated kernels) in
reverse order and writes the sums into the variables' gradient buffers (``attach_grad``),
keeping their storage type: a row_sparse gradient buffer receives the row_sparse gradient of
``dot(csr, w)`` or of ``Embedding(sparse_grad=True)``. ``grad(..., create_graph=True)`` records
the backward pass, so its gradients can be differentiated again (higher order). See
docs/autograd.md.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import tape
from ..errors import InvalidValue
from ..tape import GRAD_REQS, is_recording, is_training, set_recording, set_training
from . import engine
from .function import Function
from .state import pause, predict_mode, record, train_mode


def _in_stype(value: Any, stype: str) -> Any:
    """``value`` in storage type ``stype`` (csr and row_sparse convert through dense)."""
    if value.stype == stype:
        return value
    if "default" not in (value.stype, stype):
        value = value.tostype("default")
    return value.tostype(stype)


_HELD = sys.getrefcount(object())  # what getrefcount says of an object only its argument holds


def _sole(grad: Any, names: int) -> bool:
    """Whether ``grad`` (a row_sparse array ``names`` references of the caller hold), its storage
    and its values are held by nothing else and own their memory: a fresh kernel result that no
    other array, view or user name sees."""
    storage = grad._storage
    data = getattr(storage, "data", None)
    return (isinstance(data, np.ndarray) and data.base is None
            and sys.getrefcount(grad) == _HELD + names
            and sys.getrefcount(storage) == _HELD + 2  # the array's field, the local name
            and sys.getrefcount(data) == _HELD + 2)  # the storage's field, the local name


def _store(variable: Any, grad: Any, movable: bool = False) -> None:
    """Write (``grad_req='write'``) or add (``'add'``) ``grad`` into ``variable.grad``, in the
    buffer's storage type (``grad`` None: a zero gradient). A row_sparse result that nothing
    else holds (``movable``) moves into a row_sparse buffer instead of being copied: assigning a
    row_sparse buffer replaces its storage anyway, so the buffer ends the same and no copy is
    made."""
    from ..ndarray import elemwise, zeros
    from ..ndarray.storage import assign

    buffer = variable._grad
    if grad is None:  # a zero gradient: 'write' zeroes the buffer, 'add' leaves it
        if variable._grad_req == "write":
            assign(buffer, zeros(buffer.shape, ctx=buffer.context, dtype=buffer.dtype,
                                 stype=buffer.stype))
            variable._fresh_grad = True
        return
    if variable._grad_req == "add":
        grad, movable = elemwise.add(buffer, grad), False
    grad = _in_stype(grad, buffer.stype)
    if (movable and grad.stype == buffer.stype == "row_sparse" and grad.dtype == buffer.dtype
            and grad.shape == buffer.shape and grad._ctx == buffer._ctx):
        buffer._storage = grad._storage
    else:
        assign(buffer, grad)
    variable._fresh_grad = True  # gluon.Trainer's stale-gradient check reads it


def backward(heads: Any, head_grads: Any = None, retain_graph: bool = False,
             train_mode: bool = True) -> None:  # noqa: F811 - MXNet's argument name
    """Gradients of ``heads`` (weighted by ``head_grads``, default ones) into the ``grad`` of
    every variable they depend on (``attach_grad``), as ``mxnet.autograd.backward``."""
    found = list(engine.run(heads, head_grads, retain_graph, train_mode).values())
    while found:
        variable, grad = found.pop()
        # held by the two local names alone (no user, no second variable): it may move
        movable = grad is not None and grad.stype == "row_sparse" and _sole(grad, 2)
        _store(variable, grad, movable)


tape.install_backward(backward)  # NDArray.backward runs it through the tape (no upward import)


def grad(heads: Any, variables: Any, head_grads: Any = None, retain_graph: bool | None = None,
         create_graph: bool = False, train_mode: bool = True) -> list[Any]:  # noqa: F811
    """The gradients of ``heads`` with respect to ``variables`` (a list of new arrays; the
    variables' ``grad`` buffers are untouched), as ``mxnet.autograd.grad``; with
    ``create_graph`` they are recorded, to be differentiated again (``retain_graph`` defaults
    to ``create_graph``)."""
    from ..ndarray import zeros

    listed = engine._arrays(variables, "variables")
    for position, variable in enumerate(listed):
        if variable._grad is None or variable._grad_req == "null":
            raise InvalidValue(f"autograd.grad: variables[{position}] has no gradient buffer: "
                               "call attach_grad() on it before recording")
    retain = create_graph if retain_graph is None else retain_graph
    found = engine.run(heads, head_grads, bool(retain), train_mode, bool(create_graph))
    out = []
    # a recorded pass records the storage conversions too (outside record() as well)
    with record(train_mode) if create_graph else contextlib.nullcontext():
        for variable in listed:
            value = found.get(id(variable), (None, None))[1]
            stype = variable._grad.stype
            out.append(zeros(variable.shape, ctx=variable.context, dtype=variable.dtype,
                             stype=stype) if value is None else _in_stype(value, stype))
        if create_graph:  # every gradient in the graph, a constant one with a zero gradient
            out = [engine.linked(value, listed) for value in out]
    return out  # a list for one variable too, as MXNet 1.9.1's


def mark_variables(variables: Any, gradients: Any, grad_reqs: Any = "write") -> None:
    """Make ``variables`` variables whose gradients go into ``gradients``, as
    ``mxnet.autograd.mark_variables``."""
    variables = engine._arrays(variables, "variables")
    gradients = engine._arrays(gradients, "gradients")
    reqs = [grad_reqs] * len(variables) if isinstance(grad_reqs, str) else list(grad_reqs)
    if not len(variables) == len(gradients) == len(reqs):
        raise InvalidValue(f"mark_variables: {len(variables)} variables, {len(gradients)} "
                           f"gradients and {len(reqs)} grad_reqs")
    for position, (variable, buffer, req) in enumerate(zip(variables, gradients, reqs)):
        if req not in GRAD_REQS:
            raise InvalidValue(f"mark_variables: grad_reqs[{position}] must be one of "
                               f"{GRAD_REQS}, got {req!r}")
        if buffer.shape != variable.shape:
            raise InvalidValue(f"mark_variables: gradients[{position}] has shape {buffer.shape}, "
                               f"its variable {variable.shape}")
        variable._grad, variable._grad_req, variable._entry = buffer, req, None


_symbol_of: Callable[[Any], Any] | None = None


def install_get_symbol(build: Callable[[Any], Any]) -> None:
    """Make ``build(x)`` what ``get_symbol`` returns: the package installs ``mx.sym``'s, which
    lies above this module (``symbol/recorded.py``) and is imported on first use."""
    global _symbol_of
    _symbol_of = build


def get_symbol(x: Any) -> Any:
    """The computation recorded behind ``x`` as an ``mx.sym.Symbol``, as
    ``mxnet.autograd.get_symbol`` (docs/autograd.md)."""
    if _symbol_of is None:
        raise InvalidValue("autograd.get_symbol: no graph builder is installed (import "
                           "sparsegen installs it)")
    return _symbol_of(x)


def __getattr__(name: str) -> Any:
    """``NDArray``, which MXNet's autograd module exports too (its tests take it from
    ``from mxnet.autograd import *``); imported on use, as ndarray imports this module."""
    if name == "NDArray":
        from ..ndarray import NDArray

        return NDArray
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Function", "NDArray", "backward", "get_symbol", "grad", "is_recording",
           "is_training", "mark_variables", "pause", "predict_mode", "record", "set_recording",
           "set_training", "train_mode"]
