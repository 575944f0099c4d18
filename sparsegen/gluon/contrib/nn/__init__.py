"""``gluon.contrib.nn``: ``SparseEmbedding``, ``Concurrent``, ``HybridConcurrent``,
``Identity``."""

from .basic_layers import Concurrent, HybridConcurrent, Identity, SparseEmbedding

__all__ = ["Concurrent", "HybridConcurrent", "Identity", "SparseEmbedding"]
