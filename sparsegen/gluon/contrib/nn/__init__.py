"""``gluon.contrib.nn``: ``SparseEmbedding``."""

from .basic_layers import SparseEmbedding

__all__ = ["SparseEmbedding"]
