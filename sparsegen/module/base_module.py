"""``BaseModule``: the training and evaluation loops every module shares (``fit``, ``score``,
``predict``, ``iter_predict``, parameter files), as MXNet 1.9.1's ``mxnet.module.BaseModule``,
and the checks of data names and shapes."""

from __future__ import annotations

import logging
import time
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from .. import metric as metric_module
from .. import ndarray as nd
from ..base import _as_list
from ..errors import InvalidType, InvalidValue, NotReady
from ..initializer import Uniform
from ..io import DataBatch, DataDesc, DataIter
from ..model import BatchEndParam, read_params, write_params


def check_input_names(symbol: Any, names: list[str], typename: str, throw: bool) -> None:
    """Each of ``names`` must be an argument of ``symbol``: an error (a warning when not
    ``throw``) naming it and the arguments that could be meant."""
    args = symbol.list_arguments()
    for name in names:
        if name in args:
            continue
        candidates = [a for a in args if not a.endswith(("_weight", "_bias", "_gamma", "_beta"))]
        msg = (f"You created Module with Module(..., {typename}_names={names}) but input with "
               f"name '{name}' is not found in symbol.list_arguments(). Did you mean one of: "
               f"{', '.join(candidates)}")
        if throw:
            raise InvalidValue(msg)
        warnings.warn(msg, stacklevel=3)


def _descs(shapes: Any, what: str) -> list[DataDesc]:
    """``shapes`` (DataDescs or ``(name, shape)`` pairs) as DataDescs."""
    if not isinstance(shapes, (list, tuple)):
        raise InvalidType(f"Module.bind: {what}_shapes must be a list of DataDesc or (name, shape) "
                          f"pairs, got {type(shapes).__name__}")
    descs = []
    for item in shapes:
        if isinstance(item, DataDesc):
            descs.append(item)
        elif isinstance(item, (list, tuple)) and len(item) >= 2 and isinstance(item[0], str):
            descs.append(DataDesc(*item))
        else:
            raise InvalidType(f"Module.bind: each of {what}_shapes must be a DataDesc or a "
                              f"(name, shape) pair, got {item!r}")
    return descs


def parse_data_desc(data_names: list[str], label_names: list[str], data_shapes: Any,
                    label_shapes: Any) -> tuple[list[DataDesc], list[DataDesc] | None]:
    """The data and label descriptions, their names checked against the module's (data: an
    error; labels: a warning, as MXNet's)."""
    data = _descs(data_shapes, "data")
    if sorted(data_names) != sorted(d.name for d in data):
        raise InvalidValue(f"Data provided by data_shapes don't match names specified by "
                           f"data_names ({data} vs. {data_names})")
    labels = None if label_shapes is None else _descs(label_shapes, "label")
    if sorted(label_names) != sorted(d.name for d in labels or []):
        warnings.warn(f"Data provided by label_shapes don't match names specified by "
                      f"label_names ({labels} vs. {label_names})", stacklevel=3)
    return data, labels


