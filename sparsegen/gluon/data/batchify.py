"""``default_batchify_fn``: how a ``DataLoader`` merges a list of samples into a batch."""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import ndarray as nd
from ...ndarray import CSRNDArray, NDArray


def default_batchify_fn(data: list[Any]) -> Any:
    """The batch of samples ``data``: csr rows (one-row ``CSRNDArray`` samples, as
    ``ArrayDataset(csr)[i]``) concatenated into a ``(batch, columns)`` CSRNDArray, other NDArrays
    stacked along a new axis 0 (``mx.nd.stack``), tuples batched field by field into a list,
    anything else through ``numpy.asarray`` into an NDArray of its dtype."""
    first = data[0]
    if isinstance(first, CSRNDArray) and all(sample.shape[0] == 1 for sample in data):
        return nd.concat(*data, dim=0)
    if isinstance(first, NDArray):
        return nd.stack(*data)
    if isinstance(first, tuple):
        return [default_batchify_fn(list(field)) for field in zip(*data)]
    values = np.asarray(data)
    return nd.array(values, dtype=values.dtype)


__all__ = ["default_batchify_fn"]
