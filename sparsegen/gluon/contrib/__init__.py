"""``gluon.contrib``: MXNet 1.9.1's contributed layers that sparsegen has (``nn.SparseEmbedding``)."""

from . import nn

__all__ = ["nn"]
