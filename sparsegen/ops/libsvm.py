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
    indptr = np.empty(begin.size + 1, INDEX_DTYPE)
    parser.count(buf, begin, end, indptr)
    labels = np.empty(begin.size, np.float32)
    data = np.empty(int(indptr[-1]), np.float32)
    indices = np.empty(int(indptr[-1]), INDEX_DTYPE)
    err = np.empty(begin.size, INDEX_DTYPE)
    parser.fill(buf, begin, end, cols, indptr, labels, data, indices, err)
    if err.any():
        return err
    return labels, CSR(data, indices, indptr, (begin.size, cols))
