"""The recorded graph of ``mx.autograd``: the recording and training flags (one pair per
thread), and one ``Node`` per op run while recording, linked from its outputs.

This module sits below the front end (it imports only ``errors``): ``dispatch.invoke`` and the
views made without a kernel record their results here; ``sparsegen.autograd`` runs the
backward pass over the nodes, and installs it here (``install_backward``) for
``NDArray.backward`` to reach it through ``backward`` without importing upwards.

An array takes part in the graph when it is a *variable* (``attach_grad`` gave it a gradient
buffer and a ``grad_req`` other than ``'null'``) or the output of a recorded node
(``array._entry`` is ``(node, output position)``). Nodes hold their inputs (the backward pass
needs their values) and weak references to their outputs, so dropping the last result frees
the graph behind it.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import SparsegenError

Gradient = Callable[["Node", list[Any]], Sequence[Any]]
"""``gradient(node, out_grads) -> one gradient (or None: none) per input``."""

GRAD_REQS = ("write", "add", "null")
"""MXNet's ``grad_req`` values."""

class _Flags(threading.local):
    """The recording and training flags of one thread; the class attributes are the defaults
    (a missing attribute of a plain ``threading.local`` costs a caught AttributeError, about a
    microsecond, on every op)."""

    recording = False
    training = False
    calling = False  # inside a front-end call that ``front_end`` notes (its inner calls are not)
    made = 0  # the nodes recorded so far (a node's ``serial``)


_flags = _Flags()


def is_recording() -> bool:
    """Whether ops are being recorded for a backward pass (inside ``autograd.record()``)."""
    return _flags.recording


def is_training() -> bool:
    """Whether ops run in training mode (Dropout drops; ``record()`` turns it on by default)."""
    return _flags.training


def set_recording(is_record: bool) -> bool:
    """Turn recording on or off; returns the previous state."""
    previous = is_recording()
    _flags.recording = bool(is_record)
    return previous


def set_training(train_mode: bool) -> bool:
    """Turn training mode on or off; returns the previous state."""
    previous = is_training()
    _flags.training = bool(train_mode)
    return previous


BackwardPass = Callable[[Any, Any, bool, bool], None]
"""``backward(heads, head_grads, retain_graph, train_mode)``, as ``mx.autograd.backward``."""

_backward_pass: BackwardPass | None = None


def install_backward(run: BackwardPass) -> None:
    """Make ``run`` the backward pass ``backward`` calls (``sparsegen.autograd`` installs its
    own when it is imported)."""
    global _backward_pass
    _backward_pass = run


def backward(heads: Any, head_grads: Any = None, retain_graph: bool = False,
             train_mode: bool = True) -> None:
    """Run the backward pass over the graph behind ``heads`` (``NDArray.backward`` calls this).

    The pass is ``mx.autograd``'s: it runs the gradient rules, which are front-end ops, so
    ``sparsegen.autograd`` imports ``ndarray`` and ``ndarray`` cannot import it back (an
    import cycle). This module lies below both, so it holds the pass in a slot that
    ``sparsegen.autograd`` fills at its import. The slot is always filled where an array
    exists: importing any ``sparsegen`` module runs the package first, and
    ``sparsegen/__init__.py`` imports ``autograd`` (as nothing is recorded without
    ``autograd.record()`` or ``autograd.Function``, which import it too)."""
    if _backward_pass is None:
        raise SparsegenError("autograd: no backward pass is installed (sparsegen.autograd "
                             "installs it when imported; import sparsegen)")
    _backward_pass(heads, head_grads, retain_graph, train_mode)


@dataclass(eq=False)
class Node:
    """One recorded op: its name, inputs, parameters, outputs and gradient function."""

    op: str
    inputs: tuple[Any, ...]
    params: dict[str, Any]
    gradient: Gradient | None
    outputs: list[weakref.ref] = field(default_factory=list)
    shapes: list[tuple[tuple[int, ...], Any, Any]] = field(default_factory=list)
    wanted: tuple[bool, ...] = ()  # per input, whether the backward pass needs its gradient
    serial: int = 0  # the thread's count of recorded nodes when this one was made
    calls: dict[int, tuple["Call", int]] | None = None  # per output: the front-end call that
    # returned it and its position in that call's result (``front_end``)

    def output(self, position: int = 0) -> Any:
        """The ``position``-th output (alive whenever the backward pass reaches this node)."""
        array = self.outputs[position]()
        if array is None:
            raise SparsegenError(f"autograd: the output {position} of {self.op} was freed")
        return array


