"""One optimizer update of a weight and its states through an update rule's kernel
``optim_<rule>``: the storage fallbacks MXNet applies, the checks, the launch. The
operator-level updates (optim_ops.py) and every optimizer class (sparsegen/optimizer) run their
updates here."""

from __future__ import annotations

from collections.abc import Callable, Mapping
import numpy as np

from ..params import representable
from ..registry import UPDATE_RULES
from .dispatch import invoke, warn_fallback
from .ndarray import NDArray
from .optim_arrays import ANY_STORAGE, check_arrays, check_kinds, every_row
from .storage import assign, convert, wrap

Lazy = Callable[[NDArray, tuple[NDArray, ...]], bool]
"""``lazy(weight, states)``: whether a row_sparse gradient updates only its rows."""


def never(weight: NDArray, states: tuple[NDArray, ...]) -> bool:
    """The ``Lazy`` rule of updates without a row_sparse kernel (their gradient is made dense)."""
    return False


def _dense(array: NDArray) -> NDArray:
    """A dense copy of a sparse array (a stand-in the update writes)."""
    return wrap(convert(array._storage, array.stype, "default"), array.context)


def _stand_ins(op: str, rule: str, weight: NDArray, grad: NDArray,
               states: tuple[NDArray, ...]) -> tuple[NDArray, NDArray, tuple[NDArray, ...]]:
    """The arrays the kernel updates: MXNet's storage fallback where it has no kernel for the
    storage types (a csr weight, gradient or state; a row_sparse gradient of an operator without
    a row_sparse kernel) runs the dense update on dense copies, with one warning."""
    check_kinds((("weight", weight), ("grad", grad),
                 *((f"state {i}", s) for i, s in enumerate(states))), ANY_STORAGE)
    arrays = (weight, grad, *states)
    sparse_grad = UPDATE_RULES[rule].sparse_gradients
    if "csr" in (a.stype for a in arrays):
        warn_fallback(op, tuple(a.stype for a in arrays))
        dense = [_dense(a) if a.stype == "csr" or a is grad and a.stype != "default" else a
                 for a in arrays]
        return dense[0], dense[1], tuple(dense[2:])
    if grad.stype == "row_sparse" and not sparse_grad:
        warn_fallback(op, tuple(a.stype for a in arrays))
        return weight, _dense(grad), states
    return weight, grad, states


def run(op: str, rule: str, weight: NDArray, grad: NDArray, states: tuple[NDArray, ...],
        hyper: Mapping[str, float], lazy: Lazy, labels: Mapping[str, str] | None = None) -> None:
    """Update ``weight`` and ``states`` in place from ``grad`` with update rule ``rule``'s kernel
    ``optim_<rule>``.

    ``hyper`` are the rule's hyper-parameters by name (a missing or unknown one is refused;
    ``clip_*`` may be inf: no clipping), checked finite as float32 and in the weight's dtype;
    ``labels`` name a value in messages where it is not the user's own (``{"lr": "lr
    (bias-corrected)"}``). Every array and value is checked before anything is written; states
    get their new storage only once the kernel has run, and csr arrays (updated on dense copies)
    are written back last.
    """
    update_rule = UPDATE_RULES[rule]
    update_rule.arguments(hyper)  # every name, before anything is checked or written
    w, g, s = _stand_ins(op, rule, weight, grad, states)
    check_arrays(w, g, s, len(update_rule.row_states))
    limit = np.float16 if w._storage.dtype == np.float16 else np.float32
    for name, value in hyper.items():
        if not name.startswith("clip_"):
            representable(value, f"{op}: {(labels or {}).get(name, name)}", limit)
    is_lazy = g.stype == "row_sparse" and lazy(w, s[:len(s) - len(update_rule.row_states)])
    storages = [every_row(a._storage) for a in s]
    invoke(f"{rule}_update", (w, g), rule=rule, states=storages, hyper=hyper, lazy=is_lazy)
    for state, storage in zip(s, storages):
        state._storage = storage
    for original, updated in zip((weight, *states), (w, *s)):
        if original is not updated:
            assign(original, updated)
