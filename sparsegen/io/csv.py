"""``CSVIter``: dense batches from comma-separated files, as ``mx.io.CSVIter``."""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from ..context import cpu
from ..errors import InvalidValue, SparsegenError
from ..formats import check_dtype, check_shape
from ..ndarray import NDArray
from .batching import RoundRobinIter, take_rows
from .desc import DataDesc


def read_csv(path: Any, shape: tuple[int, ...], dtype: np.dtype, what: str) -> np.ndarray:
    """The rows of a csv file as an ``(n, *shape)`` array of ``dtype`` (numpy's text reader:
    csv values are read as they are, no kernel computes on them)."""
    if not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path):
        raise SparsegenError(f"CSVIter: cannot find the {what} file {path!r}")
    width = math.prod(shape)
    kind = dtype if dtype.kind in "iu" else np.float64
    try:
        rows = np.loadtxt(path, delimiter=",", dtype=kind, ndmin=2)
    except ValueError as error:
        raise SparsegenError(f"CSVIter: {path}: {error}") from None
    if rows.size == 0:
        rows = rows.reshape(0, width)
    if rows.shape[1] != width:
        raise InvalidValue(f"CSVIter: {path} has {rows.shape[1]} values a line, {what}_shape "
                           f"{shape} needs {width}")
    return rows.astype(dtype, copy=False).reshape(rows.shape[0], *shape)


class CSVIter(RoundRobinIter):
    """Batches of dense rows of a csv file (``data_shape`` values a line), as ``mx.io.CSVIter``.

    Labels are the rows of ``label_csv``, else zeros; one value a row gives labels of shape
    ``(batch_size,)``. Both have ``dtype`` (float32 by default)."""

    def __init__(self, data_csv: str, data_shape: Any, batch_size: int,
                 label_csv: str | None = None, label_shape: Any = (1,), round_batch: bool = True,
                 prefetch_buffer: int = 4, ctx: str = "gpu", dtype: Any = None) -> None:
        dtype = check_dtype(np.float32 if dtype is None else dtype, "dtype")
        data_shape = check_shape(data_shape)
        label_shape = check_shape(label_shape)
        data = read_csv(data_csv, data_shape, dtype, "data")
        if label_csv is None or label_csv == "NULL":
            label = np.zeros((data.shape[0], *label_shape), dtype)
        else:
            label = read_csv(label_csv, label_shape, dtype, "label")
            if label.shape[0] != data.shape[0]:
                raise InvalidValue(f"CSVIter: {label_csv} has {label.shape[0]} rows, "
                                   f"{data_csv} has {data.shape[0]}")
        if math.prod(label_shape) == 1:
            label = label.reshape(label.shape[0])
        data, label = NDArray(data, cpu()), NDArray(label, cpu())
        super().__init__(data.shape[0], lambda ids: (take_rows(data, ids), take_rows(label, ids)),
                         DataDesc("data", data.shape[1:], data.dtype),
                         DataDesc("softmax_label", label.shape[1:], label.dtype),
                         batch_size, round_batch)
