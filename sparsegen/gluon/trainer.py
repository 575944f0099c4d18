"""``gluon.Trainer``: applies an optimizer to a set of parameters, as MXNet 1.9.1's.

The reduction over contexts and, with ``update_on_kvstore``, the update run on a KVStore
(``sparsegen.kvstore``): one given as an object, or created from its type (``'device'``,
``'local'``) when there are several contexts or a row_sparse weight, as MXNet's. A row_sparse
parameter's whole weight lives in the kvstore: ``row_sparse_data`` pulls rows from it and
``step`` pushes the row_sparse gradient, updating it lazily (only the gradient's rows) where
the optimizer's ``lazy_update`` says so. Without a kvstore each context updates its own copy.
"""

from __future__ import annotations

import copy
import pickle
from typing import Any

from .. import autograd, kvstore as kvs, optimizer as opt
from ..context import Context
from ..errors import InvalidCall, InvalidState, InvalidType, InvalidValue, SparsegenError
from ..kvstore.compression import GradientCompression
from ..ndarray import NDArray
from ..ndarray import sparse as _sparse
from .parameter import Parameter, ParameterDict


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


def _state_on(state: Any, ctx: Context) -> Any:
    """A copy of an optimizer state (an NDArray, None, or a tuple or list of them) on ``ctx``."""
    if isinstance(state, NDArray):
        return state.copyto(ctx)
    if isinstance(state, (tuple, list)):
        return type(state)(_state_on(s, ctx) for s in state)
    return state


