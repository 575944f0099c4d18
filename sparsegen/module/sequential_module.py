"""``SequentialModule``: modules chained so that each one's outputs are the next one's data and
the gradients flow back the same way, as MXNet 1.9.1's ``mxnet.module.SequentialModule``."""

from __future__ import annotations

import copy
import logging
from typing import Any

from ..errors import InvalidValue, NotReady
from ..initializer import Uniform
from .base_module import BaseModule


class SequentialModule(BaseModule):
    """A chain of modules: ``add(module, take_labels=..., auto_wiring=...)`` appends one;
    ``forward`` feeds each module's outputs to the next, ``backward`` each module's input
    gradients to the one before."""

    META_TAKE_LABELS = "take_labels"
    META_AUTO_WIRING = "auto_wiring"

    def __init__(self, logger: Any = logging) -> None:
        super().__init__(logger=logger)
        self._modules: list[BaseModule] = []
        self._metas: list[dict[str, Any]] = []
        self._label_shapes: Any = None
        self._meta_keys = {self.META_TAKE_LABELS, self.META_AUTO_WIRING}

    def add(self, module: BaseModule, **kwargs: Any) -> "SequentialModule":
        """Append ``module`` (``take_labels``: it gets the batch's labels; ``auto_wiring``: the
        previous outputs are renamed to its data names); returns ``self`` to chain calls."""
        unknown = sorted(set(kwargs) - self._meta_keys)
        if unknown:
            raise InvalidValue(f"SequentialModule.add: unknown meta {unknown}; known: "
                               f"{sorted(self._meta_keys)}")
        self._modules.append(module)
        self._metas.append(kwargs)
        self.binded = self.params_initialized = self.optimizer_initialized = False
        return self

    def _takes_labels(self, index: int) -> bool:
        return bool(self._metas[index].get(self.META_TAKE_LABELS, False))

    # -- what it is ----------------------------------------------------------------------------
    @property
    def data_names(self) -> list[str]:
        """The first module's data names."""
        return self._modules[0].data_names if self._modules else []

    @property
    def output_names(self) -> list[str]:
        """The last module's output names."""
        return self._modules[-1].output_names if self._modules else []

    @property
    def data_shapes(self) -> Any:
        """The first module's data shapes."""
        self._bound("data_shapes")
        return self._modules[0].data_shapes

    @property
    def label_shapes(self) -> Any:
        """The label shapes bound (None when no module takes labels)."""
        self._bound("label_shapes")
        return self._label_shapes

    @property
    def output_shapes(self) -> Any:
        """The last module's output shapes."""
        self._bound("output_shapes")
        return self._modules[-1].output_shapes

    def _bound(self, what: str) -> None:
        if not self.binded:
            raise NotReady(f"SequentialModule.{what}: the module is not bound; call bind() "
                           "first")

    # -- parameters ----------------------------------------------------------------------------
    def get_params(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """Every module's parameters, merged into one ``(arg_params, aux_params)``."""
        self._ready("get_params")
        arg_params: dict[str, Any] = {}
        aux_params: dict[str, Any] = {}
        for module in self._modules:
            arg, aux = module.get_params()
            arg_params.update(arg)
            aux_params.update(aux)
        return arg_params, aux_params

    def init_params(self, initializer: Any = Uniform(0.01), arg_params: Any = None,
                    aux_params: Any = None, allow_missing: bool = False,
                    force_init: bool = False, allow_extra: bool = False) -> None:
        """Initialize every module's parameters; a name used by two modules is refused."""
        if self.params_initialized and not force_init:
            return
        self._bound("init_params")
        for module in self._modules:
            module.init_params(initializer=initializer, arg_params=arg_params,
                               aux_params=aux_params, allow_missing=allow_missing,
                               force_init=force_init, allow_extra=allow_extra)
        for kind in (0, 1):  # arg names, then aux names
            owner: dict[str, int] = {}
            for layer, module in enumerate(self._modules):
                for name in module.get_params()[kind]:
                    if name in owner:
                        raise InvalidValue(
                            f"SequentialModule.init_params: duplicated parameter name {name!r}"
                            f" in layer {layer} ({type(module).__name__}), already used in "
                            f"layer {owner[name]} ({type(self._modules[owner[name]]).__name__})")
                    owner[name] = layer
        self.params_initialized = True

    # -- binding and the optimizer ---------------------------------------------------------------
    def bind(self, data_shapes: Any, label_shapes: Any = None, for_training: bool = True,
             inputs_need_grad: bool = False, force_rebind: bool = False,
             shared_module: Any = None, grad_req: Any = "write") -> None:
        """Bind each module to the previous one's output shapes (the first to ``data_shapes``);
        every module after the first computes its input gradients when training."""
        if self.binded and not force_rebind:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if inputs_need_grad and not for_training:
            raise InvalidValue("SequentialModule.bind: inputs_need_grad=True needs "
                               "for_training=True")
        if shared_module is not None:
            raise InvalidValue("SequentialModule.bind: shared_module is not supported")
        if not self._modules:
            raise InvalidValue("SequentialModule.bind: the chain is empty; add() modules first")
        shapes = data_shapes
        for layer, module in enumerate(self._modules):
            if self._metas[layer].get(self.META_AUTO_WIRING, False):
                names = module.data_names
                if len(names) != len(shapes):
                    raise InvalidValue(
                        f"SequentialModule.bind: layer {layer} takes {len(names)} data "
                        f"inputs {names}, the previous layer gives {len(shapes)}")
                shapes = [(name, desc[1]) for name, desc in zip(names, shapes)]
            module.bind(data_shapes=shapes,
                        label_shapes=label_shapes if self._takes_labels(layer) else None,
                        for_training=for_training,
                        inputs_need_grad=bool(inputs_need_grad or (for_training and layer > 0)),
                        force_rebind=force_rebind, shared_module=None, grad_req=grad_req)
            shapes = module.output_shapes
        takes = any(self._takes_labels(layer) for layer in range(len(self._modules)))
        self._label_shapes = label_shapes if takes else None
        self.for_training, self.inputs_need_grad = for_training, inputs_need_grad
        self.binded = True

    def init_optimizer(self, kvstore: Any = "local", optimizer: Any = "sgd",
                       optimizer_params: Any = (("learning_rate", 0.01),),
                       force_init: bool = False) -> None:
        """Install the optimizer on every module."""
        self._ready("init_optimizer")
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring.")
            return
        for module in self._modules:
            module.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                                  optimizer_params=optimizer_params, force_init=force_init)
        self.optimizer_initialized = True

    # -- running -------------------------------------------------------------------------------
    def forward(self, data_batch: Any, is_train: bool | None = None) -> None:
        """Run the modules in order, each on the previous one's outputs."""
        self._ready("forward")
        batch = copy.copy(data_batch)
        for layer, module in enumerate(self._modules):
            module.forward(batch, is_train=is_train)
            if layer + 1 == len(self._modules):
                break
            batch.data = module.get_outputs()
            if hasattr(batch, "provide_data"):
                names = [desc[0] for desc in module.output_shapes]
                batch.provide_data = [(name, array.shape)
                                      for name, array in zip(names, batch.data)]

    def backward(self, out_grads: Any = None) -> None:
        """Run the modules' backward passes in reverse, each on the next one's input
        gradients."""
        self._ready("backward")
        for layer in reversed(range(len(self._modules))):
            self._modules[layer].backward(out_grads=out_grads)
            if layer:
                out_grads = self._modules[layer].get_input_grads()

    def update(self) -> None:
        """Update every module's parameters."""
        self._ready("update", optimizer=True)
        for module in self._modules:
            module.update()

    def get_outputs(self, merge_multi_context: bool = True) -> list[Any]:
        """The last module's outputs."""
        self._ready("get_outputs")
        return self._modules[-1].get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context: bool = True) -> list[Any]:
        """The first module's input gradients (bound with ``inputs_need_grad=True``)."""
        self._ready("get_input_grads")
        if not self.inputs_need_grad:
            raise NotReady("SequentialModule.get_input_grads: bind with inputs_need_grad=True "
                           "first")
        return self._modules[0].get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric: Any, labels: Any, pre_sliced: bool = False) -> None:
        """Update ``eval_metric`` from every module that takes labels."""
        self._ready("update_metric")
        for layer, module in enumerate(self._modules):
            if self._takes_labels(layer):
                module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon: Any) -> None:
        """Install ``mon`` on every module."""
        self._bound("install_monitor")
        for module in self._modules:
            module.install_monitor(mon)
