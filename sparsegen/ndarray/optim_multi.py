"""MXNet 1.9.1's multi-tensor updates: ``multi_sgd_update``, ``multi_sgd_mom_update``,
``multi_mp_sgd_update``, ``multi_mp_sgd_mom_update``, their ``preloaded_`` forms (learning rates
and weight decays as arrays), ``multi_sum_sq``, ``multi_lars`` and the internal
``_multi_adamw_update``, ``_multi_mp_adamw_update``, ``_multi_lamb_update``,
``_multi_mp_lamb_update`` (``mx.nd.contrib``'s list forms are in contrib.py).

The arrays come positionally, one group per weight (``weight, grad, *states``), ``num_weights``
groups; each group runs the single update (optim_ops.py, optim_mp.py) on its rule's kernel.
Every group's arrays, outputs and values are checked before the first one is updated. The
result is the list of new weights (one array when ``num_weights`` is 1), as MXNet's.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..errors import SparsegenError
from ..params import integer, items, real
from . import elemwise, reduce
from .arith import where
from .dispatch import check_out, deliver
from .ndarray import NDArray
from .optim_mp import (_master, adamw_update, lamb_update_phase1, lamb_update_phase2,
                       mp_adamw_update, mp_lamb_update_phase1, mp_lamb_update_phase2,
                       mp_sgd_mom_update, mp_sgd_update)
from .optim_ops import _check_kwargs, sgd_mom_update, sgd_update
from .shape import concat

__all__ = [
    "multi_lars", "multi_mp_sgd_mom_update", "multi_mp_sgd_update", "multi_sgd_mom_update",
    "multi_sgd_update", "multi_sum_sq", "preloaded_multi_mp_sgd_mom_update",
    "preloaded_multi_mp_sgd_update", "preloaded_multi_sgd_mom_update",
    "preloaded_multi_sgd_update",
]
INTERNAL = ("_multi_adamw_update", "_multi_lamb_update", "_multi_mp_adamw_update",
            "_multi_mp_lamb_update")
"""The updates MXNet registers as internal ops (``mx.nd._internal``)."""


def groups(op: str, data: Sequence[Any], size: int, count: Any, extra: int = 0,
           count_name: str = "num_weights") -> list[tuple[NDArray, ...]]:
    """``data`` split into ``count`` groups of ``size`` arrays (after which ``extra`` more
    arrays follow), each an NDArray of the group's first array's shape."""
    number = integer(count, f"{op}: {count_name}", low=1)
    if len(data) != number * size + extra:
        raise SparsegenError(f"{op}: expected {number * size + extra} arrays ({number} groups of "
                             f"{size}{f' and {extra} more' if extra else ''}), got {len(data)}")
    for i, array in enumerate(data):
        if not isinstance(array, NDArray):
            raise SparsegenError(f"{op}: array {i} must be an NDArray, got "
                                 f"{type(array).__name__}")
    split = [tuple(data[k * size:(k + 1) * size]) for k in range(number)]
    for k, group in enumerate(split):
        for j, array in enumerate(group[1:], 1):
            if array.shape != group[0].shape:
                raise SparsegenError(f"{op}: array {k * size + j} has shape {array.shape}, its "
                                     f"weight (array {k * size}) has shape {group[0].shape}")
    return split


def check_dtypes(op: str, split: list[tuple[NDArray, ...]], master: bool) -> None:
    """Each group's dtypes as its update wants them (before any group runs): one dtype for
    the whole group, or with a ``master`` copy the gradient in the weight's dtype and the rest
    (states, ``weight32``) float32."""
    size = len(split[0]) if split else 0
    for k, group in enumerate(split):
        for j, array in enumerate(group[1:], 1):
            wanted = np.dtype(np.float32) if master and j >= 2 else np.dtype(group[0].dtype)
            if np.dtype(array.dtype) != wanted:
                raise SparsegenError(f"{op}: array {k * size + j} has dtype "
                                     f"{np.dtype(array.dtype).name}, expected {wanted.name}")


def per_weight(op: str, values: Any, number: int, name: str) -> list[float]:
    """A tuple of ``number`` reals (``lrs``, ``wds``, ``etas``), one per weight."""
    if values is None:
        raise SparsegenError(f"Required parameter {name} of tuple of <float> is not presented, "
                             f"in operator {op}")
    found = items(values)
    if len(found) != number:
        raise SparsegenError(f"{op}: {name} must have {number} values (one per weight), got "
                             f"{len(found)}")
    return [real(v, f"{op}: {name}[{i}]") for i, v in enumerate(found)]


def outputs(op: str, out: Any, weights: Sequence[NDArray]) -> list[Any]:
    """``out`` as one output (or ``None``) per weight, each checked against its weight."""
    if out is None:
        return [None] * len(weights)
    found = [out] if isinstance(out, NDArray) else list(out)
    if len(found) != len(weights):
        raise SparsegenError(f"{op}: out must hold {len(weights)} arrays (one per weight), got "
                             f"{len(found)}")
    for target, weight in zip(found, weights):
        check_out(op, target, weight.shape, weight.dtype, weight.context)
    return found


def _result(results: list[NDArray]) -> NDArray | list[NDArray]:
    return results[0] if len(results) == 1 else results


def run_groups(op: str, split: list[tuple[NDArray, ...]], out: Any,
               step: Callable[[int, tuple[NDArray, ...], Any], NDArray]) -> Any:
    """``step(k, group, out_k)`` for every group, once every output was checked."""
    targets = outputs(op, out, [group[0] for group in split])
    return _result([step(k, group, target) for k, (group, target) in
                    enumerate(zip(split, targets))])


def _scaling(op: str, rescale_grad: Any, clip_gradient: Any) -> dict[str, Any]:
    """``rescale_grad`` and ``clip_gradient`` checked, for each group's single update."""
    real(rescale_grad, f"{op}: rescale_grad")
    real(clip_gradient, f"{op}: clip_gradient", allow_inf=True)
    return {"rescale_grad": rescale_grad, "clip_gradient": clip_gradient}


