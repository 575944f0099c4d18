"""``Module``: a symbol bound on one or more contexts with its parameters, optimizer and
kvstore, as MXNet 1.9.1's ``mxnet.module.Module``."""

from __future__ import annotations

import logging
import warnings
from typing import Any

from .. import ndarray as nd
from .. import optimizer as opt
from ..context import Context, cpu
from ..errors import InvalidType, InvalidValue, MissingValue, NotReady
from ..initializer import InitDesc, Uniform
from ..io import DataDesc
from ..kvstore.compression import GradientCompression
from ..model import load_checkpoint
from ..params import integer
from .base_module import BaseModule, check_input_names, parse_data_desc
from .executor_group import DataParallelExecutorGroup, group_contexts
from .updates import create_kvstore, initialize_kvstore, update_locally, update_on_kvstore


class Module(BaseModule):
    """A symbol with its data and label inputs named, bound per context by ``bind``, trained
    by ``fit`` (or ``forward`` / ``backward`` / ``update``)."""

    def __init__(self, symbol: Any, data_names: Any = ("data",),
                 label_names: Any = ("softmax_label",), logger: Any = logging,
                 context: Any = None, work_load_list: Any = None,
                 fixed_param_names: Any = None, state_names: Any = None,
                 group2ctxs: Any = None, compression_params: Any = None) -> None:
        super().__init__(logger=logger)
        context = cpu() if context is None else context
        contexts = [context] if isinstance(context, Context) else list(context)
        if not contexts or not all(isinstance(c, Context) for c in contexts):
            raise InvalidType(f"Module: context must be a Context or a list of Contexts, got "
                              f"{context!r}")
        self._context = contexts
        work_load_list = [1] * len(contexts) if work_load_list is None else list(work_load_list)
        if len(work_load_list) != len(contexts):
            raise InvalidValue(f"Module: work_load_list has {len(work_load_list)} entries for "
                               f"{len(contexts)} contexts")
        self._work_load_list = work_load_list
        group_contexts(group2ctxs, len(contexts))  # checked now, used by bind
        self._group2ctxs = group2ctxs
        if compression_params is not None:  # checked now, set on the kvstore init_optimizer makes
            GradientCompression.from_params(compression_params)
        self._compression_params = compression_params
        self._symbol = symbol
        self._data_names = list(data_names or [])
        self._label_names = list(label_names or [])
        self._state_names = list(state_names or [])
        self._fixed_param_names = list(fixed_param_names or [])
        check_input_names(symbol, self._data_names, "data", True)
        check_input_names(symbol, self._label_names, "label", False)
        check_input_names(symbol, self._state_names, "state", True)
        check_input_names(symbol, self._fixed_param_names, "fixed_param", True)
        inputs = self._data_names + self._label_names + self._state_names
        self._param_names = [n for n in symbol.list_arguments() if n not in inputs]
        self._aux_names = symbol.list_auxiliary_states()
        self._output_names = symbol.list_outputs()
        self._arg_params: dict[str, Any] | None = None
        self._aux_params: dict[str, Any] | None = None
        self._params_dirty = False
        self._optimizer: opt.Optimizer | None = None
        self._kvstore: Any = None
        self._update_on_kvstore: bool | None = None
        self._updater: Any = None
        self._preload_opt_states: str | None = None
        self._grad_req: Any = None
        self._exec_group: DataParallelExecutorGroup | None = None
        self._data_shapes: list[DataDesc] | None = None
        self._label_shapes: list[DataDesc] | None = None

    # -- checkpoints ---------------------------------------------------------------------------
    @staticmethod
    def load(prefix: str, epoch: int, load_optimizer_states: bool = False,
             **kwargs: Any) -> "Module":
        """A Module of the checkpoint ``prefix``/``epoch`` (``save_checkpoint``'s or MXNet's
        files), its parameters set on ``bind``; ``load_optimizer_states`` loads
        ``prefix-%04d.states`` at ``init_optimizer``."""
        sym, args, auxs = load_checkpoint(prefix, epoch)
        mod = Module(symbol=sym, **kwargs)
        mod._arg_params, mod._aux_params = args, auxs
        mod.params_initialized = True
        if load_optimizer_states:
            mod._preload_opt_states = f"{prefix}-{integer(epoch, 'load: epoch'):04d}.states"
        return mod

    def save_checkpoint(self, prefix: str, epoch: int, save_optimizer_states: bool = False,
                        remove_amp_cast: bool = True) -> None:
        """Write ``prefix-symbol.json``, ``prefix-%04d.params`` and, with
        ``save_optimizer_states``, ``prefix-%04d.states``."""
        self._symbol.save(f"{prefix}-symbol.json", remove_amp_cast=remove_amp_cast)
        param_name = f"{prefix}-{integer(epoch, 'save_checkpoint: epoch'):04d}.params"
        self.save_params(param_name)
        logging.info('Saved checkpoint to "%s"', param_name)
        if save_optimizer_states:
            state_name = f"{prefix}-{epoch:04d}.states"
            self.save_optimizer_states(state_name)
            logging.info('Saved optimizer state to "%s"', state_name)

    # -- what it is ----------------------------------------------------------------------------
    @property
    def data_names(self) -> list[str]:
        """The names of the data inputs."""
        return self._data_names

    @property
    def label_names(self) -> list[str]:
        """The names of the label inputs."""
        return self._label_names

    @property
    def output_names(self) -> list[str]:
        """The names of the outputs."""
        return self._output_names

    def _bound(self, what: str) -> DataParallelExecutorGroup:
        if not self.binded or self._exec_group is None:
            raise NotReady(f"Module.{what}: the module is not bound; call bind() first")
        return self._exec_group

    @property
    def data_shapes(self) -> list[DataDesc]:
        """The data descriptions the module is bound to."""
        self._bound("data_shapes")
        return self._data_shapes  # type: ignore[return-value]

    @property
    def label_shapes(self) -> list[DataDesc] | None:
        """The label descriptions the module is bound to (None without labels)."""
        self._bound("label_shapes")
        return self._label_shapes

    @property
    def output_shapes(self) -> list[tuple[str, tuple[int, ...]]]:
        """``(name, shape)`` of each output."""
        return self._bound("output_shapes").get_output_shapes()

    # -- parameters ----------------------------------------------------------------------------
    def get_params(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """``(arg_params, aux_params)``: copies of the current parameters (synced from the
        contexts, and row_sparse ones from the kvstore, after updates)."""
        if not self.params_initialized:
            raise NotReady("Module.get_params: the parameters are not initialized; call "
                           "init_params() first")
        if self._params_dirty:
            self._sync_params_from_devices()
        return self._arg_params, self._aux_params  # type: ignore[return-value]

    def init_params(self, initializer: Any = Uniform(0.01), arg_params: Any = None,
                    aux_params: Any = None, allow_missing: bool = False,
                    force_init: bool = False, allow_extra: bool = False) -> None:
        """Fill the parameters from ``arg_params`` / ``aux_params`` (copied) or, for those they
        lack (``allow_missing``) or without them, by ``initializer``; then copy them into the
        executors (``allow_extra``: names the symbol lacks are ignored)."""
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. init_params "
                          "call ignored.", stacklevel=2)
            return
        self._bound("init_params")
        attrs = self._symbol.attr_dict()

        def _impl(name: str, arr: Any, given: dict[str, Any] | None) -> None:
            desc = InitDesc(name, attrs.get(name))
            if given is not None and name in given:
                if given[name] is not arr:
                    given[name].copyto(arr)
            elif given is not None and not allow_missing:
                raise MissingValue(f"init_params: {name} is not presented (not in the "
                                   "parameters given; allow_missing=True initializes it)")
            elif initializer is not None:
                initializer(desc, arr)

        for name, arr in sorted(self._arg_params.items()):  # type: ignore[union-attr]
            _impl(name, arr, arg_params)
        for name, arr in sorted(self._aux_params.items()):  # type: ignore[union-attr]
            _impl(name, arr, aux_params)
        self.params_initialized = True
        self._params_dirty = False
        self._exec_group.set_params(self._arg_params, self._aux_params,  # type: ignore
                                    allow_extra=allow_extra)

    def set_params(self, arg_params: dict[str, Any], aux_params: dict[str, Any],
                   allow_missing: bool = False, force_init: bool = True,
                   allow_extra: bool = False) -> None:
        """Set the parameters from the dicts; with ``allow_missing`` only the given ones are
        copied into the executors."""
        if not allow_missing:
            super().set_params(arg_params, aux_params, False, force_init, allow_extra)
            return
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. set_params "
                          "call ignored.", stacklevel=2)
            return
        self._bound("set_params").set_params(arg_params, aux_params, allow_extra=allow_extra)
        self._params_dirty = True
        self.params_initialized = True

    def _sync_params_from_devices(self) -> None:
        """Copy the executors' parameters into ``_arg_params`` / ``_aux_params``; row_sparse
        ones kept in the kvstore come whole from it."""
        self._exec_group.get_params(self._arg_params, self._aux_params)  # type: ignore
        if self._kvstore is not None and self._update_on_kvstore:
            for name, value in sorted(self._arg_params.items()):  # type: ignore[union-attr]
                if value.stype == "row_sparse":
                    rows = nd.arange(0, value.shape[0], dtype="int64")
                    self._kvstore.row_sparse_pull(name, value, row_ids=rows)
        self._params_dirty = False

    # -- binding -------------------------------------------------------------------------------
    def _reset_bind(self) -> None:
        self.binded = False
        self._exec_group = None
        self._data_shapes = None
        self._label_shapes = None

    def bind(self, data_shapes: Any, label_shapes: Any = None, for_training: bool = True,
             inputs_need_grad: bool = False, force_rebind: bool = False,
             shared_module: "Module | None" = None, grad_req: Any = "write") -> None:
        """Bind an executor per context for ``data_shapes`` / ``label_shapes`` (DataDescs or
        ``(name, shape)`` pairs); ``shared_module`` lends its parameters (and optimizer)."""
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if not for_training and inputs_need_grad:
            raise InvalidValue("Module.bind: inputs_need_grad=True needs for_training=True")
        self._data_shapes, self._label_shapes = parse_data_desc(
            self._data_names, self._label_names, data_shapes, label_shapes)
        shared_group = None
        if shared_module is not None:
            if not (isinstance(shared_module, Module) and shared_module.binded
                    and shared_module.params_initialized):
                raise InvalidValue("Module.bind: shared_module must be a bound Module with "
                                   "initialized parameters")
            shared_group = shared_module._exec_group
        self._exec_group = DataParallelExecutorGroup(
            self._symbol, self._context, self._work_load_list, self._data_shapes,
            self._label_shapes, self._param_names, for_training, inputs_need_grad,
            shared_group, fixed_param_names=self._fixed_param_names, grad_req=grad_req,
            state_names=self._state_names, group2ctxs=self._group2ctxs)
        self.for_training, self.inputs_need_grad, self._grad_req = (
            for_training, inputs_need_grad, grad_req)
        if shared_module is not None:
            self.params_initialized = True
            self._arg_params = shared_module._arg_params
            self._aux_params = shared_module._aux_params
        elif self.params_initialized:
            self._exec_group.set_params(self._arg_params, self._aux_params)  # type: ignore
        else:
            self._arg_params = {name: nd.zeros(block[0].shape, cpu(), block[0].dtype,
                                               block[0].stype)
                                for name, block in zip(self._param_names,
                                                       self._exec_group.param_arrays)}
            self._aux_params = {name: nd.zeros(block[0].shape, cpu(), block[0].dtype)
                                for name, block in zip(self._aux_names,
                                                       self._exec_group.aux_arrays)}
        if shared_module is not None and shared_module.optimizer_initialized:
            self.borrow_optimizer(shared_module)
        self.binded = True

    def reshape(self, data_shapes: Any, label_shapes: Any = None) -> None:
        """Rebind the executors for new input shapes (the parameters stay)."""
        group = self._bound("reshape")
        self._data_shapes, self._label_shapes = parse_data_desc(
            self._data_names, self._label_names, data_shapes, label_shapes)
        group.reshape(self._data_shapes, self._label_shapes)

    # -- the optimizer -------------------------------------------------------------------------
    def init_optimizer(self, kvstore: Any = "local", optimizer: Any = "sgd",
                       optimizer_params: Any = (("learning_rate", 0.01),),
                       force_init: bool = False) -> None:
        """Create the optimizer (a name with ``optimizer_params``, ``rescale_grad`` defaulting
        to 1 / (batch size x workers of a dist_sync kvstore), or an Optimizer) and the kvstore as MXNet decides it (a type string
        on one context: none); with ``update_on_kvstore`` the kvstore runs the updates."""
        self._ready("init_optimizer")
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring...")
            return
        if self._params_dirty:
            self._sync_params_from_devices()
        group = self._exec_group
        store, on_kvstore = create_kvstore(kvstore, len(self._context), self._arg_params)
        batch_size = group.batch_size  # type: ignore[union-attr]
        if store is not None and store.type.startswith("dist") and "_sync" in store.type:
            batch_size *= store.num_workers  # a synchronous step sums every worker's batch
        rescale_grad = 1.0 / batch_size
        count = len(self._context)
        if on_kvstore:
            idx2name = dict(enumerate(group.param_names))  # type: ignore[union-attr]
        else:
            idx2name = {i * count + k: name for k in range(count)
                        for i, name in enumerate(group.param_names)}  # type: ignore
        if isinstance(optimizer, str):
            params = dict(optimizer_params)
            params.setdefault("rescale_grad", rescale_grad)
            optimizer = opt.create(optimizer, sym=self._symbol, param_idx2name=idx2name,
                                   **params)
        elif isinstance(optimizer, opt.Optimizer):
            if optimizer.rescale_grad != rescale_grad:
                warnings.warn("Optimizer created manually outside Module but rescale_grad is not "
                              f"normalized to 1.0/batch_size/num_workers "
                              f"({optimizer.rescale_grad} vs. {rescale_grad}). Is this intended?",
                              stacklevel=2)
            if not optimizer.idx2name:
                optimizer.idx2name = idx2name.copy()
                optimizer.set_wd_mult({})
        else:
            raise InvalidType(f"init_optimizer: optimizer must be a name or an Optimizer, got "
                              f"{type(optimizer).__name__}")
        self._optimizer, self._kvstore, self._update_on_kvstore = optimizer, store, on_kvstore
        self._updater = None
        if store is not None:
            if self._compression_params is not None:
                store.set_gradient_compression(self._compression_params)
            if on_kvstore:
                store.set_optimizer(optimizer)
            initialize_kvstore(store, group.param_arrays, self._arg_params,  # type: ignore
                               self._param_names, on_kvstore)
        if not on_kvstore:
            self._updater = opt.get_updater(optimizer)
        self.optimizer_initialized = True
        if self._preload_opt_states is not None:
            self.load_optimizer_states(self._preload_opt_states)
            self._preload_opt_states = None

    def borrow_optimizer(self, shared_module: "Module") -> None:
        """Use ``shared_module``'s optimizer, kvstore and updater."""
        if not shared_module.optimizer_initialized:
            raise NotReady("Module.borrow_optimizer: shared_module has no optimizer yet")
        self._optimizer = shared_module._optimizer
        self._kvstore = shared_module._kvstore
        self._update_on_kvstore = shared_module._update_on_kvstore
        self._updater = shared_module._updater
        self.optimizer_initialized = True

    def save_optimizer_states(self, fname: str) -> None:
        """Write the optimizer's states to ``fname`` (the kvstore's, when it updates)."""
        self._ready("save_optimizer_states", optimizer=True)
        if self._update_on_kvstore:
            self._kvstore.save_optimizer_states(fname)
        else:
            with open(fname, "wb") as fout:
                fout.write(self._updater.get_states())

    def load_optimizer_states(self, fname: str) -> None:
        """Load the optimizer's states from ``fname`` (``save_optimizer_states``'s file)."""
        self._ready("load_optimizer_states", optimizer=True)
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
        else:
            with open(fname, "rb") as fin:
                self._updater.set_states(fin.read())

    # -- running -------------------------------------------------------------------------------
    def forward(self, data_batch: Any, is_train: bool | None = None) -> None:
        """Run the executors on ``data_batch`` (``is_train`` None: as bound); a batch of other
        data shapes reshapes the module first."""
        self._ready("forward")
        group = self._exec_group
        data = data_batch.data
        if len(data) != len(self._data_shapes):  # type: ignore[arg-type]
            raise InvalidValue(f"Module.forward: the batch has {len(data)} data arrays for the "
                               f"data names {self._data_names}")
        if any(a.shape != d.shape for a, d in zip(data, self._data_shapes)):  # type: ignore
            self._reshape_for(data_batch)
        group.forward(data_batch, is_train)  # type: ignore[union-attr]

    def _reshape_for(self, data_batch: Any) -> None:
        """Reshape to the shapes of ``data_batch`` (its descriptions when it has them)."""
        if getattr(data_batch, "provide_data", None):
            data_shapes = data_batch.provide_data
        else:
            data_shapes = [DataDesc(d.name, a.shape, d.dtype, d.layout)
                           for d, a in zip(self._data_shapes, data_batch.data)]  # type: ignore
        if getattr(data_batch, "provide_label", None):
            label_shapes = data_batch.provide_label
        elif getattr(data_batch, "label", None) and self._label_shapes:
            label_shapes = [DataDesc(d.name, a.shape, d.dtype, d.layout)
                            for d, a in zip(self._label_shapes, data_batch.label)]
        else:
            label_shapes = None
        self.reshape(data_shapes, label_shapes)

    def backward(self, out_grads: Any = None) -> None:
        """The backward pass (``out_grads``: the head gradients, for outputs that are not
        losses)."""
        self._ready("backward")
        self._exec_group.backward(out_grads=out_grads)  # type: ignore[union-attr]

    def update(self) -> None:
        """Update the parameters from their gradients (on the kvstore, or per context by the
        optimizer's updater)."""
        self._ready("update", optimizer=True)
        self._params_dirty = True
        group = self._exec_group
        if self._update_on_kvstore:
            update_on_kvstore(group.param_arrays, group.grad_arrays,  # type: ignore
                              self._kvstore, group.param_names)  # type: ignore[union-attr]
        else:
            update_locally(group.param_arrays, group.grad_arrays,  # type: ignore
                           self._updater, len(self._context), self._kvstore,
                           group.param_names)  # type: ignore[union-attr]

    def get_outputs(self, merge_multi_context: bool = True) -> list[Any]:
        """The outputs of the last forward (merged over the contexts)."""
        self._ready("get_outputs")
        return self._exec_group.get_outputs(merge_multi_context)  # type: ignore[union-attr]

    def get_input_grads(self, merge_multi_context: bool = True) -> list[Any]:
        """The gradients of the data inputs (bound with ``inputs_need_grad=True``)."""
        self._ready("get_input_grads")
        if not self.inputs_need_grad:
            raise NotReady("Module.get_input_grads: bind with inputs_need_grad=True first")
        return self._exec_group.get_input_grads(merge_multi_context)  # type: ignore

    def update_metric(self, eval_metric: Any, labels: Any, pre_sliced: bool = False) -> None:
        """Add the outputs of the last forward against ``labels`` to ``eval_metric``."""
        self._bound("update_metric").update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon: Any) -> None:
        """Install ``mon`` on every executor."""
        self._bound("install_monitor").install_monitor(mon)

    def prepare(self, data_batch: Any, sparse_row_id_fn: Any = None) -> None:
        """Before ``data_batch`` runs: pull the rows of each row_sparse parameter kept in the
        kvstore that ``sparse_row_id_fn(data_batch)`` names (a dict of name -> row ids) into
        the executors' copies. ``data_batch`` may be None (MXNet's way to pull rows, such as
        all of them before scoring, with no batch at hand)."""
        group = self._bound("prepare")
        if sparse_row_id_fn is None:
            return
        if self._kvstore is None or not self._update_on_kvstore:
            warnings.warn(UserWarning("Parameters are not updated in the KVStore. No need to "
                                      "call sparse_row_id_fn."), stacklevel=2)
            return
        row_ids = sparse_row_id_fn(data_batch)
        if not isinstance(row_ids, dict):
            raise InvalidType(f"prepare: sparse_row_id_fn must return a dict of parameter name -> "
                              f"row ids, got {type(row_ids).__name__}")
        batch_data = getattr(data_batch, "data", None) or ()  # None: pull rows, no batch
        batch_csrs = [a for a in batch_data if getattr(a, "stype", None) == "csr"]
        for name, rows in row_ids.items():
            if name not in group.param_names:
                raise InvalidValue(f"prepare: sparse_row_id_fn names {name!r}, not a parameter "
                                   f"({group.param_names})")
            index = group.param_names.index(name)
            arrays = group.param_arrays[index]
            if arrays[0].stype != "row_sparse":
                warnings.warn(UserWarning(f"{name}.stype is not 'row_sparse'. No need to "
                                          "perform row_sparse_pull."), stacklevel=2)
            else:
                for csr in batch_csrs:  # the batch's column ids: sorted once, for its products too
                    nd.sparse.learn_row_ids(csr, rows)
                self._kvstore.row_sparse_pull(name, arrays, row_ids=rows, priority=-index)
