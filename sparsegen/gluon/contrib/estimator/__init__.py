"""``gluon.contrib.estimator``: MXNet 1.9.1's training loop for Gluon, ``Estimator.fit`` and
``evaluate`` driven by event handlers (gradient update, metrics, validation, logging,
checkpoints, early stopping, stopping), and the ``BatchProcessor`` that runs one batch."""

from . import batch_processor, estimator, event_handler, utils
from .batch_processor import BatchProcessor
from .estimator import Estimator
from .event_handler import (BatchBegin, BatchEnd, CheckpointHandler, EarlyStoppingHandler,
                            EpochBegin, EpochEnd, GradientUpdateHandler, LoggingHandler,
                            MetricHandler, StoppingHandler, TrainBegin, TrainEnd,
                            ValidationHandler)

__all__ = ["BatchBegin", "BatchEnd", "BatchProcessor", "CheckpointHandler",
           "EarlyStoppingHandler", "EpochBegin", "EpochEnd", "Estimator",
           "GradientUpdateHandler", "LoggingHandler", "MetricHandler", "StoppingHandler",
           "TrainBegin", "TrainEnd", "ValidationHandler", "batch_processor", "estimator",
           "event_handler", "utils"]