def _sgd_family(op: str, data: Sequence[Any], size: int, lrs: Any, wds: Any,
                num_weights: Any, out: Any, kwargs: dict[str, Any], common: dict[str, Any],
                single: Callable[..., NDArray], extra: int = 0) -> Any:
    """One ``single`` update (sgd, sgd_mom, mp_ forms) per group of ``size`` arrays."""
    _check_kwargs(op, kwargs)
    split = groups(op, data, size, num_weights, extra)
    lr_list = per_weight(op, lrs, len(split), "lrs")
    wd_list = per_weight(op, wds, len(split), "wds")
    master = single in (mp_sgd_update, mp_sgd_mom_update)
    check_dtypes(op, split, master)
    for group in split:
        if master:
            _master(op, group[0], group[-1])
    return run_groups(op, split, out, lambda k, group, target: single(
        *group, lr=lr_list[k], wd=wd_list[k], lazy_update=False, out=target, **common))


def multi_sgd_update(*data: NDArray, lrs: Any = None, wds: Any = None, rescale_grad: float = 1.0,
                     clip_gradient: float = -1.0, num_weights: int = 1,
                     out: Any = None, name: str | None = None, **kwargs: Any) -> Any:
    """MXNet's ``multi_sgd_update``: ``sgd_update`` of each ``(weight, grad)`` pair with its
    ``lrs[i]`` and ``wds[i]``."""
    op = "multi_sgd_update"
    return _sgd_family(op, data, 2, lrs, wds, num_weights, out, kwargs,
                       _scaling(op, rescale_grad, clip_gradient), sgd_update)


def multi_sgd_mom_update(*data: NDArray, lrs: Any = None, wds: Any = None, momentum: float = 0.0,
                         rescale_grad: float = 1.0, clip_gradient: float = -1.0,
                         num_weights: int = 1, out: Any = None, name: str | None = None,
                         **kwargs: Any) -> Any:
    """MXNet's ``multi_sgd_mom_update``: ``sgd_mom_update`` of each ``(weight, grad, mom)``."""
    op = "multi_sgd_mom_update"
    common = {**_scaling(op, rescale_grad, clip_gradient), "momentum": momentum}
    return _sgd_family(op, data, 3, lrs, wds, num_weights, out, kwargs, common, sgd_mom_update)


def multi_mp_sgd_update(*data: NDArray, lrs: Any = None, wds: Any = None,
                        rescale_grad: float = 1.0, clip_gradient: float = -1.0,
                        num_weights: int = 1, out: Any = None, name: str | None = None,
                        **kwargs: Any) -> Any:
    """MXNet's ``multi_mp_sgd_update``: ``mp_sgd_update`` of each ``(weight, grad, weight32)``."""
    op = "multi_mp_sgd_update"
    return _sgd_family(op, data, 3, lrs, wds, num_weights, out, kwargs,
                       _scaling(op, rescale_grad, clip_gradient), mp_sgd_update)


