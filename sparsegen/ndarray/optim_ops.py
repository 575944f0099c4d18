"""MXNet 1.9.1's operator-level optimizer updates: ``mx.nd.sgd_update``, ``adam_update``, ...
and ``mx.nd.sparse.adagrad_update``, on the update rules' ``optim_<rule>`` kernels.

Each takes MXNet's arguments (weight, gradient and states as NDArrays, then the operator's
parameters by keyword; an unknown keyword raises ``MXNetError``). The states are updated in
place; the new weight goes to ``out`` (``out=weight``: in place, as MXNet's optimizers call
them), or to a new array when ``out`` is not given (the weight is then left unchanged).
A row_sparse gradient updates only its rows (lazily) where MXNet's operator does; the rules are
in docs/optimizers.md. Storage types MXNet has no kernel for run on dense copies with a
``StorageFallbackWarning`` (csr arrays; row_sparse gradients of rmsprop, signum, nag, ...).
"""

from __future__ import annotations

import math
from typing import Any

from ..errors import SparsegenError
from ..params import flag, integer, real
from .dispatch import check_out, deliver
from .ndarray import NDArray
from .optim_run import Lazy, never, run

__all__ = [
    "adam_update", "ftml_update", "ftrl_update", "nag_mom_update", "rmsprop_update",
    "rmspropalex_update", "sgd_mom_update", "sgd_update", "signsgd_update", "signum_update",
]

SPARSE_NAMES = ("adagrad_update", "adam_update", "ftrl_update", "sgd_mom_update", "sgd_update")
"""The updates ``mx.nd.sparse`` also has (MXNet's sparse namespace)."""


def _check_kwargs(op: str, kwargs: dict[str, Any]) -> None:
    if kwargs:
        raise SparsegenError(f"{op}: Cannot find argument {next(iter(kwargs))!r} (the "
                             f"operator's arguments are in help(mx.nd.{op}))")


def _lr(op: str, lr: Any, low_open: bool = False) -> float:
    if lr is None:
        raise SparsegenError(f"Required parameter lr of float is not presented, in operator "
                             f"{op}")
    return real(lr, f"{op}: lr", low=0.0, low_open=low_open)


def _bound(value: Any, name: str) -> float:
    """A clip bound: ``<= 0`` turns clipping off (MXNet's rule), which the kernels read as inf."""
    bound = real(value, name, allow_inf=True)
    return bound if bound > 0 else math.inf


def _common(op: str, wd: Any, rescale_grad: Any, clip_gradient: Any) -> dict[str, float]:
    return {"wd": real(wd, f"{op}: wd"),
            "rescale_grad": real(rescale_grad, f"{op}: rescale_grad"),
            "clip_gradient": _bound(clip_gradient, f"{op}: clip_gradient")}


def _states_like_weight(lazy_update: Any, op: str) -> Lazy:
    """MXNet's rule for sgd, sgd_mom and adam: lazy when ``lazy_update`` and every state is
    stored like the weight."""
    lazy = flag(lazy_update, f"{op}: lazy_update")
    return lambda weight, states: lazy and all(s.stype == weight.stype for s in states)


def _all_row_sparse(weight: NDArray, states: tuple[NDArray, ...]) -> bool:
    """ftrl's rule: lazy when the weight and every state are row_sparse."""
    return weight.stype == "row_sparse" and all(s.stype == "row_sparse" for s in states)


def _update(op: str, rule: str, weight: Any, grad: Any, states: tuple[Any, ...],
            hyper: dict[str, float], lazy: Lazy, out: Any) -> NDArray:
    """Run one update; the new weight goes to ``out`` (``weight`` itself, another array, or a
    new array when ``None``)."""
    if not isinstance(weight, NDArray):
        raise SparsegenError(f"{op}: weight must be an NDArray, got {type(weight).__name__}")
    check_out(op, out, weight.shape, weight.dtype, weight.context)  # before any state changes
    target = weight if out is weight else weight.copy()
    run(op, rule, target, grad, states, hyper, lazy)
    if out is None or out is weight:
        return target
    return deliver(op, target._storage, target.stype, weight.context, (weight, grad, *states),
                   out)


