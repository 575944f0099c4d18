"""Samplers: the orders in which a ``DataLoader`` visits a dataset's samples, and their batches."""

from __future__ import annotations

from typing import Any, Callable, Iterator

import numpy as np

from ... import ndarray as nd
from ...io.batching import check_batch_size
from ...ndarray.indexing import choice_arg
from ...params import integer

LAST_BATCH = ("keep", "discard", "rollover")


class Sampler:
    """Base class of samplers: subclasses define ``__iter__`` (the sample ids) and ``__len__``."""

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError


class SequentialSampler(Sampler):
    """The ids ``start, start + 1, ..., start + length - 1`` in order."""

    def __init__(self, length: int, start: int = 0) -> None:
        self._length = integer(length, "length")
        self._start = integer(start, "start")

    def __iter__(self) -> Iterator[int]:
        return iter(range(self._start, self._start + self._length))

    def __len__(self) -> int:
        return self._length


class RandomSampler(Sampler):
    """The ids ``0 .. length - 1`` in a new random order each pass, drawn by
    ``mx.nd.random.shuffle`` on the CPU context's generator: ``mx.random.seed(s)`` makes the
    orders repeat."""

    def __init__(self, length: int) -> None:
        self._length = integer(length, "length")

    def __iter__(self) -> Iterator[int]:
        if not self._length:
            return iter(())
        order = nd.random.shuffle(nd.array(np.arange(self._length), dtype="int64"))
        return iter(order.asnumpy().tolist())

    def __len__(self) -> int:
        return self._length


class FilterSampler(Sampler):
    """The ids of the samples of ``dataset`` for which ``fn(sample)`` is true, in order."""

    def __init__(self, fn: Callable[[Any], Any], dataset: Any) -> None:
        self._fn = fn
        self._dataset = dataset
        self._indices = [i for i, sample in enumerate(dataset) if fn(sample)]

    def __iter__(self) -> Iterator[int]:
        return iter(self._indices)

    def __len__(self) -> int:
        return len(self._indices)


class BatchSampler(Sampler):
    """Lists of ``batch_size`` ids of ``sampler``; a short last list is kept (``'keep'``), dropped
    (``'discard'``) or carried to the front of the next pass (``'rollover'``)."""

    def __init__(self, sampler: Any, batch_size: int, last_batch: str = "keep") -> None:
        self._sampler = sampler
        self._batch_size = check_batch_size(batch_size)
        self._last_batch = choice_arg(last_batch, "last_batch", LAST_BATCH, "BatchSampler")
        self._prev: list[Any] = []

    def __iter__(self) -> Iterator[list[Any]]:
        batch, self._prev = self._prev, []
        for i in self._sampler:
            batch.append(i)
            if len(batch) == self._batch_size:
                yield batch
                batch = []
        if batch:
            if self._last_batch == "keep":
                yield batch
            elif self._last_batch == "rollover":
                self._prev = batch

    def __len__(self) -> int:
        if self._last_batch == "keep":
            return -(-len(self._sampler) // self._batch_size)
        if self._last_batch == "discard":
            return len(self._sampler) // self._batch_size
        return (len(self._prev) + len(self._sampler)) // self._batch_size


__all__ = ["BatchSampler", "FilterSampler", "RandomSampler", "Sampler", "SequentialSampler"]
