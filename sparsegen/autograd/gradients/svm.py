"""The gradients of ``SVMOutput`` (MXNet's L2-SVM / L1-SVM loss gradient of the scores, the head
gradient ignored, the labels given none) and ``IdentityAttachKLSparseReg`` (the head gradient
plus the KL sparseness penalty's, the moving average moved in place first), composed of
one_hot, comparison, where, reduce and broadcast ops."""

from __future__ import annotations

from typing import Any

from ... import ndarray as nd
from ...ndarray.dispatch import densified
from ...tape import Node
from .registry import gradient


@gradient("SVMOutput")
def _svm_output(node: Node, out_grads: list[Any]) -> tuple[Any, None]:
    data, label = densified(node.inputs[0]), densified(node.inputs[1])
    p = node.params
    margin, c = p["margin"], p["regularization_coefficient"]
    x = data.reshape((data.shape[0], -1))
    at_label = nd.one_hot(label.reshape((-1,)), x.shape[1], dtype=x.dtype)
    if p["use_linear"]:
        own = (x < margin) * -c
        other = (x > -margin) * c
    else:
        own = nd.relu(margin - x) * (-2 * c)
        other = nd.relu(x + margin) * (2 * c)
    return nd.where(at_label, own, other).reshape(data.shape), None


@gradient("IdentityAttachKLSparseReg")
def _kl_sparse_reg(node: Node, out_grads: list[Any]) -> tuple[Any, None]:
    data, moving_avg = densified(node.inputs[0]), node.inputs[1]
    p = node.params
    target, momentum = p["sparseness_target"], p["momentum"]
    along = tuple(-1 if k == 1 else 1 for k in range(data.ndim))
    mean = nd.mean(data, axis=1, exclude=True)
    moving_avg[:] = moving_avg * momentum + mean * (1 - momentum)
    avg = densified(moving_avg)
    step = ((1 - target) / (1 - avg) - target / avg) * p["penalty"]
    return nd.broadcast_add(densified(out_grads[0]), step.reshape(along)), None
