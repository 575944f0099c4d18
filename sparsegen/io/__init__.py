"""``mx.io``: data iterators with MXNet 1.9.1's semantics, batches on generated row gathers."""

from .csv import CSVIter
from .desc import DataBatch, DataDesc, DataIter
from .libsvm import LibSVMIter
from .mnist import MNISTIter
from .ndarray_iter import NDArrayIter
from .wrappers import PrefetchingIter, ResizeIter

__all__ = ["CSVIter", "DataBatch", "DataDesc", "DataIter", "LibSVMIter", "MNISTIter",
           "NDArrayIter", "PrefetchingIter", "ResizeIter"]
