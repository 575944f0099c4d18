"""Elementwise operators of ``mx.nd`` and ``mx.nd.sparse``: arithmetic with arrays and scalars,
unary math, clip, and the in-place updates behind ``+= -= *= /=``.

Output storage types come from the registry's op rules (MXNet's elemwise rules: rsp ± rsp ->
rsp, rsp * dense -> rsp, rsp ± dense -> dense ...). The one decision made here is the one the
table cannot hold because it depends on a parameter: a scalar op or clip whose parameters map
zero to a non-zero value (``x + 2``, ``x / 0``, ``clip(x, 1, 3)``) has a dense result, so a
sparse input is converted to dense first. See docs/operators.md and docs/mxnet-differences.md.
"""

from __future__ import annotations

import math
import operator
import struct
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import tape
from ..device import copy_into, to_host
from ..errors import SparsegenError
from ..params import real
from ..opnames import ELEMWISE_UNARY_DENSE, ELEMWISE_UNARY_INTERNAL, ELEMWISE_UNARY_SPARSE
from ..storage_rules import storage_rule
from . import broadcast as _broadcast
from .dispatch import check_out, densified, invoke
from .ndarray import NDArray
from .storage import assign

_SCALAR_TYPES = (int, float, np.number, np.bool_)
_BINARY_OPS = {"add": "elemwise_add", "sub": "elemwise_sub", "mul": "elemwise_mul",
               "div": "elemwise_div"}
_PYTHON_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv,
}
_FUNCTION_NAMES = {"add": "add", "sub": "subtract", "mul": "multiply", "div": "divide"}
# kernel function of ``array <op> scalar`` and of ``scalar <op> array``
_SCALAR_FUNCTIONS = {"add": ("add_scalar", "add_scalar"), "sub": ("sub_scalar", "rsub_scalar"),
                     "mul": ("mul_scalar", "mul_scalar"), "div": ("div_scalar", "rdiv_scalar")}
# the value each scalar function gives for an element 0 (float64 arithmetic, exact for the test)
_ZERO_IMAGE: dict[str, Callable[[float], float]] = {
    "add_scalar": lambda s: 0.0 + s,
    "sub_scalar": lambda s: 0.0 - s,
    "rsub_scalar": lambda s: s - 0.0,
    "mul_scalar": lambda s: 0.0 * s,
    "div_scalar": lambda s: 0.0 / s if s != 0 else math.nan,
    "rdiv_scalar": lambda s: math.nan,  # s / 0 is never 0
}
_FLOAT_MAX = {np.dtype(t): float(np.finfo(t).max) for t in ("float16", "float32", "float64")}
_NARROW_FLOATS = {np.dtype("float16"): struct.Struct("e"), np.dtype("float32"): struct.Struct("f")}
"""Float dtypes narrower than a Python float, as struct formats: packing a float in range rounds
it as numpy does (to nearest, ties to even), at a fifth of the cost of making a numpy scalar."""


def _is_scalar(value: Any) -> bool:
    return isinstance(value, _SCALAR_TYPES) and not isinstance(value, np.complexfloating)


def _operand_error(op: str, value: Any) -> TypeError:
    """MXNet raises TypeError for operands that are neither NDArrays nor scalars."""
    return TypeError(f"{op}: type {type(value).__name__} is not supported; operands must be "
                     "NDArrays or Python / numpy scalars")


def _cast_scalar(value: Any, dtype: np.dtype, op: str) -> float | int:
    """``value`` converted to ``dtype`` as MXNet converts a scalar operand: rounded for float
    dtypes, truncated toward zero and wrapped for integer dtypes (``300`` is ``44`` as uint8)."""
    if dtype.kind == "f":
        number = float(value)
        if not abs(number) > _FLOAT_MAX[dtype]:  # in range, or nan
            narrow = _NARROW_FLOATS.get(dtype)
            return number if narrow is None else narrow.unpack(narrow.pack(number))[0]
        with np.errstate(over="ignore"):  # rounds to the largest finite value or to inf
            return float(dtype.type(number))
    number = float(value) if not isinstance(value, (int, np.integer)) else value
    if isinstance(number, float) and not math.isfinite(number):
        raise SparsegenError(f"{op}: the scalar {value} has no {dtype.name} value")
    bits = dtype.itemsize * 8
    wrapped = int(number) & ((1 << bits) - 1)
    if dtype.kind == "i" and wrapped >= 1 << (bits - 1):
        wrapped -= 1 << bits
    return wrapped


