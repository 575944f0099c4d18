"""``mx.gluon``: parameters, blocks, layers and the trainer of MXNet 1.9.1's Gluon API, run
imperatively on sparsegen's kernels (see docs/gluon.md)."""

from .parameter import (Constant, DeferredInitializationError, Parameter, ParameterDict,
                        ParameterError)
from .block import Block, HybridBlock
from . import nn, contrib
from .trainer import Trainer

__all__ = ["Block", "Constant", "DeferredInitializationError", "HybridBlock", "Parameter",
           "ParameterDict", "ParameterError", "Trainer", "contrib", "nn"]