def multi_mp_sgd_mom_update(*data: NDArray, lrs: Any = None, wds: Any = None,
                            momentum: float = 0.0, rescale_grad: float = 1.0,
                            clip_gradient: float = -1.0, num_weights: int = 1, out: Any = None,
                            name: str | None = None, **kwargs: Any) -> Any:
    """MXNet's ``multi_mp_sgd_mom_update``: ``mp_sgd_mom_update`` of each ``(weight, grad, mom,
    weight32)``."""
    op = "multi_mp_sgd_mom_update"
    common = {**_scaling(op, rescale_grad, clip_gradient), "momentum": momentum}
    return _sgd_family(op, data, 4, lrs, wds, num_weights, out, kwargs, common,
                       mp_sgd_mom_update)


def preloaded(op: str, data: Sequence[Any], num_weights: Any) -> tuple[list[Any], list[float],
                                                                       list[float]]:
    """The arrays before the last two, and the learning rates and weight decays those two
    arrays hold (``num_weights`` values each, read to the host: they become the kernels'
    scalar parameters)."""
    number = integer(num_weights, f"{op}: num_weights", low=1)
    if len(data) < 2:
        raise SparsegenError(f"{op}: the last two arrays must be the learning rates and weight "
                             f"decays, got {len(data)} arrays")
    values = []
    for name, array in (("lrs", data[-2]), ("wds", data[-1])):
        if not isinstance(array, NDArray) or array.shape != (number,):
            raise SparsegenError(f"{op}: {name} must be an NDArray of shape ({number},), got "
                                 f"{getattr(array, 'shape', type(array).__name__)}")
        values.append([float(v) for v in array.asnumpy()])
    return list(data[:-2]), values[0], values[1]


def preloaded_multi_sgd_update(*data: NDArray, rescale_grad: float = 1.0,
                               clip_gradient: float = -1.0, num_weights: int = 1,
                               out: Any = None, name: str | None = None, **kwargs: Any) -> Any:
    """MXNet's ``preloaded_multi_sgd_update``: ``multi_sgd_update`` with ``lrs`` and ``wds``
    given as the last two arrays."""
    op = "preloaded_multi_sgd_update"
    arrays, lrs, wds = preloaded(op, data, num_weights)
    return _sgd_family(op, arrays, 2, lrs, wds, num_weights, out, kwargs,
                       _scaling(op, rescale_grad, clip_gradient), sgd_update)


def preloaded_multi_sgd_mom_update(*data: NDArray, momentum: float = 0.0,
                                   rescale_grad: float = 1.0, clip_gradient: float = -1.0,
                                   num_weights: int = 1, out: Any = None,
                                   name: str | None = None, **kwargs: Any) -> Any:
    """MXNet's ``preloaded_multi_sgd_mom_update`` (``lrs``, ``wds`` as the last two arrays)."""
    op = "preloaded_multi_sgd_mom_update"
    arrays, lrs, wds = preloaded(op, data, num_weights)
    common = {**_scaling(op, rescale_grad, clip_gradient), "momentum": momentum}
    return _sgd_family(op, arrays, 3, lrs, wds, num_weights, out, kwargs, common,
                       sgd_mom_update)


def preloaded_multi_mp_sgd_update(*data: NDArray, rescale_grad: float = 1.0,
                                  clip_gradient: float = -1.0, num_weights: int = 1,
                                  out: Any = None, name: str | None = None,
                                  **kwargs: Any) -> Any:
    """MXNet's ``preloaded_multi_mp_sgd_update`` (``lrs``, ``wds`` as the last two arrays)."""
    op = "preloaded_multi_mp_sgd_update"
    arrays, lrs, wds = preloaded(op, data, num_weights)
    return _sgd_family(op, arrays, 3, lrs, wds, num_weights, out, kwargs,
                       _scaling(op, rescale_grad, clip_gradient), mp_sgd_update)


def preloaded_multi_mp_sgd_mom_update(*data: NDArray, momentum: float = 0.0,
                                      rescale_grad: float = 1.0, clip_gradient: float = -1.0,
                                      num_weights: int = 1, out: Any = None,
                                      name: str | None = None, **kwargs: Any) -> Any:
    """MXNet's ``preloaded_multi_mp_sgd_mom_update`` (``lrs``, ``wds`` as the last two
    arrays)."""
    op = "preloaded_multi_mp_sgd_mom_update"
    arrays, lrs, wds = preloaded(op, data, num_weights)
    common = {**_scaling(op, rescale_grad, clip_gradient), "momentum": momentum}
    return _sgd_family(op, arrays, 4, lrs, wds, num_weights, out, kwargs, common,
                       mp_sgd_mom_update)


