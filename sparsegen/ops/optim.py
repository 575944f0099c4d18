"""Optimizer updates on dense or row_sparse storage (generated ``optim_*`` kernels)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..formats import RowSparse
from ..templates.optim_families import RULES
from .elemwise import _map_values
from .layout import as_rows, dtype_name, kernel


def values(storage: Any) -> Any:
    """The values an update reads or writes: a dense buffer, or a row_sparse format's data."""
    return storage.data if isinstance(storage, RowSparse) else storage


def update(
    weight: Any,
    grad: Any,
    family: str,
    states: Sequence[Any],
    hyper: Sequence[float],
    lazy: bool,
) -> None:
    """Update ``weight`` (n rows) and its ``states`` in place with kernel ``optim_<family>``.

    ``weight`` and ``states`` are dense buffers or row_sparse formats that store every row (the
    rule's row states, last, are (n,) buffers). A
    dense ``grad`` updates every row; a row_sparse one updates only its rows when ``lazy``, else
    every row (rows without a gradient see ``g = 0``). ``hyper`` are the kernel's float
    parameters in signature order. Callers validate first: shapes and dtypes agree, the
    gradient's row ids are sorted, unique and in range, and no two buffers overlap.
    """
    weight = values(weight)
    sparse = isinstance(grad, RowSparse)
    touched = grad.data.size if sparse and lazy else weight.size
    optim = kernel(f"optim_{family}", (dtype_name(weight.dtype),), weight, touched)
    count = 1 + len(RULES[family].states)  # the rest are row states, one value per row
    rows = [as_rows(values(a), written=True) if i < count else values(a).reshape(-1)
            for i, a in enumerate((weight, *states))]
    if sparse:
        function = optim.lazy if lazy else optim.std
        function(rows[0], as_rows(grad.data), grad.indices, *rows[1:], *hyper)
    else:
        optim.dense(rows[0], as_rows(grad), *rows[1:], *hyper)


def map_values(x: Any, family: str) -> Any:
    """The one-element rule ``family`` (a ``dense`` rule reading only its gradient, see
    sparsegen.updates.elementwise) on every value of dense storage or the stored values of a
    sparse one, whose indices the result shares: ``optim_<family>.dense(out, values)``."""

    def run(values: Any, out: Any) -> None:
        width = next(w for w in (256, 64, 16, 4, 1) if values.size % w == 0)
        optim = kernel(f"optim_{family}", (dtype_name(values.dtype),), values, values.size)
        optim.dense(out.reshape(-1, width), values.reshape(-1, width))

    return _map_values(x, run)
