"""``mx.optimizer``: SGD, Adam, AdaGrad and Ftrl on generated in-place update kernels.

The update rules, the lazy / standard choice and the state storage types follow MXNet 1.9.1
(``python/mxnet/optimizer/optimizer.py`` and ``src/operator/optimizer_op-inl.h``);
docs/optimizers.md lists them and where sparsegen differs. Hyper-parameters are checked when
they are set (constructor, attribute, ``set_*``) and again as the values an update uses (the
scheduler's output, multipliers, bias correction). Every update validates all its arrays and
values before it writes anything and counts only once the kernel has run, so a failed update
leaves weight, states (values and storage) and update counts unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .device import colocate, may_share_memory
from .errors import SparsegenError
from .formats import INDEX_DTYPE, RowSparse
from .ndarray import NDArray, zeros
from .ndarray.storage import convert
from .ops import optim as ops
from .params import flag, integer, real, representable

FLOAT_DTYPES = ("float16", "float32", "float64")
"""Weight dtypes the optimizers update (MXNet's optimizer operators take real types only)."""

_STORAGES = ("default", "row_sparse")


def _values(storage: Any) -> Any:
    """The values an update reads or writes: a dense buffer, or a row_sparse format's data."""
    return storage.data if isinstance(storage, RowSparse) else storage


def _buffer(array: NDArray) -> Any:
    """``_values`` of an array's storage."""
    return _values(array._storage)


def _check_kinds(arrays: tuple[tuple[str, Any], ...]) -> None:
    """Each named array is an NDArray of default or row_sparse storage."""
    for what, array in arrays:
        if not isinstance(array, NDArray):
            raise SparsegenError(f"{what} must be an NDArray, got {type(array).__name__}")
        if array.stype not in _STORAGES:
            raise SparsegenError(
                f"{what} must have default or row_sparse storage, got {array.stype}"
            )


def _check_weight(weight: Any, every_row: bool = True) -> None:
    """Raise unless ``weight`` is an array an optimizer can update; ``create_state`` passes
    ``every_row=False`` (a row_sparse weight may get its rows before its first update)."""
    _check_kinds((("weight", weight),))
    dtype = weight._storage.dtype
    if dtype.kind != "f":  # float16/32/64: the only floating dtypes an NDArray can hold
        raise SparsegenError(
            f"weight: optimizers update floating-point weights ({', '.join(FLOAT_DTYPES)}), "
            f"got {dtype.name}"
        )
    if weight.ndim == 0:
        raise SparsegenError("weight must have at least 1 dimension, got shape ()")
    stored = _buffer(weight).shape[0]
    if every_row and weight.stype == "row_sparse" and stored != weight.shape[0]:
        raise SparsegenError(
            f"weight: a row_sparse weight must store every row (as MXNet requires); it stores "
            f"{stored} of {weight.shape[0]} rows"
        )


def _check_arrays(weight: Any, grad: Any, states: tuple[Any, ...]) -> None:
    """Raise unless weight, grad and states can be updated together (nothing is written)."""
    _check_weight(weight)
    _check_kinds((("grad", grad), *((f"state {i}", s) for i, s in enumerate(states))))
    dtype = weight._storage.dtype
    for what, array in (("grad", grad), *((f"state {i}", s) for i, s in enumerate(states))):
        if array.shape != weight.shape:
            # a row_sparse grad's row ids are in range of its own shape (the format guarantees
            # it), so equal shapes keep every kernel write inside the weight
            raise SparsegenError(
                f"{what} has shape {array.shape}, the weight has shape {weight.shape}"
            )
        if array._storage.dtype != dtype:
            raise SparsegenError(
                f"{what} has dtype {array._storage.dtype.name}, the weight has dtype {dtype.name}"
            )
        if array.context != weight.context:
            raise SparsegenError(f"{what} is on {array.context}, the weight is on {weight.context}")
    for what, array in (("weight", weight), *((f"state {i}", s) for i, s in enumerate(states))):
        if not _buffer(array).flags.c_contiguous:  # updated in place: no copy can stand in
            raise SparsegenError(f"{what} must be C-contiguous to be updated in place (a view "
                                 f"with strides {_buffer(array).strides} is not)")
    written = [_buffer(weight), *(_buffer(s) for s in states)]
    for i, a in enumerate(written):
        for b in (*written[i + 1:], _buffer(grad)):
            if may_share_memory(a, b):
                raise SparsegenError("weight, grad and states must not share memory")


def _every_row(storage: Any) -> Any:
    """A row_sparse state's storage with every row (zeros where it stored none), as MXNet gives
    it; a new storage, so that the state changes only once the update has run."""
    if isinstance(storage, RowSparse) and storage.data.shape[0] != storage.shape[0]:
        values = convert(storage, "row_sparse", "default")
        every_row = colocate(np.arange(storage.shape[0], dtype=INDEX_DTYPE), values)
        return RowSparse(values, every_row, storage.shape)
    return storage


def _state_tuple(state: Any, count: int, name: str) -> tuple[Any, ...]:
    """``state`` as a tuple of ``count`` states (what ``create_state`` returned)."""
    states = tuple(state) if isinstance(state, (tuple, list)) else (state,)
    if len(states) != count:
        raise SparsegenError(f"{name} takes {count} states (from create_state), got "
                             f"{'None' if state is None else len(states)}")
    return states


def _check_index(index: Any) -> None:
    """An index names one weight: hashable, not a list (aggregated updates are not supported)."""
    if isinstance(index, (list, tuple)):
        raise SparsegenError(f"index must name one weight (an int or a name), got {index!r}: "
                             "aggregated updates of a list of indices are not supported")
    try:
        hash(index)
    except TypeError:
        raise SparsegenError(
            f"index must be an int or a name, got {type(index).__name__}"
        ) from None


# -- hyper-parameters: one checked attribute each -------------------------------------------------
Check = Callable[[Any, str], Any]


def _at_least_0(value: Any, name: str) -> float:
    return real(value, name, low=0.0)


def _positive(value: Any, name: str) -> float:
    return real(value, name, low=0.0, low_open=True)


def _unit(value: Any, name: str) -> float:
    return real(value, name, low=0.0, high=1.0, high_open=True)


def _lr(value: Any, name: str) -> float | None:
    return None if value is None else _at_least_0(value, name)  # None: the scheduler's


def _positive_lr(value: Any, name: str) -> float | None:
    return None if value is None else _positive(value, name)


def _clip(value: Any, name: str) -> float | None:
    return None if value is None else real(value, name, allow_inf=True)  # <= 0: no clipping


def _scheduler(value: Any, name: str) -> Any:
    if value is not None and not callable(value):
        raise SparsegenError(f"{name} must be None or a callable of the update count, "
                             f"got {type(value).__name__}")
    return value


def _multipliers(value: Any, name: str) -> dict[Any, float]:
    if not isinstance(value, dict):
        raise SparsegenError(f"{name} must be a dict of weight indices or names to multipliers, "
                             f"got {type(value).__name__}")
    return {key: _at_least_0(v, f"{name}[{key!r}]") for key, v in value.items()}


class Hyper:
    """An optimizer attribute whose value is checked whenever it is set (``check(value, name)``
    returns the value stored), so ``opt.lr = 'x'`` raises where it is written."""

    def __init__(self, check: Check, label: str | None = None) -> None:
        self.check = check
        self.label = label

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name
        self.label = self.label or name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        try:
            return obj.__dict__[self.name]
        except KeyError:
            raise AttributeError(f"{type(obj).__name__} has no {self.name} yet") from None

    def __set__(self, obj: Any, value: Any) -> None:
        obj.__dict__[self.name] = self.check(value, self.label)


class Optimizer:
    """The base class of optimizers, as ``mxnet.optimizer.Optimizer``.

    Learning rate and weight decay per weight index are ``learning_rate`` (or
    ``lr_scheduler(num_update)``) and ``wd`` times the multipliers set by ``set_lr_mult`` /
    ``set_wd_mult``; each index counts its own updates (``_index_update_count``).
    """

    opt_registry: dict[str, type[Optimizer]] = {}
    lazy_update: Any = Hyper(flag)  # SGD and Adam take it as an argument; False for the others
    lr: Any = Hyper(_lr, "learning_rate (lr)")
    wd: Any = Hyper(_at_least_0, "wd")
    rescale_grad: Any = Hyper(_at_least_0, "rescale_grad")
    clip_gradient: Any = Hyper(_clip, "clip_gradient")
    lr_scheduler: Any = Hyper(_scheduler, "lr_scheduler")
    multi_precision: Any = Hyper(flag, "multi_precision")
    begin_num_update: Any = Hyper(integer, "begin_num_update")

    def __init__(
        self,
        rescale_grad: float = 1.0,
        param_idx2name: dict[int, str] | None = None,
        wd: float = 0.0,
        clip_gradient: float | None = None,
        learning_rate: float | None = None,
        lr_scheduler: Callable[[int], float] | None = None,
        sym: Any = None,
        begin_num_update: int = 0,
        multi_precision: bool = False,
        param_dict: dict[int, Any] | None = None,
    ) -> None:
        if sym is not None:
            raise SparsegenError("sym is not supported: sparsegen has no symbolic graphs")
        if param_idx2name is not None and not isinstance(param_idx2name, dict):
            raise SparsegenError("param_idx2name should be a dict of param indexes to names.")
        self.lazy_update = False
        self.rescale_grad = rescale_grad
        self.lr_scheduler = lr_scheduler
        if lr_scheduler is None and learning_rate is None:
            learning_rate = 0.01
        if lr_scheduler is not None and learning_rate is not None:
            lr_scheduler.base_lr = learning_rate
        self.lr = learning_rate
        self.wd = wd
        self.clip_gradient = clip_gradient
        self.multi_precision = multi_precision
        self.begin_num_update = begin_num_update
        self.num_update = begin_num_update
        self._index_update_count: dict[Any, int] = {}
        self.idx2name = dict(param_idx2name or {})
        if param_dict is not None and not isinstance(param_dict, dict):
            raise SparsegenError(f"param_dict must be a dict of indices to parameters, got "
                                 f"{type(param_dict).__name__}")
        self.param_dict = param_dict or {}
        self.lr_mult: dict[Any, float] = {}
        self.wd_mult: dict[Any, float] = {}
        self.set_wd_mult({})

    # -- registry -----------------------------------------------------------------------------
    @staticmethod
    def register(klass: type[Optimizer]) -> type[Optimizer]:
        """Register an optimizer class under its lower-cased name (for ``create``)."""
        Optimizer.opt_registry[klass.__name__.lower()] = klass
        return klass

    @staticmethod
    def create_optimizer(name: str, **kwargs: Any) -> Optimizer:
        """An optimizer by case-insensitive name, as ``mx.optimizer.create('sgd', ...)``."""
        if not isinstance(name, str):
            raise SparsegenError(f"optimizer name must be a str, got {type(name).__name__}")
        klass = Optimizer.opt_registry.get(name.lower())
        if klass is None:
            raise SparsegenError(
                f"Cannot find optimizer {name}; known: {', '.join(sorted(Optimizer.opt_registry))}"
            )
        return klass(**kwargs)

    # -- learning rate, weight decay, counts --------------------------------------------------
    @property
    def learning_rate(self) -> float:
        """The current learning rate (from ``lr_scheduler`` when there is one)."""
        return self._lr_at(self.num_update)

    def _lr_at(self, num_update: int) -> float:
        """The learning rate at update count ``num_update``, checked (a scheduler's output too)."""
        if self.lr_scheduler is not None:
            return _at_least_0(self.lr_scheduler(num_update),
                               f"lr_scheduler({num_update}) (the learning rate it returned)")
        if self.lr is None:
            raise SparsegenError("learning_rate is None and there is no lr_scheduler")
        return self.lr

    def set_learning_rate(self, lr: float) -> None:
        """Set the learning rate; raises ``UserWarning`` when an ``lr_scheduler`` owns it."""
        if self.lr_scheduler is not None:
            raise UserWarning(
                "LRScheduler of the optimizer has already been defined. Note that "
                "set_learning_rate can mutate the value of the learning rate of the optimizer "
                "only when the LRScheduler of the optimizer is undefined."
            )
        self.lr = lr

    def set_lr_mult(self, args_lr_mult: dict[Any, float]) -> None:
        """Learning-rate multipliers by weight index or name (finite, >= 0)."""
        self.lr_mult = _multipliers(args_lr_mult, "lr_mult")

    def set_wd_mult(self, args_wd_mult: dict[Any, float]) -> None:
        """Weight-decay multipliers by weight index or name; named weights that do not end in
        ``_weight`` or ``_gamma`` get 0 (MXNet's default); multipliers are finite and >= 0."""
        checked = _multipliers(args_wd_mult, "wd_mult")
        self.wd_mult = {n: 0.0 for n in self.idx2name.values() if isinstance(n, str)
                        and not (n.endswith("_weight") or n.endswith("_gamma"))}
        self.wd_mult.update(checked)

    def _multiplier(self, index: Any, table: dict[Any, float], attr: str) -> float:
        if index in self.param_dict:
            return _at_least_0(getattr(self.param_dict[index], attr),
                               f"param_dict[{index!r}].{attr}")
        if index in table:
            return table[index]
        return table.get(self.idx2name.get(index), 1.0)

    def _get_lr(self, index: Any, num_update: int | None = None) -> float:
        """The learning rate of weight ``index`` (at ``num_update``, by default the current)."""
        lr = self._lr_at(self.num_update if num_update is None else num_update)
        return lr * self._multiplier(index, self.lr_mult, "lr_mult")

    def _get_wd(self, index: Any) -> float:
        """The weight decay of weight ``index``."""
        return self.wd * self._multiplier(index, self.wd_mult, "wd_mult")

    def _update_count(self, index: Any) -> None:
        """Count one update of weight ``index`` (and raise ``num_update`` to match)."""
        count = self._index_update_count.get(index, self.begin_num_update) + 1
        self._index_update_count[index] = count
        self.num_update = max(count, self.num_update)

    def _next_count(self, index: Any) -> tuple[int, int]:
        """The update count of ``index`` and ``num_update`` once this update has run."""
        count = self._index_update_count.get(index, self.begin_num_update) + 1
        return count, max(count, self.num_update)

    def _clip_bound(self) -> float:
        """The kernels' clip bound: ``clip_gradient`` when positive, else no clipping (MXNet)."""
        clip = self.clip_gradient
        return float(clip) if clip is not None and clip > 0 else math.inf

    # -- states and updates -------------------------------------------------------------------
    def create_state(self, index: Any, weight: NDArray) -> Any:
        """The auxiliary state of weight ``index`` (``None`` when the optimizer keeps none)."""
        return None

    def create_state_multi_precision(self, index: Any, weight: NDArray) -> Any:
        """``create_state``; float32 master copies of float16 weights are not supported."""
        self._refuse_multi_precision(weight)
        return self.create_state(index, weight)

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        """Update ``weight`` and ``state`` in place from ``grad``."""
        raise NotImplementedError

    def update_multi_precision(self, index: Any, weight: NDArray, grad: NDArray,
                               state: Any) -> None:
        """``update``; float32 master copies of float16 weights are not supported."""
        self._refuse_multi_precision(weight)
        self.update(index, weight, grad, state)

    def _refuse_multi_precision(self, weight: NDArray) -> None:
        if self.multi_precision and weight.dtype == np.float16:
            raise SparsegenError(
                "multi_precision (a float32 master copy of float16 weights) is not supported; "
                "update float16 weights directly or keep float32 weights"
            )

    def _zeros(self, weight: NDArray, stype: str) -> NDArray:
        return zeros(weight.shape, weight.context, dtype=weight.dtype, stype=stype)

    def _begin(self, index: Any, weight: NDArray, grad: NDArray,
               states: tuple[Any, ...]) -> tuple[int, float, float]:
        """Validate every array and the values this update uses, changing nothing; returns the
        update count it will have, its learning rate and weight decay."""
        _check_index(index)
        _check_arrays(weight, grad, states)
        count, num_update = self._next_count(index)
        return count, self._get_lr(index, num_update), self._get_wd(index)

    def _lazy(self, weight: NDArray, states: tuple[NDArray, ...]) -> bool:
        """Whether a row_sparse gradient updates only its rows (``lazy_update`` and the states
        stored like the weight, MXNet's dispatch rule); otherwise every row is updated."""
        return self.lazy_update and all(s.stype == weight.stype for s in states)

    def _launch(self, index: Any, family: str, weight: NDArray, grad: NDArray,
                states: tuple[NDArray, ...], hyper: dict[str, float]) -> None:
        """Run kernel ``optim_<family>`` on validated arrays with ``hyper`` (its parameters in
        signature order), then count the update of ``index``.

        Each value must be finite as the kernel's float32 parameter and in the weight's dtype
        (``clip_gradient`` may be inf: no clipping). States get their new storage only once the
        kernel has run."""
        limit = np.float16 if weight._storage.dtype == np.float16 else np.float32
        for name, value in hyper.items():
            if name != "clip_gradient":
                representable(value, f"{type(self).__name__}: {name}", limit)
        lazy = grad.stype == "row_sparse" and self._lazy(weight, states)
        storages = [_every_row(s._storage) for s in states]
        ops.update(family, _buffer(weight), grad._storage, [_values(s) for s in storages],
                   tuple(hyper.values()), lazy)
        for state, storage in zip(states, storages):
            state._storage = storage
        self._update_count(index)


register = Optimizer.register
create = Optimizer.create_optimizer


@register
class SGD(Optimizer):
    """SGD with momentum and weight decay (MXNet's sgd_update / sgd_mom_update):

    ``mom = momentum*mom - lr*wd*weight - lr*clip(rescale_grad*grad); weight += mom``, or
    without momentum ``weight = (1 - lr*wd)*weight - lr*clip(rescale_grad*grad)``. With a
    row_sparse gradient and ``lazy_update`` only the gradient's rows change; the momentum state
    is row_sparse for a row_sparse weight when ``lazy_update``, else dense.
    """

    momentum: Any = Hyper(_unit, "momentum")

    def __init__(self, momentum: float = 0.0, lazy_update: bool = True, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.momentum = momentum
        self.lazy_update = lazy_update

    def create_state(self, index: Any, weight: NDArray) -> NDArray | None:
        """Zero momentum of the weight's shape, or ``None`` without momentum."""
        _check_weight(weight, every_row=False)
        if self.momentum == 0.0:
            return None
        return self._zeros(weight, weight.stype if self.lazy_update else "default")

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: NDArray | None) -> None:
        """One SGD step in place (a given state runs the momentum update, as in MXNet)."""
        states = () if state is None else (state,)
        _, lr, wd = self._begin(index, weight, grad, states)
        hyper = {"lr": lr, "momentum": self.momentum, "wd": wd,
                 "rescale_grad": self.rescale_grad, "clip_gradient": self._clip_bound()}
        if not states:
            del hyper["momentum"]
        self._launch(index, "sgd_mom" if states else "sgd", weight, grad, states, hyper)


@register
class Adam(Optimizer):
    """Adam (MXNet's adam_update), bias correction folded into the learning rate per index:
    ``lr_t = lr * sqrt(1 - beta2**t) / (1 - beta1**t)`` with ``t`` the index's update count.

    ``g = clip(rescale_grad*grad + wd*weight); mean = beta1*mean + (1-beta1)*g;
    var = beta2*var + (1-beta2)*g*g; weight -= lr_t * mean / (sqrt(var) + epsilon)``.
    """

    beta1: Any = Hyper(_unit, "beta1")
    beta2: Any = Hyper(_unit, "beta2")
    epsilon: Any = Hyper(_positive, "epsilon")

    def __init__(self, learning_rate: float = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-8, lazy_update: bool = True, **kwargs: Any) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lazy_update = lazy_update

    def create_state(self, index: Any, weight: NDArray) -> tuple[NDArray, NDArray]:
        """Zero mean and variance, row_sparse for a row_sparse weight when ``lazy_update``."""
        _check_weight(weight, every_row=False)
        stype = weight.stype if self.lazy_update else "default"
        return self._zeros(weight, stype), self._zeros(weight, stype)

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        """One Adam step in place."""
        states = _state_tuple(state, 2, "Adam")
        t, lr, wd = self._begin(index, weight, grad, states)
        lr *= math.sqrt(1.0 - self.beta2**t) / (1.0 - self.beta1**t)
        self._launch(index, "adam", weight, grad, states,
                     {"lr (bias-corrected)": lr, "beta1": self.beta1, "beta2": self.beta2,
                      "epsilon": self.epsilon, "wd": wd, "rescale_grad": self.rescale_grad,
                      "clip_gradient": self._clip_bound()})


@register
class AdaGrad(Optimizer):
    """AdaGrad: ``g = clip(rescale_grad*grad); history += g*g;
    weight -= lr * (g / sqrt(history + eps) + wd*weight)``.

    A row_sparse gradient updates its rows only and refuses ``wd != 0``, as MXNet's sparse
    ``adagrad_update`` does.
    """

    float_stable_eps: Any = Hyper(_positive, "eps (float_stable_eps)")

    def __init__(self, eps: float = 1e-7, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index: Any, weight: NDArray) -> NDArray:
        """Zero history, stored like the weight (in the weight's dtype; MXNet's is float32)."""
        _check_weight(weight, every_row=False)
        return self._zeros(weight, weight.stype)

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        """One AdaGrad step in place."""
        states = _state_tuple(state, 1, "AdaGrad")
        _, lr, wd = self._begin(index, weight, grad, states)
        if grad.stype == "row_sparse" and wd != 0:
            raise SparsegenError(
                f"AdaGrad with a row_sparse gradient does not support weight decay (as MXNet's "
                f"sparse adagrad_update); got wd={wd}"
            )
        self._launch(index, "adagrad", weight, grad, states,
                     {"lr": lr, "eps": self.float_stable_eps, "wd": wd,
                      "rescale_grad": self.rescale_grad, "clip_gradient": self._clip_bound()})

    def _lazy(self, weight: NDArray, states: tuple[NDArray, ...]) -> bool:
        return True


@register
class Ftrl(Optimizer):
    """FTRL-Proximal (MXNet's ftrl_update): ``g = clip(rescale_grad*grad);
    z += g - (sqrt(n + g*g) - sqrt(n)) * weight / lr; n += g*g;
    weight = (sign(z)*lamda1 - z) / ((beta + sqrt(n)) / lr + wd) * (|z| > lamda1)``.

    A row_sparse gradient updates only its rows when weight and states are all row_sparse;
    otherwise every row is recomputed (MXNet's dense fallback).
    """

    lr: Any = Hyper(_positive_lr, "learning_rate (lr)")  # the update divides by it
    lamda1: Any = Hyper(_at_least_0, "lamda1")
    beta: Any = Hyper(_at_least_0, "beta")

    def __init__(self, lamda1: float = 0.01, learning_rate: float = 0.1, beta: float = 1,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.lamda1 = lamda1
        self.beta = beta
        self.lr = learning_rate

    def create_state(self, index: Any, weight: NDArray) -> tuple[NDArray, NDArray]:
        """Zero ``z`` and ``n``, stored like the weight (weight's dtype; MXNet's is float32)."""
        _check_weight(weight, every_row=False)
        return self._zeros(weight, weight.stype), self._zeros(weight, weight.stype)

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        """One FTRL step in place."""
        states = _state_tuple(state, 2, "Ftrl")
        _, lr, wd = self._begin(index, weight, grad, states)
        _positive(lr, f"Ftrl: the learning rate of weight {index!r} (the update divides by it)")
        self._launch(index, "ftrl", weight, grad, states,
                     {"lr": lr, "lamda1": self.lamda1, "beta": self.beta, "wd": wd,
                      "rescale_grad": self.rescale_grad, "clip_gradient": self._clip_bound()})

    def _lazy(self, weight: NDArray, states: tuple[NDArray, ...]) -> bool:
        return weight.stype == "row_sparse" and all(s.stype == "row_sparse" for s in states)


class Updater:
    """Applies an optimizer to weights by index, creating each state on first use (MXNet's
    ``Updater``, called as ``updater(index, grad, weight)``)."""

    def __init__(self, optimizer: Optimizer) -> None:
        self.optimizer = optimizer
        self.states: dict[Any, Any] = {}

    def __call__(self, index: Any, grad: NDArray, weight: NDArray) -> None:
        _check_index(index)
        state = self.states.get(index)
        if index not in self.states:
            state = self.optimizer.create_state_multi_precision(index, weight)
        self.optimizer.update_multi_precision(index, weight, grad, state)
        self.states[index] = state  # kept only once an update has succeeded


def get_updater(optimizer: Optimizer) -> Updater:
    """An ``Updater`` for ``optimizer``."""
    return Updater(optimizer)


__all__ = [
    "AdaGrad", "Adam", "Ftrl", "Optimizer", "SGD", "Updater", "create", "get_updater", "register",
]
