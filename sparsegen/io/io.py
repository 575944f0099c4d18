"""``mx.io.io``: the module MXNet 1.9.1's iterators live in (``from mxnet.io.io import
DataIter``): the same classes as ``mx.io``, and the helpers it imports from ``mx.io.utils``."""

from .csv import CSVIter
from .desc import DataBatch, DataDesc, DataIter
from .libsvm import LibSVMIter
from .mnist import MNISTIter
from .mxdataiter import MXDataIter
from .ndarray_iter import NDArrayIter
from .utils import _getdata_by_idx, _has_instance, _init_data, _slice_along_batch_axis
from .wrappers import PrefetchingIter, ResizeIter

__all__ = ["CSVIter", "DataBatch", "DataDesc", "DataIter", "LibSVMIter", "MNISTIter",
           "MXDataIter", "NDArrayIter", "PrefetchingIter", "ResizeIter", "_getdata_by_idx",
           "_has_instance", "_init_data", "_slice_along_batch_axis"]
