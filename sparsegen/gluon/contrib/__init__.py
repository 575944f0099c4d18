"""``gluon.contrib``: MXNet 1.9.1's contributed layers that sparsegen has (``nn``:
``SparseEmbedding``, ``SyncBatchNorm``, ...), ``data`` (``IntervalSampler``) and ``estimator``
(the training loop with event handlers)."""

from . import data, estimator, nn

__all__ = ["data", "estimator", "nn"]
