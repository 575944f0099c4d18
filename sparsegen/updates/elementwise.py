"""User-written zero-preserving elementwise ops: a function of one element compiled to a kernel
that maps the stored values of row_sparse and csr arrays, so the result keeps the storage type."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..ndarray import NDArray
from ..ndarray.storage import wrap
from ..ops.optim import map_values
from ..update_rules.language import UpdateRuleError, refuse, define_update, evaluate
from .define import register


def elementwise(name: str, fn: Callable[[Any, Any], Any]) -> Callable[[NDArray], NDArray]:
    """The op ``y = fn(v, f)`` on every element ``v`` (``f`` as in a rule: ``f.sqrt``,
    ``f.where``, ...), refused unless ``fn(0) == 0``: on row_sparse and csr arrays only the
    stored values are mapped and the result has the input's storage type and indices."""
    if not callable(fn):
        raise UpdateRuleError(f"fn must be a function fn(v, f), got {fn!r}")
    rule = define_update(f"map_{name}", lambda x, h, g, f: fn(g, f), functions=("dense",),
                         doc=f"{name}: {(fn.__doc__ or 'a user elementwise op').strip()}")
    at_zero = evaluate(rule.outputs[0], {"weight": 0.0, "grad": 0.0})
    if at_zero != 0.0:
        code = getattr(fn, "__code__", None)
        where = f"{code.co_filename}:{code.co_firstlineno}" if code else None
        raise refuse(f"elementwise op {name!r} is not zero-preserving: fn(0) = {at_zero}; "
                      "on sparse storage it would change the values not stored", where)
    register(rule)

    def op(data: NDArray) -> NDArray:
        if not isinstance(data, NDArray):
            raise UpdateRuleError(f"{name}: data must be an NDArray, got {type(data).__name__}")
        dtype = np.dtype(data.dtype).name
        if dtype not in ("float16", "float32", "float64"):
            raise UpdateRuleError(f"{name}: data must be float16/32/64, got {dtype}")
        return wrap(map_values(data._storage, rule.name), data.context)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = rule.doc
    return op
