"""libsvm text in a uint8 buffer -> labels and a csr matrix, on the generated ``libsvm`` kernel."""

from __future__ import annotations

import numpy as np

from ..formats import CSR, INDEX_DTYPE
from .layout import kernel


def parse(buf: np.ndarray, begin: np.ndarray, end: np.ndarray, cols: int
          ) -> tuple[np.ndarray, CSR] | np.ndarray:
    """Lines ``buf[begin[r]:end[r]]`` parsed: ``(labels, csr)``, or the per-line error codes
    (templates/libsvm.py) when any line is not valid."""
    parser = kernel("libsvm", ("float32",), buf, buf.size)
    rows = begin.size
    indptr = np.empty(rows + 1, INDEX_DTYPE)
    parser.count(buf, begin, end, indptr)
    labels = np.empty(rows, np.float32)
    data = np.empty(int(indptr[-1]), np.float32)
    indices = np.empty(int(indptr[-1]), INDEX_DTYPE)
    used = np.empty(rows, INDEX_DTYPE)
    err = np.empty(rows, INDEX_DTYPE)
    parser.fill(buf, begin, end, cols, indptr, labels, data, indices, used, err)
    if err.any():
        return err
    nnz = int(used.sum())  # metadata: features per line, to size the packed arrays
    if nnz < data.size:  # some line held a label:weight or a qid
        packed = np.empty(rows + 1, INDEX_DTYPE)
        packed_data, packed_indices = np.empty(nnz, np.float32), np.empty(nnz, INDEX_DTYPE)
        parser.pack(indptr, used, data, indices, packed, packed_data, packed_indices)
        indptr, data, indices = packed, packed_data, packed_indices
    return labels, CSR(data, indices, indptr, (rows, cols))
