"""``mx.nd.CachedOp``: a symbol called as a function of arrays, as MXNet 1.9.1's (its inputs in
``list_inputs`` order; recorded under ``autograd.record``)."""

from __future__ import annotations

from typing import Any

from ..context import current_context
from ..errors import InvalidType, InvalidValue
from .ndarray import NDArray


class CachedOp:
    """``CachedOp(sym, flags=())``: ``op(*inputs, out=None)`` gives ``sym``'s outputs on the
    arrays ``inputs`` (one array for one output, else a list), written into ``out`` when
    given. MXNet's ``flags`` (static allocation, inlining) are accepted: they tune MXNet's
    engine and change no value."""

    def __init__(self, sym: Any, flags: Any = ()) -> None:
        if not hasattr(sym, "graph_call"):  # a Symbol (mx.sym lends it its executor)
            raise InvalidType(f"CachedOp: sym must be a Symbol, got {type(sym).__name__}")
        self._flags = dict(flags)
        self._inputs = sym.list_inputs()
        self._call = sym.graph_call()

    def __call__(self, *args: Any, out: Any = None, default_ctx: Any = None) -> Any:
        if len(args) != len(self._inputs):
            raise InvalidValue(f"CachedOp: {len(args)} inputs given, the symbol takes "
                               f"{len(self._inputs)}: {self._inputs}")
        for name, array in zip(self._inputs, args):
            if not isinstance(array, NDArray):
                raise InvalidType(f"CachedOp: input {name!r} must be an NDArray, got "
                                  f"{type(array).__name__}")
        ctx = args[0].context if args else (default_ctx or current_context())
        outputs = self._call(dict(zip(self._inputs, args)), ctx)
        if out is not None:
            targets = list(out) if isinstance(out, (list, tuple)) else [out]
            if len(targets) != len(outputs):
                raise InvalidValue(f"CachedOp: out holds {len(targets)} arrays for "
                                   f"{len(outputs)} outputs")
            for result, target in zip(outputs, targets):
                result.copyto(target)
            return out
        return outputs[0] if len(outputs) == 1 else outputs
