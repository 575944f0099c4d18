"""Gradients of the reductions: each input element receives the gradient of the result it
was reduced into (spread back over the reduced axes)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import ndarray as nd
from ...tape import Node, differentiable
from ...device import to_host
from ...formats import RowSparse
from ...ndarray.dispatch import densified
from ...ndarray.storage import wrap
from .registry import gradient


def _axes(node: Node) -> tuple[int, ...]:
    if node.op == "_sparse_reduce":
        axis = node.params["axis"]
        return (0, 1) if axis is None else (axis,)
    return tuple(node.params["axes"])


def _spread(value: Any, shape: tuple[int, ...], axes: tuple[int, ...]) -> Any:
    """A reduction's result (or its gradient) broadcast back over the reduced ``axes``."""
    kept = tuple(1 if k in axes else n for k, n in enumerate(shape))
    if 0 in shape:  # broadcast_to reads a 0 as "keep this dimension"
        return nd.zeros(shape, ctx=value.context, dtype=value.dtype)
    if kept == tuple(shape):  # the reduced axes have length 1: nothing to spread
        return densified(value).reshape(kept)
    return nd.broadcast_to(densified(value).reshape(kept), shape)


@gradient("sum", "mean", "nansum", "norm", "max", "min", "prod", "nanprod", "_sparse_reduce")
@differentiable
def _reduction(node: Node, out_grads: list[Any]) -> tuple[Any]:
    x = node.inputs[0]
    axes = _axes(node)
    g = _spread(out_grads[0], x.shape, axes)
    reduction = node.params["reduction"]
    if reduction == "mean":
        count = math.prod(x.shape[a] for a in axes)
        return (g / count if count > 1 else g,)  # x / 1 is x, for every float
    if reduction == "sum":
        return (g,)
    y = _spread(node.output(), x.shape, axes)
    values = densified(x)
    local = {
        "nansum": lambda: values == values,  # 1 where x is not NaN
        "norm": lambda: values / y,  # ord 2 (the sparse kernels' norm)
        "norm2": lambda: values / y,
        "norm1": lambda: nd.sign(values),
        "max": lambda: values == y,
        "min": lambda: values == y,
        "prod": lambda: y / values,
        "nanprod": lambda: nd.where(values == values, y / values, nd.zeros_like(values)),
    }[reduction]()
    return (g * local,)


@gradient("_square_sum")
def _square_sum(node: Node, out_grads: list[Any]) -> tuple[Any]:
    x, head = node.inputs[0], out_grads[0]
    axes = (node.params.get("axis", 1),)  # the row_sparse result: axis 1, keepdims
    if head.stype == "row_sparse" and x.stype == "row_sparse" and axes == (1,):
        # MXNet's: the head's rows r, each 2 x[r] * head[r] (computed on those rows only)
        ids, head_ids = x._storage.indices, head._storage.indices
        same = ids.shape == head_ids.shape and np.array_equal(to_host(ids), to_host(head_ids))
        rows = x if same else nd.sparse.retain(x, head.indices)
        values = nd.broadcast_mul(rows.data, head.data.reshape((-1, 1)) * 2)
        return (wrap(RowSparse(values._storage, rows._storage.indices, x.shape), x.context),)
    return (x * _spread(head, x.shape, axes) * 2,)
