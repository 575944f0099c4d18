"""``MXDataIter``: MXNet's iterator over a native reader. MXNet's constructors of its C++ readers
(``mx.io.CSVIter``, ``LibSVMIter``, ``MNISTIter``) return one; here those readers are its
subclasses, and ``MXDataIter(handle)`` wraps any ``DataIter`` as MXNet wraps a reader's handle."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InvalidType
from .desc import DataBatch, DataDesc, DataIter


def _first(arrays: Any) -> Any:
    """The one array of a native reader's batch: the first of a list, else the value itself."""
    return arrays[0] if isinstance(arrays, (list, tuple)) else arrays


class MXDataIter(DataIter):
    """One data and one label array per batch, as MXNet's ``MXDataIter``: ``getdata()`` and
    ``getlabel()`` give an array (not a list), ``next()`` a ``DataBatch`` of one of each.

    sparsegen's native readers (``CSVIter``, ``LibSVMIter``, ``MNISTIter``) are subclasses that
    read their files themselves. Constructed directly, ``handle`` is the iterator read (any
    ``DataIter``; sparsegen has no C++ reader handles): batches are its ``next()``'s, cut to their
    first data and label arrays; its first batch is read at once for the shapes,
    ``provide_data`` / ``provide_label`` name those arrays ``data_name`` / ``label_name`` (no
    label: none), and ``batch_size`` is the data's first axis."""

    def __init__(self, handle: DataIter, data_name: str = "data",
                 label_name: str = "softmax_label", **_: Any) -> None:
        if not isinstance(handle, DataIter):
            raise InvalidType(f"MXDataIter: handle must be a DataIter (sparsegen has no C++ "
                              f"reader handles), got {type(handle).__name__}")
        super().__init__()
        self.handle = handle
        self.first_batch: DataBatch | None = None
        self.first_batch = self.next()
        data = self.first_batch.data[0]
        self.provide_data = [DataDesc(data_name, data.shape, data.dtype)]
        self.provide_label = [DataDesc(label_name, label.shape, label.dtype)
                              for label in self.first_batch.label]
        self.batch_size = data.shape[0]

    def reset(self) -> None:
        """Back to the start of the data (the wrapped iterator's ``reset``)."""
        self.first_batch = None
        self.handle.reset()

    def next(self) -> DataBatch:
        """The next batch (the one read at construction first); ``StopIteration`` at the end."""
        if self.first_batch is not None:
            batch, self.first_batch = self.first_batch, None
            return batch
        batch = self.handle.next()  # the wrapped iterator's own end-of-data rules
        label = [_first(batch.label)] if batch.label else []
        return DataBatch(data=[_first(batch.data)], label=label, pad=batch.pad,
                         index=batch.index)

    def iter_next(self) -> bool:
        """Move to the next batch (the one read at construction first); whether there is one."""
        if self.first_batch is not None:
            self.first_batch = None  # the wrapped iterator stands on it already
            return True
        return bool(self.handle.iter_next())

    def getdata(self) -> Any:
        """The data array of the current batch."""
        return _first(self.handle.getdata())

    def getlabel(self) -> Any:
        """The label array of the current batch."""
        label = self.handle.getlabel()
        return _first(label) if label else None

    def getindex(self) -> np.ndarray | None:
        """The example numbers of the current batch (uint64), None when the reader has none."""
        index = self.handle.getindex()
        return None if index is None else np.asarray(index).astype(np.uint64)

    def getpad(self) -> int:
        """How many examples at the end of the current batch are padding."""
        return int(self.handle.getpad() or 0)
