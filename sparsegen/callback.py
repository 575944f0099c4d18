"""``mx.callback``: the callbacks ``fit`` calls at the end of a batch (``Speedometer``,
``ProgressBar``, ``log_train_metric``) or of an epoch (``do_checkpoint``,
``module_checkpoint``), logging with ``logging.info`` in MXNet 1.9.1's words."""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from typing import Any

from .model import BatchEndParam, save_checkpoint
from .params import integer


def module_checkpoint(mod: Any, prefix: str, period: int = 1,
                      save_optimizer_states: bool = False) -> Callable[..., None]:
    """An epoch-end callback calling ``mod.save_checkpoint(prefix, epoch + 1, ...)`` every
    ``period`` epochs."""
    period = max(1, int(period))

    def _callback(iter_no: int, sym: Any = None, arg: Any = None, aux: Any = None) -> None:
        if (iter_no + 1) % period == 0:
            mod.save_checkpoint(prefix, iter_no + 1, save_optimizer_states)

    return _callback


def do_checkpoint(prefix: str, period: int = 1) -> Callable[..., None]:
    """An epoch-end callback writing ``prefix-symbol.json`` and ``prefix-%04d.params`` (epoch
    + 1) every ``period`` epochs (``mx.model.save_checkpoint``)."""
    period = max(1, int(period))

    def _callback(iter_no: int, sym: Any, arg: dict, aux: dict) -> None:
        if (iter_no + 1) % period == 0:
            save_checkpoint(prefix, iter_no + 1, sym, arg, aux)

    return _callback


def log_train_metric(period: int, auto_reset: bool = False) -> Callable[[BatchEndParam], None]:
    """A batch-end callback logging ``Iter[epoch] Batch[n] Train-name=value`` every ``period``
    batches (resetting the metric's local tally after each log with ``auto_reset``)."""
    period = integer(period, "log_train_metric: period", low=1)

    def _callback(param: BatchEndParam) -> None:
        if param.nbatch % period == 0 and param.eval_metric is not None:
            for name, value in param.eval_metric.get_name_value():
                logging.info("Iter[%d] Batch[%d] Train-%s=%f", param.epoch, param.nbatch, name,
                             value)
            if auto_reset:
                param.eval_metric.reset_local()

    return _callback


class Speedometer:
    """Logs the training speed and the metric every ``frequent`` batches, as MXNet's:
    ``Epoch[e] Batch [a-b]\\tSpeed: s samples/sec\\tname=value``; ``auto_reset`` resets the
    metric's local tally after each log (the range then starts at the previous log)."""

    def __init__(self, batch_size: int, frequent: int = 50, auto_reset: bool = True) -> None:
        self.batch_size = integer(batch_size, "Speedometer: batch_size", low=1)
        self.frequent = integer(frequent, "Speedometer: frequent", low=1)
        self.auto_reset = bool(auto_reset)
        self.init = False
        self.tic = 0.0
        self.last_count = 0

    def __call__(self, param: BatchEndParam) -> None:
        count = param.nbatch
        if self.last_count > count:  # a new epoch started
            self.init = False
        self.last_count = count
        if not self.init:
            self.init, self.tic = True, time.time()
            return
        if count % self.frequent:
            return
        elapsed = time.time() - self.tic
        speed = self.frequent * self.batch_size / elapsed if elapsed > 0 else math.inf
        if param.eval_metric is None:
            logging.info("Iter[%d] Batch [%d]\tSpeed: %.2f samples/sec", param.epoch, count,
                         speed)
        else:
            name_value = param.eval_metric.get_name_value()
            pairs = "\t%s=%f" * len(name_value)
            values = [item for pair in name_value for item in pair]
            if self.auto_reset:
                param.eval_metric.reset_local()
                logging.info("Epoch[%d] Batch [%d-%d]\tSpeed: %.2f samples/sec" + pairs,
                             param.epoch, count - self.frequent, count, speed, *values)
            else:
                logging.info("Epoch[%d] Batch [0-%d]\tSpeed: %.2f samples/sec" + pairs,
                             param.epoch, count, speed, *values)
        self.tic = time.time()


class ProgressBar:
    """Logs a bar of ``length`` characters filled by the share of ``total`` batches done."""

    def __init__(self, total: int, length: int = 80) -> None:
        self.total = integer(total, "ProgressBar: total", low=1)
        self.bar_len = integer(length, "ProgressBar: length", low=1)

    def __call__(self, param: BatchEndParam) -> None:
        count = param.nbatch
        filled = int(round(self.bar_len * count / float(self.total)))
        percents = math.ceil(100.0 * count / float(self.total))
        logging.info("[%s] %s%s\r", "=" * filled + "-" * (self.bar_len - filled), percents, "%")


class LogValidationMetricsCallback:
    """Logs ``Epoch[e] Validation-name=value`` for each metric value."""

    def __call__(self, param: BatchEndParam) -> None:
        if not param.eval_metric:
            return
        for name, value in param.eval_metric.get_name_value():
            logging.info("Epoch[%d] Validation-%s=%f", param.epoch, name, value)


__all__ = ["LogValidationMetricsCallback", "ProgressBar", "Speedometer", "do_checkpoint",
           "log_train_metric", "module_checkpoint"]
