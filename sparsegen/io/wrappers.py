"""``ResizeIter`` and ``PrefetchingIter``: iterators over other iterators, as ``mxnet.io``."""

from __future__ import annotations

import threading
import weakref
from typing import Any

from ..errors import InvalidValue, SparsegenError
from .desc import DataBatch, DataDesc, DataIter


class _Wrapper(DataIter):
    """An iterator whose current batch is a ``DataBatch`` of another iterator's."""

    current_batch: DataBatch | None = None

    def getdata(self) -> Any:
        """The current batch's data."""
        return self.current_batch.data

    def getlabel(self) -> Any:
        """The current batch's label."""
        return self.current_batch.label

    def getindex(self) -> Any:
        """The current batch's index."""
        return self.current_batch.index

    def getpad(self) -> Any:
        """The current batch's pad."""
        return self.current_batch.pad


class ResizeIter(_Wrapper):
    """``size`` batches an epoch from ``data_iter``, restarting it whenever it runs out."""

    def __init__(self, data_iter: DataIter, size: int, reset_internal: bool = True) -> None:
        super().__init__()
        self.data_iter = data_iter
        self.size = size
        self.reset_internal = reset_internal
        self.cur = 0
        self.provide_data = data_iter.provide_data
        self.provide_label = data_iter.provide_label
        self.batch_size = data_iter.batch_size
        if hasattr(data_iter, "default_bucket_key"):
            self.default_bucket_key = data_iter.default_bucket_key

    def reset(self) -> None:
        """Start a new epoch (resetting the inner iterator when ``reset_internal``)."""
        self.cur = 0
        if self.reset_internal:
            self.data_iter.reset()

    def iter_next(self) -> bool:
        """Take the inner iterator's next batch; whether the epoch has one more."""
        if self.cur == self.size:
            return False
        try:
            self.current_batch = self.data_iter.next()
        except StopIteration:
            self.data_iter.reset()
            self.current_batch = self.data_iter.next()
        self.cur += 1
        return True


def _renamed(descs: list[Any], names: dict[str, str] | None) -> list[DataDesc]:
    if names is None:
        return list(descs)
    return [DataDesc(names[d.name], d.shape, d.dtype) if isinstance(d, DataDesc)
            else DataDesc(*d) for d in descs]


JOIN_SECONDS = 30.0
"""How long stopping a PrefetchingIter waits for each of its threads' current read."""


def _stop(stopping: threading.Event, taken: list[threading.Event],
          threads: list[threading.Thread]) -> None:
    """Stop a PrefetchingIter's threads and wait for their current reads: also at exit, where a
    thread still inside a kernel as the interpreter ends aborts the process."""
    stopping.set()
    for event in taken:
        event.set()
    for thread in threads:
        if thread is not threading.current_thread():
            thread.join(JOIN_SECONDS)


class PrefetchingIter(_Wrapper):
    """Batches of several iterators side by side, each read ahead by a thread of its own."""

    def __init__(self, iters: Any, rename_data: list[dict[str, str]] | None = None,
                 rename_label: list[dict[str, str]] | None = None) -> None:
        super().__init__()
        self.iters = iters if isinstance(iters, list) else [iters]
        if not self.iters:
            raise InvalidValue("PrefetchingIter needs at least one iterator")
        self.n_iter = len(self.iters)
        self.rename_data = rename_data
        self.rename_label = rename_label
        self.batch_size = self.provide_data[0][1][0]
        self.data_ready = [threading.Event() for _ in self.iters]
        self.data_taken = [threading.Event() for _ in self.iters]
        for event in self.data_taken:
            event.set()
        self._stopping = threading.Event()
        self.next_batch: list[Any] = [None] * self.n_iter
        self._errors: list[BaseException | None] = [None] * self.n_iter
        self.prefetch_threads = [threading.Thread(target=self._prefetch, args=(i,), daemon=True)
                                 for i in range(self.n_iter)]
        # its threads hold the iterator until they stop, so this runs at exit
        weakref.finalize(self, _stop, self._stopping, self.data_taken, self.prefetch_threads)
        for thread in self.prefetch_threads:
            thread.start()

    def _prefetch(self, i: int) -> None:
        while True:
            self.data_taken[i].wait()
            if self._stopping.is_set():
                break
            try:
                self.next_batch[i] = self.iters[i].next()
            except StopIteration:
                self.next_batch[i] = None
            except Exception as error:  # handed to the consumer, which raises it
                self.next_batch[i], self._errors[i] = None, error
            self.data_taken[i].clear()
            self.data_ready[i].set()
            if self._stopping.is_set():  # stopped during the read: its wake-up was cleared
                break

    @property
    def provide_data(self) -> list[DataDesc]:
        """The data descriptions of every iterator, renamed by ``rename_data``."""
        names = self.rename_data or [None] * self.n_iter
        return sum((_renamed(it.provide_data, r) for r, it in zip(names, self.iters)), [])

    @property
    def provide_label(self) -> list[DataDesc]:
        """The label descriptions of every iterator, renamed by ``rename_label``."""
        names = self.rename_label or [None] * self.n_iter
        return sum((_renamed(it.provide_label, r) for r, it in zip(names, self.iters)), [])

    def reset(self) -> None:
        """Wait for the pending reads, reset every iterator and start reading again."""
        for event in self.data_ready:
            event.wait()
        for it in self.iters:
            it.reset()
        for event in self.data_ready:
            event.clear()
        for event in self.data_taken:
            event.set()

    def iter_next(self) -> bool:
        """Combine the read-ahead batches into the current one; whether there is one."""
        for event in self.data_ready:
            event.wait()
        error = next((e for e in self._errors if e is not None), None)
        if error is not None:
            self._errors = [None] * self.n_iter
            raise error
        if self.next_batch[0] is None:
            if any(b is not None for b in self.next_batch):
                raise SparsegenError("PrefetchingIter: the iterators hold different numbers "
                                     "of batches")
            return False
        if any(b is None or b.pad != self.next_batch[0].pad for b in self.next_batch):
            raise SparsegenError("PrefetchingIter: the iterators' batches do not match "
                                 "(number of batches or padding)")
        self.current_batch = DataBatch(
            sum((b.data for b in self.next_batch), []), sum((b.label for b in self.next_batch), []),
            self.next_batch[0].pad, self.next_batch[0].index,
            provide_data=self.provide_data, provide_label=self.provide_label)
        for event in self.data_ready:
            event.clear()
        for event in self.data_taken:
            event.set()
        return True

    def next(self) -> DataBatch:
        """The next combined batch; ``StopIteration`` at the end."""
        if self.iter_next():
            return self.current_batch
        raise StopIteration
