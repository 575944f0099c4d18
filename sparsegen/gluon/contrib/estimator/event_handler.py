"""The estimator's event handlers, as ``mxnet.gluon.contrib.estimator.event_handler``: a
handler subclasses the events it reacts to (``TrainBegin`` ... ``BatchEnd``); ``batch_end`` and
``epoch_end`` return True to stop training. Handlers run in the order of their ``priority``
(gradient update -2000, metrics and validation -1000, others 0, logging last)."""

from __future__ import annotations

import math
import os
import time
import warnings
from typing import Any, Callable

from ....errors import InvalidValue
from ....metric import CompositeEvalMetric, EvalMetric
from ....metric import Loss as LossMetric
from ....params import integer
from .utils import listed, metric_list


class EventHandler:
    """The base of every event handler."""


def handler_list(handlers: Any) -> list[EventHandler]:
    """``handlers`` (None, a handler or a list) as a new list; anything else raises
    ``InvalidValue``."""
    return listed(handlers, EventHandler, "event_handlers", "an EventHandler")


class TrainBegin(EventHandler):
    """A handler called once before training."""

    def train_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        """Called before the first epoch."""


class TrainEnd(EventHandler):
    """A handler called once after training."""

    def train_end(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        """Called after the last epoch."""


class EpochBegin(EventHandler):
    """A handler called before each epoch."""

    def epoch_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        """Called before each epoch."""


class EpochEnd(EventHandler):
    """A handler called after each epoch; True stops training."""

    def epoch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        """Called after each epoch; return True to stop."""
        return False


class BatchBegin(EventHandler):
    """A handler called before each batch."""

    def batch_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        """Called before each batch (keyword ``batch``)."""


class BatchEnd(EventHandler):
    """A handler called after each batch; True stops the epoch and training."""

    def batch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        """Called after each batch (keywords ``batch``, ``pred``, ``label``, ``loss``); return
        True to stop."""
        return False


class StoppingHandler(TrainBegin, BatchEnd, EpochEnd):
    """Stops training after ``estimator.max_epoch`` epochs or ``max_batch`` batches."""

    def __init__(self, max_epoch: int | None = None, max_batch: int | None = None) -> None:
        self.max_epoch, self.max_batch = max_epoch, max_batch
        self.current_batch = self.current_epoch = 0
        self.stop_training = False

    def train_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        """Read the limits from the estimator and start counting."""
        self.max_epoch, self.max_batch = estimator.max_epoch, estimator.max_batch
        self.current_batch = self.current_epoch = 0
        self.stop_training = False

    def batch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        """Count the batch; True at ``max_batch``."""
        self.current_batch += 1
        self.stop_training = self.stop_training or self.current_batch == self.max_batch
        return self.stop_training

    def epoch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        """Count the epoch; True at ``max_epoch`` (or once ``max_batch`` is reached)."""
        self.current_epoch += 1
        self.stop_training = self.stop_training or self.current_epoch == self.max_epoch
        return self.stop_training


class MetricHandler(EpochBegin, BatchEnd):
    """Resets ``metrics`` at each epoch and updates them after each batch (a ``Loss`` metric
    with the losses, the others with labels and predictions)."""

    def __init__(self, metrics: Any, priority: float = -1000) -> None:
        self.metrics = metric_list(metrics)
        self.priority = priority

    def epoch_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        """Reset every metric."""
        for metric in self.metrics:
            metric.reset()

    def batch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        """Update every metric with the batch."""
        for metric in self.metrics:
            if isinstance(metric, LossMetric):
                metric.update(0, kwargs["loss"])
            else:
                metric.update(kwargs["label"], kwargs["pred"])
        return False


class ValidationHandler(TrainBegin, BatchEnd, EpochEnd):
    """Runs ``eval_fn(val_data=..., batch_axis=..., event_handlers=...)`` (``Estimator.evaluate``)
    every ``epoch_period`` epochs and every ``batch_period`` batches."""

    def __init__(self, val_data: Any, eval_fn: Callable[..., Any], epoch_period: int | None = 1,
                 batch_period: int | None = None, priority: float = -1000,
                 event_handlers: Any = None) -> None:
        self.val_data, self.eval_fn = val_data, eval_fn
        self.epoch_period, self.batch_period = epoch_period, batch_period
        self.current_batch = self.current_epoch = 0
        self.priority = priority
        self.event_handlers = event_handlers

    def train_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        """Start counting."""
        self.current_batch = self.current_epoch = 0

    def _validate(self, estimator: Any) -> None:
        self.eval_fn(val_data=self.val_data, batch_axis=estimator.batch_axis,
                     event_handlers=self.event_handlers)

    def batch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        """Validate every ``batch_period`` batches."""
        self.current_batch += 1
        if self.batch_period and self.current_batch % self.batch_period == 0:
            self._validate(estimator)
        return False

    def epoch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        """Validate every ``epoch_period`` epochs."""
        self.current_epoch += 1
        if self.epoch_period and self.current_epoch % self.epoch_period == 0:
            self._validate(estimator)
        return False


def _metric_text(metrics: list[EvalMetric]) -> str:
    return ", ".join("%s: %.4f" % metric.get() for metric in metrics)


class LoggingHandler(TrainBegin, TrainEnd, EpochBegin, EpochEnd, BatchBegin, BatchEnd):
    """Logs training to ``estimator.logger``: the optimizer and learning rate at the start,
    ``metrics`` at the end of each epoch (``log_interval='epoch'``) or also every
    ``log_interval`` batches (an int), and a summary at the end."""

    def __init__(self, log_interval: int | str = "epoch", metrics: Any = None,
                 priority: float = math.inf) -> None:
        if log_interval != "epoch" and (isinstance(log_interval, bool)
                                        or not isinstance(log_interval, int)):
            raise InvalidValue(f"LoggingHandler: log_interval must be an integer or 'epoch', "
                               f"got {log_interval!r}")
        self.metrics = metric_list(metrics)
        self.log_interval = log_interval
        self.priority = priority
        self.batch_index = self.current_epoch = self.processed_samples = 0
        self.log_interval_time = 0.0
        self.train_start = self.epoch_start = self.batch_start = time.time()

    def train_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        """Log the optimizer, the learning rate and the length of training."""
        self.train_start = time.time()
        trainer = estimator.trainer
        estimator.logger.info("Training begin: using optimizer %s with current learning rate "
                              "%.4f ", type(trainer.optimizer).__name__, trainer.learning_rate)
        if estimator.max_epoch:
            estimator.logger.info("Train for %d epochs.", estimator.max_epoch)
        else:
            estimator.logger.info("Train for %d batches.", estimator.max_batch)
        self.batch_index = self.current_epoch = self.processed_samples = 0
        self.log_interval_time = 0.0

    def train_end(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        """Log the training time, the epochs and the metrics."""
        message = "Train finished using total %ds with %d epochs. " % (
            time.time() - self.train_start, self.current_epoch)
        estimator.logger.info((message + _metric_text(self.metrics)).rstrip(", "))

    def batch_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        """Start timing the batch."""
        self.batch_start = time.time()

    def batch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        """Every ``log_interval`` batches, log the epoch, batch, samples, time and metrics."""
        if isinstance(self.log_interval, int):
            self.processed_samples += kwargs["batch"][0].shape[0]
            self.log_interval_time += time.time() - self.batch_start
            if self.batch_index % self.log_interval == 0:
                message = "[Epoch %d][Batch %d][Samples %s] time/interval: %.3fs " % (
                    self.current_epoch, self.batch_index, self.processed_samples,
                    self.log_interval_time)
                self.log_interval_time = 0.0
                estimator.logger.info((message + _metric_text(self.metrics)).rstrip(", "))
        self.batch_index += 1
        return False

    def epoch_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        """Log the epoch's start (training) or the validation's."""
        self.epoch_start = time.time()
        if any("training" in metric.name for metric in self.metrics):
            estimator.logger.info("[Epoch %d] Begin, current learning rate: %.4f",
                                  self.current_epoch, estimator.trainer.learning_rate)
        else:
            estimator.logger.info("Validation Begin")

    def epoch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        """Log the epoch's time and metrics."""
        message = "[Epoch %d] Finished in %.3fs, " % (self.current_epoch,
                                                       time.time() - self.epoch_start)
        estimator.logger.info((message + _metric_text(self.metrics)).rstrip(", "))
        self.current_epoch += 1
        self.batch_index = 0
        return False


def _comparison(mode: str, monitor: EvalMetric, who: str) -> Callable[[float, float], bool]:
    """Whether a new value of ``monitor`` improves on the best: greater in ``max`` mode, less
    in ``min``; ``auto`` picks greater for accuracy and F1, less otherwise."""
    if mode not in ("auto", "min", "max"):
        warnings.warn(f"{who}: mode {mode!r} is unknown, falling back to 'auto'", RuntimeWarning,
                      stacklevel=3)
        mode = "auto"
    if mode == "auto":
        name = monitor.get()[0]
        name = name[0] if isinstance(name, list) else name
        mode = "max" if any(k in str(name).lower() for k in ("acc", "f1")) else "min"
    return (lambda a, b: a > b) if mode == "max" else (lambda a, b: a < b)


class CheckpointHandler(TrainBegin, BatchEnd, EpochEnd):
    """Saves the net's parameters (``.params``) and the trainer's states (``.states``) in
    ``model_dir`` as ``<model_prefix>-epoch<E>batch<B>`` every ``epoch_period`` epochs and
    ``batch_period`` batches, keeping the last ``max_checkpoints``; with ``save_best`` also
    ``<model_prefix>-best`` when ``monitor`` improves; a hybridized net's graph as
    ``<model_prefix>-symbol.json``; ``resume_from_checkpoint`` loads the latest and trains the
    epochs or batches left."""

    def __init__(self, model_dir: str, model_prefix: str = "model", monitor: Any = None,
                 verbose: int = 0, save_best: bool = False, mode: str = "auto",
                 epoch_period: int | None = 1, batch_period: int | None = None,
                 max_checkpoints: int = 5, resume_from_checkpoint: bool = False) -> None:
        if save_best and not isinstance(monitor, EvalMetric):
            raise InvalidValue("CheckpointHandler: save_best needs monitor, one of the metrics "
                               "of estimator.train_metrics or estimator.val_metrics")
        os.makedirs(model_dir, exist_ok=True)
        self.model_dir, self.model_prefix = model_dir, model_prefix
        self.monitor, self.verbose, self.save_best = monitor, verbose, save_best
        self.epoch_period, self.batch_period = epoch_period, batch_period
        self.max_checkpoints = integer(max_checkpoints, "CheckpointHandler: max_checkpoints")
        self.resume_from_checkpoint = resume_from_checkpoint
        self.current_batch = self.current_epoch = 0
        self.trained_epoch = self.trained_batch = -1
        self.saved_checkpoints: list[str] = []
        if save_best:
            self.monitor_op = _comparison(mode, monitor, "CheckpointHandler")
            self._maximize = self.monitor_op(1.0, 0.0)
            self.best = -math.inf if self._maximize else math.inf

    def train_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        """Start counting; resume from the latest checkpoint when asked."""
        self.current_batch = self.current_epoch = 0
        if self.save_best:
            self.best = -math.inf if self._maximize else math.inf
        if self.resume_from_checkpoint:
            by_batch = bool(estimator.max_batch)
            if (by_batch and (not self.batch_period or self.epoch_period)) or (
                    not by_batch and (not self.epoch_period or self.batch_period)):
                raise InvalidValue("CheckpointHandler: to resume from a checkpoint, save by the "
                                   "same period as training runs (epoch_period for epochs, "
                                   "batch_period for batches, the other None)")
            self._resume(estimator)

    def batch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        """Save the graph after the first batch, and a checkpoint every ``batch_period``."""
        if self.current_batch == 0:
            self._save_symbol(estimator)
        if self.batch_period and (self.current_batch + 1) % self.batch_period == 0:
            self._save_checkpoint(estimator)
        self.current_batch += 1
        return False

    def epoch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        """Save a checkpoint every ``epoch_period`` epochs."""
        if self.epoch_period and (self.current_epoch + 1) % self.epoch_period == 0:
            self._save_checkpoint(estimator)
        self.current_epoch += 1
        return False

    def _save_checkpoint(self, estimator: Any) -> None:
        epoch, batch = self.current_epoch, self.current_batch
        if self.resume_from_checkpoint and self.trained_epoch >= 0:
            epoch += self.trained_epoch + 1
            batch += self.trained_batch + (0 if estimator.max_epoch else 1)
        prefix = "%s-epoch%dbatch%d" % (self.model_prefix, epoch, batch)
        self._save(estimator, prefix)
        self.saved_checkpoints.append(prefix)
        while len(self.saved_checkpoints) > self.max_checkpoints:
            old = self.saved_checkpoints.pop(0)
            for suffix in (".params", ".states"):
                path = os.path.join(self.model_dir, old + suffix)
                if os.path.exists(path):
                    os.remove(path)
        if self.verbose > 0:
            estimator.logger.info("[Epoch %d] CheckpointHandler: trained total %d batches, "
                                  "saving model at %s with prefix: %s", self.current_epoch,
                                  self.current_batch + 1, self.model_dir, prefix)
        if self.save_best:
            name, value = self.monitor.get()
            if math.isnan(value):
                warnings.warn(RuntimeWarning(f"CheckpointHandler: skipping save best because "
                                             f"{name} is not updated"), stacklevel=2)
            elif self.monitor_op(value, self.best):
                self._save(estimator, self.model_prefix + "-best")
                if self.verbose > 0:
                    estimator.logger.info("[Epoch %d] CheckpointHandler: %s improved from %0.5f "
                                          "to %0.5f, updating best model", self.current_epoch,
                                          name, self.best, value)
                self.best = value

    def _save(self, estimator: Any, prefix: str) -> None:
        path = os.path.join(self.model_dir, prefix)
        estimator.net.save_parameters(path + ".params")
        estimator.trainer.save_states(path + ".states")

    def _save_symbol(self, estimator: Any) -> None:
        path = os.path.join(self.model_dir, self.model_prefix + "-symbol.json")
        net = estimator.net
        if getattr(net, "_active", False) and hasattr(net, "hybrid_forward"):
            from .... import symbol
            net(symbol.var("data")).save(path)
        else:
            estimator.logger.info("Model architecture (symbol file) is not saved: build the "
                                  "model of HybridBlocks and call net.hybridize() to save it as "
                                  "%s.", path)

    def _checkpoints(self) -> list[tuple[int, int, str]]:
        """(epoch, batch, prefix) of every checkpoint of this prefix in ``model_dir``."""
        found = []
        head = self.model_prefix + "-epoch"
        for name in os.listdir(self.model_dir):
            if name.startswith(head) and name.endswith(".params"):
                stem = name[:-len(".params")]
                epoch, _, batch = stem[len(head):].partition("batch")
                if not (epoch.isdigit() and batch.isdigit()):
                    raise InvalidValue(f"CheckpointHandler: checkpoint file {name!r} is not "
                                       f"named <model_prefix>-epoch<E>batch<B>.params")
                found.append((int(epoch), int(batch), stem))
        return sorted(found)

    def _resume(self, estimator: Any) -> None:
        found = self._checkpoints()
        self.saved_checkpoints = [stem for _, _, stem in found]
        if not found:
            estimator.logger.info("CheckpointHandler: no checkpoint found, training from "
                                  "scratch for %d %s", estimator.max_batch or estimator.max_epoch,
                                  "batches" if estimator.max_batch else "epochs")
            return
        self.trained_epoch = max(e for e, _, _ in found)
        self.trained_batch = max(b for e, b, _ in found if e == self.trained_epoch)
        for limit, trained, unit in (("max_epoch", self.trained_epoch, "epochs"),
                                     ("max_batch", self.trained_batch, "batches")):
            wanted = getattr(estimator, limit)
            if wanted:
                if trained >= wanted - 1:
                    raise InvalidValue(f"CheckpointHandler: the checkpoint has reached {wanted} "
                                       f"{unit}; pass resume_from_checkpoint=False to train "
                                       f"from scratch")
                setattr(estimator, limit, wanted - trained - 1)
        path = os.path.join(self.model_dir, "%s-epoch%dbatch%d" % (
            self.model_prefix, self.trained_epoch, self.trained_batch))
        estimator.net.load_parameters(path + ".params", ctx=estimator.context)
        estimator.trainer.load_states(path + ".states")
        estimator.logger.warning("CheckpointHandler: checkpoint resumed from epoch %d batch %d",
                                 self.trained_epoch, self.trained_batch)


class EarlyStoppingHandler(TrainBegin, EpochEnd, TrainEnd):
    """Stops training when ``monitor`` has not improved by ``min_delta`` (on ``baseline``, at
    first) for ``patience`` epochs."""

    def __init__(self, monitor: EvalMetric, min_delta: float = 0, patience: int = 0,
                 mode: str = "auto", baseline: float | None = None) -> None:
        if not isinstance(monitor, EvalMetric) or isinstance(monitor, CompositeEvalMetric):
            raise InvalidValue("EarlyStoppingHandler: monitor must be one (simple) metric of "
                               "estimator.train_metrics or estimator.val_metrics")
        self.monitor, self.baseline, self.patience = monitor, baseline, patience
        self.monitor_op = _comparison(mode, monitor, "EarlyStoppingHandler")
        self._maximize = self.monitor_op(1.0, 0.0)
        self.min_delta = min_delta if self._maximize else -min_delta
        self.wait = self.stopped_epoch = self.current_epoch = 0
        self.stop_training = False
        self.best = -math.inf if self._maximize else math.inf

    def train_begin(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        """Start counting from the baseline."""
        self.wait = self.stopped_epoch = self.current_epoch = 0
        self.stop_training = False
        if self.baseline is not None:
            self.best = self.baseline
        else:
            self.best = -math.inf if self._maximize else math.inf

    def epoch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        """Compare the monitor with the best; True once ``patience`` epochs did not improve."""
        name, value = self.monitor.get()
        if math.isnan(value):
            warnings.warn(RuntimeWarning(f"EarlyStoppingHandler: {name} is not updated"),
                          stacklevel=2)
        elif self.monitor_op(value - self.min_delta, self.best):
            self.best, self.wait = value, 0
        else:
            self.wait += 1
            if self.wait >= self.patience:
                self.stopped_epoch, self.stop_training = self.current_epoch, True
        self.current_epoch += 1
        return self.stop_training

    def train_end(self, estimator: Any, *args: Any, **kwargs: Any) -> None:
        """Log the early stop."""
        if self.stopped_epoch > 0:
            estimator.logger.info("[Epoch %d] EarlyStoppingHandler: early stopping due to %s "
                                  "not improving", self.stopped_epoch, self.monitor.get()[0])


class GradientUpdateHandler(BatchEnd):
    """``estimator.trainer.step(batch size)`` after each batch (the size: the losses' first
    dimensions summed)."""

    def __init__(self, priority: float = -2000) -> None:
        self.priority = priority

    def batch_end(self, estimator: Any, *args: Any, **kwargs: Any) -> bool:
        """Update the parameters with the batch's gradients."""
        loss = kwargs["loss"]
        losses = loss if isinstance(loss, list) else [loss]
        estimator.trainer.step(sum(each.shape[0] for each in losses))
        return False


__all__ = ["BatchBegin", "BatchEnd", "CheckpointHandler", "EarlyStoppingHandler", "EpochBegin",
           "EpochEnd", "GradientUpdateHandler", "LoggingHandler", "MetricHandler",
           "StoppingHandler", "TrainBegin", "TrainEnd", "ValidationHandler"]
