"""``DataLoader``: mini-batches of a dataset, in the order of a (batch) sampler.

Batches are made in the calling thread whatever ``num_workers`` says (the kernels already use
the machine's cores); ``num_workers``, ``prefetch``, ``thread_pool``, ``timeout`` and
``auto_reload`` are checked and accepted for MXNet code."""

from __future__ import annotations

import numbers
from typing import Any, Callable, Iterator

from ...context import cpu_pinned
from ...errors import InvalidValue
from ...ndarray import NDArray
from ...params import integer, real
from .batchify import default_batchify_fn
from .dataset import ArrayDataset
from ...ndarray.indexing import choice_arg
from .sampler import LAST_BATCH, BatchSampler, RandomSampler, SequentialSampler


def _pinned(batch: Any, device_id: int) -> Any:
    """``batch`` (an NDArray or lists / tuples of them) copied to ``cpu_pinned(device_id)``."""
    if isinstance(batch, NDArray):
        return batch.as_in_context(cpu_pinned(device_id))
    if isinstance(batch, (list, tuple)):
        return type(batch)(_pinned(part, device_id) for part in batch)
    return batch


def _batch_sampler(dataset: Any, batch_size: Any, shuffle: bool, sampler: Any,
                   last_batch: Any) -> BatchSampler:
    """The batch sampler the arguments describe, when none is given (MXNet's rules)."""
    if batch_size is None:
        raise InvalidValue("DataLoader: batch_size must be specified unless batch_sampler is")
    if sampler is None:
        sampler = RandomSampler(len(dataset)) if shuffle else SequentialSampler(len(dataset))
    elif shuffle:
        raise InvalidValue("DataLoader: shuffle must not be specified if sampler is")
    return BatchSampler(sampler, batch_size, "keep" if last_batch is None else last_batch)


class DataLoader:
    """Mini-batches of ``dataset``: ``batch_size`` samples in order (or shuffled by
    ``mx.random``, or in ``sampler``'s order) or the id lists of ``batch_sampler``, merged by
    ``batchify_fn`` (``default_batchify_fn``: dense samples stacked, csr rows into a csr batch);
    ``last_batch`` ``'keep'`` / ``'discard'`` / ``'rollover'`` handles a short last batch."""

    def __init__(self, dataset: Any, batch_size: int | None = None, shuffle: bool = False,
                 sampler: Any = None, last_batch: str | None = None, batch_sampler: Any = None,
                 batchify_fn: Callable[[list[Any]], Any] | None = None, num_workers: int = 0,
                 pin_memory: bool = False, pin_device_id: int = 0, prefetch: int | None = None,
                 thread_pool: bool = False, timeout: float = 120,
                 auto_reload: bool = False) -> None:
        real(timeout, "timeout", low=0, low_open=True)
        if last_batch is not None:
            choice_arg(last_batch, "last_batch", LAST_BATCH, "DataLoader")
        if batch_sampler is None:
            batch_sampler = _batch_sampler(dataset, batch_size, shuffle, sampler, last_batch)
        elif batch_size is not None or shuffle or sampler is not None or last_batch is not None:
            raise InvalidValue("DataLoader: batch_size, shuffle, sampler and last_batch must not "
                               "be specified if batch_sampler is specified")
        if not isinstance(num_workers, numbers.Integral):  # a negative count reads as 0, as MXNet
            raise InvalidValue(f"num_workers must be an integer, got {num_workers!r}")
        if prefetch is not None:
            integer(prefetch, "prefetch", low=-(2**63))  # MXNet reads a negative one as 0
        self._dataset = dataset
        self._batch_sampler = batch_sampler
        self._batchify_fn = batchify_fn
        self._pin_memory = bool(pin_memory)
        self._pin_device_id = integer(pin_device_id, "pin_device_id")
        self.auto_reload = bool(auto_reload)

    def _fetch(self, ids: list[Any]) -> Any:
        """The batch of the samples at ``ids``; an ``ArrayDataset`` with the default batchify
        takes each NDArray's rows in one kernel call."""
        if self._batchify_fn is None:
            size = len(self._dataset)
            if type(self._dataset) is ArrayDataset and all(
                    isinstance(i, numbers.Integral) and 0 <= i < size for i in ids):
                return self._dataset.batch(ids)
            return default_batchify_fn([self._dataset[i] for i in ids])
        return self._batchify_fn([self._dataset[i] for i in ids])

    def __iter__(self) -> Iterator[Any]:
        for ids in self._batch_sampler:
            batch = self._fetch(ids)
            yield _pinned(batch, self._pin_device_id) if self._pin_memory else batch

    def __len__(self) -> int:
        return len(self._batch_sampler)


__all__ = ["DataLoader", "default_batchify_fn"]
