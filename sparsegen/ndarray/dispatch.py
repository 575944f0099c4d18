"""Running a front-end op: the registry's rule for the input storage types, else dense fallback.

``invoke`` is the one path from an op call to its storage-level implementation. When the
registry has no rule for the inputs' storage types, the inputs are converted to dense, the
op's dense rule runs, and the result is converted to the storage type of ``out`` (or stays
dense), with one ``StorageFallbackWarning`` per (op, storage types), as MXNet logs it.

``check_out`` is the one check of every op's ``out=`` argument, and ``deliver`` the one path
that hands an op's result to the caller or writes it into ``out``. ``cast_storage`` (and
``densified``) is the storage-type conversion as an op.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import tape
from ..context import shared_memory
from ..errors import SparsegenError, StorageFallbackWarning
from ..storage_rules import storage_rule
from ..trace import RECORDER
from .ndarray import NDArray
from .storage import assign, check_cast, convert, hold, wrap

_WARNED: set[tuple[str, tuple[str, ...]]] = set()


def _context(op: str, inputs: tuple[NDArray, ...]) -> Any:
    """The context of the call's result: the first input's, as MXNet. Host contexts (``cpu(0)``,
    ``cpu(1)``, ``cpu_pinned``) mix; a GPU with another GPU or with the host raises."""
    ctx = inputs[0]._ctx
    for array in inputs:  # a loop: a generator costs more than the check on small arrays
        if array._ctx != ctx and not shared_memory(array._ctx, ctx):
            raise SparsegenError(
                f"{op}: all arrays must be on one context, got "
                f"{', '.join(str(a.context) for a in inputs)}"
            )
    return ctx


def check_out(op: str, out: Any, shape: Sequence[int], dtype: Any, ctx: Any,
              stypes: Sequence[str] | None = None) -> None:
    """Raise unless ``out`` can receive a result of ``shape`` and ``dtype`` on ``ctx``.

    As in MXNet, ``out`` must have the result's shape and dtype exactly (no broadcasting, no
    cast); its storage type is free (the result is converted to it) unless the op names the
    ``stypes`` it can write (``cast_storage``, ``retain``). ``out`` on another context raises.
    ``None`` (no ``out``) passes.
    """
    if out is None:
        return
    if not isinstance(out, NDArray):
        raise TypeError(f"{op}: out must be an NDArray, got {type(out).__name__}")
    shape, dtype = tuple(int(d) for d in shape), np.dtype(dtype)
    given = np.dtype(out.dtype)
    if out.shape != shape or given != dtype:
        raise SparsegenError(
            f"{op}: out has shape {out.shape} and dtype {given.name}; the result has shape "
            f"{shape} and dtype {dtype.name}, and out must match both"
        )
    if stypes is not None and out.stype not in stypes:
        raise SparsegenError(
            f"{op}: out has storage type {out.stype}, the op writes {' or '.join(stypes)}"
        )
    if not shared_memory(out.context, ctx):
        raise SparsegenError(f"{op}: out is on {out.context}, the inputs are on {ctx}")


def deliver(op: str, result: Any, result_stype: str, ctx: Any, inputs: Sequence[NDArray],
            out: Any = None, stypes: Sequence[str] | None = None) -> NDArray:
    """``result`` (a fresh storage of ``result_stype``) as an array, or written into ``out``.

    ``out`` keeps its storage type (MXNet's rule): the result is converted to it, and ``out``
    is written only once the result is complete and checked, so a failing op leaves it
    unchanged. ``out`` may be one of the ``inputs``: the result never shares their memory.
    """
    if out is None:
        return hold(result, ctx)
    check_out(op, out, result.shape, result.dtype, ctx, stypes)
    if (result_stype == out.stype != "default"
            and not any(result.data is getattr(a._storage, "data", None) for a in inputs)):
        out._storage = result  # a fresh sparse result moves into out: no copy
        return out
    if result_stype not in ("default", out.stype):
        result = convert(result, result_stype, "default")
    assign(out, wrap(result, ctx))
    return out


def _user_level() -> int:
    """The ``stacklevel`` at which a warning raised in ``warn_fallback`` names the first line
    outside sparsegen (the user's), however many front-end frames lie between."""
    frame, level = sys._getframe(2), 2  # the caller of warn_fallback: level 2 of its warning
    while frame is not None and frame.f_globals.get("__name__", "").startswith("sparsegen."):
        frame, level = frame.f_back, level + 1
    return level


def warn_fallback(op: str, stypes: tuple[str, ...], stacklevel: int | None = None) -> None:
    """One ``StorageFallbackWarning`` per (op, storage types): ``op`` runs on dense copies. The
    warning names the user's line (``stacklevel`` None) or the frame ``stacklevel`` says."""
    if (op, stypes) not in _WARNED:
        _WARNED.add((op, stypes))
        warnings.warn(
            f"storage fallback: {op} has no kernel for inputs of storage {stypes}; "
            "converting them to dense and running the dense kernel",
            StorageFallbackWarning,
            stacklevel=_user_level() if stacklevel is None else stacklevel,
        )


def _run(rule: Any, storages: Sequence[Any], params: dict[str, Any]) -> Any:
    """``rule.run`` on the inputs' storages; read-only host inputs (a csr's ``indices`` as users
    see them), which numpy cannot export through DLPack before version 1.0, run on copies: the
    copy is made only after the export failed, so other calls pay nothing."""
    try:
        return rule.function(*storages, **params)
    except BufferError:
        if not any(isinstance(s, np.ndarray) and not s.flags.writeable for s in storages):
            raise
        copies = [s.copy() if isinstance(s, np.ndarray) and not s.flags.writeable else s
                  for s in storages]
        return rule.function(*copies, **params)


def invoke(op: str, inputs: tuple[NDArray, ...], out: NDArray | None = None,
           attrs: dict[str, Any] | None = None, **params: Any) -> Any:
    """Run ``op`` on ``inputs`` (NDArrays) with keyword ``params``; write into ``out`` if given.

    An op's result is an array, its ``out`` checked and written by ``deliver``; an op whose rule
    has no output storage type (an in-place update, a check) returns what its implementation
    returns, and has no dense fallback. Inside ``autograd.record()`` the result is recorded
    with ``params`` and ``attrs`` (arguments only the gradient needs, as Embedding's
    ``sparse_grad``). While the profiler records, the call is kept as an ``operator`` event.
    """
    if RECORDER.on:
        return RECORDER.timed(op, "operator", _invoke, op, inputs, out, attrs, params)
    return _invoke(op, inputs, out, attrs, params)


def _invoke(op: str, inputs: tuple[NDArray, ...], out: NDArray | None,
            attrs: dict[str, Any] | None, params: dict[str, Any]) -> Any:
    for position, array in enumerate(inputs):
        if not isinstance(array, NDArray):
            raise SparsegenError(f"{op}: input {position} must be an NDArray, got {type(array).__name__}")
    if len(inputs) == 1:  # most ops: no lists, no context check
        storages, stypes, ctx = (inputs[0]._storage,), (inputs[0].stype,), inputs[0]._ctx
    else:
        storages = tuple([array._storage for array in inputs])
        stypes = tuple([array.stype for array in inputs])
        ctx = _context(op, inputs)
    if out is not None:
        tape.check_write(op, inputs, out)
    rule = storage_rule(op, stypes)
    if rule is not None:
        result = _run(rule, storages, params)
        if rule.output_stype is None:
            return result
        result_stype = rule.output_stype
    else:
        dense_rule = storage_rule(op, ("default",) * len(inputs))
        if dense_rule is None or dense_rule.output_stype is None:
            raise SparsegenError(f"{op} has no implementation for inputs of storage {stypes}")
        warn_fallback(op, stypes)
        dense_inputs = [convert(a._storage, a.stype, "default") if a.stype != "default"
                        else a._storage for a in inputs]
        result = _run(dense_rule, dense_inputs, params)
        result_stype = dense_rule.output_stype
    array = deliver(op, result, result_stype, ctx, inputs, out)
    if tape.is_recording():
        tape.record(op, inputs, array, {**params, **(attrs or {})})
    return array


def cast_storage(data: NDArray, stype: str, out: NDArray | None = None) -> NDArray:
    """``data`` in storage type ``stype`` (MXNet's ``cast_storage``): a new array, or written
    into ``out``, which must have ``stype``, ``data``'s shape, dtype and context."""
    if not isinstance(data, NDArray):
        raise SparsegenError(f"cast_storage needs an NDArray, got {type(data).__name__}")
    check_out("cast_storage", out, data.shape, data.dtype, data.context, (stype,))
    check_cast(data.stype, stype)
    return invoke(f"cast_storage->{stype}", (data,), out=out)


def densified(data: NDArray) -> NDArray:
    """``data`` in dense storage: itself when it is dense (``tostype`` would copy it)."""
    return data if data.stype == "default" else cast_storage(data, "default")
