"""Gradients of the output (loss) ops, as MXNet 1.9.1's backward passes: the head gradient is
ignored (SoftmaxOutput's ``out_grad`` aside), labels get none, BlockGrad passes none;
SoftmaxOutput's label of the data's shape is a probability per class."""

from __future__ import annotations

import math
from typing import Any

from ... import ndarray as nd
from ...ndarray.dispatch import densified
from ...tape import Node, differentiable
from .registry import gradient


def _scaled(grad: Any, scale: float) -> Any:
    """``grad * scale``; ``grad`` itself for a scale of 1 (the product would equal it, bit for
    bit, NaN and -0.0 included)."""
    return grad if scale == 1.0 else grad * scale


def _valid_scale(grad: Any, count: Any) -> Any:
    """``grad`` divided by ``count`` (a one-element array, at least 1), on the device."""
    return nd.broadcast_div(grad, nd.maximum(count, 1).reshape((1,) * grad.ndim))


@gradient("SoftmaxOutput")
def _softmax_output(node: Node, out_grads: list[Any]) -> tuple[Any, None]:
    p = node.params
    y, label = node.output(), densified(node.inputs[1])
    if label.shape == y.shape and not p["multi_output"]:  # probabilities (MXNet ignores
        return _scaled(y - label, p["grad_scale"]), None  # normalization and ignore_label)
    multi = p["multi_output"]
    lines = nd.transpose(y, axes=(0, *range(2, y.ndim), 1)) if multi else y  # classes last
    k = lines.shape[-1]
    alpha = p["smooth_alpha"]
    target = nd.one_hot(label, k, on_value=1.0 - alpha,
                        off_value=alpha / (k - 1) if k > 1 else 0.0, dtype=y.dtype)
    grad = lines - target.reshape(lines.shape)
    if p["use_ignore"]:
        mask = (label != p["ignore_label"]).astype(y.dtype)
        grad = nd.broadcast_mul(grad, nd.expand_dims(mask.reshape(lines.shape[:-1]), axis=-1))
    if multi:
        grad = nd.transpose(grad, axes=(0, y.ndim - 1, *range(1, y.ndim - 1)))
    if p["out_grad"]:
        grad = grad * densified(out_grads[0])
    norm = p["normalization"]
    if norm == "valid":  # MXNet counts the labels other than ignore_label, use_ignore or not
        valid = (label != p["ignore_label"]).astype(y.dtype)
        return _valid_scale(_scaled(grad, p["grad_scale"]), nd.sum(valid)), None
    divisor = label.size if norm == "batch" else (math.prod(label.shape[1:]) if multi else 1)
    return _scaled(grad, p["grad_scale"] / divisor), None


def _regression(node: Node, difference: Any) -> Any:
    """``difference`` (of the output and the label) scaled by grad_scale / num_output."""
    y = node.output()
    per_sample = math.prod(y.shape[1:])
    return _scaled(difference, node.params["grad_scale"] / per_sample)


def _label_like(node: Node) -> Any:
    """The label in dense storage, in the output's shape."""
    return densified(node.inputs[1]).reshape(node.output().shape)


@gradient("LinearRegressionOutput", "LogisticRegressionOutput")
def _linear(node: Node, out_grads: list[Any]) -> tuple[Any, None]:
    return _regression(node, node.output() - _label_like(node)), None


@gradient("MAERegressionOutput")
def _mae(node: Node, out_grads: list[Any]) -> tuple[Any, None]:
    return _regression(node, nd.sign(node.output() - _label_like(node))), None


@gradient("MakeLoss")
def _make_loss(node: Node, out_grads: list[Any]) -> tuple[Any]:
    p, y = node.params, node.output()
    grad = _scaled(nd.ones_like(y), p["grad_scale"])
    if p["normalization"] == "valid":
        return (_valid_scale(grad, nd.sum((y > p["valid_thresh"]).astype(y.dtype))),)
    return (grad / y.shape[0] if p["normalization"] == "batch" else grad,)


@gradient("make_loss")
def _make_loss_plain(node: Node, out_grads: list[Any]) -> tuple[Any]:
    return (nd.ones(node.output().shape, ctx=node.output().context, dtype=node.output().dtype),)


@gradient("BlockGrad")
@differentiable
def _block_grad(node: Node, out_grads: list[Any]) -> tuple[None]:
    return (None,)