def sgd_update(weight: NDArray, grad: NDArray, lr: float | None = None, wd: float = 0.0,
               rescale_grad: float = 1.0, clip_gradient: float = -1.0, lazy_update: bool = True,
               out: NDArray | None = None, name: str | None = None, **kwargs: Any) -> NDArray:
    """MXNet's ``sgd_update``: ``weight = (1 - lr*wd)*weight - lr*clip(rescale_grad*grad)``."""
    _check_kwargs("sgd_update", kwargs)
    hyper = {"lr": _lr("sgd_update", lr), **_common("sgd_update", wd, rescale_grad, clip_gradient)}
    return _update("sgd_update", "sgd", weight, grad, (), hyper,
                   _states_like_weight(lazy_update, "sgd_update"), out)


def sgd_mom_update(weight: NDArray, grad: NDArray, mom: NDArray, lr: float | None = None,
                   momentum: float = 0.0, wd: float = 0.0, rescale_grad: float = 1.0,
                   clip_gradient: float = -1.0, lazy_update: bool = True,
                   out: NDArray | None = None, name: str | None = None,
                   **kwargs: Any) -> NDArray:
    """MXNet's ``sgd_mom_update``: ``mom = momentum*mom - lr*wd*weight -
    lr*clip(rescale_grad*grad); weight += mom``."""
    op = "sgd_mom_update"
    _check_kwargs(op, kwargs)
    hyper = {"lr": _lr(op, lr), "momentum": real(momentum, f"{op}: momentum"),
             **_common(op, wd, rescale_grad, clip_gradient)}
    return _update(op, "sgd_mom", weight, grad, (mom,), hyper,
                   _states_like_weight(lazy_update, op), out)


def adam_update(weight: NDArray, grad: NDArray, mean: NDArray, var: NDArray,
                lr: float | None = None, beta1: float = 0.9, beta2: float = 0.999,
                epsilon: float = 1e-8, wd: float = 0.0, rescale_grad: float = 1.0,
                clip_gradient: float = -1.0, lazy_update: bool = True,
                out: NDArray | None = None, name: str | None = None, **kwargs: Any) -> NDArray:
    """MXNet's ``adam_update`` (no bias correction: the caller folds it into ``lr``)."""
    op = "adam_update"
    _check_kwargs(op, kwargs)
    hyper = {"lr": _lr(op, lr), "beta1": real(beta1, f"{op}: beta1"),
             "beta2": real(beta2, f"{op}: beta2"), "epsilon": real(epsilon, f"{op}: epsilon"),
             **_common(op, wd, rescale_grad, clip_gradient)}
    return _update(op, "adam", weight, grad, (mean, var), hyper,
                   _states_like_weight(lazy_update, op), out)


def ftrl_update(weight: NDArray, grad: NDArray, z: NDArray, n: NDArray, lr: float | None = None,
                lamda1: float = 0.01, beta: float = 1.0, wd: float = 0.0,
                rescale_grad: float = 1.0, clip_gradient: float = -1.0,
                out: NDArray | None = None, name: str | None = None, **kwargs: Any) -> NDArray:
    """MXNet's ``ftrl_update`` (lazy when weight, ``z`` and ``n`` are all row_sparse)."""
    op = "ftrl_update"
    _check_kwargs(op, kwargs)
    hyper = {"lr": _lr(op, lr, low_open=True), "lamda1": real(lamda1, f"{op}: lamda1"),
             "beta": real(beta, f"{op}: beta"), **_common(op, wd, rescale_grad, clip_gradient)}
    return _update(op, "ftrl", weight, grad, (z, n), hyper, _all_row_sparse, out)


def adagrad_update(weight: NDArray, grad: NDArray, history: NDArray, lr: float | None = None,
                   epsilon: float = 1e-7, wd: float = 0.0, rescale_grad: float = 1.0,
                   clip_gradient: float = -1.0, out: NDArray | None = None,
                   name: str | None = None, **kwargs: Any) -> NDArray:
    """MXNet's ``sparse.adagrad_update``: a row_sparse gradient's rows only, ``wd`` 0."""
    op = "adagrad_update"
    _check_kwargs(op, kwargs)
    hyper = {"lr": _lr(op, lr), "epsilon": real(epsilon, f"{op}: epsilon"),
             **_common(op, wd, rescale_grad, clip_gradient)}
    if not isinstance(grad, NDArray) or grad.stype != "row_sparse":
        raise SparsegenError(f"{op}: grad must be a row_sparse NDArray (MXNet's sparse AdaGrad "
                             f"has no other kernel), got {getattr(grad, 'stype', type(grad))}")
    if hyper["wd"] != 0:
        raise SparsegenError(f"{op}: wd must be 0 (MXNet's sparse AdaGrad has no weight "
                             f"decay), got {wd}")
    return _update(op, "adagrad", weight, grad, (history,), hyper, lambda w, s: True, out)


