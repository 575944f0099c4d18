"""gluon.contrib.estimator: Estimator.fit / evaluate and the event handlers (stopping, gradient
update, metrics, validation, logging, checkpoints with resume, early stopping), checked by
hand-computed counts, a numpy SGD oracle and the files written. MXNet's own
test_gluon_estimator.py / test_gluon_event_handler.py run through tools/mxnet_tests."""

from __future__ import annotations

import io
import logging
import os
import warnings

import numpy as np
import pytest

import sparsegen as mx
from sparsegen import gluon
from sparsegen.gluon.contrib.estimator import (BatchEnd, CheckpointHandler,
                                               EarlyStoppingHandler, Estimator, EpochEnd,
                                               GradientUpdateHandler, LoggingHandler,
                                               MetricHandler, StoppingHandler, TrainBegin,
                                               ValidationHandler)

IN, OUT = np.random.RandomState(0).rand(10, 3).astype(np.float32), \
    np.random.RandomState(1).rand(10, 2).astype(np.float32)


def loader(batch_size=4):
    return gluon.data.DataLoader(gluon.data.ArrayDataset(mx.nd.array(IN), mx.nd.array(OUT)),
                                 batch_size=batch_size)


def estimator(lr=0.1, **kwargs):
    net = gluon.nn.Dense(2, in_units=3)
    net.initialize(mx.init.Constant(0.1))
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": lr})
    return Estimator(net, loss=gluon.loss.L2Loss(), trainer=trainer, **kwargs), net


class Counter(TrainBegin, BatchEnd, EpochEnd):
    def __init__(self):
        self.batches = self.epochs = self.begun = 0

    def train_begin(self, estimator, *args, **kwargs):
        self.begun += 1

    def batch_end(self, estimator, *args, **kwargs):
        self.batches += 1
        return False

    def epoch_end(self, estimator, *args, **kwargs):
        self.epochs += 1
        return False


def test_fit_is_sgd_on_the_l2_loss():
    est, net = estimator(lr=0.1)
    est.logger.setLevel(logging.ERROR)
    est.fit(loader(batch_size=5), epochs=2)
    w, b = np.full((2, 3), 0.1), np.zeros(2)  # the bias keeps its own zeros initializer
    for _ in range(2):  # the oracle: SGD on L2Loss, the mean over a row's 2 outputs of
        for start in (0, 5):  # (y - t)^2 / 2, the step dividing by the 5 rows of a batch
            x, t = IN[start:start + 5].astype(np.float64), OUT[start:start + 5]
            err = (x @ w.T + b - t) / 2
            w, b = w - 0.1 * err.T @ x / 5, b - 0.1 * err.sum(axis=0) / 5
    np.testing.assert_allclose(net.weight.data().asnumpy(), w, rtol=1e-4)
    np.testing.assert_allclose(net.bias.data().asnumpy(), b, rtol=1e-4)
    names = [m.name for m in est.train_metrics]
    assert names == ["training l2loss"] and [m.name for m in est.val_metrics] == [
        "validation l2loss"]


def test_epochs_or_batches_and_stopping():
    est, _ = estimator()
    est.logger.setLevel(logging.ERROR)
    counter = Counter()
    est.fit(loader(), batches=7, event_handlers=[counter])  # 3 batches an epoch
    assert (counter.batches, counter.epochs, counter.begun) == (7, 3, 1)
    counter = Counter()
    est.fit(loader(), epochs=2, event_handlers=counter)
    assert (counter.batches, counter.epochs) == (6, 2)
    for bad in ({}, {"epochs": 1, "batches": 2}):
        with pytest.raises(ValueError, match="epochs"):
            est.fit(loader(), **bad)
    with pytest.raises(ValueError, match="DataLoader"):
        est.fit([mx.nd.ones((2, 3))], epochs=1)


def test_default_handlers_and_their_order():
    est, _ = estimator()
    early = EarlyStoppingHandler(monitor=est.val_metrics[0])
    handlers = est._prepare_default_handlers(val_data=loader(), event_handlers=[early])
    kinds = [type(h) for h in handlers]
    assert kinds[0] is GradientUpdateHandler and kinds[-1] is LoggingHandler
    assert {MetricHandler, ValidationHandler, StoppingHandler, EarlyStoppingHandler} <= set(kinds)
    with pytest.raises(ValueError, match="metric"):  # a metric not the estimator's
        est.fit(loader(), epochs=1,
                event_handlers=[LoggingHandler(metrics=[mx.metric.RMSE("other")])])


