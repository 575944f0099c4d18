"""``mx.gluon.data``: datasets, samplers and the ``DataLoader`` batching dense and csr samples."""

from .dataloader import DataLoader, default_batchify_fn
from .dataset import ArrayDataset, Dataset, SimpleDataset
from .sampler import BatchSampler, FilterSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["ArrayDataset", "BatchSampler", "DataLoader", "Dataset", "FilterSampler",
           "RandomSampler", "Sampler", "SequentialSampler", "SimpleDataset",
           "default_batchify_fn"]