def differentiable(gradient: Gradient) -> Gradient:
    """Mark ``gradient`` as written wholly with recorded ops (``autograd.grad(...,
    create_graph=True)`` records it, and its results can be differentiated again)."""
    gradient.differentiable = True  # type: ignore[attr-defined]
    return gradient


def is_differentiable(gradient: Gradient) -> bool:
    """Whether ``gradient`` was marked by ``differentiable``."""
    return getattr(gradient, "differentiable", False)


@dataclass(eq=False)
class Call:
    """A call of an ``mx.nd`` function while recording (``FullyConnected(x, w, b,
    num_hidden=4)``): MXNet's op and its arguments as the user wrote them, which
    ``autograd.get_symbol`` rebuilds as one op of a graph (the nodes the call recorded hold
    the kernels' parameters instead)."""

    function: Any  # its dotted name under ``mx.nd`` (``FullyConnected``, ``sparse.retain``),
    # or a hybridized Gluon block's graph called as one op (``gluon.cached_graph.CachedCall``)
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


def front_end(function: Any, run: Callable[..., Any], args: tuple[Any, ...],
              kwargs: dict[str, Any]) -> Any:
    """``run(*args, **kwargs)``, the ``mx.nd`` function ``function`` (or a hybridized block);
    while recording, the outermost such call is noted on the nodes of the outputs it recorded
    (``Node.calls``). The callers: the wrapper every public ``mx.nd`` function has
    (``ndarray/keywords.py``) and a hybridized Gluon block recorded as one cached op."""
    if not _flags.recording or _flags.calling:
        return run(*args, **kwargs)
    before = _flags.made
    _flags.calling = True
    try:
        result = run(*args, **kwargs)
    finally:
        _flags.calling = False
    listed = result if isinstance(result, (list, tuple)) else [result]
    call = None
    for position, array in enumerate(listed):
        entry = getattr(array, "_entry", None)
        if entry is not None and entry[0].serial > before:  # recorded by this call
            call = call or Call(function, args, {k: v for k, v in kwargs.items()
                                                 if k not in ("name", "attr", "out")})
            if entry[0].calls is None:
                entry[0].calls = {}
            entry[0].calls[entry[1]] = (call, position)
    return result


def tracked(array: Any) -> bool:
    """Whether ``array`` takes part in the graph (a variable or a recorded output)."""
    return array._entry is not None or (array._grad is not None and array._grad_req != "null")


def check_write(op: str, inputs: Sequence[Any], out: Any) -> None:
    """Refuse, before ``op`` runs, to write a recorded result into one of its inputs or into a
    variable: the graph would lose the value its gradient needs."""
    if out is None or not is_recording() or not any(tracked(a) for a in inputs):
        return
    if (out._grad is not None and out._grad_req != "null") or any(out is a for a in inputs):
        raise SparsegenError(f"autograd: {op} would write into one of its inputs or into a "
                             "variable (an array with attach_grad) while recording; write into "
                             "a new array")


def check_inplace(op: str, arrays: Sequence[Any]) -> None:
    """Refuse an in-place update (``+=``, ``x[:] =``) of recorded arrays while recording, as
    MXNet does."""
    if is_recording() and any(tracked(a) for a in arrays if hasattr(a, "_entry")):
        raise SparsegenError(f"autograd: in-place operations ({op}: +=, -=, x[:] = ...) are not "
                             "supported on recorded arrays while recording; write x = x + y")


def record(op: str, inputs: Sequence[Any], outputs: Any, params: dict[str, Any] | None = None,
           gradient: Gradient | None = None) -> None:
    """Link ``outputs`` (an array or a list of arrays) to a new node of ``op`` when recording and
    an input is tracked; without ``gradient``, the backward pass uses the rule registered for
    ``op`` (``autograd/gradients``)."""
    if not is_recording() or not any(tracked(a) for a in inputs):
        return
    listed = outputs if isinstance(outputs, (list, tuple)) else [outputs]
    _flags.made += 1
    node = Node(op, tuple(inputs), dict(params or {}), gradient, serial=_flags.made)
    for position, array in enumerate(listed):
        node.outputs.append(weakref.ref(array))
        node.shapes.append((array.shape, array.dtype, array.context))
        array._entry = (node, position)
