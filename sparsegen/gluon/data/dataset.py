"""Datasets: ``Dataset`` (filter, shard, take, sample, transform), ``SimpleDataset`` and
``ArrayDataset`` over NDArrays (dense and csr), numpy arrays, lists and other datasets."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ...context import current_context
from ...errors import InvalidType, InvalidValue
from ...formats import INDEX_DTYPE
from ...io.batching import take_rows
from ...ndarray import CSRNDArray, NDArray
from ...params import integer
from .batchify import default_batchify_fn
from .sampler import FilterSampler, Sampler, SequentialSampler


class Dataset:
    """Base class of datasets: subclasses define ``__getitem__`` (the i-th sample) and
    ``__len__``."""

    def __getitem__(self, idx: int) -> Any:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError

    def filter(self, fn: Callable[[Any], Any]) -> Dataset:
        """The samples for which ``fn(sample)`` is true (``fn`` runs once per sample, now)."""
        return _SampledDataset(self, FilterSampler(fn, self))

    def shard(self, num_shards: int, index: int) -> Dataset:
        """Part ``index`` of ``num_shards`` contiguous parts whose lengths differ by at most one
        (the first ``len % num_shards`` parts hold one sample more)."""
        num_shards = integer(num_shards, "num_shards", low=1)
        index = integer(index, "index")
        if index >= num_shards:
            raise InvalidValue(f"shard: index must be below num_shards = {num_shards}, "
                               f"got {index}")
        size, rest = divmod(len(self), num_shards)
        start = size * index + min(index, rest)
        return _SampledDataset(self, SequentialSampler(size + (index < rest), start))

    def take(self, count: int | None) -> Dataset:
        """The first ``count`` samples (all of them when ``count`` is None or past the end)."""
        if count is None or count > len(self):
            count = len(self)
        return _SampledDataset(self, SequentialSampler(count))

    def sample(self, sampler: Sampler) -> Dataset:
        """The samples at the ids ``sampler`` gives, in its order."""
        if not isinstance(sampler, Sampler):
            raise InvalidType(f"sample: sampler must be a gluon.data.Sampler, got "
                              f"{type(sampler).__name__}")
        return _SampledDataset(self, sampler)

    def transform(self, fn: Callable[..., Any], lazy: bool = True) -> Dataset:
        """Samples mapped by ``fn`` (a tuple sample is passed as its fields): on each access
        when ``lazy``, else all at once now."""
        mapped = _LazyTransformDataset(self, fn)
        return mapped if lazy else SimpleDataset([sample for sample in mapped])

    def transform_first(self, fn: Callable[[Any], Any], lazy: bool = True) -> Dataset:
        """Samples whose first field is mapped by ``fn``, the other fields kept."""
        return self.transform(_TransformFirst(fn), lazy)


class SimpleDataset(Dataset):
    """A dataset over anything with ``len()`` and ``[]`` (a list, an array)."""

    def __init__(self, data: Any) -> None:
        self._data = data

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, idx: int) -> Any:
        return self._data[idx]


class _LazyTransformDataset(Dataset):
    """The samples of ``data`` mapped by ``fn`` on access."""

    def __init__(self, data: Any, fn: Callable[..., Any]) -> None:
        self._data = data
        self._fn = fn

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, idx: int) -> Any:
        sample = self._data[idx]
        return self._fn(*sample) if isinstance(sample, tuple) else self._fn(sample)


class _TransformFirst:
    """``fn`` applied to the first field of a sample (a class, so it pickles)."""

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self._fn = fn

    def __call__(self, first: Any, *rest: Any) -> Any:
        return (self._fn(first), *rest) if rest else self._fn(first)


class _SampledDataset(Dataset):
    """The samples of ``dataset`` at the ids of ``sampler``."""

    def __init__(self, dataset: Any, sampler: Any) -> None:
        self._dataset = dataset
        self._sampler = sampler
        self._indices = list(iter(sampler))

    def __len__(self) -> int:
        return len(self._sampler)

    def __getitem__(self, idx: int) -> Any:
        return self._dataset[self._indices[idx]]


def _batchable(field: Any) -> NDArray | None:
    """``field`` if ``take_rows`` can batch its rows (a dense or csr NDArray), else None."""
    if isinstance(field, CSRNDArray) or (isinstance(field, NDArray) and field.stype == "default"):
        return field
    return None


class ArrayDataset(Dataset):
    """Samples ``(x1[i], x2[i], ...)`` of equally long arrays (NDArrays dense or csr, numpy
    arrays, lists, datasets); one array gives samples ``x1[i]``.

    As MXNet, a 1-D NDArray is read as a numpy array (its samples are numpy scalars) and a csr
    array's sample is its row ``i``, a ``(1, columns)`` CSRNDArray."""

    def __init__(self, *args: Any) -> None:
        if not args:
            raise InvalidValue("ArrayDataset needs at least one array")
        self._length = len(args[0])
        for i, data in enumerate(args):
            if len(data) != self._length:
                raise InvalidValue(f"ArrayDataset: all arrays must have the same length; array 0 "
                                   f"has length {self._length}, array {i} has {len(data)}")
        self._arrays = [_batchable(data) for data in args]
        self._data = [data.asnumpy() if isinstance(data, NDArray) and data.ndim == 1 else data
                      for data in args]

    def __getitem__(self, idx: int) -> Any:
        if len(self._data) == 1:
            return self._data[0][idx]
        return tuple(data[idx] for data in self._data)

    def __len__(self) -> int:
        return self._length

    def batch(self, ids: Sequence[int]) -> Any:
        """``default_batchify_fn`` of the samples at ``ids`` (each in ``[0, len)``), with the rows
        of dense and csr NDArrays taken in one ``take_rows`` each (kernel ``nn_gather``)."""
        rows = np.asarray(ids, dtype=INDEX_DTYPE)
        fields = [self._field_batch(array, data, rows)
                  for array, data in zip(self._arrays, self._data)]
        return fields[0] if len(fields) == 1 else fields

    @staticmethod
    def _field_batch(array: NDArray | None, data: Any, rows: np.ndarray) -> Any:
        if array is None:
            return default_batchify_fn([data[i] for i in rows.tolist()])
        batch = take_rows(array, rows)
        # a 1-D field's samples are numpy scalars, which MXNet batches on the current context
        return batch.as_in_context(current_context()) if array.ndim == 1 else batch


__all__ = ["ArrayDataset", "Dataset", "SimpleDataset"]
