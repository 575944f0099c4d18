"""MXNet 1.9.1's mixed-precision and two-phase operator-level updates: ``mp_sgd_update``,
``mp_sgd_mom_update``, ``mp_nag_mom_update``, ``lamb_update_phase1`` / ``_phase2`` and their
``mp_`` forms, and contrib's ``adamw_update`` / ``mp_adamw_update``, on the update rules'
``optim_<rule>`` kernels (``sgd``, ``sgd_mom``, ``nag_mom``, ``lamb``, ``adamw``).

An ``mp_`` update takes the float32 master copy ``weight32`` after the states: the rule runs on
``weight32`` (and float32 states) with the gradient widened to float32, and the new weight is
``weight32`` rounded to the weight's dtype, written to ``out`` as the other updates do
(optim_ops.py). docs/optimizers.md lists the rules and where sparsegen differs from MXNet.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import SparsegenError
from ..params import flag, integer, real
from .dispatch import check_out, deliver
from .ndarray import NDArray
from .optim_ops import _bound, _check_kwargs, _common, _lr, _states_like_weight, _update
from .optim_run import Lazy, never, run
from .sparse import zeros
from .storage import assign

__all__ = [
    "lamb_update_phase1", "lamb_update_phase2", "mp_lamb_update_phase1", "mp_lamb_update_phase2",
    "mp_nag_mom_update", "mp_sgd_mom_update", "mp_sgd_update",
]


def _array(op: str, value: Any, name: str) -> NDArray:
    if not isinstance(value, NDArray):
        raise SparsegenError(f"{op}: {name} must be an NDArray, got {type(value).__name__}")
    return value


def _master(op: str, weight: Any, weight32: Any) -> NDArray:
    """``weight32`` checked as the float32 master copy of ``weight`` (same shape)."""
    _array(op, weight, "weight")
    _array(op, weight32, "weight32")
    if weight32.dtype != np.float32:
        raise SparsegenError(f"{op}: weight32 must be float32 (the master copy), got "
                             f"{np.dtype(weight32.dtype).name}")
    if weight32.shape != weight.shape:
        raise SparsegenError(f"{op}: weight32 has shape {weight32.shape}, the weight has shape "
                             f"{weight.shape}")
    return weight32


def _wide(op: str, array: Any, name: str) -> NDArray:
    """``array`` as float32 (the gradient of a master-copy update)."""
    _array(op, array, name)
    return array if array.dtype == np.float32 else array.astype(np.float32)


def _write(op: str, value: NDArray, weight: NDArray, sources: tuple[NDArray, ...],
           out: Any) -> NDArray:
    """The new weight ``value`` (already in the weight's dtype) to ``out``: the weight itself in
    place, a new array when ``None``, else ``out`` in its storage type."""
    if out is weight:
        assign(weight, value)
        return weight
    if out is None:
        return value
    return deliver(op, value._storage, value.stype, weight.context, sources, out)


def _mp_update(op: str, rule: str, weight: Any, grad: Any, states: tuple[Any, ...],
               weight32: Any, hyper: dict[str, float], lazy: Lazy, out: Any) -> NDArray:
    """Run ``rule`` on the master copy ``weight32`` (float32 gradient and states), then round it
    into the new weight."""
    master = _master(op, weight, weight32)
    _array(op, grad, "grad")
    if grad.dtype != weight.dtype:
        raise SparsegenError(f"{op}: grad has dtype {np.dtype(grad.dtype).name}, the weight has "
                             f"dtype {np.dtype(weight.dtype).name}")
    check_out(op, out, weight.shape, weight.dtype, weight.context)  # before any state changes
    run(op, rule, master, _wide(op, grad, "grad"), states, hyper, lazy)
    return _write(op, master.astype(weight.dtype), weight, (weight, grad, *states, master), out)


def mp_sgd_update(weight: NDArray, grad: NDArray, weight32: NDArray, lr: float | None = None,
                  wd: float = 0.0, rescale_grad: float = 1.0, clip_gradient: float = -1.0,
                  lazy_update: bool = True, out: NDArray | None = None, name: str | None = None,
                  **kwargs: Any) -> NDArray:
    """MXNet's ``mp_sgd_update``: ``sgd_update`` of the float32 master ``weight32``, rounded
    into the weight."""
    op = "mp_sgd_update"
    _check_kwargs(op, kwargs)
    hyper = {"lr": _lr(op, lr), **_common(op, wd, rescale_grad, clip_gradient)}
    return _mp_update(op, "sgd", weight, grad, (), weight32, hyper,
                      _states_like_weight(lazy_update, op), out)


def mp_sgd_mom_update(weight: NDArray, grad: NDArray, mom: NDArray, weight32: NDArray,
                      lr: float | None = None, momentum: float = 0.0, wd: float = 0.0,
                      rescale_grad: float = 1.0, clip_gradient: float = -1.0,
                      lazy_update: bool = True, out: NDArray | None = None,
                      name: str | None = None, **kwargs: Any) -> NDArray:
    """MXNet's ``mp_sgd_mom_update``: ``sgd_mom_update`` of ``weight32`` and the float32
    ``mom``, rounded into the weight."""
    op = "mp_sgd_mom_update"
    _check_kwargs(op, kwargs)
    hyper = {"lr": _lr(op, lr), "momentum": real(momentum, f"{op}: momentum"),
             **_common(op, wd, rescale_grad, clip_gradient)}
    return _mp_update(op, "sgd_mom", weight, grad, (mom,), weight32, hyper,
                      _states_like_weight(lazy_update, op), out)


def mp_nag_mom_update(weight: NDArray, grad: NDArray, mom: NDArray, weight32: NDArray,
                      lr: float | None = None, momentum: float = 0.0, wd: float = 0.0,
                      rescale_grad: float = 1.0, clip_gradient: float = -1.0,
                      out: NDArray | None = None, name: str | None = None,
                      **kwargs: Any) -> NDArray:
    """MXNet's ``mp_nag_mom_update``: ``nag_mom_update`` of ``weight32`` and the float32
    ``mom``, rounded into the weight."""
    op = "mp_nag_mom_update"
    _check_kwargs(op, kwargs)
    hyper = {"lr": _lr(op, lr), "momentum": real(momentum, f"{op}: momentum"),
             **_common(op, wd, rescale_grad, clip_gradient)}
    return _mp_update(op, "nag_mom", weight, grad, (mom,), weight32, hyper, never, out)


def _phase1_hyper(op: str, beta1: Any, beta2: Any, epsilon: Any, t: Any, bias_correction: Any,
                  wd: Any, rescale_grad: Any, clip_gradient: Any) -> dict[str, float]:
    """The ``lamb`` rule's values of MXNet's phase-1 arguments (bias corrections at step t)."""
    if t is None:
        raise SparsegenError(f"Required parameter t of int is not presented, in operator {op}")
    if wd is None:
        raise SparsegenError(f"Required parameter wd of float is not presented, in operator {op}")
    step = integer(t, f"{op}: t", low=1)
    b1 = real(beta1, f"{op}: beta1", low=0.0, high=1.0, high_open=True)
    b2 = real(beta2, f"{op}: beta2", low=0.0, high=1.0, high_open=True)
    corrected = flag(bias_correction, f"{op}: bias_correction")
    return {"beta1": b1, "beta2": b2, "epsilon": real(epsilon, f"{op}: epsilon"),
            **_common(op, wd, rescale_grad, clip_gradient),
            "mean_scale": 1.0 / (1.0 - float(np.float32(b1))**step) if corrected else 1.0,
            "var_scale": 1.0 / (1.0 - float(np.float32(b2))**step) if corrected else 1.0}


def _phase1(op: str, weight: NDArray, grad: NDArray, mean: Any, var: Any,
            hyper: dict[str, float], out: Any) -> NDArray:
    """Run the ``lamb`` rule (the weight is only read) and give its step ``g``."""
    step = zeros("default", weight.shape, weight.context, weight.dtype)
    check_out(op, out, weight.shape, weight.dtype, weight.context)
    run(op, "lamb", weight, grad, (mean, var, step), hyper, never)
    if out is None:
        return step
    return deliver(op, step._storage, "default", weight.context, (weight, grad, mean, var), out)


def lamb_update_phase1(weight: NDArray, grad: NDArray, mean: NDArray, var: NDArray,
                       beta1: float = 0.9, beta2: float = 0.999, epsilon: float = 1e-6,
                       t: int | None = None, bias_correction: bool = True,
                       wd: float | None = None, rescale_grad: float = 1.0,
                       clip_gradient: float = -1.0, out: NDArray | None = None,
                       name: str | None = None, **kwargs: Any) -> NDArray:
    """MXNet's ``lamb_update_phase1``: ``g = clip(rescale_grad*grad)``; Adam's moments in
    place; returns ``mean_hat / (sqrt(var_hat) + epsilon) + wd*weight`` (bias-corrected at step
    ``t`` when ``bias_correction``)."""
    op = "lamb_update_phase1"
    _check_kwargs(op, kwargs)
    hyper = _phase1_hyper(op, beta1, beta2, epsilon, t, bias_correction, wd, rescale_grad,
                          clip_gradient)
    return _phase1(op, _array(op, weight, "weight"), grad, mean, var, hyper, out)


def mp_lamb_update_phase1(weight: NDArray, grad: NDArray, mean: NDArray, var: NDArray,
                          weight32: NDArray, beta1: float = 0.9, beta2: float = 0.999,
                          epsilon: float = 1e-6, t: int | None = None,
                          bias_correction: bool = True, wd: float | None = None,
                          rescale_grad: float = 1.0, clip_gradient: float = -1.0,
                          out: NDArray | None = None, name: str | None = None,
                          **kwargs: Any) -> NDArray:
    """MXNet's ``mp_lamb_update_phase1``: ``lamb_update_phase1`` of the float32 master
    ``weight32`` (float32 moments and step)."""
    op = "mp_lamb_update_phase1"
    _check_kwargs(op, kwargs)
    hyper = _phase1_hyper(op, beta1, beta2, epsilon, t, bias_correction, wd, rescale_grad,
                          clip_gradient)
    master = _master(op, weight, weight32)
    return _phase1(op, master, _wide(op, grad, "grad"), mean, var, hyper, out)


def trust_ratio(op: str, r1: Any, r2: Any, lower_bound: Any, upper_bound: Any) -> float:
    """LAMB's phase-2 factor ``r1 / r2`` of the norms ``r1`` (bounded below by ``lower_bound``
    and above by ``upper_bound`` where those are ``>= 0``, as MXNet's kernel) and ``r2``; 1
    where either is 0. The norms are one-element arrays, read to the host."""
    norms = []
    for name, value in (("r1", r1), ("r2", r2)):
        if not isinstance(value, NDArray) or value.size != 1:
            raise SparsegenError(f"{op}: {name} must be a one-element NDArray (a norm), got "
                                 f"{getattr(value, 'shape', type(value).__name__)}")
        norms.append(float(value.asscalar()))
    low = real(lower_bound, f"{op}: lower_bound", allow_inf=True)
    high = real(upper_bound, f"{op}: upper_bound", allow_inf=True)
    first, second = norms
    first = max(first, low) if low >= 0 else first
    first = min(first, high) if high >= 0 else first
    return 1.0 if first == 0 or second == 0 else first / second


def _phase2(op: str, weight: NDArray, g: Any, lr: float, out: Any) -> NDArray:
    """``weight - lr*g`` (the ``sgd`` rule) into ``out``."""
    return _update(op, "sgd", weight, g, (), {"lr": lr, "wd": 0.0, "rescale_grad": 1.0,
                                               "clip_gradient": math.inf}, never, out)


def lamb_update_phase2(weight: NDArray, g: NDArray, r1: NDArray, r2: NDArray,
                       lr: float | None = None, lower_bound: float = -1.0,
                       upper_bound: float = -1.0, out: NDArray | None = None,
                       name: str | None = None, **kwargs: Any) -> NDArray:
    """MXNet's ``lamb_update_phase2``: ``weight - lr * r1/r2 * g`` (``trust_ratio``)."""
    op = "lamb_update_phase2"
    _check_kwargs(op, kwargs)
    rate = _lr(op, lr) * trust_ratio(op, r1, r2, lower_bound, upper_bound)
    return _phase2(op, weight, g, rate, out)


def mp_lamb_update_phase2(weight: NDArray, g: NDArray, r1: NDArray, r2: NDArray,
                          weight32: NDArray, lr: float | None = None, lower_bound: float = -1.0,
                          upper_bound: float = -1.0, out: NDArray | None = None,
                          name: str | None = None, **kwargs: Any) -> NDArray:
    """MXNet's ``mp_lamb_update_phase2``: ``weight32 -= lr * r1/r2 * g``, rounded into the
    weight."""
    op = "mp_lamb_update_phase2"
    _check_kwargs(op, kwargs)
    rate = _lr(op, lr) * trust_ratio(op, r1, r2, lower_bound, upper_bound)
    master = _master(op, weight, weight32)
    check_out(op, out, weight.shape, weight.dtype, weight.context)
    _phase2(op, master, _wide(op, g, "g"), rate, master)
    return _write(op, master.astype(weight.dtype), weight, (weight, g, master), out)


def _rescale(op: str, rescale_grad: Any) -> float:
    """AdamW's ``rescale_grad``: a number or a one-element NDArray (read to the host, as MXNet
    reads it to decide whether to skip)."""
    if isinstance(rescale_grad, NDArray):
        if rescale_grad.size != 1:
            raise SparsegenError(f"{op}: rescale_grad must be a number or a one-element NDArray, "
                                 f"got shape {rescale_grad.shape}")
        return float(rescale_grad.asscalar())
    if isinstance(rescale_grad, float) and math.isnan(rescale_grad):
        return rescale_grad  # skips the update, as MXNet
    return real(rescale_grad, f"{op}: rescale_grad", allow_inf=True)


def _adamw_hyper(op: str, lr: Any, eta: Any, beta1: Any, beta2: Any, epsilon: Any, wd: Any,
                 clip_gradient: Any) -> dict[str, float]:
    if eta is None:
        raise SparsegenError(f"Required parameter eta of float is not presented, in operator {op}")
    return {"lr": _lr(op, lr), "eta": real(eta, f"{op}: eta", low=0.0),
            "beta1": real(beta1, f"{op}: beta1"), "beta2": real(beta2, f"{op}: beta2"),
            "epsilon": real(epsilon, f"{op}: epsilon"), "wd": real(wd, f"{op}: wd"),
            "clip_gradient": _bound(clip_gradient, f"{op}: clip_gradient")}


def _skipped(scale: float) -> bool:
    """MXNet's AdamW skips its update when ``rescale_grad`` is nan, inf or 0."""
    return not math.isfinite(scale) or scale == 0


def adamw_update(weight: NDArray, grad: NDArray, mean: NDArray, var: NDArray,
                 rescale_grad: NDArray | float, lr: float | None = None,
                 eta: float | None = None, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-8, wd: float = 0.0, clip_gradient: float = -1.0,
                 out: NDArray | None = None, name: str | None = None, **kwargs: Any) -> NDArray:
    """MXNet's contrib ``adamw_update``: ``g = clip(rescale_grad*grad)``; Adam's moments;
    ``weight -= eta * (lr * mean / (sqrt(var) + epsilon) + wd*weight)``; skipped (nothing
    written) when ``rescale_grad`` is nan, inf or 0."""
    op = "adamw_update"
    _check_kwargs(op, kwargs)
    hyper = _adamw_hyper(op, lr, eta, beta1, beta2, epsilon, wd, clip_gradient)
    scale = _rescale(op, rescale_grad)
    if _skipped(scale):
        _array(op, weight, "weight")
        check_out(op, out, weight.shape, weight.dtype, weight.context)
        return out if out is not None else weight.copy()
    return _update(op, "adamw", weight, grad, (mean, var), {**hyper, "rescale_grad": scale},
                   never, out)


def mp_adamw_update(weight: NDArray, grad: NDArray, mean: NDArray, var: NDArray,
                    weight32: NDArray, rescale_grad: NDArray | float, lr: float | None = None,
                    eta: float | None = None, beta1: float = 0.9, beta2: float = 0.999,
                    epsilon: float = 1e-8, wd: float = 0.0, clip_gradient: float = -1.0,
                    out: NDArray | None = None, name: str | None = None,
                    **kwargs: Any) -> NDArray:
    """MXNet's contrib ``mp_adamw_update``: ``adamw_update`` of the float32 master
    ``weight32`` (float32 moments), rounded into the weight."""
    op = "mp_adamw_update"
    _check_kwargs(op, kwargs)
    hyper = _adamw_hyper(op, lr, eta, beta1, beta2, epsilon, wd, clip_gradient)
    scale = _rescale(op, rescale_grad)
    if _skipped(scale):
        _master(op, weight, weight32)
        check_out(op, out, weight.shape, weight.dtype, weight.context)
        return out if out is not None else weight.copy()
    return _mp_update(op, "adamw", weight, grad, (mean, var), weight32,
                      {**hyper, "rescale_grad": scale}, never, out)
