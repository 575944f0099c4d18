"""``BatchProcessor``: one batch of ``Estimator.fit`` (forward under ``autograd.record`` and
backward) or of ``evaluate`` (forward), its data and label split over the estimator's
contexts."""

from __future__ import annotations

from typing import Any

from .... import autograd
from ...utils import split_and_load


class BatchProcessor:
    """How the estimator runs a batch, as ``mxnet.gluon.contrib.estimator.BatchProcessor``;
    subclass it and override ``fit_batch`` / ``evaluate_batch`` for other models."""

    def _get_data_and_label(self, batch: Any, ctx: list[Any],
                            batch_axis: int = 0) -> tuple[list[Any], list[Any]]:
        data = split_and_load(batch[0], ctx_list=ctx, batch_axis=batch_axis)
        label = split_and_load(batch[1], ctx_list=ctx, batch_axis=batch_axis)
        return data, label

    def evaluate_batch(self, estimator: Any, val_batch: Any,
                       batch_axis: int = 0) -> tuple[list[Any], list[Any], list[Any], list[Any]]:
        """(data, label, predictions, losses) of ``val_batch`` by ``estimator.val_net`` and
        ``estimator.val_loss``, one of each per context."""
        data, label = self._get_data_and_label(val_batch, estimator.context, batch_axis)
        pred = [estimator.val_net(x) for x in data]
        loss = [estimator.val_loss(y_hat, y) for y_hat, y in zip(pred, label)]
        return data, label, pred, loss

    def fit_batch(self, estimator: Any, train_batch: Any,
                  batch_axis: int = 0) -> tuple[list[Any], list[Any], list[Any], list[Any]]:
        """(data, label, predictions, losses) of ``train_batch`` by ``estimator.net`` and
        ``estimator.loss`` recorded, each loss differentiated (the gradient update is
        ``GradientUpdateHandler``'s)."""
        data, label = self._get_data_and_label(train_batch, estimator.context, batch_axis)
        with autograd.record():
            pred = [estimator.net(x) for x in data]
            loss = [estimator.loss(y_hat, y) for y_hat, y in zip(pred, label)]
        for each in loss:
            each.backward()
        return data, label, pred, loss


__all__ = ["BatchProcessor"]