def sum_sq(array: NDArray) -> NDArray:
    """The sum of squares of ``array``'s values as a float32 ``(1,)`` array: squared in its
    dtype, summed in float32 (MXNet's ``multi_sum_sq`` kernel)."""
    values = array if array.stype == "default" else array.data
    return reduce.sum(elemwise.square(values).astype(np.float32)).reshape((1,))


def multi_sum_sq(*data: NDArray, num_arrays: int = 1, out: NDArray | None = None,
                 name: str | None = None, **kwargs: Any) -> NDArray:
    """MXNet's ``multi_sum_sq``: the sum of squares of each array, a float32 array of shape
    ``(num_arrays,)``."""
    op = "multi_sum_sq"
    _check_kwargs(op, kwargs)
    split = groups(op, data, 1, num_arrays, count_name="num_arrays")
    dtypes = {np.dtype(group[0].dtype) for group in split}
    if len(dtypes) != 1 or next(iter(dtypes)).kind != "f":
        raise SparsegenError(f"{op}: the arrays must share one floating dtype, got "
                             f"{sorted(d.name for d in dtypes)}")
    first = split[0][0]
    check_out(op, out, (len(split),), np.float32, first.context)
    sums = [sum_sq(group[0]) for group in split]
    result = sums[0] if len(sums) == 1 else concat(*sums, dim=0)
    if out is None:
        return result
    return deliver(op, result._storage, "default", first.context, tuple(data), out)


def multi_lars(lrs: NDArray, weights_sum_sq: NDArray, grads_sum_sq: NDArray, wds: NDArray,
               eta: float | None = None, eps: float | None = None, rescale_grad: float = 1.0,
               out: NDArray | None = None, name: str | None = None, **kwargs: Any) -> NDArray:
    """MXNet's ``multi_lars``: ``lr * eta * |w| / (|g|*rescale_grad + wd*|w| + eps)`` per
    weight where both norms (square roots of the sums of squares) are positive, else ``lr``."""
    op = "multi_lars"
    _check_kwargs(op, kwargs)
    for what, value in (("eta", eta), ("eps", eps)):
        if value is None:
            raise SparsegenError(f"Required parameter {what} of float is not presented, in "
                                 f"operator {op}")
    eta_value, eps_value = real(eta, f"{op}: eta"), real(eps, f"{op}: eps")
    scale = real(rescale_grad, f"{op}: rescale_grad")
    arrays = (("lrs", lrs), ("weights_sum_sq", weights_sum_sq), ("grads_sum_sq", grads_sum_sq),
              ("wds", wds))
    for what, array in arrays:
        if not isinstance(array, NDArray) or array.ndim != 1 or array.dtype != np.float32:
            raise SparsegenError(f"{op}: {what} must be a 1-D float32 NDArray, got "
                                 f"{getattr(array, 'shape', type(array).__name__)} "
                                 f"{getattr(array, 'dtype', '')}")
        if array.shape != lrs.shape:
            raise SparsegenError(f"{op}: {what} has shape {array.shape}, lrs has {lrs.shape}")
    check_out(op, out, lrs.shape, np.float32, lrs.context)
    w_norm, g_norm = elemwise.sqrt(weights_sum_sq), elemwise.sqrt(grads_sum_sq)
    both = (w_norm > 0) * (g_norm > 0)
    scaled = lrs * eta_value * w_norm / (g_norm * scale + wds * w_norm + eps_value)
    result = where(both, scaled, lrs)
    if out is None:
        return result
    return deliver(op, result._storage, "default", lrs.context, (lrs,), out)


def _adamw_groups(op: str, data: Sequence[Any], size: int, lrs: Any, wds: Any, etas: Any,
                  num_weights: Any, out: Any, kwargs: dict[str, Any],
                  single: Callable[..., NDArray]) -> Any:
    """One AdamW update per group; the last array is the shared ``rescale_grad``."""
    split = groups(op, data, size, num_weights, extra=1)
    check_dtypes(op, split, single is mp_adamw_update)
    rates = per_weight(op, lrs, len(split), "lrs")
    decays = per_weight(op, wds, len(split), "wds")
    multipliers = per_weight(op, etas, len(split), "etas")
    rest = {k: kwargs.pop(k) for k in ("beta1", "beta2", "epsilon", "clip_gradient")
            if k in kwargs}
    _check_kwargs(op, kwargs)
    return run_groups(op, split, out, lambda k, group, target: single(
        *group, data[-1], lr=rates[k], wd=decays[k], eta=multipliers[k], out=target, **rest))