def rmsprop_update(weight: NDArray, grad: NDArray, n: NDArray, lr: float | None = None,
                   gamma1: float = 0.95, epsilon: float = 1e-8, wd: float = 0.0,
                   rescale_grad: float = 1.0, clip_gradient: float = -1.0,
                   clip_weights: float = -1.0, out: NDArray | None = None,
                   name: str | None = None, **kwargs: Any) -> NDArray:
    """MXNet's ``rmsprop_update``: ``n = (1-gamma1)*g*g + gamma1*n;
    weight -= lr*g/sqrt(n + epsilon)`` with ``g = clip(rescale_grad*grad + wd*weight)``."""
    op = "rmsprop_update"
    _check_kwargs(op, kwargs)
    hyper = {"lr": _lr(op, lr), "gamma1": real(gamma1, f"{op}: gamma1"),
             "epsilon": real(epsilon, f"{op}: epsilon"),
             **_common(op, wd, rescale_grad, clip_gradient),
             "clip_weights": _bound(clip_weights, f"{op}: clip_weights")}
    return _update(op, "rmsprop", weight, grad, (n,), hyper, never, out)


def rmspropalex_update(weight: NDArray, grad: NDArray, n: NDArray, g: NDArray, delta: NDArray,
                       lr: float | None = None, gamma1: float = 0.95, gamma2: float = 0.9,
                       epsilon: float = 1e-8, wd: float = 0.0, rescale_grad: float = 1.0,
                       clip_gradient: float = -1.0, clip_weights: float = -1.0,
                       out: NDArray | None = None, name: str | None = None,
                       **kwargs: Any) -> NDArray:
    """MXNet's ``rmspropalex_update`` (centered RMSProp, Graves 2013)."""
    op = "rmspropalex_update"
    _check_kwargs(op, kwargs)
    hyper = {"lr": _lr(op, lr), "gamma1": real(gamma1, f"{op}: gamma1"),
             "gamma2": real(gamma2, f"{op}: gamma2"), "epsilon": real(epsilon, f"{op}: epsilon"),
             **_common(op, wd, rescale_grad, clip_gradient),
             "clip_weights": _bound(clip_weights, f"{op}: clip_weights")}
    return _update(op, "rmspropalex", weight, grad, (n, g, delta), hyper, never, out)


def signsgd_update(weight: NDArray, grad: NDArray, lr: float | None = None, wd: float = 0.0,
                   rescale_grad: float = 1.0, clip_gradient: float = -1.0,
                   out: NDArray | None = None, name: str | None = None,
                   **kwargs: Any) -> NDArray:
    """MXNet's ``signsgd_update``: ``weight = (1 - lr*wd)*weight - lr*sign(grad)``
    (``rescale_grad`` and ``clip_gradient`` are checked and, as in MXNet, unused)."""
    op = "signsgd_update"
    _check_kwargs(op, kwargs)
    hyper = {"lr": _lr(op, lr), "wd": _common(op, wd, rescale_grad, clip_gradient)["wd"]}
    return _update(op, "signsgd", weight, grad, (), hyper, never, out)


def signum_update(weight: NDArray, grad: NDArray, mom: NDArray, lr: float | None = None,
                  momentum: float = 0.0, wd: float = 0.0, rescale_grad: float = 1.0,
                  clip_gradient: float = -1.0, wd_lh: float = 0.0, out: NDArray | None = None,
                  name: str | None = None, **kwargs: Any) -> NDArray:
    """MXNet's ``signum_update``: ``mom = momentum*mom - (1-momentum)*(wd*weight +
    clip(rescale_grad*grad)); weight = (1 - lr*wd_lh)*weight + lr*sign(mom)``."""
    op = "signum_update"
    _check_kwargs(op, kwargs)
    hyper = {"lr": _lr(op, lr), "momentum": real(momentum, f"{op}: momentum"),
             **_common(op, wd, rescale_grad, clip_gradient), "wd_lh": real(wd_lh, f"{op}: wd_lh")}
    return _update(op, "signum", weight, grad, (mom,), hyper, never, out)


