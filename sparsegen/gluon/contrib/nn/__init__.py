"""``gluon.contrib.nn``: ``SparseEmbedding``, ``Concurrent``, ``HybridConcurrent``,
``Identity``, ``SyncBatchNorm``."""

from .basic_layers import Concurrent, HybridConcurrent, Identity, SparseEmbedding
from .sync_batchnorm import SyncBatchNorm

__all__ = ["Concurrent", "HybridConcurrent", "Identity", "SparseEmbedding", "SyncBatchNorm"]
