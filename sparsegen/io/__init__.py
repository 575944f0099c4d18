"""``mx.io``: data iterators with MXNet 1.9.1's semantics, batches on generated row gathers."""

from . import io, utils
from .csv import CSVIter
from .desc import DataBatch, DataDesc, DataIter
from .libsvm import LibSVMIter
from .mnist import MNISTIter
from .mxdataiter import MXDataIter
from .ndarray_iter import NDArrayIter
from .utils import _getdata_by_idx, _has_instance, _init_data
from .wrappers import PrefetchingIter, ResizeIter

__all__ = ["CSVIter", "DataBatch", "DataDesc", "DataIter", "LibSVMIter", "MNISTIter",
           "MXDataIter", "NDArrayIter", "PrefetchingIter", "ResizeIter", "io", "utils"]
