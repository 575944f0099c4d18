"""``gluon.loss``: the losses of MXNet 1.9.1's Gluon, written with the front end's ops.

Every loss is a graph of ``mx.nd`` ops (log_softmax, pick, Activation, relu, abs, square,
broadcast arithmetic, mean / sum over every axis but the batch axis), so it runs on the
generated kernels and differentiates through the autograd gradient rules;
SigmoidBinaryCrossEntropyLoss of logits is one fused op (``nd._internal._sigmoid_bce``, one
kernel forward and one backward) where its operands allow. A loss returns one
value per sample: shape ``(batch_size,)``, the axes other than ``batch_axis`` averaged (summed
for ``KLDivLoss``). See docs/gluon.md.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ..errors import InvalidType, InvalidValue
from ..ndarray import NDArray
from .block import HybridBlock


def _apply_weighting(F: Any, loss: Any, weight: float | None = None,
                     sample_weight: Any = None) -> Any:
    """``loss`` times ``sample_weight`` (broadcast) and times the scalar ``weight``."""
    if sample_weight is not None:
        loss = F.broadcast_mul(loss, sample_weight)
    if weight is not None:
        loss = loss * weight
    return loss


def _reshape_like(F: Any, x: Any, y: Any) -> Any:
    """``x`` reshaped to ``y``'s shape (the same number of elements; ``reshape_like`` of
    Symbols, whose shapes are known at binding)."""
    if not isinstance(x, NDArray):
        return F.reshape_like(x, y)
    if x.size != y.size:
        raise InvalidValue(f"loss: label has shape {x.shape} ({x.size} elements), pred "
                           f"{y.shape} ({y.size}): they must have the same number of elements")
    return x.reshape(y.shape)


def _softrelu(F: Any, x: Any) -> Any:
    """``log(1 + exp(x))``."""
    return F.Activation(x, act_type="softrelu")


def _fusable(pred: Any, label: Any) -> bool:
    """Whether a fused loss op serves ``pred`` and ``label``: dense, of one float dtype (other
    operands take the composed ops, with their storage rules and dtype checks)."""
    return (isinstance(pred, NDArray) and isinstance(label, NDArray)
            and pred.stype == label.stype == "default" and pred.dtype == label.dtype
            and np.dtype(pred.dtype).kind == "f")


class Loss(HybridBlock):
    """The base of the losses: ``weight`` (a number or None) scales the loss, ``batch_axis``
    is the axis of the samples."""

    def __init__(self, weight: float | None, batch_axis: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if weight is not None and (isinstance(weight, bool)
                                   or not isinstance(weight, (numbers.Real, np.generic))):
            raise InvalidType(f"{type(self).__name__}: weight must be a number or None, got "
                              f"{weight!r}")
        if isinstance(batch_axis, bool) or not isinstance(batch_axis, numbers.Integral):
            raise InvalidType(f"{type(self).__name__}: batch_axis must be an int, got "
                              f"{batch_axis!r}")
        self._weight = weight
        self._batch_axis = int(batch_axis)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(batch_axis={self._batch_axis}, w={self._weight})"

    def _per_sample(self, F: Any, loss: Any, sample_weight: Any, weight: float | None) -> Any:
        """``loss`` weighted, then averaged over every axis but the batch axis."""
        loss = _apply_weighting(F, loss, weight, sample_weight)
        return F.mean(loss, axis=self._batch_axis, exclude=True)


class L2Loss(Loss):
    """Half the mean squared error between ``label`` and ``pred``, per sample."""

    def __init__(self, weight: float = 1.0, batch_axis: int = 0, **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        """``mean(weight / 2 * (label - pred)²)`` over the non-batch axes."""
        loss = F.square(_reshape_like(F, label, pred) - pred)
        return self._per_sample(F, loss, sample_weight, self._weight / 2)


class L1Loss(Loss):
    """The mean absolute error between ``label`` and ``pred``, per sample."""

    def __init__(self, weight: float | None = None, batch_axis: int = 0, **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        """``mean(|label - pred|)`` over the non-batch axes."""
        loss = F.abs(_reshape_like(F, label, pred) - pred)
        return self._per_sample(F, loss, sample_weight, self._weight)


class SigmoidBinaryCrossEntropyLoss(Loss):
    """Binary cross entropy of ``sigmoid(pred)`` (or of ``pred`` with ``from_sigmoid``) and
    labels in [0, 1]; ``pos_weight`` weighs the positive term."""

    def __init__(self, from_sigmoid: bool = False, weight: float | None = None,
                 batch_axis: int = 0, **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._from_sigmoid = from_sigmoid

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None,
                       pos_weight: Any = None) -> Any:
        """The cross entropy, with the stable ``max(x, 0) - x z + log(1 + exp(-|x|))``."""
        label = _reshape_like(F, label, pred)
        if not self._from_sigmoid:
            if pos_weight is None and _fusable(pred, label):
                loss = F._internal._sigmoid_bce(pred, label)  # one kernel, one gradient kernel
            elif pos_weight is None:
                loss = F.relu(pred) - pred * label + _softrelu(F, -F.abs(pred))
            else:
                log_weight = F.broadcast_mul(pos_weight - 1, label) + 1
                loss = pred - pred * label + log_weight * (_softrelu(F, -F.abs(pred))
                                                           + F.relu(-pred))
        else:
            eps = 1e-12
            positive = F.log(pred + eps) * label
            if pos_weight is not None:
                positive = F.broadcast_mul(positive, pos_weight)
            loss = -(positive + F.log(1.0 - pred + eps) * (1.0 - label))
        return self._per_sample(F, loss, sample_weight, self._weight)


SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss


class SoftmaxCrossEntropyLoss(Loss):
    """Cross entropy of ``softmax(pred)`` along ``axis`` (``pred`` itself with
    ``from_logits``) and class ids (``sparse_label``) or distributions."""

    def __init__(self, axis: int = -1, sparse_label: bool = True, from_logits: bool = False,
                 weight: float | None = None, batch_axis: int = 0, **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._axis = axis
        self._sparse_label = sparse_label
        self._from_logits = from_logits

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        """``-log_softmax(pred)[label]`` (or ``-sum(label * log_softmax(pred))``), averaged."""
        if not self._from_logits:
            pred = F.log_softmax(pred, axis=self._axis)
        if self._sparse_label:
            loss = -F.pick(pred, label, axis=self._axis, keepdims=True)
        else:
            label = _reshape_like(F, label, pred)
            loss = -F.sum(pred * label, axis=self._axis, keepdims=True)
        return self._per_sample(F, loss, sample_weight, self._weight)


SoftmaxCELoss = SoftmaxCrossEntropyLoss


class KLDivLoss(Loss):
    """The Kullback-Leibler divergence of ``label`` from the log-probabilities ``pred``
    (``log_softmax(pred)`` unless ``from_logits``), summed over the non-batch axes."""

    def __init__(self, from_logits: bool = True, axis: int = -1, weight: float | None = None,
                 batch_axis: int = 0, **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._axis = axis

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        """``sum(label * (log(label + 1e-12) - pred))`` over the non-batch axes."""
        if not self._from_logits:
            pred = F.log_softmax(pred, axis=self._axis)
        loss = label * (F.log(label + 1e-12) - pred)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.sum(loss, axis=self._batch_axis, exclude=True)


class HuberLoss(Loss):
    """Smoothed L1: ``(label - pred)² / (2 rho)`` inside ``rho``, ``|label - pred| - rho / 2``
    outside, averaged per sample."""

    def __init__(self, rho: float = 1, weight: float | None = None, batch_axis: int = 0,
                 **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._rho = rho

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        """The Huber loss of ``label - pred``, averaged over the non-batch axes."""
        loss = F.abs(_reshape_like(F, label, pred) - pred)
        loss = F.where(loss > self._rho, loss - 0.5 * self._rho,
                       F.square(loss) * (0.5 / self._rho))
        return self._per_sample(F, loss, sample_weight, self._weight)


class _MarginLoss(Loss):
    """A loss of ``max(0, margin - pred * label)`` for labels -1 / 1."""

    def __init__(self, margin: float = 1, weight: float | None = None, batch_axis: int = 0,
                 **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def _violation(self, F: Any, pred: Any, label: Any) -> Any:
        """``max(0, margin - pred * label)``, elementwise."""
        return F.relu(self._margin - pred * _reshape_like(F, label, pred))


class HingeLoss(_MarginLoss):
    """``max(0, margin - pred * label)`` for labels -1 / 1, averaged per sample."""

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        """``mean(relu(margin - pred * label))`` over the non-batch axes."""
        return self._per_sample(F, self._violation(F, pred, label), sample_weight, self._weight)


class SquaredHingeLoss(_MarginLoss):
    """``max(0, margin - pred * label)²`` for labels -1 / 1, averaged per sample."""

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        """``mean(relu(margin - pred * label)²)`` over the non-batch axes."""
        loss = F.square(self._violation(F, pred, label))
        return self._per_sample(F, loss, sample_weight, self._weight)


class LogisticLoss(Loss):
    """``log(1 + exp(-pred * label))`` for labels -1 / 1 (``label_format='signed'``) or
    0 / 1 (``'binary'``), averaged per sample."""

    def __init__(self, weight: float | None = None, batch_axis: int = 0,
                 label_format: str = "signed", **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        if label_format not in ("signed", "binary"):
            raise InvalidValue("LogisticLoss: label_format must be 'signed' or 'binary', got "
                               f"{label_format!r}")
        self._label_format = label_format

    def hybrid_forward(self, F: Any, pred: Any, label: Any, sample_weight: Any = None) -> Any:
        """The logistic loss, with the stable ``max(x, 0) - x z + log(1 + exp(-|x|))``."""
        label = _reshape_like(F, label, pred)
        if self._label_format == "signed":
            label = (label + 1.0) / 2.0
        loss = F.relu(pred) - pred * label + _softrelu(F, -F.abs(pred))
        return self._per_sample(F, loss, sample_weight, self._weight)


class TripletLoss(Loss):
    """``max(0, |positive - pred|² - |negative - pred|² + margin)`` per sample (squared
    distances summed over the non-batch axes)."""

    def __init__(self, margin: float = 1, weight: float | None = None, batch_axis: int = 0,
                 **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F: Any, pred: Any, positive: Any, negative: Any) -> Any:
        """The triplet loss of each sample."""
        positive = _reshape_like(F, positive, pred)
        negative = _reshape_like(F, negative, pred)
        loss = F.sum(F.square(positive - pred) - F.square(negative - pred),
                     axis=self._batch_axis, exclude=True)
        return _apply_weighting(F, F.relu(loss + self._margin), self._weight)


class PoissonNLLLoss(Loss):
    """The negative log-likelihood of ``target`` under a Poisson distribution of mean
    ``exp(pred)`` (``from_logits``) or ``pred``, averaged over every element (a scalar);
    ``compute_full`` adds Stirling's approximation of ``log(target!)`` where ``target > 1``."""

    def __init__(self, weight: float | None = None, from_logits: bool = True,
                 batch_axis: int = 0, compute_full: bool = False, **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._compute_full = compute_full

    def hybrid_forward(self, F: Any, pred: Any, target: Any, sample_weight: Any = None,
                       epsilon: float = 1e-08) -> Any:
        """The mean Poisson negative log-likelihood."""
        target = _reshape_like(F, target, pred)
        if self._from_logits:
            loss = F.exp(pred) - target * pred
        else:
            loss = pred - target * F.log(pred + epsilon)
        if self._compute_full:
            stirling = target * F.log(target) - target + 0.5 * F.log(2 * target * np.pi)
            loss = loss + F.where(target > 1, stirling, F.zeros_like(stirling))
        return F.mean(_apply_weighting(F, loss, self._weight, sample_weight))


class CosineEmbeddingLoss(Loss):
    """``1 - cos(input1, input2)`` for label 1, ``max(0, cos(input1, input2) - margin)`` for
    label -1, per sample (cosine along the last axis, norms at least 1e-12)."""

    def __init__(self, weight: float | None = None, batch_axis: int = 0, margin: float = 0,
                 **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F: Any, input1: Any, input2: Any, label: Any,
                       sample_weight: Any = None) -> Any:
        """The cosine embedding loss of each sample, shape ``(batch, 1)`` as MXNet's."""
        input1 = _reshape_like(F, input1, input2)
        label = label.reshape((-1, 1))
        norms = F.norm(input1, axis=-1).reshape((-1, 1)) * F.norm(input2, axis=-1).reshape(
            (-1, 1))
        cos = F.sum(input1 * input2, axis=-1).reshape((-1, 1)) / F.maximum(norms, 1e-12)
        similar = (1 - cos) * (label == 1)
        dissimilar = F.relu((label == -1) * (cos - self._margin))
        return _apply_weighting(F, similar + dissimilar, self._weight, sample_weight)


class SDMLLoss(Loss):
    """Smoothed deep metric learning: the KL divergence of the softmax of the negative squared
    distances between the rows of ``x1`` and of ``x2`` from the identity smoothed by
    ``smoothing_parameter``, per row (aligned batches: row i of x1 matches row i of x2)."""

    def __init__(self, smoothing_parameter: float = 0.3, weight: float = 1.0,
                 batch_axis: int = 0, **kwargs: Any) -> None:
        super().__init__(weight, batch_axis, **kwargs)
        self.kl_loss = KLDivLoss(from_logits=True)
        self.smoothing_parameter = smoothing_parameter

    def hybrid_forward(self, F: Any, x1: Any, x2: Any) -> Any:
        """The SDML loss of each row of ``x1`` (arrays of shape ``(batch, dim)``)."""
        if x1.shape != x2.shape or len(x1.shape) != 2:
            raise InvalidValue(f"SDMLLoss: x1 and x2 must be (batch, dim) arrays of one shape, "
                               f"got {x1.shape} and {x2.shape}")
        batch, dim = x1.shape
        gold = F.eye(batch, ctx=x1.context, dtype=x1.dtype)
        labels = (gold * (1 - self.smoothing_parameter)
                  + (1 - gold) * self.smoothing_parameter / (batch - 1))
        distances = F.sum(F.square(F.broadcast_to(x1.expand_dims(1), (batch, batch, dim))
                                   - F.broadcast_to(x2.expand_dims(0), (batch, batch, dim))),
                          axis=2)
        return self.kl_loss(F.log_softmax(-distances, axis=1), labels)


__all__ = ["CosineEmbeddingLoss", "HingeLoss", "HuberLoss", "KLDivLoss", "L1Loss", "L2Loss",
           "LogisticLoss", "Loss", "PoissonNLLLoss", "SDMLLoss", "SigmoidBCELoss",
           "SigmoidBinaryCrossEntropyLoss", "SoftmaxCELoss", "SoftmaxCrossEntropyLoss",
           "SquaredHingeLoss", "TripletLoss"]
