"""Batches as rows of whole arrays, and the round-robin batching of the file iterators."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InvalidValue, SparsegenError
from ..formats import INDEX_DTYPE
from ..ndarray import CSRNDArray, NDArray
from ..device import colocate
from ..ops.gather import take, take_csr
from .desc import DataBatch, DataIter, DataDesc
from .mxdataiter import MXDataIter


def take_rows(array: NDArray, ids: np.ndarray) -> NDArray:
    """Rows ``ids`` (int64, each in range) of a dense or csr array, on kernel ``nn_gather``
    (``take`` along axis 0)."""
    storage = array._storage
    if isinstance(array, CSRNDArray):
        return CSRNDArray(take_csr(storage, colocate(ids, storage.data)), array.context)
    return NDArray(take(storage, colocate(ids, storage)), array.context)


def check_batch_size(batch_size: Any) -> int:
    """``batch_size`` as a positive int, else ``InvalidValue`` naming it."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) \
            or batch_size < 1:
        raise InvalidValue(f"batch_size must be a positive integer, got {batch_size!r}")
    return int(batch_size)


class RoundRobinIter(MXDataIter):
    """Batches of ``rows`` rows in file order, as MXNet's file iterators batch; ``fetch(ids)``
    gives the data and label arrays of rows ``ids``.

    With ``round_batch`` the last batch of an epoch is completed with rows from the start
    (``pad`` counts them) and the next epoch starts after those rows; without it the padding
    rows are those of the batch before (as MXNet's CSVIter leaves them), ``pad`` says how many to
    ignore, and the next epoch starts at row 0. ``index`` holds the rows' numbers (uint64, as MXNet)."""

    def __init__(self, rows: int, fetch: Any, data: DataDesc, label: DataDesc,
                 batch_size: int, round_batch: bool) -> None:
        DataIter.__init__(self, check_batch_size(batch_size))  # a reader: no handle
        self._fetch = fetch  # fetch(row ids) -> (data, label) of those rows
        self._round = bool(round_batch)
        self._rows = rows
        self._start = 0
        self._cursor = 0
        self._ids: np.ndarray | None = None
        self._batch: tuple[NDArray, NDArray] | None = None
        self._pad = 0
        self.provide_data = [DataDesc(data.name, (self.batch_size, *data.shape), data.dtype)]
        self.provide_label = [DataDesc(label.name, (self.batch_size, *label.shape), label.dtype)]

    def reset(self) -> None:
        """Start the next epoch (after the rows the last one borrowed, with ``round_batch``)."""
        self._cursor = self._start
        self._ids = None

    def iter_next(self) -> bool:
        """Move to the next batch; whether there is one."""
        if self._cursor >= self._rows:
            self._ids = None
            return False
        ids = np.arange(self._cursor, self._cursor + self.batch_size, dtype=INDEX_DTYPE)
        self._pad = max(0, self._cursor + self.batch_size - self._rows)
        previous, self._ids, self._batch = self._ids, ids % self._rows, None
        if self._pad and not self._round and previous is not None:
            self._ids[-self._pad :] = previous[-self._pad :]  # MXNet leaves the last batch's rows
        self._cursor += self.batch_size
        if self._cursor >= self._rows:
            self._start = self._cursor % self._rows if self._round else 0
        return True

    def _current(self) -> np.ndarray:
        if self._ids is None:
            raise SparsegenError("the iterator has no current batch: call next() or iter_next() "
                                 "first (and reset() after the end of the data)")
        return self._ids

    def _fetched(self) -> tuple[NDArray, NDArray]:
        if self._batch is None:
            self._batch = self._fetch(self._current())
        return self._batch

    def getdata(self) -> NDArray:
        """The data of the current batch (one array, as MXNet's file iterators give)."""
        return self._fetched()[0]

    def getlabel(self) -> NDArray:
        """The label of the current batch (one array)."""
        return self._fetched()[1]

    def getindex(self) -> np.ndarray:
        """The row numbers of the current batch's examples (uint64)."""
        return self._current().astype(np.uint64)

    def getpad(self) -> int:
        """How many rows at the end of the current batch come from the start of the data."""
        self._current()
        return self._pad

    def next(self) -> DataBatch:
        """The next batch; ``StopIteration`` at the end of the epoch."""
        if not self.iter_next():
            raise StopIteration
        return DataBatch([self.getdata()], [self.getlabel()], self._pad, self.getindex(),
                         provide_data=self.provide_data, provide_label=self.provide_label)
