"""Gradients of the neural-network ops: Embedding and take (row_sparse for a row_sparse
gradient buffer or ``sparse_grad=True``; take on every axis), pick, Activation, softmax /
log_softmax, the fused sigmoid cross entropy."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import ndarray as nd
from ...tape import Node, differentiable
from ...ndarray.dispatch import densified
from .registry import gradient
from .linalg import wants_row_sparse


def _row_ids(ids: Any, rows: int, mode: str) -> Any:
    """The int64 rows a lookup of ``ids`` (any float or int dtype) read: clipped or wrapped."""
    flat = ids.reshape((ids.size,))
    if mode == "wrap":
        return nd.modulo(flat.astype("int64"), rows)
    return nd.clip(flat, 0, rows - 1).astype("int64")


def add_rows(rows: Any, g: Any, count: int, sparse: bool = False) -> Any:
    """``count`` rows, row ``r`` the sum of the rows ``i`` of ``g`` (n, width) with
    ``rows[i] == r`` (int64, in range; repeats add up): ``onehot(rows)ᵀ · g`` by the csrᵀ·dense
    kernel (row_sparse when ``sparse``); float16 sums in float32 (dot has no float16 kernel)."""
    n, dtype = rows.size, g.dtype
    if dtype == np.float16:
        g = g.astype("float32")
    onehot = nd.sparse.csr_matrix(
        (nd.ones((n,), ctx=g.context, dtype=g.dtype), rows,
         nd.arange(0, n + 1, ctx=g.context, dtype="int64")), shape=(n, count), ctx=g.context)
    grad = nd.dot(onehot, g, transpose_a=True, forward_stype="row_sparse" if sparse else "default")
    return grad.astype(dtype) if grad.dtype != dtype else grad


def scatter_rows(ids: Any, g: Any, weight: Any, mode: str, sparse: bool) -> Any:
    """The gradient of ``weight[ids]``: each row of ``g`` added into row ``ids[i]``, computed
    as ``onehot(ids)ᵀ · g`` by the csrᵀ·dense kernel (row_sparse when ``sparse``)."""
    rows = weight.shape[0]
    g = densified(g).reshape((ids.size, weight.size // max(rows, 1)))
    grad = add_rows(_row_ids(ids, rows, mode), g, rows, sparse)
    return grad.reshape(weight.shape) if grad.stype == "default" else grad


def take_gradient(rows: Any, g: Any, shape: tuple[int, ...], axis: int) -> Any:
    """The gradient (dense, of ``shape``) of a take along ``axis`` that read the int64 ``rows``
    (in range) from an array of ``shape``, for the output gradient ``g``: the axis moved to
    the front (transpose kernels), its rows added up by ``add_rows``, moved back."""
    pre, n = math.prod(shape[:axis]), shape[axis]
    post = math.prod(shape[axis + 1:])
    if 0 in (rows.size, pre, post):
        return nd.zeros(shape, ctx=g.context, dtype=g.dtype)
    g = densified(g).reshape((pre, rows.size, post))
    if pre > 1:
        g = nd.transpose(g, axes=(1, 0, 2))
    grad = add_rows(rows, g.reshape((rows.size, pre * post)), n)
    if pre > 1:
        grad = nd.transpose(grad.reshape((n, pre, post)), axes=(1, 0, 2))
    return grad.reshape(shape)


@gradient("Embedding")
def _embedding(node: Node, out_grads: list[Any]) -> tuple[None, Any]:
    """Row_sparse for ``sparse_grad`` or a row_sparse buffer (of a dense or a row_sparse
    weight); float16 rows are summed in float32 (dot has no float16 kernel)."""
    ids, weight = node.inputs
    sparse = node.params.get("sparse_grad", False) or wants_row_sparse(weight)
    g = densified(out_grads[0])
    if ids.size == 0:
        return None, (nd.sparse.zeros("row_sparse", weight.shape, ctx=g.context, dtype=g.dtype)
                      if sparse else nd.zeros(weight.shape, ctx=g.context, dtype=g.dtype))
    half = np.dtype(g.dtype) == np.float16
    with g.context:  # the one-hot matrix scatter_rows builds lives beside the gradient
        grad = scatter_rows(ids, g.astype("float32") if half else g, weight, "clip", sparse)
    return None, grad.astype("float16") if half else grad


@gradient("take")
def _take(node: Node, out_grads: list[Any]) -> tuple[Any, None]:
    a, ids = node.inputs
    axis = node.params["axis"]
    mode = "wrap" if node.params["mode"] == "wrap" else "clip"  # 'raise': every id was in range
    if a.size == 0 or ids.size == 0:
        return nd.zeros_like(a), None
    if axis == 0:
        return scatter_rows(ids, out_grads[0], a, mode, wants_row_sparse(a)), None
    rows = _row_ids(ids, a.shape[axis], mode)
    return take_gradient(rows, out_grads[0], a.shape, axis), None


@gradient("pick")
def _pick(node: Node, out_grads: list[Any]) -> tuple[Any, None]:
    data, index = node.inputs
    axis, n = node.params["axis"], data.shape[node.params["axis"]]
    ids = index.reshape(tuple(d for k, d in enumerate(index.shape)
                              if not (k == axis and index.ndim == data.ndim)))
    ids = nd.modulo(ids, n) if node.params["mode"] == "wrap" else nd.clip(ids, 0, n - 1)
    mask = nd.one_hot(ids, n, dtype=data.dtype)  # the picked axis last
    if axis != data.ndim - 1:
        order = list(range(data.ndim - 1))
        order.insert(axis, data.ndim - 1)
        mask = nd.transpose(mask, axes=order)
    g = densified(out_grads[0])
    if not node.params["keepdims"]:
        g = nd.expand_dims(g, axis=axis)
    return nd.broadcast_mul(mask, g), None


_ACTIVATION = {
    "relu": lambda x, y, g: g * (x > 0),
    "sigmoid": lambda x, y, g: g * y * (1 - y),
    "tanh": lambda x, y, g: g * (1 - y * y),
    "softrelu": lambda x, y, g: g * (1 - nd.exp(-y)),
    "softsign": lambda x, y, g: g / nd.square(nd.abs(x) + 1),
}


@gradient("Activation")
@differentiable
def _activation(node: Node, out_grads: list[Any]) -> tuple[Any]:
    x = node.inputs[0]
    return (_ACTIVATION[node.params["act_type"]](x, node.output(), out_grads[0]),)


@gradient("softmax")
@differentiable
def _softmax(node: Node, out_grads: list[Any]) -> tuple[Any]:
    y, g = node.output(), densified(out_grads[0])
    axis, t = node.params["axis"], node.params["temperature"]
    if node.params["log"]:
        grad = g - nd.broadcast_mul(nd.exp(y), nd.sum(g, axis=axis, keepdims=True))
    else:
        grad = y * nd.broadcast_sub(g, nd.sum(g * y, axis=axis, keepdims=True))
    return (grad if t == 1.0 else grad / t,)


@gradient("_sigmoid_bce")
def _sigmoid_bce(node: Node, out_grads: list[Any]) -> tuple[Any, Any]:
    """Logits: ``g * (sigmoid(x) - z)`` on its kernel; labels (rarely recorded): ``-g x``."""
    x, z = node.inputs
    g = densified(out_grads[0])
    grad_x = nd._internal._sigmoid_bce_grad(g, x, z) if node.wanted[0] else None
    grad_z = -(g * x) if node.wanted[1] else None
    return grad_x, grad_z
