"""``mx.nd`` arithmetic beyond the elementwise ops: ``power``, ``maximum``, ``minimum``,
``modulo`` (and ``**``, ``%`` of NDArray), the ``broadcast_<op>`` family, ``add_n`` /
``ElementWiseSum``, ``where`` and ``contrib.quadratic``, with MXNet 1.9.1's storage types.

Two arrays broadcast (numpy's rule); an array and a scalar run MXNet's scalar ops
(``_power_scalar``, ``_rpower_scalar``, ``_maximum_scalar``, ``_mod_scalar``, ``_rmod_scalar``
...), whose scalar is converted to the array's dtype first (``x ** 2.5`` is ``x ** 2`` for an
integer ``x``, as MXNet). MXNet has sparse kernels only for csr ``*`` / ``/`` a dense vector
(kept csr), add_n of row_sparse arrays, where with a csr condition and quadratic of csr with
``c = 0``; every other sparse operand falls back to dense with a ``StorageFallbackWarning``.
See docs/operators.md and docs/mxnet-differences.md.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import InvalidType, InvalidValue, SparsegenError
from ..params import real
from ..opnames import ARITH_BINARY_OPS, COMPARE_OPS
from . import broadcast
from .dispatch import check_out, densified, invoke
from .elemwise import _cast_scalar, _check_int_divisor, ufunc
from .ndarray import NDArray

# kernel function of ``array <op> scalar`` and of ``scalar <op> array``
_SCALAR_FUNCTIONS = {"power": ("power_scalar", "rpower_scalar"),
                     "maximum": ("maximum_scalar", "maximum_scalar"),
                     "minimum": ("minimum_scalar", "minimum_scalar"),
                     "mod": ("mod_scalar", "rmod_scalar")}
_PYTHON: dict[str, Callable[[Any, Any], Any]] = {
    "power": operator.pow, "maximum": max, "minimum": min, "mod": operator.mod,
}
_FUNCTION_NAMES = {"power": "power", "maximum": "maximum", "minimum": "minimum", "mod": "modulo"}


def _scalar_op(fn: str, array: NDArray, value: Any, reflected: bool, out: NDArray | None,
               op: str) -> NDArray:
    """``array <fn> value`` (``value <fn> array`` when ``reflected``) in the array's dtype; dense
    rules only, so a sparse array falls back to dense (as MXNet)."""
    dtype = np.dtype(array.dtype)
    function = _SCALAR_FUNCTIONS[fn][reflected]
    s = _cast_scalar(value, dtype, op)
    check_out(op, out, array.shape, dtype, array.context)
    return invoke(f"_{function}", (array,), out=out, fn=function, scalar=s)


def _ufunc(fn: str, lhs: Any, rhs: Any, out: NDArray | None = None) -> Any:
    """Two arrays broadcast, an array and a scalar run the scalar op, two scalars the Python
    operator (MXNet's ``_ufunc_helper``)."""
    op = _FUNCTION_NAMES[fn]
    return ufunc(lhs, rhs, op, lambda a, b: broadcast.binary(fn, a, b, out, op),
                 lambda a, value, reflected: _scalar_op(fn, a, value, reflected, out, op),
                 _PYTHON[fn])


def power(base: Any, exp: Any) -> Any:
    """``base ** exp`` (arrays broadcast, or scalars), as ``mxnet.nd.power``; integer dtypes
    compute in float64 and truncate toward zero (out-of-range results saturate)."""
    return _ufunc("power", base, exp)


def maximum(lhs: Any, rhs: Any) -> Any:
    """The larger of ``lhs`` and ``rhs`` elementwise, as ``mxnet.nd.maximum`` (nan wins)."""
    return _ufunc("maximum", lhs, rhs)


def minimum(lhs: Any, rhs: Any) -> Any:
    """The smaller of ``lhs`` and ``rhs`` elementwise, as ``mxnet.nd.minimum`` (nan wins)."""
    return _ufunc("minimum", lhs, rhs)


def modulo(lhs: Any, rhs: Any) -> Any:
    """``lhs % rhs`` with the sign of ``rhs`` (Python's ``%``), 0 where ``rhs`` is 0, as
    ``mxnet.nd.modulo``."""
    return _ufunc("mod", lhs, rhs)


def _logical(fn: str, lhs: Any, rhs: Any) -> Any:
    """MXNet's ``logical_<fn>``: two arrays broadcast (``broadcast_logical_<fn>``); an array and
    a scalar give 1 / 0 in the array's dtype, dense (MXNet's scalar logical ops have dense
    kernels only), from the array's truth (``x != 0``) and the scalar's; two scalars 1 / 0."""
    truth = {"and": lambda a, b: a and b, "or": lambda a, b: a or b,
             "xor": lambda a, b: bool(a) != bool(b)}[fn]

    def scalar(array: NDArray, value: Any, reflected: bool) -> NDArray:
        nonzero = densified(array) != 0
        if fn == "xor":
            return nonzero == 0 if value else nonzero
        if bool(value) == (fn == "and"):  # x and True, x or False: the array's truth
            return nonzero
        return nonzero * 0 + (1 if fn == "or" else 0)  # a constant, in the array's dtype

    return ufunc(lhs, rhs, f"logical_{fn}",
                 lambda a, b: BROADCAST_FUNCTIONS[f"broadcast_logical_{fn}"](a, b), scalar,
                 lambda a, b: 1 if truth(a, b) else 0)


def logical_and(lhs: Any, rhs: Any) -> Any:
    """1 where both operands are non-zero, else 0 (arrays broadcast), as
    ``mxnet.nd.logical_and``."""
    return _logical("and", lhs, rhs)


def logical_or(lhs: Any, rhs: Any) -> Any:
    """1 where either operand is non-zero, else 0 (arrays broadcast), as
    ``mxnet.nd.logical_or``."""
    return _logical("or", lhs, rhs)


def logical_xor(lhs: Any, rhs: Any) -> Any:
    """1 where exactly one operand is non-zero, else 0 (arrays broadcast), as
    ``mxnet.nd.logical_xor``."""
    return _logical("xor", lhs, rhs)


# -- broadcast_<op> -------------------------------------------------------------------------------
def _broadcast(fn: str, name: str) -> Callable[..., NDArray]:
    def op(lhs: NDArray, rhs: NDArray, out: NDArray | None = None) -> NDArray:
        if fn == "div" and isinstance(lhs, NDArray) and isinstance(rhs, NDArray):
            _check_int_divisor(name, np.dtype(lhs.dtype), rhs)
        return broadcast.binary(fn, lhs, rhs, out, name)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"``{fn}`` of two arrays broadcast together (numpy's rule), as "
                  f"``mxnet.nd.{name}``; sparse operands give a dense result"
                  + (", except csr lhs with a dense vector (or, for mul, a matrix) rhs, which "
                     "stays csr." if fn in ("mul", "div") else "."))
    return op


