"""``mx.io.utils``: the helpers MXNet 1.9.1's ``mxnet.io.utils`` gives its iterators (``from
mxnet.io.utils import _init_data``): named sources, whether one has a storage type, their rows by
number, a slice along the batch axis."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np

from ..errors import InvalidIndex, InvalidType, InvalidValue
from ..formats import INDEX_DTYPE
from ..ndarray import NDArray, RowSparseNDArray, array
from .batching import take_rows

__all__ = ["_init_data", "_has_instance", "_getdata_by_idx", "_slice_along_batch_axis"]


def _init_data(data: Any, allow_empty: bool, default_name: str,
               caller: str = "_init_data") -> list[tuple[str, NDArray]]:
    """``data`` (an array, a list of them or a dict of name -> array) as ``(name, NDArray)``
    pairs sorted by name, as MXNet's: one array is named ``default_name``, a list's arrays
    ``_<i>_<default_name>``; values that are not NDArrays go through ``mx.nd.array``. ``caller``
    names the function in errors."""
    if data is None:
        if not allow_empty:
            raise InvalidValue(f"{caller}: data must be given")
        data = []
    if not isinstance(data, (list, tuple, dict)):
        data = [data]
    if isinstance(data, (list, tuple)):
        if not data and not allow_empty:
            raise InvalidValue(f"{caller}: data must hold at least one array")
        names = [default_name] if len(data) == 1 else [f"_{i}_{default_name}"
                                                       for i in range(len(data))]
        data = OrderedDict(zip(names, data))
    sources = []
    for name, value in data.items():
        if not isinstance(value, NDArray):
            try:
                value = array(value)
            except Exception as error:
                raise InvalidType(f"{caller}: invalid type {type(value).__name__!r} for "
                                  f"{name!r}, should be an NDArray, numpy.ndarray or "
                                  f"scipy.sparse.csr_matrix ({error})") from None
        sources.append((str(name), value))
    return sorted(sources, key=lambda source: source[0])


def _has_instance(data: list[tuple[str, Any]], dtype: type) -> bool:
    """Whether an array of ``data`` (``(name, array)`` pairs) is an instance of ``dtype``."""
    return any(isinstance(value, dtype) for _, value in data)


def _getdata_by_idx(data: list[tuple[str, NDArray]], idx: Any) -> list[tuple[str, NDArray]]:
    """Rows ``idx`` (integers, each below every source's length) of each source, as MXNet's
    shuffle takes them: one row gather each (kernel ``nn_gather``); csr stays csr,
    row_sparse becomes dense (as MXNet's copy through numpy)."""
    ids = np.asarray(idx)
    if ids.ndim != 1 or (ids.size and ids.dtype.kind not in "iu"):
        raise InvalidValue(f"_getdata_by_idx: idx must be a 1-D array of integers, got "
                           f"{ids.dtype} of shape {ids.shape}")
    ids = ids.astype(INDEX_DTYPE)
    taken = []
    for name, value in data:
        rows = value.shape[0]
        if ids.size and (ids.min() < 0 or ids.max() >= rows):
            raise InvalidIndex(f"_getdata_by_idx: idx holds {int(ids.min())}..{int(ids.max())}, "
                               f"{name!r} has {rows} rows")
        if isinstance(value, RowSparseNDArray):
            value = value.tostype("default")
        taken.append((name, take_rows(value, ids)))
    return taken


def _slice_along_batch_axis(data: NDArray, s: slice, batch_axis: int) -> NDArray:
    """``data[s]`` along ``batch_axis`` (``slice_axis``), as MXNet's."""
    if not isinstance(s, slice):
        raise InvalidType(f"_slice_along_batch_axis: s must be a slice, got {type(s).__name__}")
    return data.slice_axis(axis=batch_axis, begin=s.start, end=s.stop)
