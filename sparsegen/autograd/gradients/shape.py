"""Gradients of the shape and indexing ops that copy a strided view (transpose, slice, tile,
broadcast_to, ...), of concat and stack (csr concat too), of pad and of csr slices.

A view op reads input element ``offset + Σ p_k · strides[k]`` into output position ``p``; its
gradient sums the output gradient over the broadcast (stride 0) dimensions, then scatters it
to those offsets (``scatter_nd`` on offsets built by the arange and broadcast kernels).
"""

from __future__ import annotations

from typing import Any

from ... import ndarray as nd
from ...ops.shape import VIEW_OPS
from ...ops.strided import contiguous_strides
from ...tape import Node, differentiable
from ...ndarray.dispatch import densified
from .nn import take_gradient
from .registry import gradient


def view_offsets(dims: list[int], strides: list[int], offset: int, ctx: Any) -> Any:
    """The int64 input offset of every element of a view (of shape ``dims``)."""
    total = nd.full(tuple(dims), offset, ctx=ctx, dtype="int64")
    for k, (n, s) in enumerate(zip(dims, strides)):
        step = nd.arange(0, n, ctx=ctx, dtype="int64") * s
        total = nd.broadcast_add(total, step.reshape(tuple(n if j == k else 1
                                                            for j in range(len(dims)))))
    return total


@gradient(*VIEW_OPS)
@differentiable
def _view(node: Node, out_grads: list[Any]) -> tuple[Any]:
    x = node.inputs[0]
    shape, view = tuple(node.params["shape"]), node.params["view"]
    if x.size == 0 or 0 in shape:  # (reshape reads a 0 as "keep this dimension")
        return (nd.zeros_like(x),)
    g = densified(out_grads[0]).reshape(shape)
    spread = tuple(k for k, s in enumerate(view.strides) if s == 0 and shape[k] != 1)
    if spread:
        g = nd.sum(g, axis=spread)
    dims = [n for k, n in enumerate(shape) if k not in spread]
    strides = [s for k, s in enumerate(view.strides) if k not in spread]
    plain = [s for n, s in zip(dims, strides) if n != 1]
    wanted = [s for n, s in zip(x.shape, contiguous_strides(x.shape)) if n != 1]
    if view.offset == 0 and plain == wanted and g.size == x.size:  # the same elements, in order
        return (g.reshape(x.shape),)
    where = view_offsets(dims, strides, view.offset, x.context).reshape((1, g.size))
    return (nd.scatter_nd(g.reshape((g.size,)), where, (x.size,)).reshape(x.shape),)


@gradient("concat", "_concat_csr")
@differentiable
def _concat(node: Node, out_grads: list[Any]) -> tuple[Any, ...]:
    axis, g = node.params.get("axis", 0), densified(out_grads[0])  # csr concat: along axis 0
    grads, start = [], 0
    for x in node.inputs:
        grads.append(nd.slice_axis(g, axis=axis, begin=start, end=start + x.shape[axis]))
        start += x.shape[axis]
    return tuple(grads)


@gradient("stack")
@differentiable
def _stack(node: Node, out_grads: list[Any]) -> tuple[Any, ...]:
    axis, g = node.params["axis"], densified(out_grads[0])
    return tuple(nd.slice_axis(g, axis=axis, begin=k, end=k + 1).reshape(x.shape)
                 for k, x in enumerate(node.inputs))


def _pad_source(n: int, before: int, after: int, mode: str, ctx: Any) -> Any:
    """The int64 input position each of the ``before + n + after`` padded positions of an axis
    reads: the nearest edge (``edge``) or the mirror image without the edge (``reflect``)."""
    p = nd.arange(-before, n + after, ctx=ctx, dtype="int64")
    if mode == "edge":
        return nd.clip(p, 0, n - 1)
    return (n - 1) - nd.abs((n - 1) - nd.abs(p))  # one reflection: the widths are below n


@gradient("pad")
def _pad(node: Node, out_grads: list[Any]) -> tuple[Any]:
    x, g = node.inputs[0], densified(out_grads[0])
    before, after, mode = node.params["before"], node.params["after"], node.params["mode"]
    axes = range(2, x.ndim)
    if mode == "constant" or x.size == 0:
        return (nd.slice(g, begin=(0, 0, *before), end=(None, None, *(
            b + n for b, n in zip(before, x.shape[2:])))),)
    shape = list(g.shape)
    for axis in reversed(axes):  # edge and reflect read x[src(i), src(j), ...]: one take per axis
        shape[axis] = x.shape[axis]
        rows = _pad_source(x.shape[axis], before[axis - 2], after[axis - 2], mode, x.context)
        g = take_gradient(rows, g, tuple(shape), axis)
    return (g,)


@gradient("_slice_csr")
def _slice_csr(node: Node, out_grads: list[Any]) -> tuple[Any]:
    x, g = node.inputs[0], out_grads[0]
    (r0, r1), (c0, c1) = node.params["rows"], node.params["cols"]
    for axis, (start, stop) in enumerate(((r0, r1), (c0, c1))):  # dense, as MXNet's
        shape = (x.shape[0], c1 - c0) if axis == 0 else x.shape
        rows = (nd.arange(start, stop, ctx=x.context, dtype="int64") if stop > start
                else nd.zeros((0,), ctx=x.context, dtype="int64"))
        g = take_gradient(rows, g, shape, axis)
    return (g,)


@gradient("_copyto")
@differentiable
def _copyto(node: Node, out_grads: list[Any]) -> tuple[Any]:
    """A copy to another context (``as_in_context``): the gradient goes back to the input's."""
    return (out_grads[0].as_in_context(node.inputs[0].context),)
