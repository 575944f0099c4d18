"""Gradients of the shape and indexing ops that copy a strided view (transpose, slice, tile,
broadcast_to, ...), of concat and stack.

A view op reads input element ``offset + Σ p_k · strides[k]`` into output position ``p``; its
gradient sums the output gradient over the broadcast (stride 0) dimensions, then scatters it
to those offsets (``scatter_nd`` on offsets built by the arange and broadcast kernels).
"""

from __future__ import annotations

from typing import Any

from ... import ndarray as nd
from ...ops.strided import contiguous_strides
from ...tape import Node
from ...ndarray.storage import densified
from .registry import gradient

VIEW_OPS = ("transpose", "swapaxes", "flip", "expand_dims", "squeeze", "flatten", "reshape",
            "tile", "repeat", "broadcast_to", "broadcast_like", "broadcast_axis", "slice",
            "slice_axis", "slice_like", "split", "_getitem")
"""The ops that copy a strided view of their input (params ``shape``, ``view``, ``into``)."""


def _offsets(dims: list[int], strides: list[int], offset: int, ctx: Any) -> Any:
    """The int64 input offset of every element of a view (of shape ``dims``)."""
    total = nd.full(tuple(dims), offset, ctx=ctx, dtype="int64")
    for k, (n, s) in enumerate(zip(dims, strides)):
        step = nd.arange(0, n, ctx=ctx, dtype="int64") * s
        total = nd.broadcast_add(total, step.reshape(tuple(n if j == k else 1
                                                            for j in range(len(dims)))))
    return total


@gradient(*VIEW_OPS)
def _view(node: Node, out_grads: list[Any]) -> tuple[Any]:
    x = node.inputs[0]
    shape, view = tuple(node.params["shape"]), node.params["view"]
    g = densified(out_grads[0]).reshape(shape)
    spread = tuple(k for k, s in enumerate(view.strides) if s == 0 and shape[k] != 1)
    if spread:
        g = nd.sum(g, axis=spread)
    dims = [n for k, n in enumerate(shape) if k not in spread]
    strides = [s for k, s in enumerate(view.strides) if k not in spread]
    if x.size == 0 or g.size == 0:
        return (nd.zeros(x.shape, ctx=x.context, dtype=x.dtype),)
    plain = [s for n, s in zip(dims, strides) if n != 1]
    wanted = [s for n, s in zip(x.shape, contiguous_strides(x.shape)) if n != 1]
    if view.offset == 0 and plain == wanted:  # the same elements in the same order
        return (g.reshape(x.shape),)
    where = _offsets(dims, strides, view.offset, x.context).reshape((1, g.size))
    return (nd.scatter_nd(g.reshape((g.size,)), where, (x.size,)).reshape(x.shape),)


@gradient("concat")
def _concat(node: Node, out_grads: list[Any]) -> tuple[Any, ...]:
    axis, g = node.params["axis"], densified(out_grads[0])
    grads, start = [], 0
    for x in node.inputs:
        grads.append(nd.slice_axis(g, axis=axis, begin=start, end=start + x.shape[axis]))
        start += x.shape[axis]
    return tuple(grads)


@gradient("stack")
def _stack(node: Node, out_grads: list[Any]) -> tuple[Any, ...]:
    axis, g = node.params["axis"], densified(out_grads[0])
    return tuple(nd.slice_axis(g, axis=axis, begin=k, end=k + 1).reshape(x.shape)
                 for k, x in enumerate(node.inputs))