class BaseModule:
    """What every module does with its ``forward`` / ``backward`` / ``update``: ``fit``,
    ``score``, ``predict``, ``iter_predict``, ``save_params`` / ``load_params``."""

    def __init__(self, logger: Any = logging) -> None:
        self.logger = logger
        self.binded = False
        self.for_training = False
        self.inputs_need_grad = False
        self.params_initialized = False
        self.optimizer_initialized = False
        self._symbol: Any = None

    def _ready(self, what: str, optimizer: bool = False) -> None:
        """Raise ``NotReady`` naming the missing step before ``what``."""
        kind = type(self).__name__
        if not self.binded:
            raise NotReady(f"{kind}.{what}: the module is not bound; call bind() first")
        if not self.params_initialized:
            raise NotReady(f"{kind}.{what}: the parameters are not initialized; call "
                           "init_params() first")
        if optimizer and not self.optimizer_initialized:
            raise NotReady(f"{kind}.{what}: the optimizer is not initialized; call "
                           "init_optimizer() first")

    @property
    def symbol(self) -> Any:
        """The symbol the module runs."""
        return self._symbol

    def forward_backward(self, data_batch: Any) -> None:
        """``forward(data_batch, is_train=True)`` then ``backward()``."""
        self.forward(data_batch, is_train=True)
        self.backward()

    def _batches(self, eval_data: Any, num_batch: int | None, reset: bool,
                 sparse_row_id_fn: Any, what: str) -> Iterator[tuple[int, Any]]:
        """``(nbatch, batch)`` of ``eval_data`` after each batch ran forward (not training)."""
        self._ready(what)
        if reset:
            eval_data.reset()
        for nbatch, batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(batch, is_train=False)
            yield nbatch, batch

    def score(self, eval_data: Any, eval_metric: Any, num_batch: int | None = None,
              batch_end_callback: Any = None, score_end_callback: Any = None,
              reset: bool = True, epoch: int = 0, sparse_row_id_fn: Any = None
              ) -> list[tuple[str, float]]:
        """``eval_metric``'s ``(name, value)`` pairs over ``eval_data`` (at most ``num_batch``
        batches), calling ``batch_end_callback`` after each batch."""
        if not isinstance(eval_metric, metric_module.EvalMetric):
            eval_metric = metric_module.create(eval_metric)
        eval_metric.reset()
        actual_num_batch = 0
        for nbatch, batch in self._batches(eval_data, num_batch, reset, sparse_row_id_fn,
                                           "score"):
            self.update_metric(eval_metric, batch.label)
            if batch_end_callback is not None:
                params = BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=eval_metric,
                                       locals=locals())
                for callback in _as_list(batch_end_callback):
                    callback(params)
            actual_num_batch += 1
        if score_end_callback:
            params = BatchEndParam(epoch=epoch, nbatch=actual_num_batch,
                                   eval_metric=eval_metric, locals=locals())
            for callback in _as_list(score_end_callback):
                callback(params)
        return eval_metric.get_name_value()

    def _unpadded(self, batch: Any) -> list[Any]:
        """The outputs of the last forward without the batch's padding."""
        pad = batch.pad or 0
        outputs = self.get_outputs()
        return outputs if not pad else [out[0:out.shape[0] - pad] for out in outputs]

    def iter_predict(self, eval_data: Any, num_batch: int | None = None, reset: bool = True,
                     sparse_row_id_fn: Any = None) -> Iterator[tuple[list[Any], int, Any]]:
        """``(outputs, nbatch, batch)`` per batch of ``eval_data``, padding removed."""
        for nbatch, batch in self._batches(eval_data, num_batch, reset, sparse_row_id_fn,
                                           "iter_predict"):
            yield self._unpadded(batch), nbatch, batch

    def predict(self, eval_data: Any, num_batch: int | None = None, merge_batches: bool = True,
                reset: bool = True, always_output_list: bool = False,
                sparse_row_id_fn: Any = None) -> Any:
        """The outputs over ``eval_data`` (a DataIter, or one NDArray / numpy batch): joined
        over the batches with ``merge_batches`` (one array when the symbol has one output,
        unless ``always_output_list``), else a list of each batch's outputs."""
        if isinstance(eval_data, (nd.NDArray, np.ndarray)):
            self._ready("predict")
            array = nd.array(eval_data) if isinstance(eval_data, np.ndarray) else eval_data
            self.forward(DataBatch([array]))
            return self.get_outputs()[0]
        if not isinstance(eval_data, DataIter):
            raise InvalidType(f"predict: eval_data must be an NDArray or a DataIter, got "
                              f"{type(eval_data).__name__}")
        output_list = [[out.copy() for out in self._unpadded(batch)] for _, batch in
                       self._batches(eval_data, num_batch, reset, sparse_row_id_fn, "predict")]
        if not output_list or not merge_batches:
            return output_list
        num_outputs = len(output_list[0])
        merged = [nd.concat(*[out[i] for out in output_list], dim=0)
                  for i in range(num_outputs)]
        return merged[0] if num_outputs == 1 and not always_output_list else merged

    def fit(self, train_data: Any, eval_data: Any = None, eval_metric: Any = "acc",
            epoch_end_callback: Any = None, batch_end_callback: Any = None,
            kvstore: Any = "local", optimizer: Any = "sgd",
            optimizer_params: Any = (("learning_rate", 0.01),), eval_end_callback: Any = None,
            eval_batch_end_callback: Any = None, initializer: Any = Uniform(0.01),
            arg_params: Any = None, aux_params: Any = None, allow_missing: bool = False,
            force_rebind: bool = False, force_init: bool = False, begin_epoch: int = 0,
            num_epoch: int | None = None, validation_metric: Any = None, monitor: Any = None,
            sparse_row_id_fn: Any = None) -> None:
        """Train on ``train_data`` for epochs ``begin_epoch`` .. ``num_epoch - 1``: bind,
        initialize the parameters and the optimizer, then per batch forward, backward, update,
        the metric, ``prepare`` of the next batch (``sparse_row_id_fn``) and the batch-end
        callbacks; per epoch MXNet's log lines, the epoch-end callbacks and ``score`` on
        ``eval_data``."""
        if num_epoch is None:
            raise InvalidValue("fit: please specify number of epochs (num_epoch)")
        self.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label,
                  for_training=True, force_rebind=force_rebind)
        if monitor is not None:
            self.install_monitor(monitor)
        self.init_params(initializer=initializer, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init)
        self.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                            optimizer_params=optimizer_params)
        if validation_metric is None:
            validation_metric = eval_metric
        if not isinstance(eval_metric, metric_module.EvalMetric):
            eval_metric = metric_module.create(eval_metric)
        batch_callbacks = [] if batch_end_callback is None else _as_list(batch_end_callback)
        for epoch in range(begin_epoch, num_epoch):
            tic = time.time()
            eval_metric.reset()
            data_iter = iter(train_data)
            next_batch, nbatch, end_of_batch = next(data_iter), 0, False
            while not end_of_batch:
                batch = next_batch
                if monitor is not None:
                    monitor.tic()
                self.forward_backward(batch)
                self.update()
                self.update_metric(eval_metric, batch.label)
                try:
                    next_batch = next(data_iter)
                    self.prepare(next_batch, sparse_row_id_fn=sparse_row_id_fn)
                except StopIteration:
                    end_of_batch = True
                if monitor is not None:
                    monitor.toc_print()
                if end_of_batch:
                    eval_name_vals = eval_metric.get_global_name_value()
                if batch_callbacks:
                    params = BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=eval_metric,
                                           locals=locals())
                    for callback in batch_callbacks:
                        callback(params)
                nbatch += 1
            for name, value in eval_name_vals:
                self.logger.info("Epoch[%d] Train-%s=%f", epoch, name, value)
            self.logger.info("Epoch[%d] Time cost=%.3f", epoch, time.time() - tic)
            arg_params_now, aux_params_now = self.get_params()
            self.set_params(arg_params_now, aux_params_now)
            if epoch_end_callback is not None:
                for callback in _as_list(epoch_end_callback):
                    callback(epoch, self.symbol, arg_params_now, aux_params_now)
            if eval_data is not None:
                res = self.score(eval_data, validation_metric,
                                 score_end_callback=eval_end_callback,
                                 batch_end_callback=eval_batch_end_callback, epoch=epoch)
                for name, value in res:
                    self.logger.info("Epoch[%d] Validation-%s=%f", epoch, name, value)
            train_data.reset()

    def prepare(self, data_batch: Any, sparse_row_id_fn: Any = None) -> None:
        """Before ``data_batch`` runs; a module with row_sparse parameters (``Module``) pulls
        their rows here. This base has none: ``sparse_row_id_fn`` is not called (it warns)."""
        if sparse_row_id_fn is not None:
            warnings.warn(UserWarning("sparse_row_id_fn is not invoked for BaseModule."),
                          stacklevel=2)

    def set_params(self, arg_params: dict[str, Any], aux_params: dict[str, Any],
                   allow_missing: bool = False, force_init: bool = True,
                   allow_extra: bool = False) -> None:
        """Set the parameters from the dicts (``init_params`` without an initializer)."""
        self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init,
                         allow_extra=allow_extra)

    def save_params(self, fname: str) -> None:
        """Write the parameters to ``fname`` (``arg:`` / ``aux:`` names, MXNet's format)."""
        write_params(fname, *self.get_params())

    def load_params(self, fname: str) -> None:
        """Set the parameters from a file ``save_params`` (or MXNet) wrote."""
        self.set_params(*read_params(fname))
