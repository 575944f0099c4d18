"""The estimator's checks of metrics: a metric or a list of them as a list, the metric a loss
suggests, and that a handler refers to the estimator's own metrics."""

from __future__ import annotations

from typing import Any

from ....errors import InvalidValue
from ....metric import Accuracy, CompositeEvalMetric, EvalMetric
from ...loss import SoftmaxCrossEntropyLoss


def listed(value: Any, kind: type, name: str, what: str) -> list[Any]:
    """``value`` (None, one ``kind`` or a list of them) as a new list; anything else raises
    ``InvalidValue`` naming ``name``."""
    if isinstance(value, kind):
        return [value]
    if value is None:
        return []
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, kind) for v in value):
        raise InvalidValue(f"{name} must be {what} or a list of them, got {value!r}")
    return list(value)


def metric_list(metrics: Any) -> list[EvalMetric]:
    """``metrics`` (None, a metric, a composite metric or a list of metrics) as a list of
    metrics, a composite one flattened; anything else raises ``InvalidValue``."""
    if isinstance(metrics, CompositeEvalMetric):
        return [m for child in metrics.metrics for m in metric_list(child)]
    return listed(metrics, EvalMetric, "metrics", "a Metric (mxnet.metric.EvalMetric)")


def suggested_metric(loss: Any) -> EvalMetric | None:
    """The metric a loss implies: accuracy for softmax cross-entropy, else none."""
    return Accuracy() if isinstance(loss, SoftmaxCrossEntropyLoss) else None


def check_metric_references(handler: Any, known: list[EvalMetric]) -> None:
    """Raise ``InvalidValue`` when ``handler``'s ``metrics`` or ``monitor`` holds a metric that
    is not one of ``known`` (the estimator's training and validation metrics)."""
    for attribute in ("metrics", "monitor"):
        reference = getattr(handler, attribute, None)
        for metric in reference if isinstance(reference, list) else [reference]:
            if metric is not None and not any(metric is k for k in known):
                raise InvalidValue(
                    f"event handler {type(handler).__name__} refers to the metric {metric.name!r}"
                    f", not one of the estimator's: use the metrics of estimator.train_metrics "
                    f"and estimator.val_metrics")


__all__ = ["check_metric_references", "listed", "metric_list", "suggested_metric"]