def _multi_adamw_update(*data: NDArray, lrs: Any = None, wds: Any = None, etas: Any = None,
                        num_weights: int = 1, out: Any = None, name: str | None = None,
                        **kwargs: Any) -> Any:
    """MXNet's ``_multi_adamw_update``: ``adamw_update`` of each ``(weight, grad, mean, var)``,
    the last array the shared ``rescale_grad``."""
    return _adamw_groups("_multi_adamw_update", data, 4, lrs, wds, etas, num_weights, out,
                         kwargs, adamw_update)


def _multi_mp_adamw_update(*data: NDArray, lrs: Any = None, wds: Any = None, etas: Any = None,
                           num_weights: int = 1, out: Any = None, name: str | None = None,
                           **kwargs: Any) -> Any:
    """MXNet's ``_multi_mp_adamw_update``: ``mp_adamw_update`` of each ``(weight, grad, mean,
    var, weight32)``, the last array the shared ``rescale_grad``."""
    return _adamw_groups("_multi_mp_adamw_update", data, 5, lrs, wds, etas, num_weights, out,
                         kwargs, mp_adamw_update)


LAMB_KEYS = ("beta1", "beta2", "epsilon", "rescale_grad", "clip_gradient", "bias_correction")
"""The phase-1 parameters the multi-tensor LAMB updates pass on."""


def _lamb_groups(op: str, data: Sequence[Any], size: int, learning_rates: Any, wds: Any,
                 step_count: Any, num_tensors: Any, lower_bound: Any, upper_bound: Any,
                 out: Any, kwargs: dict[str, Any]) -> Any:
    """One LAMB step (phase 1, the norms, phase 2) per group of ``size`` arrays."""
    split = groups(op, data, size, num_tensors, count_name="num_tensors")
    rates = per_weight(op, learning_rates, len(split), "learning_rates")
    decays = per_weight(op, wds, len(split), "wds")
    if step_count is None or len(items(step_count)) != len(split):
        raise SparsegenError(f"{op}: step_count must hold {len(split)} step numbers (one per "
                             f"tensor), got {step_count!r}")
    steps = [integer(t, f"{op}: step_count[{i}]", low=1) for i, t in enumerate(items(step_count))]
    phase1 = {k: kwargs.pop(k) for k in LAMB_KEYS if k in kwargs}
    _check_kwargs(op, kwargs)
    bounds = {"lower_bound": real(lower_bound, f"{op}: lower_bound", allow_inf=True),
              "upper_bound": real(upper_bound, f"{op}: upper_bound", allow_inf=True)}
    check_dtypes(op, split, size == 5)
    if size == 5:
        for group in split:
            _master(op, group[0], group[4])

    def step(k: int, group: tuple[NDArray, ...], target: Any) -> NDArray:
        weight, grad, mean, var = group[:4]
        if size == 5:
            g = mp_lamb_update_phase1(*group, t=steps[k], wd=decays[k], **phase1)
            r1, r2 = reduce.norm(group[4]).reshape((1,)), reduce.norm(g).reshape((1,))
            return mp_lamb_update_phase2(weight, g, r1, r2, group[4], lr=rates[k], out=target,
                                         **bounds)
        g = lamb_update_phase1(weight, grad, mean, var, t=steps[k], wd=decays[k], **phase1)
        r1, r2 = reduce.norm(weight).reshape((1,)), reduce.norm(g).reshape((1,))
        return lamb_update_phase2(weight, g, r1, r2, lr=rates[k], out=target, **bounds)

    return run_groups(op, split, out, step)


def _multi_lamb_update(*data: NDArray, learning_rates: Any = None, wds: Any = None,
                       step_count: Any = None, num_tensors: int = 1, lower_bound: float = -1.0,
                       upper_bound: float = -1.0, out: Any = None, name: str | None = None,
                       **kwargs: Any) -> Any:
    """MXNet's ``_multi_lamb_update``: a LAMB step of each ``(weight, grad, mean, var)`` with
    its learning rate, weight decay and step count (bounds on the weight norm as
    ``lamb_update_phase2``)."""
    return _lamb_groups("_multi_lamb_update", data, 4, learning_rates, wds, step_count,
                        num_tensors, lower_bound, upper_bound, out, kwargs)


