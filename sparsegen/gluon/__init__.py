"""``mx.gluon``: MXNet 1.9.1's Gluon API, run imperatively on sparsegen's kernels: parameters,
blocks, layers (``nn``, ``contrib.nn``), losses, the trainer, ``data`` (datasets, samplers, the
DataLoader) and ``utils`` (splitting batches over contexts, clipping gradients). See
docs/gluon.md."""

from . import contrib, data, loss, nn, utils
from .block import Block, HybridBlock, SymbolBlock
from .parameter import (Constant, DeferredInitializationError, Parameter, ParameterDict,
                        ParameterError)
from .trainer import Trainer

__all__ = ["Block", "Constant", "DeferredInitializationError", "HybridBlock", "Parameter",
           "ParameterDict", "ParameterError", "SymbolBlock", "Trainer", "contrib", "data",
           "loss", "nn", "utils"]
