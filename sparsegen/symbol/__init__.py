"""``mx.sym`` / ``mx.symbol``: symbolic graphs of the NDArray front end's ops, MXNet 1.9.1's
JSON format, shape / dtype / storage inference and executors (docs/symbol.md).

The modules add their methods to ``Symbol``: ``ops`` the fluent ones (``x.square()``),
``serialize`` ``tojson`` / ``save``, ``infer`` ``infer_*``, ``executor`` ``bind`` /
``simple_bind`` / ``eval``.
"""

from __future__ import annotations

import types

from . import executor, infer, ops, serialize
from .executor import Executor
from .graph import Node
from .serialize import load, load_json
from .symbol import Group, Symbol, Variable, var

for _name in ("infer_shape", "infer_shape_partial", "infer_type", "infer_storage_type"):
    setattr(Symbol, _name, getattr(infer, _name))


def _namespace(name: str, functions: dict) -> types.ModuleType:
    """A sub-namespace of ``mx.sym`` (``sparse``, ``contrib``, ``_internal``, ``random``)."""
    module = types.ModuleType(f"{__name__}.{name}", f"``mx.sym.{name}``.")
    for key, function in functions.items():
        setattr(module, key, function)
    module.__all__ = list(functions)
    return module


globals().update(ops.FUNCTIONS)
sparse = _namespace("sparse", {name: ops.FUNCTIONS[name] for name in ops.SPARSE})
contrib = _namespace("contrib", {})
_internal = _namespace("_internal", {n: ops.make(n, s) for n, s in ops.INTERNAL.items()})
random = _namespace("random", {n: ops.make(n, s) for n, s in ops.RANDOM.items()})

__all__ = ["Executor", "Group", "Node", "Symbol", "Variable", "contrib", "load", "load_json",
           "random", "sparse", "var", *ops.FUNCTIONS]
del executor, serialize
