"""Gradients of the ops that read elements at computed positions: gather_nd, scatter_nd,
advanced indexing (``x[[0, 2]]``, ``x[mask]``), sort and topk (values), retain.

The output gradient goes back to the positions each output element was read from: added up
by ``add_rows`` (the csrᵀ·dense kernel) where positions may repeat, scattered by
``scatter_nd`` where they are distinct (sort and topk read each position of a line once).
"""

from __future__ import annotations

import math
from typing import Any

from ... import ndarray as nd
from ...ndarray.dispatch import densified
from ...ndarray.storage import wrap
from ...tape import Node, differentiable
from .nn import add_rows
from .registry import gradient
from .shape import view_offsets


@gradient("gather_nd")
def _gather_nd(node: Node, out_grads: list[Any]) -> tuple[Any, None]:
    data, indices = node.inputs
    m, picks = indices.shape[0], math.prod(indices.shape[1:])
    count, width = math.prod(data.shape[:m]), math.prod(data.shape[m:])
    if 0 in (picks, count, width):
        return nd.zeros_like(data), None
    ids = indices.astype("int64").reshape((m, picks))  # truncated toward zero, as the forward
    rows, stride = None, count
    for axis in range(m):  # the flat row of data[ids[0], ..., ids[m-1]] (negative ids wrap)
        stride //= data.shape[axis]
        row = nd.modulo(ids[axis], data.shape[axis]) * stride
        rows = row if rows is None else rows + row
    g = densified(out_grads[0]).reshape((picks, width))
    return add_rows(rows, g, count).reshape(data.shape), None


@gradient("scatter_nd")
@differentiable
def _scatter_nd(node: Node, out_grads: list[Any]) -> tuple[Any, None]:
    # every element of data is written to one position: it receives that position's gradient
    return nd.gather_nd(densified(out_grads[0]), node.inputs[1]), None


@gradient("_getitem_advanced")
def _getitem_advanced(node: Node, out_grads: list[Any]) -> tuple[Any]:
    x, g = node.inputs[0], out_grads[0]
    if x.size == 0 or g.size == 0:
        return (nd.zeros_like(x),)
    # the flat position each result element was read from, by the same indexing of positions
    where = nd.arange(0, x.size, ctx=x.context, dtype="int64").reshape(x.shape)[node.params["key"]]
    grad = add_rows(where.reshape((g.size,)), densified(g).reshape((g.size, 1)), x.size)
    return (grad.reshape(x.shape),)


def _scatter_lines(x: Any, ids: Any, g: Any, axis: int) -> Any:
    """``g`` scattered to the positions ``ids`` (int64, distinct in each line) name along
    ``axis`` of ``x``: what a gradient of sort or topk's values is."""
    if g.size == 0:
        return nd.zeros_like(x)
    n, post = x.shape[axis], math.prod(x.shape[axis + 1:])
    dims = [math.prod(x.shape[:axis]), ids.shape[axis], post]
    where = nd.broadcast_add(view_offsets(dims, [n * post, 0, 1], 0, x.context),
                             ids.reshape(tuple(dims)) * post)
    flat = densified(g).reshape((g.size,))
    return nd.scatter_nd(flat, where.reshape((1, g.size)), (x.size,)).reshape(x.shape)


@gradient("sort")
def _sort(node: Node, out_grads: list[Any]) -> tuple[Any]:
    x, p = node.inputs[0], node.params
    ids = nd.argsort(x, axis=p["axis"], is_ascend=p["is_ascend"], dtype="int64")  # stable
    return (_scatter_lines(x, ids, out_grads[0], p["axis"]),)


@gradient("topk", "_topk_both")
def _topk(node: Node, out_grads: list[Any]) -> tuple[Any]:
    x, p = node.inputs[0], node.params
    if p["ret_typ"] not in ("value", "both"):  # indices and masks: a zero gradient, as MXNet
        return (None,)
    ids = nd.topk(x, axis=p["axis"], k=p["k"], is_ascend=p["is_ascend"], ret_typ="indices",
                  dtype="int64")  # the positions the forward took (ties: the first ones)
    return (_scatter_lines(x, ids, out_grads[0], p["axis"]),)


@gradient("_sample_multinomial")
def _multinomial(node: Node, out_grads: list[Any]) -> tuple[Any]:
    """The log-probability output's gradient, as MXNet's: each draw adds its gradient over the
    probability it was drawn with to that outcome (one-hot rows summed over the draws)."""
    x, p = node.inputs[0], node.params
    lines = (*x.shape[:-1], -1)
    ids, logp = p["samples"].reshape(lines), p["log_prob"].reshape(lines)
    share = densified(out_grads[1]).reshape(lines) / nd.exp(logp)
    hits = nd.one_hot(ids, depth=x.shape[-1], dtype=x.dtype)
    return (nd.sum(nd.broadcast_mul(hits, nd.expand_dims(share, axis=-1)), axis=-2),)


@gradient("retain")
def _retain(node: Node, out_grads: list[Any]) -> tuple[Any]:
    x, g = node.inputs[0], out_grads[0]
    if g.stype != "row_sparse":
        g = densified(g).tostype("row_sparse")
    return (nd.sparse.retain(g, wrap(node.params["row_ids"], x.context)),)
