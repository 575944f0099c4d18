"""``MNISTIter``: batches of the MNIST idx files (images scaled by 1/256, labels as floats), as
``mx.io.MNISTIter``."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from ..context import cpu
from ..errors import InvalidValue
from ..formats import INDEX_DTYPE
from ..ndarray import NDArray
from .batching import check_batch_size, take_rows
from .desc import DataBatch, DataDesc, DataIter
from .files import check_parts, read_bytes
from .mxdataiter import MXDataIter

IMAGE_MAGIC, LABEL_MAGIC = 2051, 2049
"""The first big-endian int32 of an idx image file and of an idx label file."""


def read_idx(path: Any, magic: int, num_parts: int, part_index: int) -> np.ndarray:
    """Part ``part_index`` of ``num_parts`` of the items of an idx file (uint8, shape
    ``(items, *dims)``), the file's bytes as they are."""
    buf = read_bytes(path, "MNISTIter")
    dims = 3 if magic == IMAGE_MAGIC else 1
    header = 4 * (1 + dims)
    if buf.size < header or int(np.frombuffer(buf[:4].tobytes(), ">i4")[0]) != magic:
        raise InvalidValue(f"MNISTIter: {path!r} is not an idx file of "
                           f"{'images' if dims == 3 else 'labels'} (magic {magic})")
    count, *shape = (int(v) for v in np.frombuffer(buf[4:header].tobytes(), ">i4"))
    size = int(np.prod(shape))
    if buf.size < header + count * size:
        raise InvalidValue(f"MNISTIter: {path!r} holds {buf.size - header} bytes of items, its "
                           f"header says {count} items of {size} bytes")
    start = int(count / num_parts * part_index)
    end = int(count / num_parts * (part_index + 1))
    return buf[header + start * size: header + end * size].reshape(end - start, *shape)


class MNISTIter(MXDataIter):
    """Batches of MNIST: ``data`` of shape ``(batch_size, 1, rows, cols)`` (``(batch_size,
    rows * cols)`` with ``flat``) holding the pixels / 256, ``softmax_label`` of shape
    ``(batch_size,)``; only whole batches (the last partial one is dropped, as MXNet's).
    ``prefetch_buffer``, ``ctx``, ``dtype`` and ``input_shape`` are MXNet's prefetcher's and
    augmenters' settings, accepted and ignored as MXNet's MNISTIter ignores them."""

    def __init__(self, image: str = "./train-images-idx3-ubyte",
                 label: str = "./train-labels-idx1-ubyte", batch_size: int = 128,
                 shuffle: bool = True, flat: bool = False, seed: int = 0, silent: bool = False,
                 num_parts: int = 1, part_index: int = 0, prefetch_buffer: int = 4,
                 ctx: str = "gpu", dtype: Any = None, data_name: str = "data",
                 label_name: str = "softmax_label", input_shape: Any = None) -> None:
        DataIter.__init__(self, check_batch_size(batch_size))  # a reader: no handle
        num_parts, part_index = check_parts(num_parts, part_index)
        pixels = read_idx(image, IMAGE_MAGIC, num_parts, part_index)
        labels = read_idx(label, LABEL_MAGIC, num_parts, part_index)
        if labels.shape[0] != pixels.shape[0]:
            raise InvalidValue(f"MNISTIter: {image!r} holds {pixels.shape[0]} images, {label!r}"
                               f" {labels.shape[0]} labels")
        count, rows, cols = pixels.shape
        shape = (rows * cols,) if flat else (1, rows, cols)
        scaled = NDArray(np.array(pixels).reshape(count, *shape), cpu())  # the bytes, read
        self._data = scaled.astype("float32") * (1.0 / 256.0)
        self._label = NDArray(np.array(labels), cpu()).astype("float32")
        self._order = (np.random.RandomState(seed).permutation(count) if shuffle
                       else np.arange(count)).astype(INDEX_DTYPE)
        self._cursor = 0
        self._batch: DataBatch | None = None
        self.provide_data = [DataDesc(data_name, (self.batch_size, *shape), np.float32)]
        self.provide_label = [DataDesc(label_name, (self.batch_size,), np.float32)]
        if not silent:
            dims = ",".join(str(d) for d in (self.batch_size, *shape))
            print(f"MNISTIter: load {count} images, shuffle={int(bool(shuffle))}, shape="
                  f"{f'({dims})' if flat else f'[{dims}]'}", file=sys.stderr)  # as MXNet logs

    def reset(self) -> None:
        """Start the next epoch (the same order: MXNet shuffles once)."""
        self._cursor = 0
        self._batch = None

    def iter_next(self) -> bool:
        """Move to the next whole batch; whether there is one."""
        if self._cursor + self.batch_size > self._order.size:
            self._batch = None
            return False
        ids = self._order[self._cursor: self._cursor + self.batch_size]
        self._cursor += self.batch_size
        self._batch = DataBatch([take_rows(self._data, ids)], [take_rows(self._label, ids)], 0,
                                np.zeros(self.batch_size, np.uint64),
                                provide_data=self.provide_data,
                                provide_label=self.provide_label)
        return True

    def next(self) -> DataBatch:
        """The next batch; ``StopIteration`` at the end of the epoch."""
        if not self.iter_next():
            raise StopIteration
        return self._batch  # type: ignore[return-value]

    def getdata(self) -> NDArray:
        """The data array of the current batch (one array, as MXNet's native readers give)."""
        return self._current().data[0]

    def getlabel(self) -> NDArray:
        """The label array of the current batch (one array)."""
        return self._current().label[0]

    def getpad(self) -> int:
        """No padding: only whole batches."""
        return 0

    def getindex(self) -> np.ndarray:
        """Zeros, as MXNet's C++ iterators give."""
        return self._current().index

    def _current(self) -> DataBatch:
        if self._batch is None:
            raise InvalidValue("MNISTIter: no current batch: call next() or iter_next() first")
        return self._batch
