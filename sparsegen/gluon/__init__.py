"""``mx.gluon``: MXNet 1.9.1's Gluon API; ``gluon.data`` (datasets, samplers, the DataLoader)
and ``gluon.utils`` (splitting batches over contexts, clipping gradients by their global norm)."""

from . import data, utils

__all__ = ["data", "utils"]
