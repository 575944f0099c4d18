"""Sorting ops of ``mx.nd`` (MXNet 1.9.1 semantics): sort, argsort, topk along an axis.

Sorts are stable in both directions (MXNet's CPU order of equal values is unspecified); nan
orders after every number ascending and before every number descending (MXNet's order with nan
is unspecified). ``axis=None`` sorts the flattened array. Results are dense (sparse input
falls back, as MXNet).
"""

from __future__ import annotations

from typing import Any

from .. import tape
from ..errors import InvalidValue
from ..formats import check_dtype
from ..params import flag, integer
from .dispatch import check_out, densified, invoke
from .indexing import array_arg, axis_arg, choice_arg
from .ndarray import NDArray
from .storage import wrap

_RET_TYPES = ("both", "indices", "mask", "value")


def _line_axis(data: NDArray, axis: Any, op: str) -> tuple[NDArray, int]:
    """``data`` and the axis to sort along (``None``: the flattened array, axis 0)."""
    data = array_arg(data, "data", op)
    if axis is None:
        return densified(data).reshape(-1), 0
    return data, axis_arg(axis, data.ndim, op)


def sort(data: NDArray, axis: Any = -1, is_ascend: bool = True,
         out: NDArray | None = None) -> NDArray:
    """``data`` sorted along ``axis``, as ``mxnet.nd.sort`` (stable; nan last ascending)."""
    data, axis = _line_axis(data, axis, "sort")
    is_ascend = flag(is_ascend, "sort: is_ascend")
    check_out("sort", out, data.shape, data.dtype, data.context)
    return invoke("sort", (data,), out=out, axis=axis, is_ascend=is_ascend)


def argsort(data: NDArray, axis: Any = -1, is_ascend: bool = True, dtype: Any = "float32",
            out: NDArray | None = None) -> NDArray:
    """The positions that sort ``data`` along ``axis``, in ``dtype``, as ``mxnet.nd.argsort``
    (stable: equal values keep their order in both directions)."""
    data, axis = _line_axis(data, axis, "argsort")
    is_ascend = flag(is_ascend, "argsort: is_ascend")
    resolved = check_dtype(dtype, "argsort: dtype")
    check_out("argsort", out, data.shape, resolved, data.context)
    return invoke("argsort", (data,), out=out, axis=axis, is_ascend=is_ascend, dtype=resolved)


def topk(data: NDArray, axis: Any = -1, k: int = 1, ret_typ: str = "indices",
         is_ascend: bool = False, dtype: Any = "float32",
         out: NDArray | None = None) -> Any:
    """The ``k`` largest (``is_ascend``: smallest) of each line along ``axis``, as
    ``mxnet.nd.topk``: ``ret_typ`` 'indices' (positions in ``dtype``), 'value', 'both' (a list
    [values, indices]) or 'mask' (1 at the top k, in ``data``'s dtype). ``k <= 0`` takes the
    whole line; ``k`` past the line's length raises. With ``axis=None`` the mask keeps
    ``data``'s shape, the other results are of the flattened array."""
    given = array_arg(data, "data", "topk").shape
    data, axis = _line_axis(data, axis, "topk")
    ret_typ = choice_arg(ret_typ, "ret_typ", _RET_TYPES, "topk")
    is_ascend = flag(is_ascend, "topk: is_ascend")
    resolved = check_dtype(dtype, "topk: dtype")
    n = data.shape[axis]
    k = integer(k, "topk: k", low=-(2**63))
    if k > n:
        raise InvalidValue(f"topk: k={k} exceeds the {n} elements along axis {axis}")
    k = n if k <= 0 else k
    params = dict(axis=axis, k=k, is_ascend=is_ascend, dtype=resolved)
    if ret_typ == "both":
        if out is not None:
            raise InvalidValue("topk: out is not supported with ret_typ='both'")
        dense = densified(data)
        values, ids = invoke("_topk_both", (dense,), ret_typ="both", **params)
        both = [wrap(values, data.context), wrap(ids, data.context)]
        tape.record("_topk_both", (dense,), both, {"ret_typ": "both", **params})
        return both
    if ret_typ == "mask":
        check_out("topk", out, given, data.dtype, data.context)
        mask = invoke("topk", (data,), out=None if out is None else out.reshape(data.shape),
                      ret_typ=ret_typ, **params)
        return mask.reshape(given) if out is None else out
    shape = (*data.shape[:axis], k, *data.shape[axis + 1:])
    check_out("topk", out, shape, resolved if ret_typ == "indices" else data.dtype,
              data.context)
    return invoke("topk", (data,), out=out, ret_typ=ret_typ, **params)


__all__ = ["argsort", "sort", "topk"]
