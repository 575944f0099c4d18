"""The backward pass: gradients of heads with respect to variables, through the recorded graph.

Nodes run in reverse topological order; each receives the sum of the gradients of its outputs
(zeros for an output nothing reached) and returns one per input. Sums keep sparse storage
(row_sparse + row_sparse is row_sparse, on the elementwise kernels), so an embedding's
gradient stays row_sparse up to its variable.

With ``create_graph`` the pass runs recording: the gradient rules are front-end ops, so the
gradients become recorded results that can be differentiated again. A rule not marked
``tape.differentiable`` (one that calls a kernel or numpy directly, or was not checked) has its
results recorded as one ``_backward_<op>`` node whose gradient raises naming the op, so a
higher-order gradient is exact or an error, never silently wrong.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from ..errors import InvalidValue, SparsegenError
from ..tape import Node, differentiable, is_differentiable, record, tracked
from .gradients import gradient_of
from . import state


_watched: dict[tuple[int, int], Any] | None = None
"""While ``watch`` runs: (node id, output position) -> the gradient that reached that output."""


@contextlib.contextmanager
def watch(entries: dict[tuple[int, int], Any]) -> Iterator[None]:
    """Fill ``entries`` (keys: a recorded array's ``_entry`` as ``(id(node), position)``) with
    the gradient each of those arrays receives in the backward passes run inside (what an
    executor's monitor reports as the backward outputs of the ops)."""
    global _watched
    previous, _watched = _watched, entries
    try:
        yield
    finally:
        _watched = previous


def _arrays(values: Any, name: str) -> list[Any]:
    from ..ndarray.ndarray import NDArray

    listed = list(values) if isinstance(values, (list, tuple)) else [values]
    for position, array in enumerate(listed):
        if not isinstance(array, NDArray):
            raise InvalidValue(f"autograd: {name}[{position}] must be an NDArray, got "
                               f"{type(array).__name__}")
    return listed


def _sum(existing: Any, new: Any) -> Any:
    from ..ndarray import elemwise

    return new if existing is None else elemwise.add(existing, new)


def _zeros(shape: tuple[int, ...], dtype: Any, ctx: Any) -> Any:
    from ..ndarray import zeros

    return zeros(shape, ctx=ctx, dtype=dtype)


def _order(heads: Sequence[Any]) -> list[Node]:
    """The nodes the heads depend on, each after every node that consumes its outputs."""
    seen: set[int] = set()
    order: list[Node] = []
    stack: list[tuple[Node, bool]] = [(h._entry[0], False) for h in heads if h._entry is not None]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        stack.extend((a._entry[0], False) for a in node.inputs
                     if a._entry is not None and id(a._entry[0]) not in seen)
    order.reverse()
    return order


def _check_gradient(node: Node, position: int, grad: Any) -> None:
    shape = node.inputs[position].shape
    if tuple(grad.shape) != tuple(shape):
        raise SparsegenError(f"autograd: the gradient of {node.op} for input {position} has shape "
                             f"{grad.shape}, the input {shape} (a bug in its gradient rule)")


def run(heads: Any, head_grads: Any, retain_graph: bool, train_mode: bool,
        create_graph: bool = False) -> dict[int, Any]:
    """The gradient of ``sum(head * head_grad)`` for every variable reached, keyed by ``id``
    (None for a variable reached only through zero gradients, such as ``sign``'s); recorded,
    to be differentiated again, with ``create_graph``."""
    from ..ndarray import ones

    heads = _arrays(heads, "heads")
    if head_grads is None:
        head_grads = [None] * len(heads)
    head_grads = list(head_grads) if isinstance(head_grads, (list, tuple)) else [head_grads]
    if len(head_grads) != len(heads):
        raise InvalidValue(f"autograd: {len(heads)} heads and {len(head_grads)} head_grads")
    pending: dict[tuple[int, int], Any] = {}
    found: dict[int, tuple[Any, Any]] = {}
    for position, (head, grad) in enumerate(zip(heads, head_grads)):
        if not tracked(head):
            raise SparsegenError(
                f"autograd: heads[{position}] is not in a recorded graph: compute it inside "
                "autograd.record() from arrays that have attach_grad() (a backward without "
                "retain_graph=True leaves the graph's results as plain arrays)")
        if grad is None:
            grad = ones(head.shape, ctx=head.context, dtype=head.dtype)
        elif tuple(grad.shape) != tuple(head.shape):
            raise InvalidValue(f"autograd: head_grads[{position}] has shape {grad.shape}, its "
                               f"head {head.shape}")
        _deposit(head, grad, pending, found)
    order = _order(heads)
    with state.record(train_mode) if create_graph else state.pause(train_mode):
        for node in order:
            _step(node, pending, found, create_graph)
    # as MXNet's, the results become plain arrays (constants later); a recorded backward pass
    # keeps them, since its gradients read them (MXNet's then fail to differentiate)
    if not (retain_graph or create_graph):
        for node in order:
            node.inputs = ()
            for ref in node.outputs:
                array = ref()
                if array is not None and array._entry is not None and array._entry[0] is node:
                    array._entry = None
    return found


def _deposit(array: Any, grad: Any, pending: dict, found: dict) -> None:
    if array._entry is not None:
        node, position = array._entry
        key = (id(node), position)
        pending[key] = _sum(pending.get(key), grad)
    elif array._grad is not None and array._grad_req != "null":
        previous = found.get(id(array), (array, None))[1]
        found[id(array)] = (array, _sum(previous, grad))


def _not_differentiable(op: str) -> Any:
    """The gradient of ``_backward_<op>``: an error naming ``op``."""

    def gradient(node: Node, out_grads: list[Any]) -> tuple[Any, ...]:
        raise SparsegenError(
            f"autograd: the gradient of {op} is not differentiable (no higher-order gradient: "
            f"_backward_{op} has none); see docs/autograd.md for the ops that have one")

    return gradient


def _sealed(node: Node, grads: Sequence[Any], out_grads: list[Any]) -> list[Any]:
    """``grads`` of a rule not marked differentiable, recorded as the outputs of one
    ``_backward_<op>`` node (aliases of the same storage) whose gradient raises."""
    from ..ndarray.storage import hold

    sealed = [None if g is None else hold(g._storage, g._ctx) for g in grads]
    outputs = [g for g in sealed if g is not None]
    op = node.op.split("->", 1)[0]  # an op with its output storage: the op's name
    if outputs:
        record(f"_backward_{op}", (*node.inputs, *out_grads), outputs,
               gradient=_not_differentiable(op))
    return sealed


@differentiable
def _constant(node: Node, out_grads: list[Any]) -> tuple[None, ...]:
    return (None,) * len(node.inputs)


def linked(value: Any, variables: Sequence[Any]) -> Any:
    """``value``, a gradient of a recorded backward pass, as a recorded result: itself when it
    is one, else (a gradient no recorded array reaches, such as ``radians``' or Dropout's) an
    alias recorded from ``variables`` with a zero gradient, so that differentiating it again
    gives zeros, as MXNet's."""
    from ..ndarray.storage import hold

    if tracked(value):
        return value
    alias = hold(value._storage, value._ctx)
    record("_constant_gradient", variables, [alias], gradient=_constant)
    return alias


def _step(node: Node, pending: dict, found: dict, create_graph: bool = False) -> None:
    out_grads = [pending.pop((id(node), k), None) for k in range(len(node.shapes))]
    if _watched is not None:
        for k, grad in enumerate(out_grads):
            if (id(node), k) in _watched:
                _watched[id(node), k] = grad
    if all(g is None for g in out_grads):
        return
    gradient = node.gradient or gradient_of(node.op)
    if gradient is None:
        raise SparsegenError(f"autograd: {node.op} has no gradient (it is not differentiable "
                             "in sparsegen, nor a gradient recorded with create_graph=True that "
                             "uses it); compute it outside autograd.record()")
    out_grads = [g if g is not None else _zeros(*node.shapes[k]) for k, g in enumerate(out_grads)]
    node.wanted = tuple(tracked(a) for a in node.inputs)
    grads = gradient(node, out_grads)
    if create_graph and not is_differentiable(gradient):
        grads = _sealed(node, grads, out_grads)
    for position, (array, grad) in enumerate(zip(node.inputs, grads)):
        if grad is not None and tracked(array):
            _check_gradient(node, position, grad)
            _deposit(array, grad, pending, found)
        elif grad is None and array._entry is None and tracked(array):
            found.setdefault(id(array), (array, None))  # a zero gradient: MXNet writes it
