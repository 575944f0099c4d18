"""Running a front-end op: the registry's rule for the input storage types, else dense fallback.

``invoke`` is the one path from an op call to its storage-level implementation. When the
registry has no rule for the inputs' storage types, the inputs are converted to dense, the
op's dense rule runs, and the result is converted to the storage type of ``out`` (or stays
dense), with one ``StorageFallbackWarning`` per (op, storage types), as MXNet logs it.
"""

from __future__ import annotations

import warnings
from typing import Any

from ..errors import SparsegenError, StorageFallbackWarning
from ..registry import op_rule
from .ndarray import NDArray
from .storage import assign, convert, wrap

_WARNED: set[tuple[str, tuple[str, ...]]] = set()


def _context(op: str, inputs: tuple[NDArray, ...], out: NDArray | None) -> Any:
    """The one context of every array of the call; mixing contexts raises."""
    ctx = inputs[0]._ctx
    if any(a._ctx != ctx for a in inputs[1:]) or (out is not None and out._ctx != ctx):
        arrays = [*inputs, *([out] if out is not None else [])]
        raise SparsegenError(
            f"{op}: all arrays must be on one context, got "
            f"{', '.join(str(a.context) for a in arrays)}"
        )
    return ctx


def invoke(op: str, inputs: tuple[NDArray, ...], out: NDArray | None = None, **params: Any) -> NDArray:
    """Run ``op`` on ``inputs`` (NDArrays) with keyword ``params``; write into ``out`` if given.

    ``out`` keeps its storage type (MXNet's rule): the result is converted to it, and ``out``
    is only written once the result is complete, so a failing op leaves it unchanged.
    """
    for position, array in enumerate(inputs):
        if not isinstance(array, NDArray):
            raise SparsegenError(f"{op}: input {position} must be an NDArray, got {type(array).__name__}")
    ctx = _context(op, inputs, out)
    stypes = tuple([a.stype for a in inputs])
    rule = op_rule(op, stypes)
    if rule is not None:
        result = rule.run(*(a._storage for a in inputs), **params)
        result_stype = rule.output_stype
    else:
        dense_rule = op_rule(op, ("default",) * len(inputs))
        if dense_rule is None:
            raise SparsegenError(f"{op} has no implementation for inputs of storage {stypes}")
        if (op, stypes) not in _WARNED:
            _WARNED.add((op, stypes))
            warnings.warn(
                f"storage fallback: {op} has no kernel for inputs of storage {stypes}; "
                "converting them to dense and running the dense kernel",
                StorageFallbackWarning,
                stacklevel=3,
            )
        dense_inputs = [convert(a._storage, a.stype, "default") if a.stype != "default"
                        else a._storage for a in inputs]
        result = dense_rule.run(*dense_inputs, **params)
        result_stype = dense_rule.output_stype
    if out is None:
        return wrap(result, ctx)
    if (result_stype == out.stype != "default" and result.dtype == out._storage.dtype
            and tuple(result.shape) == out.shape
            and not any(result.data is getattr(a._storage, "data", None) for a in inputs)):
        out._storage = result  # a fresh sparse result moves into out: no copy
        return out
    if result_stype not in ("default", out.stype):
        result = convert(result, result_stype, "default")
    assign(out, wrap(result, ctx))
    return out