class Trainer:
    """Updates ``params`` with ``optimizer`` (a name and ``optimizer_params``, or an
    ``Optimizer``) from their gradients, as ``mxnet.gluon.Trainer``."""

    def __init__(self, params: Any, optimizer: Any, optimizer_params: dict | None = None,
                 kvstore: Any = "device", compression_params: dict | None = None,
                 update_on_kvstore: bool | None = None) -> None:
        if kvstore is not None and not isinstance(kvstore, kvs.KVStoreBase):
            if not isinstance(kvstore, str):
                raise InvalidType(f"Trainer: kvstore must be a KVStore, a type string or None, "
                                  f"got {type(kvstore).__name__}")
            if kvstore not in kvs.KVStoreBase.kv_registry:
                kvs.check_type(kvstore)
        if compression_params is not None:  # checked now, set on the kvstore once picked
            GradientCompression.from_params(compression_params)
        self._compression_params = compression_params
        self._params = _parameters(params)
        self._param2idx = {p.name: i for i, p in enumerate(self._params)}
        for param in self._params:
            param._set_trainer(self)
        self._kv_config = (kvstore, update_on_kvstore)
        self._kvstore: kvs.KVStore | None = None
        self._kv_keys: set[int] = set()
        self._kv_initialized = False
        self._update_on_kvstore: bool | None = None  # None until the kvstore is picked
        optimizer_params = dict(optimizer_params or {})
        self._scale = optimizer_params.get("rescale_grad", 1.0)
        self._init_optimizer(optimizer, optimizer_params)

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
        self._updaters = [opt.get_updater(self._optimizer)]  # one per context, as MXNet's

    def _context_updaters(self, contexts: list[Context]) -> list[opt.Updater]:
        """One updater per context of the weights' copies, each keeping its own optimizer
        states; one added later starts from a copy of the first one's states on its context
        (after ``load_states``, every context resumes from the loaded states, as MXNet's)."""
        for where in contexts[len(self._updaters):]:
            updater = opt.get_updater(self._optimizer)
            updater.states = {index: _state_on(state, where)
                              for index, state in self._updaters[0].states.items()}
            self._updaters.append(updater)
        return self._updaters

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

    # -- the kvstore -----------------------------------------------------------------------
    def _init_kvstore(self) -> None:
        """Pick the kvstore and ``update_on_kvstore`` once the contexts are known (MXNet's
        rules): a row_sparse weight needs one and updates on it; a type string with one
        context and dense weights needs none; otherwise updates run on it unless
        ``update_on_kvstore=False`` (or, by default, the gradients are sparse)."""
        if self._kv_initialized:
            return
        spec, flag = self._kv_config
        devices = max(len(p.list_ctx()) for p in self._params) if self._params else 1
        sparse_weight = any(p.stype != "default" for p in self._params)
        if isinstance(spec, kvs.KVStoreBase):
            store = spec
        elif spec is None:
            store = kvs.create("local") if sparse_weight else None
        else:
            wanted = devices > 1 or sparse_weight or spec in kvs.DIST_TYPES
            store = kvs.create(spec) if wanted else None
        distributed = store is not None and store.type in kvs.DIST_TYPES
        sparse_grad = any(p.grad_stype != "default" for p in self._params)
        if sparse_weight and flag is False:  # raised here, as MXNet's _init_kvstore does
            raise InvalidValue("Cannot set update_on_kvstore=False when sparse weights are "
                               "present.")
        if distributed and flag is False and (sparse_weight or sparse_grad):
            raise InvalidValue("Cannot set update_on_kvstore=False on dist kvstore when sparse "
                               "gradients are present.")
        if store is None:
            update = False
        elif sparse_weight:
            update = True
        elif flag is not None:
            update = bool(flag)
        else:
            update = distributed or not sparse_grad
        if update and not store.is_capable(kvs.KVStoreBase.OPTIMIZER):
            if flag or sparse_weight:  # MXNet refuses it here, in _init_kvstore
                raise InvalidValue(f"Please set update_on_kvstore=False when training with "
                                   f"{type(store).__name__} (kvstore {store.type!r} runs no "
                                   "optimizer" + (", and row_sparse weights need one)"
                                                  if sparse_weight else ")"))
            update = False
        if store is not None and self._compression_params is not None:
            store.set_gradient_compression(self._compression_params)
        if store is not None and update:
            if isinstance(store, kvs.KVStore):
                store.set_updater(self._updaters[0])
            else:
                store.set_optimizer(self._optimizer)
        self._kvstore, self._update_on_kvstore, self._kv_initialized = (
            store, update if store is not None else None, True)

    @property
    def _params_to_init(self) -> list[Parameter]:
        """The parameters whose kvstore key is not initialized yet (MXNet's attribute): all of
        them before the kvstore is picked, none once it is and there is no store."""
        if self._kv_initialized and self._kvstore is None:
            return []
        return [p for i, p in enumerate(self._params) if i not in self._kv_keys]

    def _key(self, param: Parameter) -> int:
        """``param``'s key in the kvstore, initialized from its data on first use."""
        index = self._param2idx[param.name]
        if index not in self._kv_keys:
            arrays = param._check_and_get(param._data, list)
            if isinstance(self._kvstore, kvs.KVStore):
                self._kvstore.init(index, arrays[0])
            else:  # a registered store type: MXNet's KVStoreBase interface
                self._kvstore.broadcast(index, arrays[0], out=arrays)
            self._kv_keys.add(index)
        return index

    def _whole(self, param: Parameter) -> NDArray:
        """The whole weight of a row_sparse ``param``, as its kvstore holds it."""
        self._init_kvstore()
        first = param._check_and_get(param._data, list)[0]
        whole = _sparse.zeros("row_sparse", first.shape, ctx=first.context, dtype=first.dtype)
        self._kvstore.pull(self._key(param), out=whole, ignore_sparse=False)
        return whole

    def _row_sparse_pull(self, param: Parameter, out: Any, row_id: NDArray) -> None:
        """Write the rows ``row_id`` of ``param``'s whole weight into ``out`` (an array or a
        list of them)."""
        self._init_kvstore()
        with autograd.pause():
            self._kvstore.row_sparse_pull(self._key(param), out=out, row_ids=row_id)

    def _reset_kvstore_value(self, param: Parameter, data: NDArray) -> None:
        """``set_data`` (or a load) of a parameter sets the value its kvstore holds: a store
        the Trainer created and updates on is dropped, a new one made at the next step (MXNet's
        ``_reset_kvstore``; the optimizer states are kept); a distributed store that runs the
        updates refuses (as MXNet: one worker's new value would leave the others' copies
        behind), before anything changes; a store given as an object takes the value."""
        index = self._param2idx.get(param.name)
        if self._kvstore is None or index not in self._kv_keys:
            return
        if self._update_on_kvstore and "dist" in self._kvstore.type:
            raise InvalidState(f"Parameter '{param.name}': cannot set its data once the "
                               f"distributed kvstore ({self._kvstore.type}) updates it "
                               "(update_on_kvstore=True): load or set parameters before the "
                               "Trainer's first step or row_sparse pull")
        if self._update_on_kvstore and not isinstance(self._kv_config[0], kvs.KVStore):
            self._kvstore, self._update_on_kvstore, self._kv_initialized = None, None, False
            self._kv_keys = set()
            return
        with autograd.pause():
            self._kvstore._set(index, data)

    # -- steps ------------------------------------------------------------------------------
    def step(self, batch_size: int, ignore_stale_grad: bool = False) -> None:
        """One update from the gradients scaled by ``1 / batch_size``: reduce them over the
        contexts, then update every parameter (a stale gradient raises unless
        ``ignore_stale_grad``, which skips that parameter)."""
        self._optimizer.rescale_grad = self._scale / batch_size
        self._init_kvstore()
        if self._update_on_kvstore:
            self._push_updates(ignore_stale_grad)
        else:
            self._reduce_grads()
            self._update(ignore_stale_grad)

    def allreduce_grads(self) -> None:
        """Sum the gradients over the contexts (for ``update``; not with
        ``update_on_kvstore``)."""
        self._init_kvstore()
        if self._update_on_kvstore:
            raise InvalidCall("allreduce_grads() when parameters are updated on kvstore is "
                              "not supported. Try setting `update_on_kvstore` to False when "
                              "creating trainer.")
        self._reduce_grads()

    def update(self, batch_size: int, ignore_stale_grad: bool = False) -> None:
        """The update half of ``step`` (after ``allreduce_grads``)."""
        self._init_kvstore()
        if self._update_on_kvstore:
            raise InvalidCall("update() when parameters are updated on kvstore is not "
                              "supported. Try setting `update_on_kvstore` to False when "
                              "creating trainer.")
        self._optimizer.rescale_grad = self._scale / batch_size
        self._update(ignore_stale_grad)

    def _reduce_grads(self) -> None:
        """Sum each gradient over the contexts on the kvstore (push, then pull into every
        gradient buffer); nothing without a kvstore."""
        if self._kvstore is None:
            return
        with autograd.pause():
            for param in self._params:
                if param.grad_req == "null":
                    continue
                key = self._key(param)
                if isinstance(self._kvstore, kvs.KVStore):
                    self._kvstore.push(key, param.list_grad())
                    self._kvstore.pull(key, out=param.list_grad(), ignore_sparse=False)
                else:
                    self._kvstore.pushpull(key, param.list_grad())

    def _fresh(self, param: Parameter, ignore_stale_grad: bool) -> list[bool]:
        """Whether each copy of ``param`` has a fresh gradient; a stale one raises unless
        ``ignore_stale_grad``."""
        arrays = param._check_and_get(param._data, list)
        fresh = [a._fresh_grad for a in arrays]
        if not ignore_stale_grad and not all(fresh):
            raise StaleGradientError(
                f"Gradient of Parameter `{param.name}` on context "
                f"{arrays[fresh.index(False)].context} has not been updated by "
                "backward since last `step`. This could mean a bug in your model that "
                "made it only use a subset of the Parameters (Blocks) for this "
                "iteration. If you are intentionally only using a subset, call step "
                "with ignore_stale_grad=True to suppress this warning and skip "
                "updating of Parameters with stale gradient")
        for array in arrays:
            array._fresh_grad = False
        return fresh

    def _push_updates(self, ignore_stale_grad: bool) -> None:
        """Push the fresh gradients to the kvstore, which updates the weights; pull dense
        weights back into every copy (row_sparse ones are pulled by ``row_sparse_data``)."""
        with autograd.pause():
            for param in self._params:
                if param.grad_req == "null":
                    continue
                arrays = param._check_and_get(param._data, list)
                grads = [a._grad for a, f in zip(arrays, self._fresh(param, ignore_stale_grad))
                         if f]
                if not grads:
                    continue
                key = self._key(param)
                self._kvstore.push(key, grads)
                if param.stype == "default":
                    self._kvstore.pull(key, out=arrays)

    def _update(self, ignore_stale_grad: bool) -> None:
        """Update each copy of each dense weight from its own (reduced) gradient."""
        with autograd.pause():
            for index, param in enumerate(self._params):
                if param.grad_req == "null":
                    continue
                arrays = param._check_and_get(param._data, list)
                updaters = self._context_updaters([a.context for a in arrays])
                fresh = self._fresh(param, ignore_stale_grad)
                for updater, array, is_fresh in zip(updaters, arrays, fresh):
                    if is_fresh:
                        updater(index, array._grad, array)

    # -- states -----------------------------------------------------------------------------
    def save_states(self, fname: str) -> None:
        """Save the optimizer and its states (one pickle, as MXNet's ``Updater.get_states``
        with ``dump_optimizer=True``)."""
        optimizer = copy.copy(self._optimizer)
        optimizer.param_dict = {}
        with open(fname, "wb") as f:
            pickle.dump((self._updaters[0].states, optimizer), f)

    def load_states(self, fname: str) -> None:
        """Load the optimizer and its states saved by ``save_states``."""
        with open(fname, "rb") as f:
            loaded = pickle.load(f)
        states, optimizer = loaded if isinstance(loaded, tuple) else (loaded, self._optimizer)
        if not isinstance(optimizer, opt.Optimizer) or not isinstance(states, dict):
            raise InvalidValue(f"{fname} does not hold trainer states (save_states writes them)")
        optimizer.param_dict = dict(enumerate(self._params))
        self._optimizer = optimizer
        self._updaters = [opt.get_updater(optimizer)]
        self._updaters[0].states = states
        if self._kvstore is not None and self._update_on_kvstore:
            self._kvstore.set_updater(self._updaters[0])
