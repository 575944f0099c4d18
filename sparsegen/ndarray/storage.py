"""Storage conversions shared by every array class: between storage types (``convert``),
assignment, dtype casts. The op ``cast_storage`` (an array in, ``out=``) runs them through
``dispatch``, above this module.

Which conversion runs is read from the registry's op rules (``cast_storage-><stype>``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ..context import Context
from ..device import astype, copy_into, deep_copy, device_of, place, to_host
from .. import formats
from ..errors import InvalidValue, SparsegenError
from ..storage_rules import storage_rule
from .ndarray import STYPES, NDArray


_CLASSES: dict[type, type[NDArray]] = {}
"""Storage format class -> the NDArray class that holds it (filled in by ndarray/sparse.py)."""


def register(storage_class: type, array_class: type[NDArray]) -> None:
    """Make ``wrap`` hold ``storage_class`` formats in ``array_class`` arrays."""
    _CLASSES[storage_class] = array_class


def wrap(storage: Any, ctx: Context) -> NDArray:
    """The array class that holds ``storage`` (numpy buffer, ``RowSparse`` or ``CSR``)."""
    return _CLASSES.get(type(storage), NDArray)(storage, ctx)


def hold(result: Any, ctx: Context) -> NDArray:
    """``wrap`` for an op's fresh ``result``, made from inputs on ``ctx``: on a host context it
    is in host memory already (kernels allocate beside their inputs, and a host array holds no
    device buffer), so only a device context's result is checked and placed."""
    if ctx.device_type == "gpu":
        return wrap(result, ctx)
    array = object.__new__(_CLASSES.get(type(result), NDArray))
    array._storage, array._ctx = result, ctx
    return array


def check_cast(src_stype: str, stype: str) -> None:
    """Raise unless ``src_stype`` -> ``stype`` is a cast_storage (csr <-> row_sparse is not)."""
    if stype not in STYPES:
        raise InvalidValue(f"stype must be one of {STYPES}, got {stype!r}")
    if src_stype != "default" and stype not in ("default", src_stype):
        raise InvalidValue(
            f"cast_storage from {src_stype} to {stype} is not supported (as in MXNet); "
            f"convert through 'default' explicitly: x.tostype('default').tostype({stype!r})"
        )


def convert(storage: Any, src_stype: str, stype: str) -> Any:
    """``storage`` of ``src_stype`` converted to ``stype`` on the generated cast kernels.

    As in MXNet, csr <-> row_sparse has no kernel and raises; a cast to the same storage type
    copies.
    """
    check_cast(src_stype, stype)
    rule = storage_rule(f"cast_storage->{stype}", (src_stype,))
    assert rule is not None, (src_stype, stype)  # every cast check_cast passes is registered
    return rule.function(storage)


def with_dtype(data: NDArray, dtype: Any) -> NDArray:
    """A copy of ``data`` with elements cast to ``dtype`` (storage type kept)."""
    target = formats.check_dtype(dtype, "dtype")
    storage = data._storage
    if data.stype == "default":
        return NDArray(astype(storage, target), data.context)
    return wrap(dataclasses.replace(storage, data=astype(storage.data, target)), data.context)


def _dense_values(value: Any, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """``value`` (NDArray, numpy, list or scalar) broadcast to a fresh dense ``shape``/``dtype``."""
    if isinstance(value, NDArray):
        value = to_host(value._storage) if value.stype == "default" else value.asnumpy()
    try:
        values = np.asarray(value, dtype=dtype)
        return np.array(np.broadcast_to(values, shape), copy=True)
    except (TypeError, ValueError) as err:
        raise SparsegenError(
            f"cannot assign {type(value).__name__} of shape {np.shape(value)} to an array of "
            f"shape {shape}: {err}"
        ) from None


def assign(dest: NDArray, value: Any) -> None:
    """``dest[:] = value``: ``dest`` keeps its storage type, dtype and shape (MXNet's rule).

    The new storage is built completely before it replaces the old one, so a failure leaves
    ``dest`` unchanged.
    """
    dtype = dest._storage.dtype
    if dest.stype == "default" and not dest._storage.flags.writeable:
        raise SparsegenError(
            "this array is a read-only view of a sparse array's indices; "
            "build a new sparse array instead"
        )
    if isinstance(value, NDArray) and value.stype != "default" and value.shape != dest.shape:
        raise SparsegenError(
            f"cannot assign a {value.stype} array of shape {value.shape} to an array of shape "
            f"{dest.shape} (sparse arrays do not broadcast)"
        )
    if isinstance(value, NDArray) and value.stype == dest.stype and value.shape == dest.shape:
        storage = value._storage
        if storage.dtype != dtype:
            storage = with_dtype(value, dtype)._storage
        if isinstance(storage, np.ndarray) and isinstance(dest._storage, np.ndarray):
            np.copyto(dest._storage, storage)  # one copy; np.copyto handles overlapping buffers
            return
        new = deep_copy(storage)
    elif isinstance(value, NDArray) and value.stype != "default" and dest.stype != "default":
        raise SparsegenError(
            f"cannot assign a {value.stype} array to a {dest.stype} array (as in MXNet, "
            f"{value.stype} -> {dest.stype} has no cast_storage); assign value.tostype('default')"
        )
    else:
        new = convert(_dense_values(value, dest.shape, dtype), "default", dest.stype)
    if dest.stype == "default":
        copy_into(dest._storage, new)
    else:
        dest._storage = place(new, device_of(dest.context))
