"""``mx.sym`` / ``mx.symbol``: symbolic graphs of the NDArray front end's ops, MXNet 1.9.1's
JSON format, shape / dtype / storage inference and executors (docs/symbol.md).

The modules add their methods to ``Symbol``: ``ops`` the fluent ones (``x.square()``),
``serialize`` ``tojson`` / ``save``, ``infer`` ``infer_*``, ``executor`` ``bind`` /
``simple_bind`` / ``eval``.
"""

from __future__ import annotations

import builtins
import functools
import math
import sys
import types
from numbers import Number
from typing import Any

from .. import ndarray as nd
from ..errors import InvalidType, InvalidValue
from ..opaliases import ALIASES

from . import executor, infer, ops, serialize, symbol
from .executor import Executor
from .graph import Node
from .serialize import load, load_json
from .symbol import Group, Symbol, Variable, var

for _name in ("infer_shape", "infer_shape_partial", "infer_type", "infer_type_partial",
              "infer_storage_type"):
    setattr(Symbol, _name, getattr(infer, _name))


def _generator(module: types.ModuleType | dict, prefixes: tuple[str, ...]) -> Any:
    """A module ``__getattr__`` giving the op function of a ``mx.nd`` function (first found
    in the namespaces ``prefixes``), made once from its signature (``ops.generated``)."""

    def find(name: str) -> Any:
        spec = next((d for prefix in prefixes if (d := ops.generated(name, prefix))), None)
        if spec is None:
            raise AttributeError(f"mx.sym has no op {name!r} (no mx.nd function of that name "
                                 "takes arrays)")
        function = ops.make(name, spec)
        (module if isinstance(module, dict) else module.__dict__)[name] = function
        return function

    return find


def _namespace(name: str, functions: dict, prefixes: tuple[str, ...]) -> types.ModuleType:
    """A sub-namespace of ``mx.sym`` (``sparse``, ``contrib``, ``_internal``, ``random``)."""
    module = types.ModuleType(f"{__name__}.{name}", f"``mx.sym.{name}``.")
    for key, function in functions.items():
        setattr(module, key, function)
    module.__all__ = list(functions)
    module.__getattr__ = _generator(module, prefixes)  # type: ignore[attr-defined]
    return module


def _pairwise(name: str, array_op: str, scalar_op: str, rscalar_op: str,
              numbers: Any) -> Any:
    """MXNet's ``mx.sym.<name>(left, right)``: of two symbols (``array_op``), a symbol and a
    number (``scalar_op``; ``rscalar_op`` with the number first), or two numbers (``numbers``)."""

    def function(left: Any, right: Any) -> Any:
        if isinstance(left, Symbol) and isinstance(right, Symbol):
            return getattr(_internal, array_op)(left, right)
        if isinstance(left, Symbol) and isinstance(right, Number):
            return getattr(_internal, scalar_op)(left, scalar=right)
        if isinstance(left, Number) and isinstance(right, Symbol):
            return getattr(_internal, rscalar_op)(right, scalar=left)
        if isinstance(left, Number) and isinstance(right, Number):
            return numbers(left, right)
        raise InvalidType(f"mx.sym.{name}: operands must be Symbols or numbers, got "
                          f"{type(left).__name__} and {type(right).__name__}")

    function.__name__ = name
    function.__doc__ = f"MXNet's ``mx.sym.{name}`` of Symbols or numbers, elementwise."
    return function


globals().update(ops.FUNCTIONS)
sparse = _namespace("sparse", {**{name: ops.FUNCTIONS[name] for name in ops.SPARSE},
                               **{n: ops.make(n, s) for n, s in ops.SPARSE_ONLY.items()}},
                    ("sparse.", ""))


def _rand_zipfian(true_classes: Symbol, num_sampled: int,
                  range_max: int) -> tuple[Symbol, Symbol, Symbol]:
    """``mx.sym.contrib.rand_zipfian``: the three Symbols (sampled classes, expected counts of
    the true and of the sampled classes) of ``mx.nd.contrib.rand_zipfian``."""
    return nd.contrib.log_uniform_candidates(sys.modules[__name__], true_classes, num_sampled,
                                             range_max)