_BROADCAST_NAMES = {"add": ("broadcast_add", "broadcast_plus"),
                    "sub": ("broadcast_sub", "broadcast_minus"),
                    "mul": ("broadcast_mul",), "div": ("broadcast_div",),
                    **{fn: (f"broadcast_{fn}",) for fn in (*COMPARE_OPS, *ARITH_BINARY_OPS)}}

BROADCAST_FUNCTIONS: dict[str, Callable[..., NDArray]] = {
    name: _broadcast(fn, name) for fn, names in _BROADCAST_NAMES.items() for name in names
}
"""The ``broadcast_<op>`` functions by MXNet name."""


# -- _maximum, _minimum, _hypot (mx.nd._internal) ------------------------------------------------
def _union(fn: str) -> Callable[..., NDArray]:
    name = f"_{fn}"

    def op(lhs: NDArray, rhs: NDArray, out: NDArray | None = None) -> NDArray:
        for arg, value in (("lhs", lhs), ("rhs", rhs)):
            if not isinstance(value, NDArray):
                raise InvalidType(f"{name}: {arg} must be an NDArray, got {type(value).__name__}")
        if lhs.shape != rhs.shape:
            raise InvalidValue(f"{name}: shapes {lhs.shape} and {rhs.shape} differ (elemwise "
                               f"ops do not broadcast; use broadcast_{fn})")
        if lhs.stype == rhs.stype != "default" and lhs.dtype == rhs.dtype:
            check_out(name, out, lhs.shape, lhs.dtype, lhs.context)
            return invoke(name, (lhs, rhs), out=out, fn=fn)
        return broadcast.binary(fn, lhs, rhs, out, name)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"``{fn}`` of two arrays of one shape, as ``mxnet.nd._internal.{name}``: two "
                  "row_sparse (two csr) arrays give one over the union of their rows (entries), "
                  "other storage types a dense result.")
    return op


