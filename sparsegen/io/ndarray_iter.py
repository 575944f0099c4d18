"""``NDArrayIter``: batches of in-memory arrays, with MXNet 1.9.1's shuffle and last-batch rules."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..errors import InvalidValue, NotSupported, SparsegenError, StorageFallbackWarning
from ..formats import INDEX_DTYPE
from ..ndarray import CSRNDArray, NDArray, RowSparseNDArray
from .batching import check_batch_size, take_rows
from .desc import DataBatch, DataDesc, DataIter
from .utils import _init_data

LAST_BATCH_HANDLES = ("pad", "discard", "roll_over")


def _sources(data: Any, allow_empty: bool, default_name: str) -> list[tuple[str, NDArray]]:
    """``data`` (an array, a list of arrays or a dict of them) as sorted ``(name, NDArray)``,
    row_sparse ones as dense (with a warning), each with a batch axis."""
    sources = []
    for name, value in _init_data(data, allow_empty, default_name, "NDArrayIter"):
        if isinstance(value, RowSparseNDArray):  # MXNet's slices fall back to dense too
            warnings.warn(f"NDArrayIter: row_sparse {name!r} is batched as a dense array",
                          StorageFallbackWarning, stacklevel=3)
            value = value.tostype("default")
        if value.ndim == 0:
            raise InvalidValue(f"NDArrayIter: {name!r} is a scalar; it needs a batch axis")
        sources.append((name, value))
    return sources


class NDArrayIter(DataIter):
    """Batches of dense or csr arrays (numpy, scipy csr, NDArray; a list or a dict of them).

    Every batch is one row gather by the rows' numbers (``take``, kernel ``nn_gather``), so
    shuffling reorders numbers, not arrays; the batches are those MXNet 1.9.1 gives."""

    def __init__(self, data: Any, label: Any = None, batch_size: int = 1, shuffle: bool = False,
                 last_batch_handle: str = "pad", data_name: str = "data",
                 label_name: str = "softmax_label", layout: str = "NCHW") -> None:
        super().__init__(check_batch_size(batch_size))
        if last_batch_handle not in LAST_BATCH_HANDLES:
            raise InvalidValue(f"NDArrayIter: last_batch_handle must be one of "
                               f"{LAST_BATCH_HANDLES}, got {last_batch_handle!r}")
        if not isinstance(layout, str) or layout.find("N") != 0:
            raise NotSupported(f"NDArrayIter: layout {layout!r}: only layouts whose batch "
                               "axis 'N' comes first are supported")
        self.data = _sources(data, False, data_name)
        self.label = _sources(label, True, label_name)
        everything = self.data + self.label
        if last_batch_handle != "discard" and any(isinstance(v, CSRNDArray) for _, v in everything):
            raise NotSupported("NDArrayIter only supports CSRNDArray with "
                               "last_batch_handle set to 'discard'")
        self.num_data = self.data[0][1].shape[0]
        for name, value in everything:
            if value.shape[0] < self.num_data:
                raise InvalidValue(f"NDArrayIter: {name!r} has {value.shape[0]} rows, fewer "
                                   f"than the {self.num_data} of {self.data[0][0]!r}")
        self.idx = np.arange(self.num_data)
        self.shuffle = shuffle
        self.last_batch_handle = last_batch_handle
        self.layout = layout
        self.cursor = -self.batch_size
        self._order = np.arange(self.num_data, dtype=INDEX_DTYPE)
        self._cache: np.ndarray | None = None
        self._ids: np.ndarray | None = None
        self.reset()
        self.data_list = [v for _, v in everything]
        self.num_source = len(self.data_list)

    def _descs(self, sources: list[tuple[str, NDArray]]) -> list[DataDesc]:
        return [DataDesc(k, (self.batch_size, *v.shape[1:]), v.dtype, layout=self.layout)
                for k, v in sources]

    @property
    def provide_data(self) -> list[DataDesc]:
        """The name, batch shape and dtype of each data source."""
        return self._descs(self.data)

    @property
    def provide_label(self) -> list[DataDesc]:
        """The name, batch shape and dtype of each label source."""
        return self._descs(self.label)

    def _shuffle(self) -> None:
        np.random.shuffle(self.idx)
        self._order = self._order[self.idx]

    def hard_reset(self) -> None:
        """Back to the start, dropping rows a ``roll_over`` epoch left for the next."""
        if self.shuffle:
            self._shuffle()
        self.cursor = -self.batch_size
        self._cache = None

    def reset(self) -> None:
        """Back to the start; with ``roll_over`` the next batch begins with the rows left over."""
        if self.shuffle:
            self._shuffle()
        if self.last_batch_handle == "roll_over" and \
                self.num_data - self.batch_size < self.cursor < self.num_data:
            self.cursor = self.cursor - self.num_data - self.batch_size
        else:
            self.cursor = -self.batch_size

    def iter_next(self) -> bool:
        """Move to the next batch; whether there is one."""
        self.cursor += self.batch_size
        if self.cursor >= self.num_data:
            self._ids = None
            return False
        self._ids = self._batch_ids()
        return True

    def _batch_ids(self) -> np.ndarray:
        """The rows of the batch at ``cursor``, by MXNet's rules for ``last_batch_handle``."""
        bs, n, c = self.batch_size, self.num_data, self.cursor
        if self.last_batch_handle == "roll_over" and -bs < c < 0:
            if self._cache is None:
                raise SparsegenError("NDArrayIter: the next epoch has no rows rolled over "
                                     "(call hard_reset())")
            ids, self._cache = np.concatenate([self._cache, self._order[: c + bs]]), None
            return ids
        if self.last_batch_handle == "pad" and c + bs > n:
            return np.concatenate([self._order[c:], self._order[np.arange(bs - n + c) % n]])
        return self._order[c : min(c + bs, n)]

    def _current(self) -> np.ndarray:
        if self._ids is None:
            raise SparsegenError("NDArrayIter has no current batch: call next() or iter_next() "
                                 "first (and reset() after the end of the data)")
        return self._ids

    def getdata(self) -> list[NDArray]:
        """The data arrays of the current batch."""
        return [take_rows(v, self._current()) for _, v in self.data]

    def getlabel(self) -> list[NDArray]:
        """The label arrays of the current batch."""
        return [take_rows(v, self._current()) for _, v in self.label]

    def getpad(self) -> int:
        """How many examples of the current batch are padding (``pad``) or rolled over."""
        if self.last_batch_handle == "pad" and self.cursor + self.batch_size > self.num_data:
            return self.cursor + self.batch_size - self.num_data
        if self.last_batch_handle == "roll_over" and -self.batch_size < self.cursor < 0:
            return -self.cursor
        return 0

    def next(self) -> DataBatch:
        """The next full batch; ``StopIteration`` at the end (keeping a short last batch's rows
        for the next epoch)."""
        if not self.iter_next():
            raise StopIteration
        if self._ids.size != self.batch_size:
            self._cache, self._ids = self._ids, None
            raise StopIteration
        return DataBatch(data=self.getdata(), label=self.getlabel(), pad=self.getpad(),
                         index=None)
