"""``gluon.Trainer``: applies an optimizer to a set of parameters, as MXNet 1.9.1's.

One machine: ``kvstore`` ``'device'``, ``'local'`` or ``None`` all reduce the gradients of the
contexts and update locally (a distributed kvstore is a later issue). A row_sparse parameter's
whole weight lives in the trainer (MXNet's kvstore role): ``row_sparse_data`` pulls rows from
it and ``step`` updates it from the row_sparse gradient, lazily (only the gradient's rows) where
the optimizer's ``lazy_update`` says so.
"""

from __future__ import annotations

import copy
import pickle
from typing import Any

from .. import autograd, optimizer as opt
from ..errors import InvalidType, InvalidValue, SparsegenError
from ..ndarray import NDArray, add_n
from ..ndarray import sparse as _sparse
from ..ndarray.storage import assign
from .parameter import Parameter, ParameterDict

KVSTORES = ("device", "local", None)
"""The kvstore values a one-machine trainer takes (all update locally)."""


class StaleGradientError(SparsegenError, UserWarning):
    """A parameter's gradient was not written by a backward pass since the last step."""


def _parameters(params: Any) -> list[Parameter]:
    """``params`` (a ParameterDict, dict or list of Parameters) as a list without repeats."""
    if isinstance(params, (dict, ParameterDict)):
        params = list(params.values())
    if not isinstance(params, (list, tuple)):
        raise InvalidType(f"First argument must be a list or dict of Parameters, got "
                          f"{type(params)}.")
    listed: list[Parameter] = []
    for param in params:
        if not isinstance(param, Parameter):
            raise InvalidType(f"First argument must be a list or dict of Parameters, got list "
                              f"of {type(param)}.")
        if any(p is param for p in listed):
            continue
        listed.append(param)
    return listed


