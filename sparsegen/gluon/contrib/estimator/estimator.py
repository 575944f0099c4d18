"""``Estimator``: MXNet 1.9.1's Gluon training loop. ``fit`` runs epochs (or a number of
batches) of ``batch_processor.fit_batch`` over a ``DataLoader`` and calls the event handlers
around each train, epoch and batch; ``evaluate`` runs ``evaluate_batch`` over validation data.
Default handlers (stopping, gradient update, metrics, validation, logging) are added where the
user gave none of their kind."""

from __future__ import annotations

import copy
import logging
import sys
import warnings
from typing import Any

from ....context import Context, cpu, gpu, num_gpus
from ....errors import InvalidArgument, InvalidValue
from ....metric import Loss as LossMetric
from ...data import DataLoader
from ...loss import Loss
from ...parameter import ParameterError
from ...trainer import Trainer
from .batch_processor import BatchProcessor
from .event_handler import (BatchBegin, BatchEnd, EpochBegin, EpochEnd, EventHandler,
                            GradientUpdateHandler, LoggingHandler, MetricHandler,
                            StoppingHandler, TrainBegin, TrainEnd, ValidationHandler,
                            handler_list)
from .utils import check_metric_references, metric_list, suggested_metric

_EVENTS = (TrainBegin, EpochBegin, BatchBegin, BatchEnd, EpochEnd, TrainEnd)


def _data_loader(data: Any, what: str) -> DataLoader:
    if not isinstance(data, DataLoader):
        raise InvalidValue(f"Estimator: {what} must be a gluon.data.DataLoader, got "
                           f"{type(data).__name__} (wrap a DataIter or NDArrays in an "
                           f"ArrayDataset and a DataLoader)")
    return data


