"""``PythonModule`` (a module written in Python with no parameters of its own) and
``PythonLossModule`` (a loss whose gradient a Python function gives), as MXNet 1.9.1's
``mxnet.module.python_module``."""

from __future__ import annotations

import logging
from typing import Any

from .. import ndarray as nd
from ..errors import InvalidType, InvalidValue, NotReady, NotSupported
from ..initializer import Uniform
from .base_module import BaseModule


class PythonModule(BaseModule):
    """A module computing in Python: no parameters, no optimizer; a subclass gives
    ``_compute_output_shapes``, ``forward``, ``backward``, ``get_outputs`` and
    ``get_input_grads``."""

    def __init__(self, data_names: Any, label_names: Any, output_names: Any,
                 logger: Any = logging) -> None:
        super().__init__(logger=logger)
        self._data_names = list(data_names)
        self._label_names = None if label_names is None else list(label_names)
        self._output_names = list(output_names)
        self._data_shapes: Any = None
        self._label_shapes: Any = None
        self._output_shapes: Any = None

    @property
    def data_names(self) -> list[str]:
        """The names of the data inputs."""
        return self._data_names

    @property
    def output_names(self) -> list[str]:
        """The names of the outputs."""
        return self._output_names

    @property
    def data_shapes(self) -> Any:
        """The data shapes bound."""
        return self._data_shapes

    @property
    def label_shapes(self) -> Any:
        """The label shapes bound (None without labels)."""
        return self._label_shapes

    @property
    def output_shapes(self) -> Any:
        """The output shapes ``_compute_output_shapes`` gave at ``bind``."""
        return self._output_shapes

    def get_params(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """No parameters: ``({}, {})``."""
        return {}, {}

    def init_params(self, initializer: Any = Uniform(0.01), arg_params: Any = None,
                    aux_params: Any = None, allow_missing: bool = False,
                    force_init: bool = False, allow_extra: bool = False) -> None:
        """Nothing to initialize."""
        self.params_initialized = True

    def init_optimizer(self, kvstore: Any = "local", optimizer: Any = "sgd",
                       optimizer_params: Any = (("learning_rate", 0.01),),
                       force_init: bool = False) -> None:
        """No parameters to optimize."""
        self.optimizer_initialized = True

    def update(self) -> None:
        """No parameters to update."""

    def update_metric(self, eval_metric: Any, labels: Any, pre_sliced: bool = False) -> None:
        """Update ``eval_metric`` with the outputs against ``labels`` (when bound with
        labels)."""
        if self._label_shapes is None:
            return
        if pre_sliced:
            raise NotSupported("PythonModule.update_metric: pre_sliced labels are not supported")
        eval_metric.update(labels, self.get_outputs())

    def bind(self, data_shapes: Any, label_shapes: Any = None, for_training: bool = True,
             inputs_need_grad: bool = False, force_rebind: bool = False,
             shared_module: Any = None, grad_req: Any = "write") -> None:
        """Record the shapes (named as the module's data and label names) and compute the
        output shapes."""
        if self.binded and not force_rebind:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if grad_req != "write":
            raise InvalidValue(f"{type(self).__name__}.bind: grad_req must be 'write', got "
                               f"{grad_req!r}")
        _check_names("data", data_shapes, self._data_names)
        if label_shapes is not None:
            if self._label_names is None:
                raise InvalidValue(f"{type(self).__name__}.bind: label_shapes given to a "
                                   "module without label names")
            _check_names("label", label_shapes, self._label_names)
        self.for_training, self.inputs_need_grad = for_training, inputs_need_grad
        self._data_shapes, self._label_shapes = data_shapes, label_shapes
        self._output_shapes = self._compute_output_shapes()
        self.binded = True

    def _compute_output_shapes(self) -> list[tuple[str, tuple[int, ...]]]:
        """``(name, shape)`` of each output, from the bound shapes (a subclass gives it)."""
        raise NotSupported(f"{type(self).__name__} must define _compute_output_shapes")


def _check_names(what: str, shapes: Any, names: list[str]) -> None:
    """Refuse ``shapes`` whose names are not ``names`` in order."""
    given = [desc[0] for desc in shapes]
    if given != names:
        raise InvalidValue(f"PythonModule.bind: {what}_shapes name {given}, the module's "
                           f"{what} names are {names}")


class PythonLossModule(PythonModule):
    """A loss in Python: its output is its input (the scores); ``backward`` gives
    ``grad_func(scores, labels)`` as the scores' gradient."""

    def __init__(self, name: str = "pyloss", data_names: Any = ("data",),
                 label_names: Any = ("softmax_label",), logger: Any = logging,
                 grad_func: Any = None) -> None:
        super().__init__(data_names, label_names, [name + "_output"], logger=logger)
        if len(self._data_names) != 1 or self._label_names is None \
                or len(self._label_names) != 1:
            raise InvalidValue(f"PythonLossModule: one data name and one label name, got "
                               f"data_names={data_names}, label_names={label_names}")
        if grad_func is not None and not callable(grad_func):
            raise InvalidType(f"PythonLossModule: grad_func must be callable, got "
                              f"{type(grad_func).__name__}")
        self._name = name
        self._grad_func = grad_func
        self._scores: Any = None
        self._labels: Any = None
        self._scores_grad: Any = None

    def _compute_output_shapes(self) -> list[tuple[str, tuple[int, ...]]]:
        return [(self._name + "_output", tuple(self._data_shapes[0][1]))]

    def forward(self, data_batch: Any, is_train: bool | None = None) -> None:
        """Keep the scores (and, when training, the labels)."""
        self._scores = data_batch.data[0]
        if self.for_training if is_train is None else is_train:
            self._labels = data_batch.label[0]

    def get_outputs(self, merge_multi_context: bool = True) -> list[Any]:
        """The scores of the last forward."""
        return [self._scores]

    def backward(self, out_grads: Any = None) -> None:
        """The scores' gradient, ``grad_func(scores, labels)``."""
        if out_grads is not None:
            raise InvalidValue("PythonLossModule.backward: a loss module takes no out_grads")
        if not self.for_training:
            raise NotReady("PythonLossModule.backward: bind with for_training=True first")
        self._backward_impl()

    def _backward_impl(self) -> None:
        """Set ``_scores_grad`` (from ``grad_func``; a subclass without one overrides this)."""
        if self._grad_func is None:
            raise NotSupported("PythonLossModule: give grad_func or override _backward_impl")
        grad = self._grad_func(self._scores, self._labels)
        self._scores_grad = grad if isinstance(grad, nd.NDArray) else nd.array(grad)

    def get_input_grads(self, merge_multi_context: bool = True) -> list[Any]:
        """The scores' gradient of the last backward."""
        return [self._scores_grad]

    def install_monitor(self, mon: Any) -> None:
        """A Python module has no executors to monitor."""
        raise NotSupported("PythonLossModule.install_monitor: no executors to monitor")
