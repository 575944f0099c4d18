"""``DataDesc``, ``DataBatch`` and the ``DataIter`` base class, as ``mxnet.io``."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

import numpy as np

from ..errors import InvalidType


class DataDesc(namedtuple("DataDesc", ["name", "shape"])):
    """The name, shape, dtype and layout of one data or label source of an iterator."""

    def __new__(cls, name: str, shape: Any, dtype: Any = np.float32, layout: str = "NCHW"
                ) -> "DataDesc":
        desc = super().__new__(cls, name, shape)
        desc.dtype = dtype
        desc.layout = layout
        return desc

    def __repr__(self) -> str:
        return f"DataDesc[{self.name},{self.shape},{self.dtype},{self.layout}]"

    @staticmethod
    def get_batch_axis(layout: str | None) -> int:
        """The axis of ``layout`` that holds the batch (``'N'``; 0 for no layout, -1 if none)."""
        return 0 if layout is None else layout.find("N")

    @staticmethod
    def get_list(shapes: Any, types: Any) -> list["DataDesc"]:
        """``DataDesc``s from ``(name, shape)`` pairs and optional ``(name, dtype)`` pairs."""
        if types is None:
            return [DataDesc(name, shape) for name, shape in shapes]
        dtypes = dict(types)
        return [DataDesc(name, shape, dtypes[name]) for name, shape in shapes]


class DataBatch:
    """One batch: lists of data and label arrays, the padded count, indices and descriptions."""

    def __init__(self, data: Any, label: Any = None, pad: Any = None, index: Any = None,
                 bucket_key: Any = None, provide_data: Any = None, provide_label: Any = None
                 ) -> None:
        for what, value in (("data", data), ("label", label)):
            if value is not None and not isinstance(value, (list, tuple)):
                raise InvalidType(f"DataBatch: {what} must be a list of NDArrays, "
                                  f"got {type(value).__name__}")
        self.data = data
        self.label = label
        self.pad = pad
        self.index = index
        self.bucket_key = bucket_key
        self.provide_data = provide_data
        self.provide_label = provide_label

    def __str__(self) -> str:
        data_shapes = [d.shape for d in self.data]
        label_shapes = [l.shape for l in self.label] if self.label else None
        return f"{type(self).__name__}: data shapes: {data_shapes} label shapes: {label_shapes}"


class DataIter:
    """The base of every data iterator: ``next`` is ``iter_next`` then the ``get*`` methods."""

    def __init__(self, batch_size: int = 0) -> None:
        self.batch_size = batch_size

    def __iter__(self) -> "DataIter":
        return self

    def reset(self) -> None:
        """Go back to the start of the data."""

    def next(self) -> DataBatch:
        """The next batch; ``StopIteration`` at the end of the data."""
        if self.iter_next():
            return DataBatch(data=self.getdata(), label=self.getlabel(), pad=self.getpad(),
                             index=self.getindex())
        raise StopIteration

    def __next__(self) -> DataBatch:
        return self.next()

    def iter_next(self) -> bool:
        """Move to the next batch; whether there is one."""
        return False

    def getdata(self) -> Any:
        """The data of the current batch."""
        return None

    def getlabel(self) -> Any:
        """The label of the current batch."""
        return None

    def getindex(self) -> Any:
        """The indices of the current batch's examples (``None`` when the iterator has none)."""
        return None

    def getpad(self) -> Any:
        """The number of padding examples at the end of the current batch."""
        return None