def test_validation_updates_the_validation_metrics():
    est, net = estimator(val_metrics=mx.metric.MAE())
    est.logger.setLevel(logging.ERROR)
    est.evaluate(loader(batch_size=5))  # MAE: the mean of the batches' means (equal batches)
    pred = IN @ np.full((3, 2), 0.1)
    name, value = est.val_metrics[0].get()
    assert name == "validation mae"
    np.testing.assert_allclose(value, np.abs(pred - OUT).mean(), rtol=1e-5)


def test_logging_lines():
    est, _ = estimator(train_metrics=mx.metric.MAE())
    stream = io.StringIO()
    est.logger.handlers = [logging.StreamHandler(stream)]
    est.fit(loader(), epochs=1, event_handlers=[LoggingHandler(log_interval=1,
                                                               metrics=est.train_metrics)])
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("Training begin: using optimizer SGD with current learning rate")
    batch_lines = [line for line in lines if line.startswith("[Epoch 0][Batch")]
    assert len(batch_lines) == 3 and "[Samples 10]" in batch_lines[-1]
    assert "training mae" in batch_lines[0]
    assert lines[-1].startswith("Train finished using total")
    with pytest.raises(ValueError, match="log_interval"):
        LoggingHandler(log_interval="batch")


def test_checkpoints_and_resume(tmp_path):
    est, net = estimator()
    est.logger.setLevel(logging.ERROR)
    handler = CheckpointHandler(str(tmp_path), "m", monitor=est.train_metrics[0],
                                save_best=True, mode="min", max_checkpoints=2)
    est.fit(loader(), epochs=3, event_handlers=[handler])
    files = sorted(os.listdir(tmp_path))
    assert "m-best.params" in files and "m-best.states" in files
    assert [f for f in files if f.startswith("m-epoch")] == [
        "m-epoch1batch6.params", "m-epoch1batch6.states", "m-epoch2batch9.params",
        "m-epoch2batch9.states"]
    trained = net.weight.data().asnumpy()
    est2, net2 = estimator()
    est2.logger.setLevel(logging.ERROR)
    resume = CheckpointHandler(str(tmp_path), "m", max_checkpoints=2,
                               resume_from_checkpoint=True)
    est2.fit(loader(), epochs=5, event_handlers=[resume])
    assert est2.max_epoch == 2  # epochs 3 and 4 left
    assert os.path.isfile(tmp_path / "m-epoch4batch15.params")
    assert not np.allclose(net2.weight.data().asnumpy(), trained)
    with pytest.raises(ValueError, match="monitor"):
        CheckpointHandler(str(tmp_path), save_best=True)


def test_early_stopping():
    est, _ = estimator(lr=0.0)  # nothing learns: the loss never improves after epoch 0
    est.logger.setLevel(logging.ERROR)
    early = EarlyStoppingHandler(monitor=est.train_metrics[0], patience=1, mode="min")
    est.fit(loader(), epochs=10, event_handlers=[early])
    assert (early.current_epoch, early.stopped_epoch) == (2, 1)
    with pytest.raises(ValueError, match="monitor"):
        EarlyStoppingHandler(monitor="loss")


def test_constructor_checks():
    net = gluon.nn.Dense(2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = Estimator(net, loss=gluon.loss.SoftmaxCrossEntropyLoss())
    assert any("No trainer specified" in str(w.message) for w in caught)
    assert isinstance(est.train_metrics[0], mx.metric.Accuracy)
    assert est.context == [mx.cpu()]
    with pytest.raises(ValueError, match="loss"):
        Estimator(net, loss="mse")
    with pytest.raises(ValueError, match="trainer"):
        Estimator(net, loss=gluon.loss.L2Loss(), trainer="sgd")
    with pytest.raises(ValueError, match="metrics"):
        Estimator(net, loss=gluon.loss.L2Loss(), train_metrics="acc")
    with pytest.raises(ValueError, match="context"):
        Estimator(net, loss=gluon.loss.L2Loss(), context="cpu")
    with pytest.raises(AssertionError, match="gpu"):
        Estimator(net, loss=gluon.loss.L2Loss(), context=[mx.gpu(100)])
