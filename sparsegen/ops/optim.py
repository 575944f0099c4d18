"""Optimizer updates on dense or row_sparse storage (generated ``optim_*`` kernels)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..formats import RowSparse
from ..registry import UPDATE_RULES
from ..update_rules.language import UpdateRule
from .elemwise import _map_values
from .layout import as_rows, dtype_name, kernel
from .rule import Rules, StorageRule


def values(storage: Any) -> Any:
    """The values an update reads or writes: a dense buffer, or a row_sparse format's data."""
    return storage.data if isinstance(storage, RowSparse) else storage


def launch(functions: Any, rule: UpdateRule, weight: Any, grad: Any, grad_ids: Any | None,
           states: Sequence[Any], hyper: Mapping[str, float], lazy: bool) -> None:
    """The one launch of an update rule's kernel, which ``mx.optimizer``, the ``mx.nd.*_update``
    ops (through ``update``) and ``sparsegen.torch`` share: ``functions`` are the kernel
    ``optim_<name>``'s, ``weight`` and element ``states`` (n, d) rows, row states (n,), ``grad``
    (n, d) rows, or with ``grad_ids`` the (k, d) rows of those ids; ``hyper`` by name (a missing
    or unknown name is refused). A sparse gradient updates only its rows when ``lazy`` (or when
    the rule has no ``std`` function), else every row (rows without a gradient see ``g = 0``)."""
    arguments = rule.arguments(hyper)
    if grad_ids is None:
        functions.dense(weight, grad, *states, *arguments)
    elif lazy or "std" not in rule.functions:
        functions.lazy(weight, grad, grad_ids, *states, *arguments)
    else:
        functions.std(weight, grad, grad_ids, *states, *arguments)


def update(
    weight: Any,
    grad: Any,
    rule: str,
    states: Sequence[Any],
    hyper: Mapping[str, float],
    lazy: bool,
) -> None:
    """Update ``weight`` (n rows) and its ``states`` in place with update rule ``rule``'s kernel
    ``optim_<rule>`` (``launch``).

    ``weight`` and ``states`` are dense buffers or row_sparse formats that store every row (the
    rule's row states, last, are (n,) buffers). A dense ``grad`` updates every row; a row_sparse
    one its rows when ``lazy``, else every row. ``hyper`` are the kernel's parameters by name.
    Callers validate first: shapes and dtypes agree, the gradient's row ids are sorted, unique
    and in range, and no two buffers overlap.
    """
    update_rule = UPDATE_RULES[rule]
    weight = values(weight)
    sparse = isinstance(grad, RowSparse)
    touched = grad.data.size if sparse and lazy else weight.size
    optim = kernel(f"optim_{rule}", (dtype_name(weight.dtype),), weight, touched)
    count = 1 + len(update_rule.states)  # the rest are row states, one value per row
    rows = [as_rows(values(a), written=True) if i < count else values(a).reshape(-1)
            for i, a in enumerate((weight, *states))]
    grad_rows, grad_ids = (as_rows(grad.data), grad.indices) if sparse else (as_rows(grad), None)
    launch(optim, update_rule, rows[0], grad_rows, grad_ids, rows[1:], hyper, lazy)


def map_values(x: Any, rule: str) -> Any:
    """The one-element rule ``rule`` (a ``dense`` rule reading only its gradient, see
    sparsegen.updates.elementwise) on every value of dense storage or the stored values of a
    sparse one, whose indices the result shares: ``optim_<rule>.dense(out, values)``."""

    def run(values: Any, out: Any) -> None:
        width = next(w for w in (256, 64, 16, 4, 1) if values.size % w == 0)
        optim = kernel(f"optim_{rule}", (dtype_name(values.dtype),), values, values.size)
        optim.dense(out.reshape(-1, width), values.reshape(-1, width))

    return _map_values(x, run)


_UPDATE = StorageRule(None, update)


def update_storage_rules(rule: UpdateRule) -> Rules:
    """The storage rules of update rule ``rule``'s op ``<name>_update``, derived from its
    functions: keyed by the storage types of (weight, grad), in place on the weight and the
    states (``update``, kernel ``optim_<name>``); a row_sparse gradient only for a rule that
    takes one as it is (``sparse_gradients``: the front end makes it dense for the others, as
    MXNet falls back)."""
    grads = ("default", "row_sparse") if rule.sparse_gradients else ("default",)
    return {(f"{rule.name}_update", (weight, grad)): _UPDATE
            for weight in ("default", "row_sparse") for grad in grads}