def nag_mom_update(weight: NDArray, grad: NDArray, mom: NDArray, lr: float | None = None,
                   momentum: float = 0.0, wd: float = 0.0, rescale_grad: float = 1.0,
                   clip_gradient: float = -1.0, out: NDArray | None = None,
                   name: str | None = None, **kwargs: Any) -> NDArray:
    """MXNet's ``nag_mom_update``: ``g = clip(rescale_grad*grad) + wd*weight;
    mom = momentum*mom - lr*g; weight += momentum*mom - lr*g``."""
    op = "nag_mom_update"
    _check_kwargs(op, kwargs)
    hyper = {"lr": _lr(op, lr), "momentum": real(momentum, f"{op}: momentum"),
             **_common(op, wd, rescale_grad, clip_gradient)}
    return _update(op, "nag_mom", weight, grad, (mom,), hyper, never, out)


def ftml_scales(lr: float, beta1: float, beta2: float, t: int) -> dict[str, float]:
    """The ftml rule's schedule at step ``t``: ``d_scale = (1 - beta1**t) / lr`` and
    ``v_scale = 1 / (1 - beta2**t)``."""
    return {"d_scale": (1.0 - beta1**t) / lr, "v_scale": 1.0 / (1.0 - beta2**t)}


def ftml_update(weight: NDArray, grad: NDArray, d: NDArray, v: NDArray, z: NDArray,
                lr: float | None = None, beta1: float = 0.6, beta2: float = 0.999,
                epsilon: float = 1e-8, t: int | None = None, wd: float = 0.0,
                rescale_grad: float = 1.0, clip_grad: float = -1.0,
                out: NDArray | None = None, name: str | None = None, **kwargs: Any) -> NDArray:
    """MXNet's ``ftml_update`` at step ``t`` (>= 1): ``g = clip(rescale_grad*grad + wd*weight);
    v = beta2*v + (1-beta2)*g*g; d_t = (1 - beta1**t) / lr * (sqrt(v / (1 - beta2**t)) +
    epsilon); z = beta1*z + (1-beta1)*g - (d_t - beta1*d)*weight; d = d_t; weight = -z / d_t``
    (``clip_grad < 0``: no clipping)."""
    op = "ftml_update"
    _check_kwargs(op, kwargs)
    if t is None:
        raise SparsegenError(f"Required parameter t of int is not presented, in operator {op}")
    step = integer(t, f"{op}: t", low=1)
    bound = real(clip_grad, f"{op}: clip_grad", allow_inf=True)
    hyper = {"beta1": real(beta1, f"{op}: beta1"), "beta2": real(beta2, f"{op}: beta2"),
             "epsilon": real(epsilon, f"{op}: epsilon"), "wd": real(wd, f"{op}: wd"),
             "rescale_grad": real(rescale_grad, f"{op}: rescale_grad"),
             "clip_gradient": bound if bound >= 0 else math.inf}
    hyper.update(ftml_scales(_lr(op, lr, low_open=True), hyper["beta1"], hyper["beta2"], step))
    return _update(op, "ftml", weight, grad, (d, v, z), hyper, never, out)


def group_adagrad_update(weight: NDArray, grad: NDArray, history: NDArray,
                         lr: float | None = None, rescale_grad: float = 1.0,
                         clip_gradient: float = -1.0, epsilon: float = 1e-5,
                         out: NDArray | None = None, name: str | None = None,
                         **kwargs: Any) -> NDArray:
    """MXNet's ``contrib.group_adagrad_update``: ``g = clip(rescale_grad*grad);
    history += mean(g*g over the row); weight -= lr * g / sqrt(history + epsilon)``, with
    ``history`` of shape ``(rows, 1)``; a row_sparse gradient updates only its rows."""
    op = "group_adagrad_update"
    _check_kwargs(op, kwargs)
    hyper = {"lr": _lr(op, lr), "epsilon": real(epsilon, f"{op}: epsilon"),
             **_common(op, 0.0, rescale_grad, clip_gradient)}
    del hyper["wd"]
    rows = weight.shape[0] if isinstance(weight, NDArray) and weight.shape else 0
    if not isinstance(history, NDArray) or history.shape != (rows, 1):
        raise SparsegenError(f"{op}: history must be an NDArray of shape ({rows}, 1), got "
                             f"{getattr(history, 'shape', type(history).__name__)}")
    return _update(op, "group_adagrad", weight, grad, (history.reshape((rows,)),), hyper,
                   lambda w, s: True, out)