def _has_zero(array: NDArray) -> bool:
    """Whether any element of ``array`` is zero (stored or not)."""
    storage = array._storage
    if array.stype == "default":
        return bool((to_host(storage) == 0).any())
    return storage.data.size < array.size or bool((to_host(storage.data) == 0).any())


def _check_int_divisor(op: str, dtype: np.dtype, divisor: NDArray | float | int) -> None:
    """Integer division by zero raises (MXNet 1.9.1 dies of SIGFPE)."""
    if dtype.kind == "f":
        return
    zero = divisor == 0 if not isinstance(divisor, NDArray) else _has_zero(divisor)
    if zero:
        raise SparsegenError(f"{op}: integer division by zero ({dtype.name} divisor holds 0)")


# -- array (op) array ---------------------------------------------------------------------------
def _binary_arrays(fn: str, lhs: NDArray, rhs: NDArray, out: NDArray | None, broadcast: bool,
                   op: str) -> NDArray:
    dtype = np.dtype(lhs.dtype)
    if np.dtype(rhs.dtype) != dtype:
        raise SparsegenError(
            f"{op}: lhs and rhs must have one dtype (MXNet does not promote), got {dtype.name} "
            f"and {np.dtype(rhs.dtype).name}"
        )
    if fn == "div":
        _check_int_divisor(op, dtype, rhs)
    # csr / dense runs as MXNet's broadcast_div even for one shape: a vector divisor keeps csr
    csr_div = broadcast and fn == "div" and (lhs.stype, rhs.stype) == ("csr", "default")
    if lhs.shape != rhs.shape or csr_div:
        if not broadcast:
            raise SparsegenError(f"{op}: shapes {lhs.shape} and {rhs.shape} differ (elemwise ops "
                                 "do not broadcast; use add / subtract / multiply / divide)")
        return _broadcast.binary(fn, lhs, rhs, out, op)
    check_out(op, out, lhs.shape, dtype, lhs.context)
    return invoke(_BINARY_OPS[fn], (lhs, rhs), out=out, fn=fn)


def _scalar_op(fn: str, array: NDArray, value: Any, reflected: bool, out: NDArray | None,
               op: str) -> NDArray:
    """``array <fn> value`` (``value <fn> array`` when ``reflected``), in the array's dtype."""
    dtype = array._storage.dtype  # the numpy dtype (``array.dtype`` is its scalar type)
    function = _SCALAR_FUNCTIONS[fn][reflected]
    s = _cast_scalar(value, dtype, op)
    if fn == "div":
        _check_int_divisor(op, dtype, array if reflected else s)
    if _ZERO_IMAGE[function](float(s)) != 0:
        array = densified(array)
    if out is not None:
        check_out(op, out, array.shape, dtype, array.context)
    return invoke(f"_{function}", (array,), out=out, fn=function, scalar=s)


def ufunc(lhs: Any, rhs: Any, op: str, arrays: Callable[[NDArray, NDArray], Any],
          scalar: Callable[[NDArray, Any, bool], Any], python: Callable[[Any, Any], Any]) -> Any:
    """MXNet's ``_ufunc_helper``: ``arrays(lhs, rhs)`` for two arrays, ``scalar(array, value,
    reflected)`` for an array and a scalar (``reflected`` when the scalar is ``lhs``),
    ``python(lhs, rhs)`` for two scalars; any other operand is an error naming ``op``."""
    if isinstance(lhs, NDArray):
        if isinstance(rhs, NDArray):
            return arrays(lhs, rhs)
        if _is_scalar(rhs):
            return scalar(lhs, rhs, False)
        raise _operand_error(op, rhs)
    if not _is_scalar(lhs):
        raise _operand_error(op, lhs)
    if isinstance(rhs, NDArray):
        return scalar(rhs, lhs, True)
    if _is_scalar(rhs):
        return python(lhs, rhs)
    raise _operand_error(op, rhs)


def _arithmetic(fn: str, lhs: Any, rhs: Any, out: NDArray | None = None,
                broadcast: bool = True, op: str | None = None) -> Any:
    op = op or _FUNCTION_NAMES[fn]
    if type(rhs) in (float, int) and isinstance(lhs, NDArray):  # ``x * 0.5``: no ufunc dispatch
        return _scalar_op(fn, lhs, rhs, False, out, op)
    return ufunc(lhs, rhs, op, lambda a, b: _binary_arrays(fn, a, b, out, broadcast, op),
                 lambda a, value, reflected: _scalar_op(fn, a, value, reflected, out, op),
                 _PYTHON_OPS[fn])


