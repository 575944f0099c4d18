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
from .desc import DataDesc
from .files import check_parts, line_text, part_lines, read_bytes

_REASONS = {
    BAD_LABEL: "the label is not a number (a line is 'label[:weight] index:value ...')",
    BAD_FEATURE: "a feature is not 'index:value' (a non-negative integer index, a number)",
    OUT_OF_RANGE: "a feature index is not below the number of columns {cols} (or has more "
                  f"than {MAX_DIGITS} digits)",
    NOT_INCREASING: "feature indices must increase along a line",
    BLANK: "the line holds only white space",
}


def _columns(shape: Any, what: str) -> int:
    """The one dimension of ``data_shape`` / ``label_shape`` as a positive int."""
    dims = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if len(dims) != 1 or isinstance(dims[0], bool) or not isinstance(dims[0], (int, np.integer)) \
            or dims[0] < 1 or dims[0] >= 2**62:
        raise InvalidValue(f"LibSVMIter: {what} must be one positive dimension, got {shape!r}")
    return int(dims[0])


_SPACE = np.array([32, 9, 13], np.uint8)


class LibSVMFile:
    """The lines of one part of a libsvm file, parsed a batch of rows at a time (kernel
    ``libsvm``): no array of the whole file's values is built."""

    def __init__(self, path: Any, cols: int, num_parts: int = 1, part_index: int = 0) -> None:
        self.path, self.cols = path, cols
        self.buf = read_bytes(path, "LibSVMIter")
        begin, end, number = part_lines(self.buf, num_parts, part_index)
        # only lines that begin with white space can be blank; they are few, checked one by one
        maybe = np.flatnonzero(np.isin(self.buf[begin], _SPACE)) if begin.size else begin
        blank = [r for r in maybe.tolist()
                 if not bytes(self.buf[begin[r] : end[r]]).strip()]
        if blank:
            keep = np.ones(begin.size, bool)
            keep[blank] = False
            begin, end, number = begin[keep], end[keep], number[keep]
        self.begin, self.end, self.number = begin, end, number
        self.rows = int(begin.size)

    def read(self, ids: np.ndarray) -> tuple[np.ndarray, CSRNDArray]:
        """Labels (float32) and features (csr) of rows ``ids``; a bad line raises
        ``MXNetError`` naming the file, the line number and the line."""
        begin, end = self.begin[ids], self.end[ids]
        result = parse(self.buf, begin, end, self.cols)
        if isinstance(result, np.ndarray):
            r = int(np.flatnonzero(result)[0])
            raise SparsegenError(
                f"LibSVMIter: {self.path}, line {int(self.number[ids[r]])}: "
                f"{_REASONS[int(result[r])].format(cols=self.cols)}: "
                f"{line_text(self.buf, int(begin[r]), int(end[r]))!r}"
            )
        labels, features = result
        return labels, CSRNDArray(features, cpu())


class LibSVMIter(RoundRobinIter):
    """Batches of csr rows from a libsvm file (zero-based indices), as ``mx.io.LibSVMIter``.

    Labels are the lines' first numbers (dense, shape ``(batch_size,)``), or the rows of
    ``label_libsvm`` as csr when it is given. Each batch parses its own lines, so a bad line
    raises when the batch holding it is read (as MXNet's)."""

    def __init__(self, data_libsvm: str, data_shape: Any, batch_size: int,
                 label_libsvm: str | None = None, label_shape: Any = (1,), num_parts: int = 1,
                 part_index: int = 0, round_batch: bool = True, prefetch_buffer: int = 4,
                 ctx: str = "gpu", dtype: Any = None) -> None:
        if dtype not in (None, "float32", np.float32):
            raise NotSupported(f"LibSVMIter: dtype {dtype!r}: only float32 is supported")
        cols = _columns(data_shape, "data_shape")
        parts = check_parts(num_parts, part_index)
        data = LibSVMFile(data_libsvm, cols, *parts)
        label_cols = _columns(label_shape, "label_shape")
        if label_libsvm is None or label_libsvm == "NULL":
            if label_cols != 1:
                raise NotSupported("LibSVMIter: label_shape other than (1,) needs label_libsvm")
            label, label_desc = None, DataDesc("softmax_label", (), np.float32)
        else:
            label = LibSVMFile(label_libsvm, label_cols, *parts)
            if label.rows != data.rows:
                raise InvalidValue(f"LibSVMIter: {label_libsvm} has {label.rows} rows, "
                                   f"{data_libsvm} has {data.rows}")
            label_desc = DataDesc("softmax_label", (label_cols,), np.float32)

        def fetch(ids: np.ndarray) -> tuple[NDArray, NDArray]:
            labels, features = data.read(ids)
            return features, NDArray(labels, cpu()) if label is None else label.read(ids)[1]

        super().__init__(data.rows, fetch, DataDesc("data", (cols,), np.float32), label_desc,
                         batch_size, round_batch)
