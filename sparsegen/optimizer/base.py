"""The base class of every optimizer: hyper-parameters, learning rates per weight, update counts,
the optimizer registry, and the one launch of an update through ``invoke``."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import InvalidType, InvalidValue, SparsegenError
from ..ndarray import NDArray, zeros
from ..ndarray.optim_arrays import ANY_STORAGE, check_kinds
from ..ndarray.optim_run import run
from ..ndarray.storage import assign
from ..params import flag, integer
from .hyper import (Hyper, at_least_0, clip_bound, gradient_clip, lr_at_least_0, multipliers,
                    scheduler)
from .inputs import aggregated, check_index, state_tuple


class Optimizer:
    """The base class of optimizers, as ``mxnet.optimizer.Optimizer``.

    Learning rate and weight decay per weight index are ``learning_rate`` (or
    ``lr_scheduler(num_update)``) and ``wd`` times the multipliers set by ``set_lr_mult`` /
    ``set_wd_mult``; each index counts its own updates (``_index_update_count``).
    """

    opt_registry: dict[str, type[Optimizer]] = {}
    lazy_update: Any = Hyper(flag)  # SGD and Adam take it as an argument; False for the others
    lr: Any = Hyper(lr_at_least_0, "learning_rate (lr)")
    wd: Any = Hyper(at_least_0, "wd")
    rescale_grad: Any = Hyper(at_least_0, "rescale_grad")
    clip_gradient: Any = Hyper(gradient_clip, "clip_gradient")
    lr_scheduler: Any = Hyper(scheduler, "lr_scheduler")
    multi_precision: Any = Hyper(flag, "multi_precision")
    begin_num_update: Any = Hyper(integer, "begin_num_update")
    _master_last = False  # the order of a multi_precision state (see _master_state)

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
        self.sym_info = () if sym is None else (sym.attr_dict(), sym.list_arguments())
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
        self._all_index_update_counts: dict[int, dict[Any, int]] = {0: {}}
        self._index_update_count = self._all_index_update_counts[0]
        self.idx2name = dict(param_idx2name or {})
        if param_dict is not None and not isinstance(param_dict, dict):
            raise SparsegenError(f"param_dict must be a dict of indices to parameters, got "
                                 f"{type(param_dict).__name__}")
        self.param_dict = param_dict or {}
        self.lr_mult: dict[Any, float] = {}
        self.wd_mult: dict[Any, float] = {}
        self.set_lr_mult({})
        self.set_wd_mult({})

    # -- registry -----------------------------------------------------------------------------
    @staticmethod
    def register(klass: type[Optimizer]) -> type[Optimizer]:
        """Register an optimizer class under its lower-cased name (for ``create``); one that
        replaces another class of that name warns, as in MXNet."""
        name = klass.__name__.lower()
        known = Optimizer.opt_registry.get(name)
        if known is not None and known is not klass:
            warnings.warn(f"New optimizer {klass.__module__}.{klass.__name__} is overriding "
                          f"existing optimizer {known.__module__}.{known.__name__}", stacklevel=2)
        Optimizer.opt_registry[name] = klass
        return klass

    @staticmethod
    def create_optimizer(name: str, **kwargs: Any) -> Optimizer:
        """An optimizer by case-insensitive name, as ``mx.optimizer.create('sgd', ...)``."""
        if not isinstance(name, str):
            raise InvalidType(f"optimizer name must be a str, got {type(name).__name__}")
        klass = Optimizer.opt_registry.get(name.lower())
        if klass is None:
            raise InvalidValue(
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
            return at_least_0(self.lr_scheduler(num_update),
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
        """Learning-rate multipliers by weight index or name (finite, >= 0), over those the
        symbol's variables give (``__lr_mult__``)."""
        self.lr_mult = {**self._symbol_multipliers("__lr_mult__"),
                        **multipliers(args_lr_mult, "lr_mult")}

    def _symbol_multipliers(self, key: str) -> dict[str, float]:
        """The multipliers ``key`` (``__lr_mult__``, ``__wd_mult__``) of the symbol's arguments."""
        if not self.sym_info:
            return {}
        attrs, names = self.sym_info
        return multipliers({n: float(attrs[n][key]) for n in names if key in attrs.get(n, {})},
                           key.strip("_"))

    def set_wd_mult(self, args_wd_mult: dict[Any, float]) -> None:
        """Weight-decay multipliers by weight index or name; named weights that do not end in
        ``_weight`` or ``_gamma`` get 0 (MXNet's default); multipliers are finite and >= 0."""
        checked = multipliers(args_wd_mult, "wd_mult")
        self.wd_mult = {n: 0.0 for n in self.idx2name.values() if isinstance(n, str)
                        and not (n.endswith("_weight") or n.endswith("_gamma"))}
        self.wd_mult.update(self._symbol_multipliers("__wd_mult__"))
        self.wd_mult.update(checked)

    def _multiplier(self, index: Any, table: dict[Any, float], attr: str) -> float:
        if index in self.param_dict:
            return at_least_0(getattr(self.param_dict[index], attr),
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

    def _set_current_context(self, device_id: int) -> None:
        """Count updates per device from now on, as MXNet's: the copies of one weight on
        several devices (one ``Updater`` each) are counted apart, so a step raises
        ``num_update`` once."""
        self._index_update_count = self._all_index_update_counts.setdefault(device_id, {})

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
        """The kernels' clip bound of ``clip_gradient``."""
        return clip_bound(self.clip_gradient)

    # -- states and updates -------------------------------------------------------------------
    def create_state(self, index: Any, weight: NDArray) -> Any:
        """The auxiliary state of weight ``index`` (``None`` when the optimizer keeps none)."""
        return None

    def create_state_multi_precision(self, index: Any, weight: NDArray) -> Any:
        """``create_state``, or with ``multi_precision`` and a float16 weight the pair (float32
        master copy of the weight, its ``create_state``), as MXNet."""
        if self.multi_precision and weight.dtype == np.float16:
            master = weight.astype(np.float32)
            return self._master_state(master, self.create_state(index, master))
        if weight.dtype == np.float16:
            warnings.warn("Accumulating with float16 in optimizer can lead to poor accuracy or "
                          "slow convergence. Consider using multi_precision=True option of the "
                          f"{type(self).__name__} optimizer", UserWarning, stacklevel=2)
        return self.create_state(index, weight)

    def update(self, index: Any, weight: NDArray, grad: NDArray, state: Any) -> None:
        """Update ``weight`` and ``state`` in place from ``grad``."""
        raise NotImplementedError

    def update_multi_precision(self, index: Any, weight: NDArray, grad: NDArray,
                               state: Any) -> None:
        """``update``, or with ``multi_precision`` and a float16 weight: update the float32
        master copy from the gradient in float32, then round it into the weight (MXNet's).
        Lists of indices, weights, gradients and states update each weight in turn, as MXNet's
        aggregated (``multi_*``) updates do."""
        if isinstance(index, (list, tuple)):
            for one in aggregated(index, weight, grad, state):
                self.update_multi_precision(*one)
            return
        if not (self.multi_precision and weight.dtype == np.float16):
            self.update(index, weight, grad, state)
            return
        master, inner = self._split_master(state_tuple(state, 2, f"{type(self).__name__} "
                                                                 "(multi_precision)"))
        if not isinstance(master, NDArray) or master.dtype != np.float32:
            raise SparsegenError(f"{type(self).__name__}: the multi_precision state must hold "
                                 "the float32 master copy from create_state_multi_precision")
        if not isinstance(grad, NDArray):
            raise SparsegenError(f"grad must be an NDArray, got {type(grad).__name__}")
        if master.shape != weight.shape:
            raise SparsegenError(f"the master copy has shape {master.shape}, the weight has "
                                 f"shape {weight.shape}")
        self.update(index, master, grad.astype(np.float32), inner)
        assign(weight, master)

    def _master_state(self, master: NDArray, state: Any) -> tuple[Any, Any]:
        """The multi_precision state: (master copy, state), or (state, master copy) where
        ``_master_last`` (MXNet's SGD and NAG)."""
        return (state, master) if self._master_last else (master, state)

    def _split_master(self, state: tuple[Any, ...]) -> tuple[Any, Any]:
        """(master copy, inner state) of a multi_precision state (``_master_state``'s inverse)."""
        return (state[1], state[0]) if self._master_last else (state[0], state[1])

    def _zeros(self, weight: NDArray, stype: str) -> NDArray:
        return zeros(weight.shape, weight.context, dtype=weight.dtype, stype=stype)

    def _begin(self, index: Any, weight: NDArray, grad: NDArray,
               states: tuple[Any, ...]) -> tuple[int, float, float]:
        """Validate the index and the values this update uses, changing nothing (``run``
        checks the arrays); returns the update count it will have, its learning rate and
        weight decay."""
        check_index(index)
        check_kinds((("weight", weight), ("grad", grad)), ANY_STORAGE)
        count, num_update = self._next_count(index)
        return count, self._get_lr(index, num_update), self._get_wd(index)

    def _lazy(self, weight: NDArray, states: tuple[NDArray, ...]) -> bool:
        """Whether a row_sparse gradient updates only its rows (``lazy_update`` and the states
        stored like the weight, MXNet's dispatch rule); otherwise every row is updated."""
        return self.lazy_update and all(s.stype == weight.stype for s in states)

    def _launch(self, index: Any, rule: str, weight: NDArray, grad: NDArray,
                states: tuple[NDArray, ...], hyper: dict[str, float],
                labels: dict[str, str] | None = None) -> None:
        """Run update rule ``rule``'s kernel (``ndarray.optim_run.run``: storage fallbacks,
        checks) with ``hyper`` (its hyper-parameters by name; ``labels``: their names in
        messages where the value is not the user's), then count the update of ``index``."""
        run(type(self).__name__, rule, weight, grad, states, hyper, self._lazy, labels)
        self._update_count(index)