def add(lhs: Any, rhs: Any) -> Any:
    """``lhs + rhs`` (arrays or scalars), as ``mxnet.nd.add`` / ``mxnet.nd.sparse.add``.

    Equal shapes follow the elemwise storage rules (rsp + rsp -> rsp, csr + csr -> csr, sparse
    + dense -> dense); dense arrays of different shapes broadcast; ``array + s`` is dense unless
    ``s`` is 0, which keeps the storage type."""
    return _arithmetic("add", lhs, rhs)


def subtract(lhs: Any, rhs: Any) -> Any:
    """``lhs - rhs`` (arrays or scalars), as ``mxnet.nd.subtract``; storage rules as ``add``."""
    return _arithmetic("sub", lhs, rhs)


def multiply(lhs: Any, rhs: Any) -> Any:
    """``lhs * rhs`` (arrays or scalars), as ``mxnet.nd.multiply``.

    rsp * rsp -> rsp (rows stored in both), csr * csr -> csr, sparse * dense and dense * sparse
    keep the sparse operand's storage (also storing the nan of ``0 * inf`` where an operand's
    inf or nan meets a position the other does not store); ``array * s`` keeps the storage type
    for a finite ``s``."""
    return _arithmetic("mul", lhs, rhs)


def divide(lhs: Any, rhs: Any) -> Any:
    """``lhs / rhs`` (arrays or scalars), as ``mxnet.nd.divide``.

    Integer dtypes divide truncating toward zero (as MXNet) and refuse a zero divisor; ``array
    / s`` keeps the storage type for ``s`` not 0 or nan; csr / a dense row or column vector (or
    a single value) keeps csr, storing the nan of ``0 / 0`` where the divisor holds 0 or nan;
    any other sparse operand gives a dense result."""
    return _arithmetic("div", lhs, rhs)


def true_divide(lhs: Any, rhs: Any) -> Any:
    """``divide(lhs, rhs)``, under the name ``mxnet.nd.true_divide`` gives it."""
    return divide(lhs, rhs)


def _elemwise(fn: str, lhs: NDArray, rhs: NDArray, out: NDArray | None) -> NDArray:
    op = _BINARY_OPS[fn]
    for name, value in (("lhs", lhs), ("rhs", rhs)):
        if not isinstance(value, NDArray):
            raise SparsegenError(f"{op}: {name} must be an NDArray, got {type(value).__name__}")
    return _binary_arrays(fn, lhs, rhs, out, False, op)


def elemwise_add(lhs: NDArray, rhs: NDArray, out: NDArray | None = None) -> NDArray:
    """``lhs + rhs`` for arrays of one shape (no broadcasting), as ``mxnet.nd.elemwise_add``."""
    return _elemwise("add", lhs, rhs, out)


def elemwise_sub(lhs: NDArray, rhs: NDArray, out: NDArray | None = None) -> NDArray:
    """``lhs - rhs`` for arrays of one shape, as ``mxnet.nd.elemwise_sub``."""
    return _elemwise("sub", lhs, rhs, out)


def elemwise_mul(lhs: NDArray, rhs: NDArray, out: NDArray | None = None) -> NDArray:
    """``lhs * rhs`` for arrays of one shape, as ``mxnet.nd.elemwise_mul``."""
    return _elemwise("mul", lhs, rhs, out)


def elemwise_div(lhs: NDArray, rhs: NDArray, out: NDArray | None = None) -> NDArray:
    """``lhs / rhs`` for arrays of one shape, as ``mxnet.nd.elemwise_div``."""
    return _elemwise("div", lhs, rhs, out)


# -- in place -------------------------------------------------------------------------------------
def _store(dest: NDArray, result: NDArray) -> None:
    """Put a freshly computed ``result`` into ``dest``, which keeps its storage type and dtype."""
    if result.stype == dest.stype and result.shape == dest.shape and result.dtype == dest.dtype:
        if dest.stype == "default":
            copy_into(dest._storage, result._storage)
        else:
            dest._storage = result._storage  # a fresh result shares no buffer: move it in
    else:
        assign(dest, result)