class Estimator:
    """Trains ``net`` with ``loss`` and ``trainer`` (default: SGD, learning rate 0.001) on
    ``context`` (a Context or a list; default gpu(0) where there is one, else cpu()),
    tracking ``train_metrics`` (named ``training ...``, a loss metric added) and
    ``val_metrics`` (``validation ...``, by default copies of the training ones), as
    ``mxnet.gluon.contrib.estimator.Estimator``. ``logger`` writes INFO to stdout."""

    logger: logging.Logger | None = None

    def __init__(self, net: Any, loss: Any, train_metrics: Any = None, val_metrics: Any = None,
                 initializer: Any = None, trainer: Any = None, context: Any = None,
                 val_net: Any = None, val_loss: Any = None, batch_processor: Any = None) -> None:
        self.net = net
        self.loss = self._check_loss(loss)
        self._train_metrics = metric_list(train_metrics)
        self._val_metrics = metric_list(val_metrics)
        self._name_metrics()
        self.val_loss = self.loss if val_loss is None else self._check_loss(val_loss)
        self.val_net = self.net if val_net is None else val_net
        self.logger = logging.Logger(name="Estimator", level=logging.INFO)
        self.logger.addHandler(logging.StreamHandler(sys.stdout))
        self.context = self._check_context(context)
        self._initialize(initializer)
        self.trainer = self._check_trainer(trainer)
        self.batch_processor = self._check_batch_processor(batch_processor)
        self.max_epoch: int | None = None
        self.max_batch: int | None = None
        self.batch_axis = 0

    @staticmethod
    def _check_loss(loss: Any) -> Loss:
        if not isinstance(loss, Loss):
            raise InvalidValue(f"Estimator: loss must be a gluon.loss.Loss, got {loss!r}")
        return loss

    def _name_metrics(self) -> None:
        """Add the default training metrics (the loss' suggestion and the loss) and name the
        training and validation metrics as MXNet's."""
        if not self._train_metrics:
            suggested = suggested_metric(self.loss)
            self._train_metrics = [suggested] if suggested else []
            self._train_metrics.append(LossMetric(self.loss.name.rstrip("0123456789")))
        for metric in self._train_metrics:
            metric.name = "training " + metric.name
        if not self._val_metrics:
            self._val_metrics = [copy.deepcopy(m) for m in self._train_metrics]
        for metric in self._val_metrics:
            metric.name = metric.name.replace("training", "validation") \
                if "training" in metric.name else "validation " + metric.name

    @staticmethod
    def _check_context(context: Any) -> list[Context]:
        gpus = num_gpus()
        if not context:
            if gpus > 1:
                warnings.warn("You have multiple GPUs, gpu(0) will be used by default. To use "
                              "all your GPUs, pass context=[mx.gpu(0), mx.gpu(1), ...]",
                              stacklevel=3)
            return [gpu(0)] if gpus else [cpu()]
        contexts = [context] if isinstance(context, Context) else context
        if not isinstance(contexts, list) or not all(isinstance(c, Context) for c in contexts):
            raise InvalidValue(f"Estimator: context must be a Context or a list of Contexts "
                               f"(mx.cpu(), [mx.gpu(0), mx.gpu(1)]), got {context!r}")
        for ctx in contexts:
            if ctx.device_type == "gpu" and ctx.device_id >= gpus:
                raise InvalidArgument(f"Estimator: {ctx} is not available; use mx.cpu() or one "
                                     f"of the {gpus} GPUs")
        return contexts

    def _is_initialized(self) -> bool:
        try:
            for param in self.net.collect_params().values():
                param.list_ctx()
        except ParameterError:
            return False
        return True

    def _initialize(self, initializer: Any) -> None:
        if not self._is_initialized():
            if initializer:
                self.net.initialize(init=initializer, ctx=self.context)
            else:
                self.net.initialize(ctx=self.context)
        elif initializer:
            warnings.warn("Network already fully initialized, skipping initialization. You "
                          "don't need to pass initializer if you already initialized your net; "
                          "net.initialize(init=your_initializer, force_reinit=True) "
                          "re-initializes it.", stacklevel=3)

    def _check_trainer(self, trainer: Any) -> Trainer:
        if not trainer:
            warnings.warn("No trainer specified, default SGD optimizer with learning rate 0.001 "
                          "is used.", stacklevel=3)
            return Trainer(self.net.collect_params(), "sgd", {"learning_rate": 0.001})
        if not isinstance(trainer, Trainer):
            raise InvalidValue(f"Estimator: trainer must be a gluon.Trainer, got {trainer!r}")
        return trainer

    @staticmethod
    def _check_batch_processor(batch_processor: Any) -> Any:
        if batch_processor is None:
            return BatchProcessor()
        if not (callable(getattr(batch_processor, "fit_batch", None))
                and callable(getattr(batch_processor, "evaluate_batch", None))):
            raise InvalidValue("Estimator: batch_processor must have fit_batch() and "
                               "evaluate_batch() methods")
        return batch_processor

    @property
    def train_metrics(self) -> list[Any]:
        """The training metrics."""
        return self._train_metrics

    @property
    def val_metrics(self) -> list[Any]:
        """The validation metrics."""
        return self._val_metrics

    def evaluate(self, val_data: Any, batch_axis: int = 0, event_handlers: Any = None) -> None:
        """Run ``val_net`` over ``val_data`` (a DataLoader) once, updating ``val_metrics`` and
        calling the epoch and batch handlers (default: metrics and logging)."""
        _data_loader(val_data, "val_data")
        for metric in self.val_metrics:
            metric.reset()
        handlers = self._prepare_default_validation_handlers(event_handlers)
        _, epoch_begin, batch_begin, batch_end, epoch_end, _ = self._categorize_handlers(
            handlers)
        for handler in epoch_begin:
            handler.epoch_begin(self)
        for batch in val_data:
            for handler in batch_begin:
                handler.batch_begin(self, batch=batch)
            _, label, pred, loss = self.batch_processor.evaluate_batch(self, batch, batch_axis)
            for handler in batch_end:
                handler.batch_end(self, batch=batch, pred=pred, label=label, loss=loss)
        for handler in epoch_end:
            handler.epoch_end(self)

    def fit(self, train_data: Any, val_data: Any = None, epochs: int | None = None,
            event_handlers: Any = None, batches: int | None = None, batch_axis: int = 0) -> None:
        """Train on ``train_data`` (a DataLoader) for ``epochs`` epochs or ``batches`` batches
        (exactly one of them), validating on ``val_data`` after each epoch when given; a
        handler's True from ``batch_end`` or ``epoch_end`` stops training."""
        _data_loader(train_data, "train_data")
        if (not epochs) == (not batches):
            raise InvalidValue(f"Estimator.fit: give exactly one of epochs and batches, got "
                               f"epochs={epochs!r}, batches={batches!r}")
        self.max_epoch, self.max_batch, self.batch_axis = epochs, batches, batch_axis
        handlers = self._prepare_default_handlers(val_data, event_handlers)
        train_begin, epoch_begin, batch_begin, batch_end, epoch_end, train_end = \
            self._categorize_handlers(handlers)
        for handler in train_begin:
            handler.train_begin(self)
        while True:
            for handler in epoch_begin:
                handler.epoch_begin(self)
            for batch in train_data:
                for handler in batch_begin:
                    handler.batch_begin(self, batch=batch)
                _, label, pred, loss = self.batch_processor.fit_batch(self, batch, batch_axis)
                stops = [handler.batch_end(self, batch=batch, pred=pred, label=label, loss=loss)
                         for handler in batch_end]
                if any(stops):
                    break
            if any([handler.epoch_end(self) for handler in epoch_end]):
                break
        for handler in train_end:
            handler.train_end(self)

    def _with_defaults(self, handlers: list[EventHandler], defaults: list[EventHandler],
                       known: list[Any]) -> list[EventHandler]:
        """``handlers`` and ``defaults`` sorted by priority; a user's handler mixed with
        defaults must refer to the estimator's own metrics."""
        if handlers and defaults:
            for handler in handlers + defaults:
                check_metric_references(handler, known)
        return sorted(handlers + defaults, key=lambda h: getattr(h, "priority", 0))

    def _prepare_default_handlers(self, val_data: Any, event_handlers: Any) -> list[Any]:
        """The user's handlers and the defaults of the kinds they lack: stopping, gradient
        update, metrics, validation (with ``val_data``) and logging, by priority."""
        handlers = handler_list(event_handlers)

        def lacks(kind: type) -> bool:
            return not any(isinstance(h, kind) for h in handlers)

        defaults: list[EventHandler] = [StoppingHandler(self.max_epoch, self.max_batch)]
        if lacks(GradientUpdateHandler):
            defaults.append(GradientUpdateHandler())
        if lacks(MetricHandler):
            defaults.append(MetricHandler(metrics=self.train_metrics))
        if lacks(ValidationHandler) and val_data:
            defaults.append(ValidationHandler(val_data=val_data, eval_fn=self.evaluate))
        if lacks(LoggingHandler):
            defaults.append(LoggingHandler(metrics=self.train_metrics))
        return self._with_defaults(handlers, defaults, self.train_metrics + self.val_metrics)

    def _prepare_default_validation_handlers(self, event_handlers: Any) -> list[Any]:
        """The user's validation handlers and the default metric and logging handlers of the
        kinds they lack, by priority."""
        handlers = handler_list(event_handlers)
        defaults: list[EventHandler] = []
        if not any(isinstance(h, MetricHandler) for h in handlers):
            defaults.append(MetricHandler(metrics=self.val_metrics))
        if not any(isinstance(h, LoggingHandler) for h in handlers):
            defaults.append(LoggingHandler(metrics=self.val_metrics))
        return self._with_defaults(handlers, defaults, self.val_metrics)

    @staticmethod
    def _categorize_handlers(event_handlers: list[Any]) -> tuple[list[Any], ...]:
        """The handlers of each event: train begin, epoch begin, batch begin, batch end, epoch
        end, train end."""
        return tuple([h for h in event_handlers if isinstance(h, kind)] for kind in _EVENTS)


__all__ = ["Estimator"]