UNION_FUNCTIONS: dict[str, Callable[..., NDArray]] = {
    f"_{fn}": _union(fn) for fn in ("maximum", "minimum", "hypot")
}
"""``mx.nd._internal``'s elementwise ``_maximum``, ``_minimum``, ``_hypot``."""


# -- add_n, where, quadratic -----------------------------------------------------------------------
def add_n(*args: NDArray, out: NDArray | None = None) -> NDArray:
    """The sum of one or more arrays of one shape and dtype, as ``mxnet.nd.add_n``: row_sparse
    when every input is row_sparse (the union of their rows), else dense."""
    if not args:
        raise InvalidValue("add_n: needs at least one array to sum")
    for position, array in enumerate(args):
        if not isinstance(array, NDArray):
            raise InvalidType(f"add_n: argument {position} must be an NDArray, got "
                              f"{type(array).__name__} (pass the arrays as separate arguments)")
        if array.shape != args[0].shape or array.dtype != args[0].dtype:
            raise SparsegenError(
                f"add_n: argument {position} has shape {array.shape} and dtype "
                f"{np.dtype(array.dtype).name}; argument 0 has shape {args[0].shape} and dtype "
                f"{np.dtype(args[0].dtype).name}")
    check_out("add_n", out, args[0].shape, args[0].dtype, args[0].context)
    if len(args) == 1:
        return invoke("add_n", args, out=out)
    total = args[0]
    for position, array in enumerate(args[1:], 2):
        total = invoke("add_n", (total, array), out=out if position == len(args) else None,
                       fn="add")
    return total


ElementWiseSum = add_n


def where(condition: NDArray, x: NDArray, y: NDArray, out: NDArray | None = None) -> NDArray:
    """``x`` where ``condition`` is non-zero (nan counts), else ``y``, as ``mxnet.nd.where``:
    ``condition`` of ``x``'s shape or 1-D selecting whole rows; a csr condition has a kernel,
    every result is dense."""
    for name, value in (("condition", condition), ("x", x), ("y", y)):
        if not isinstance(value, NDArray):
            raise SparsegenError(f"where: {name} must be an NDArray, got {type(value).__name__}")
    if x.shape != y.shape or x.dtype != y.dtype:
        raise SparsegenError(f"where: x and y must have one shape and dtype, got {x.shape} "
                             f"{np.dtype(x.dtype).name} and {y.shape} {np.dtype(y.dtype).name}")
    rows = condition.ndim == 1 and x.ndim >= 1 and condition.shape[0] == x.shape[0]
    if condition.shape != x.shape and not rows:
        raise InvalidValue(f"where: condition of shape {condition.shape} must have the shape of "
                           f"x {x.shape}, or be 1-D of length {x.shape[0] if x.ndim else 1}")
    check_out("where", out, x.shape, x.dtype, x.context)
    return invoke("where", (condition, x, y), out=out)


def quadratic(data: NDArray, a: Any = 0.0, b: Any = 0.0, c: Any = 0.0,
              out: NDArray | None = None) -> NDArray:
    """``a * data**2 + b * data + c``, as ``mxnet.nd.contrib.quadratic`` (``a, b, c`` as
    float32 values; integer dtypes truncate the result): csr stays csr when ``c`` is 0, other
    sparse inputs give a dense result."""
    if not isinstance(data, NDArray):
        raise SparsegenError(f"quadratic: data must be an NDArray, got {type(data).__name__}")
    a, b, c = (float(np.float32(real(v, f"quadratic: {name}")))
               for name, v in (("a", a), ("b", b), ("c", c)))
    check_out("quadratic", out, data.shape, data.dtype, data.context)
    op = "quadratic" if data.stype != "csr" or c == 0 else "quadratic->default"
    return invoke(op, (data,), out=out, a=a, b=b, c=c)


__all__ = ["ElementWiseSum", "add_n", "logical_and", "logical_or", "logical_xor", "maximum",
           "minimum", "modulo", "power", "where",
           *BROADCAST_FUNCTIONS]


def __getattr__(name: str) -> Callable[..., NDArray]:
    """The ``broadcast_<op>`` functions as module attributes."""
    try:
        return BROADCAST_FUNCTIONS[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