def inplace(fn: str, lhs: NDArray, rhs: Any) -> NDArray:
    """``lhs <fn>= rhs``: ``lhs`` keeps its storage type (as MXNet) and is only written once the
    result is complete. A dense array updated by a sparse one (``+=``, ``-=``) is written in
    place at the stored positions only."""
    op = _FUNCTION_NAMES[fn]
    tape.check_inplace(op, (lhs, rhs))
    if isinstance(rhs, NDArray) and storage_rule(f"_inplace_{fn}", (lhs.stype, rhs.stype)):
        if lhs.shape != rhs.shape or lhs.dtype != rhs.dtype:
            raise SparsegenError(
                f"{op}: cannot update an array of shape {lhs.shape} and dtype "
                f"{np.dtype(lhs.dtype).name} with one of shape {rhs.shape} and dtype "
                f"{np.dtype(rhs.dtype).name}"
            )
        invoke(f"_inplace_{fn}", (lhs, rhs), fn=fn)
        return lhs
    result = _arithmetic(fn, lhs, rhs, op=op)
    if result.shape != lhs.shape:
        raise SparsegenError(
            f"{op}: the result has shape {result.shape}, which does not fit the updated array "
            f"of shape {lhs.shape}"
        )
    _store(lhs, result)
    return lhs


# -- unary ops and clip ---------------------------------------------------------------------------
def _unary(name: str, keeps_sparse: bool) -> Callable[..., NDArray]:
    def op(data: NDArray, out: NDArray | None = None) -> NDArray:
        if not isinstance(data, NDArray):
            raise SparsegenError(f"{name}: data must be an NDArray, got {type(data).__name__}")
        check_out(name, out, data.shape, data.dtype, data.context)
        return invoke(name, (data,), out=out, fn=name)

    storage = ("row_sparse and csr keep their storage type (only stored values change)"
               if keeps_sparse else "sparse inputs give a dense result (storage fallback)")
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"``{name}`` of every element, as ``mxnet.nd.{name}``: {storage}; "
                  "integer dtypes compute in float64 and convert back.")
    return op


UNARY_OPS: dict[str, Callable[..., NDArray]] = {
    **{name: _unary(name, True) for name in ELEMWISE_UNARY_SPARSE},
    **{name: _unary(name, False) for name in ELEMWISE_UNARY_DENSE},
}
"""The unary math functions by MXNet name."""

INTERNAL_UNARY_OPS: dict[str, Callable[..., NDArray]] = {
    f"_{name}": _unary(name, False) for name in ELEMWISE_UNARY_INTERNAL
}
"""The unary functions gradients use, by their ``mx.nd._internal`` name (``_digamma``)."""


def __getattr__(name: str) -> Callable[..., NDArray]:
    """The unary functions as module attributes (``elemwise.sqrt``), without shadowing the
    builtins ``abs`` and ``round`` inside this module."""
    try:
        return UNARY_OPS[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def _clip_bound(value: Any, dtype: np.dtype) -> float | int:
    """A bound in ``dtype``: rounded for floats; for integers truncated and saturated to the
    dtype's range (a bound of -1 for uint8 means 0, not the wrapped 255)."""
    if dtype.kind == "f":
        return _cast_scalar(value, dtype, "clip")
    if not math.isfinite(float(value)):
        return int(np.iinfo(dtype).max if value > 0 else np.iinfo(dtype).min)
    info = np.iinfo(dtype)
    return min(max(int(value), int(info.min)), int(info.max))


def clip(data: NDArray, a_min: Any, a_max: Any, out: NDArray | None = None) -> NDArray:
    """``data`` limited to ``[a_min, a_max]``, as ``mxnet.nd.clip`` (nan stays nan).

    row_sparse and csr keep their storage type when ``a_min <= 0 <= a_max``, else the result is
    dense (MXNet raises there). ``a_min > a_max`` raises."""
    if not isinstance(data, NDArray):
        raise SparsegenError(f"clip: data must be an NDArray, got {type(data).__name__}")
    dtype = np.dtype(data.dtype)
    bounds = []
    for name, bound in (("a_min", a_min), ("a_max", a_max)):
        checked = real(bound, f"clip: {name}", allow_inf=True)  # not None, str, complex, nan
        bounds.append(bound if math.isfinite(checked) else checked)  # an int past float: inf
    lo, hi = (_clip_bound(v, dtype) for v in bounds)
    if lo > hi:
        raise SparsegenError(f"clip: a_min ({a_min}) must not exceed a_max ({a_max})")
    if not lo <= 0 <= hi:
        data = densified(data)
    check_out("clip", out, data.shape, dtype, data.context)
    return invoke("clip", (data,), out=out, a_min=lo, a_max=hi)


__all__ = [
    "add", "clip", "divide", "elemwise_add", "elemwise_div", "elemwise_mul", "elemwise_sub",
    "multiply", "subtract", "true_divide", *UNARY_OPS,
]