contrib = _namespace("contrib", {"rand_zipfian": _rand_zipfian}, ("contrib.",))
_internal = _namespace("_internal", {n: ops.make(n, s) for n, s in ops.INTERNAL.items()},
                       ("_internal.",))
random = _namespace("random", {**{n: ops.sampler(n) for n in ops.RANDOM}, "randn": ops.randn,
                               **{n: ops.make(n, s) for n, s in ops.RANDOM_LIKE.items()}},
                    ("random.",))
linalg = _namespace("linalg", {}, ("linalg.",))
op = _namespace("op", dict(ops.FUNCTIONS), ("",))  # MXNet's mx.sym.op: the same op functions
maximum = _pairwise("maximum", "_maximum", "_maximum_scalar", "_maximum_scalar", builtins.max)
minimum = _pairwise("minimum", "_minimum", "_minimum_scalar", "_minimum_scalar", builtins.min)
power = _pairwise("power", "_power", "_power_scalar", "_rpower_scalar", builtins.pow)
pow = power  # noqa: A001 - MXNet's name
hypot = _pairwise("hypot", "_hypot", "_hypot_scalar", "_hypot_scalar", math.hypot)


def histogram(a: Symbol, bins: Any = 10, range: Any = None,  # noqa: A002 - MXNet's name
              **kwargs: Any) -> Symbol:
    """MXNet's ``mx.sym.histogram``: op ``_histogram`` of ``a`` in the bins of the edges
    ``bins`` (a Symbol), or in ``bins`` equal bins over ``range`` (required here)."""
    if isinstance(bins, Symbol):
        return _internal._histogram(data=a, bins=bins, **kwargs)
    if isinstance(bins, int) and not isinstance(bins, bool):
        if range is None:
            raise InvalidValue("mx.sym.histogram: range is required when bins is a number "
                               "(null range is not supported in symbol mode, as MXNet's)")
        return _internal._histogram(data=a, bin_cnt=bins, range=range, **kwargs)
    raise InvalidType(f"mx.sym.histogram: bins must be an integer or a Symbol, got "
                      f"{type(bins).__name__}")


_SAMPLER_ALIASES = {alias: op for alias, op in ALIASES.items() if not alias.startswith("_")
                    and op.startswith(("_random_", "_sample_")) and ops.definition(op)}
"""MXNet's ``mx.sym`` names of the samplers' ops (``normal``, ``random_normal``,
``sample_normal``: ``_random_normal`` / ``_sample_normal``)."""
for _alias, _op in _SAMPLER_ALIASES.items():
    globals()[_alias] = ops.make(_alias, ops.definition(_op))
    setattr(op, _alias, globals()[_alias])  # mx.sym.op names them too
__getattr__ = _generator(globals(), ("",))


def _fluent_method(self: Symbol, name: str) -> Any:
    """``x.<name>(...)`` for every op that is both an NDArray method and an ``mx.sym`` op
    (``x.flip(axis=1)`` is ``mx.sym.flip(x, axis=1)``), as MXNet's fluent Symbol methods."""
    from ..ndarray import NDArray

    if name.startswith("_") or not callable(getattr(NDArray, name, None)):
        raise AttributeError(f"'Symbol' object has no attribute {name!r}")
    try:
        function = globals()[name] if name in globals() else __getattr__(name)
    except AttributeError:
        raise AttributeError(f"'Symbol' object has no attribute {name!r}") from None
    return functools.partial(function, self)


Symbol.__getattr__ = _fluent_method  # type: ignore[attr-defined]

__all__ = ["Executor", "Group", "Node", "Symbol", "Variable", "contrib", "histogram", "hypot",
           "linalg", "load", "load_json", "maximum", "minimum", "op", "pow", "power", "random",
           "sparse", "var",
           *ops.FUNCTIONS, *_SAMPLER_ALIASES]

SYMBOL_MODULE_FUNCTIONS = ("arange", "eye", "full", "histogram", "hypot", "linspace", "load",
                           "load_json", "maximum", "minimum", "ones", "pow", "power", "split_v2",
                           "zeros")
"""The functions MXNet 1.9.1 defines in ``mxnet/symbol/symbol.py`` (its tests import them
there): the class module holds them too."""
for _name in SYMBOL_MODULE_FUNCTIONS:
    setattr(symbol, _name, globals()[_name] if _name in globals() else __getattr__(_name))
del executor, serialize