class Trainer:
    """Updates ``params`` with ``optimizer`` (a name and ``optimizer_params``, or an
    ``Optimizer``) from their gradients, as ``mxnet.gluon.Trainer``."""

    def __init__(self, params: Any, optimizer: Any, optimizer_params: dict | None = None,
                 kvstore: Any = "device", compression_params: dict | None = None,
                 update_on_kvstore: bool | None = None) -> None:
        if kvstore not in KVSTORES:
            raise InvalidValue(f"Trainer: kvstore must be one of {KVSTORES} on one machine "
                               f"(a distributed kvstore is not supported yet), got {kvstore!r}")
        if compression_params is not None:
            raise InvalidValue("Trainer: compression_params (gradient compression) needs a "
                               "distributed kvstore, which sparsegen does not have yet")
        self._params = _parameters(params)
        self._param2idx = {p.name: i for i, p in enumerate(self._params)}
        sparse = any(p.stype != "default" for p in self._params)
        if sparse and update_on_kvstore is False:
            raise InvalidValue("Cannot set update_on_kvstore=False when sparse weights are "
                               "present.")
        for param in self._params:
            param._set_trainer(self)
        self._update_on_kvstore = bool(update_on_kvstore) or sparse
        self._kvstore = kvstore
        optimizer_params = dict(optimizer_params or {})
        self._scale = optimizer_params.get("rescale_grad", 1.0)
        self._init_optimizer(optimizer, optimizer_params)
        self._store: dict[int, NDArray] = {}

    def _init_optimizer(self, optimizer: Any, optimizer_params: dict) -> None:
        param_dict = dict(enumerate(self._params))
        if isinstance(optimizer, opt.Optimizer):
            if optimizer_params:
                raise InvalidValue("optimizer_params must be None if optimizer is an instance "
                                   "of Optimizer instead of str")
            self._optimizer = optimizer
            self._optimizer.param_dict = param_dict
        else:
            self._optimizer = opt.create(optimizer, param_dict=param_dict, **optimizer_params)
        self._updater = opt.get_updater(self._optimizer)

    @property
    def optimizer(self) -> opt.Optimizer:
        """The optimizer."""
        return self._optimizer

    @property
    def learning_rate(self) -> float:
        """The optimizer's current learning rate."""
        return self._optimizer.learning_rate

    def set_learning_rate(self, lr: float) -> None:
        """Set the optimizer's learning rate."""
        self._optimizer.set_learning_rate(lr)

    # -- the store of row_sparse weights ----------------------------------------------------
    def _whole(self, param: Parameter) -> NDArray:
        """The whole weight of a row_sparse ``param`` (taken from its data on first use)."""
        index = self._param2idx[param.name]
        if index not in self._store:
            self._store[index] = param._check_and_get(param._data, list)[0].copy()
        return self._store[index]

    def _row_sparse_pull(self, param: Parameter, out: Any, row_id: NDArray) -> None:
        """Write the rows ``row_id`` of ``param``'s whole weight into ``out`` (an array or a
        list of them)."""
        whole = self._whole(param)
        rows = _sparse.retain(whole, row_id.reshape((-1,)).astype("int64"))
        with autograd.pause():
            for array in out if isinstance(out, list) else [out]:
                assign(array, rows.copyto(array.context))

    def _reset_kvstore_value(self, param: Parameter, data: NDArray) -> None:
        """``set_data`` of a row_sparse parameter sets its whole weight."""
        index = self._param2idx.get(param.name)
        if index in self._store:
            assign(self._store[index], data)

    # -- steps ------------------------------------------------------------------------------
    def step(self, batch_size: int, ignore_stale_grad: bool = False) -> None:
        """One update from the gradients scaled by ``1 / batch_size``: reduce them over the
        contexts, then update every parameter (a stale gradient raises unless
        ``ignore_stale_grad``, which skips that parameter)."""
        self._optimizer.rescale_grad = self._scale / batch_size
        self._reduce_grads()
        self._update(ignore_stale_grad)

    def allreduce_grads(self) -> None:
        """Sum the gradients over the contexts (for ``update``; not with
        ``update_on_kvstore``)."""
        if self._update_on_kvstore:
            raise InvalidValue("allreduce_grads() when parameters are updated on kvstore is "
                               "not supported. Try setting `update_on_kvstore` to False when "
                               "creating trainer.")
        self._reduce_grads()

    def update(self, batch_size: int, ignore_stale_grad: bool = False) -> None:
        """The update half of ``step`` (after ``allreduce_grads``)."""
        if self._update_on_kvstore:
            raise InvalidValue("update() when parameters are updated on kvstore is not "
                               "supported. Try setting `update_on_kvstore` to False when "
                               "creating trainer.")
        self._optimizer.rescale_grad = self._scale / batch_size
        self._update(ignore_stale_grad)

    def _reduce_grads(self) -> None:
        with autograd.pause():
            for param in self._params:
                if param.grad_req == "null":
                    continue
                grads = param.list_grad()
                if len(grads) > 1:
                    total = add_n(*(g.copyto(grads[0].context) for g in grads))
                    for grad in grads:
                        assign(grad, total.copyto(grad.context))

    def _update(self, ignore_stale_grad: bool) -> None:
        with autograd.pause():
            for index, param in enumerate(self._params):
                if param.grad_req == "null":
                    continue
                arrays = param._check_and_get(param._data, list)
                fresh = [getattr(a, "_fresh_grad", False) for a in arrays]
                if not ignore_stale_grad and not all(fresh):
                    raise StaleGradientError(
                        f"Gradient of Parameter `{param.name}` on context "
                        f"{arrays[fresh.index(False)].context} has not been updated by "
                        "backward since last `step`. This could mean a bug in your model that "
                        "made it only use a subset of the Parameters (Blocks) for this "
                        "iteration. If you are intentionally only using a subset, call step "
                        "with ignore_stale_grad=True to suppress this warning and skip "
                        "updating of Parameters with stale gradient")
                if param.stype != "default":
                    if fresh[0]:
                        self._updater(index, arrays[0]._grad, self._whole(param))
                else:
                    for array, is_fresh in zip(arrays, fresh):
                        if is_fresh:
                            self._updater(index, array._grad, array)
                for array in arrays:
                    array._fresh_grad = False

    # -- states -----------------------------------------------------------------------------
    def save_states(self, fname: str) -> None:
        """Save the optimizer and its states (one pickle, as MXNet's ``Updater.get_states``
        with ``dump_optimizer=True``)."""
        optimizer = copy.copy(self._optimizer)
        optimizer.param_dict = {}
        with open(fname, "wb") as f:
            pickle.dump((self._updater.states, optimizer), f)

    def load_states(self, fname: str) -> None:
        """Load the optimizer and its states saved by ``save_states``."""
        with open(fname, "rb") as f:
            loaded = pickle.load(f)
        states, optimizer = loaded if isinstance(loaded, tuple) else (loaded, self._optimizer)
        if not isinstance(optimizer, opt.Optimizer) or not isinstance(states, dict):
            raise InvalidValue(f"{fname} does not hold trainer states (save_states writes them)")
        optimizer.param_dict = dict(enumerate(self._params))
        self._optimizer = optimizer
        self._updater = opt.get_updater(optimizer)
        self._updater.states = states