def _multi_mp_lamb_update(*data: NDArray, learning_rates: Any = None, wds: Any = None,
                          step_count: Any = None, num_tensors: int = 1,
                          lower_bound: float = -1.0, upper_bound: float = -1.0, out: Any = None,
                          name: str | None = None, **kwargs: Any) -> Any:
    """MXNet's ``_multi_mp_lamb_update``: ``_multi_lamb_update`` of the float32 masters (each
    group ``weight, grad, mean, var, weight32``)."""
    return _lamb_groups("_multi_mp_lamb_update", data, 5, learning_rates, wds, step_count,
                        num_tensors, lower_bound, upper_bound, out, kwargs)


def _flatten(*lists: Sequence[Any]) -> list[Any]:
    """The arrays of several per-weight lists, interleaved by weight (MXNet's ``_flatten_list
    (zip(...))``)."""
    sizes = {len(values) for values in lists}
    if len(sizes) != 1:
        raise SparsegenError(f"the per-weight lists must have one length, got {sorted(sizes)}")
    return [array for group in zip(*lists) for array in group]


def _rescale_array(value: Any, weights: Sequence[Any]) -> Any:
    """A number ``rescale_grad`` as a one-element float32 array (MXNet's
    ``_get_rescale_grad``); an array or anything else as it is (checked later)."""
    if isinstance(value, numbers.Real) and weights and isinstance(weights[0], NDArray):
        return NDArray(np.array([float(value)], np.float32), weights[0].context)  # metadata
    return value


def multi_adamw_update(weights: Sequence[Any], grads: Sequence[Any], mean: Sequence[Any],
                       var: Sequence[Any], rescale_grad: Any, lrs: Any, wds: Any, etas: Any,
                       out: Any = None, name: str | None = None, size: int = 0,
                       **kwargs: Any) -> Any:
    """MXNet's ``contrib.multi_adamw_update``: ``adamw_update`` of each weight of the lists,
    one ``rescale_grad`` for all."""
    data = _flatten(weights, grads, mean, var)
    return _multi_adamw_update(*data, _rescale_array(rescale_grad, weights), lrs=lrs, wds=wds,
                               etas=etas,
                               num_weights=size or len(weights), out=out, **kwargs)


def multi_mp_adamw_update(weights: Sequence[Any], grads: Sequence[Any], mean: Sequence[Any],
                          var: Sequence[Any], weights32: Sequence[Any], rescale_grad: Any,
                          lrs: Any, wds: Any, etas: Any, out: Any = None,
                          name: str | None = None, size: int = 0, **kwargs: Any) -> Any:
    """MXNet's ``contrib.multi_mp_adamw_update``: ``mp_adamw_update`` of each weight."""
    data = _flatten(weights, grads, mean, var, weights32)
    return _multi_mp_adamw_update(*data, _rescale_array(rescale_grad, weights), lrs=lrs,
                                  wds=wds, etas=etas,
                                  num_weights=size or len(weights), out=out, **kwargs)


def multi_lamb_update(weights: Sequence[Any], grads: Sequence[Any], mean: Sequence[Any],
                      var: Sequence[Any], step_count: Any, lrs: Any, wds: Any, out: Any = None,
                      num_tensors: int = 0, **kwargs: Any) -> Any:
    """MXNet's ``contrib.multi_lamb_update``: a LAMB step of each weight of the lists."""
    return _multi_lamb_update(*_flatten(weights, grads, mean, var), learning_rates=lrs, wds=wds,
                              step_count=step_count, num_tensors=num_tensors or len(weights),
                              out=out, **kwargs)


def multi_mp_lamb_update(weights: Sequence[Any], grads: Sequence[Any], mean: Sequence[Any],
                         var: Sequence[Any], weights32: Sequence[Any], step_count: Any, lrs: Any,
                         wds: Any, out: Any = None, num_tensors: int = 0, **kwargs: Any) -> Any:
    """MXNet's ``contrib.multi_mp_lamb_update``: a LAMB step of each float32 master copy,
    rounded into its weight."""
    return _multi_mp_lamb_update(*_flatten(weights, grads, mean, var, weights32),
                                 learning_rates=lrs, wds=wds, step_count=step_count,
                                 num_tensors=num_tensors or len(weights), out=out, **kwargs)


CONTRIB = ("adamw_update", "mp_adamw_update", "multi_adamw_update", "multi_lamb_update",
           "multi_mp_adamw_update", "multi_mp_lamb_update")
"""The updates MXNet has in ``mx.nd.contrib``."""
