"""``LibSVMIter``: csr batches from libsvm files, parsed by the generated ``libsvm`` kernel."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..context import cpu
from ..errors import InvalidValue, NotSupported, SparsegenError
from ..ndarray import CSRNDArray, NDArray
from ..ops.libsvm import parse
from ..formats import LIBSVM_BAD_FEATURE as BAD_FEATURE
from ..formats import LIBSVM_BAD_LABEL as BAD_LABEL
from ..formats import LIBSVM_BLANK as BLANK
from ..formats import LIBSVM_DIGITS as MAX_DIGITS
from ..formats import LIBSVM_NOT_INCREASING as NOT_INCREASING
from ..formats import LIBSVM_OUT_OF_RANGE as OUT_OF_RANGE
from .batching import RoundRobinIter
from .files import check_parts, line_text, part_lines, read_bytes

_REASONS = {
    BAD_LABEL: "the label is not a number (a line is 'label[:weight] index:value ...')",
    BAD_FEATURE: "a feature is not 'index:value' (a non-negative integer index, a number)",
    OUT_OF_RANGE: "a feature index is not below the number of columns {cols} (or has more "
                  f"than {MAX_DIGITS} digits)",
    NOT_INCREASING: "feature indices must increase along a line",
}


def _columns(shape: Any, what: str) -> int:
    """The one dimension of ``data_shape`` / ``label_shape`` as a positive int."""
    dims = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if len(dims) != 1 or isinstance(dims[0], bool) or not isinstance(dims[0], (int, np.integer)) \
            or dims[0] < 1 or dims[0] >= 2**62:
        raise InvalidValue(f"LibSVMIter: {what} must be one positive dimension, got {shape!r}")
    return int(dims[0])


def read_libsvm(path: Any, cols: int, num_parts: int = 1, part_index: int = 0
                ) -> tuple[np.ndarray, CSRNDArray]:
    """The labels (float32) and the features (a ``cols``-column csr matrix) of the lines of part
    ``part_index`` of a libsvm file; a bad line raises ``MXNetError`` naming file and line."""
    buf = read_bytes(path, "LibSVMIter")
    begin, end, number = part_lines(buf, num_parts, part_index)
    result = parse(buf, begin, end, cols)
    if isinstance(result, np.ndarray):
        bad = np.flatnonzero((result != 0) & (result != BLANK))
        if bad.size:
            r = int(bad[0])
            raise SparsegenError(
                f"LibSVMIter: {path}, line {int(number[r])}: "
                f"{_REASONS[int(result[r])].format(cols=cols)}: {line_text(buf, int(begin[r]), int(end[r]))!r}"
            )
        keep = result == 0
        result = parse(buf, begin[keep], end[keep], cols)
    labels, features = result
    return labels, CSRNDArray(features, cpu())


class LibSVMIter(RoundRobinIter):
    """Batches of csr rows from a libsvm file (zero-based indices), as ``mx.io.LibSVMIter``.

    Labels are the lines' first numbers (dense, shape ``(batch_size,)``), or the rows of
    ``label_libsvm`` as csr when it is given. The file is parsed whole at construction."""

    def __init__(self, data_libsvm: str, data_shape: Any, batch_size: int,
                 label_libsvm: str | None = None, label_shape: Any = (1,), num_parts: int = 1,
                 part_index: int = 0, round_batch: bool = True, prefetch_buffer: int = 4,
                 ctx: str = "gpu", dtype: Any = None) -> None:
        if dtype not in (None, "float32", np.float32):
            raise NotSupported(f"LibSVMIter: dtype {dtype!r}: only float32 is supported")
        cols = _columns(data_shape, "data_shape")
        parts = check_parts(num_parts, part_index)
        labels, data = read_libsvm(data_libsvm, cols, *parts)
        if label_libsvm is None or label_libsvm == "NULL":
            if _columns(label_shape, "label_shape") != 1:
                raise NotSupported("LibSVMIter: label_shape other than (1,) needs label_libsvm")
            label = NDArray(labels, cpu())
        else:
            _, label = read_libsvm(label_libsvm, _columns(label_shape, "label_shape"), *parts)
            if label.shape[0] != data.shape[0]:
                raise InvalidValue(f"LibSVMIter: {label_libsvm} has {label.shape[0]} rows, "
                                   f"{data_libsvm} has {data.shape[0]}")
        super().__init__(data, label, batch_size, round_batch)
