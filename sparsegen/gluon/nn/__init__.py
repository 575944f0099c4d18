"""``gluon.nn``: the basic layers of MXNet 1.9.1 (Dense, Embedding, Dropout, BatchNorm,
BatchNormReLU, LayerNorm, InstanceNorm, GroupNorm, Flatten, the activations, Lambda,
HybridLambda, Sequential, HybridSequential; ``Block`` and ``HybridBlock`` as MXNet's module
names them too)."""

from ..block import Block, HybridBlock
from .activations import ELU, GELU, SELU, Activation, LeakyReLU, PReLU, Swish
from .basic_layers import (BatchNorm, Dense, Dropout, Embedding, Flatten, GroupNorm,
                           HybridLambda, HybridSequential, InstanceNorm, Lambda, LayerNorm,
                           Sequential)
from .batchnorm_relu import BatchNormReLU

__all__ = ["ELU", "GELU", "SELU", "Activation", "BatchNorm", "BatchNormReLU", "Block", "Dense",
           "Dropout", "Embedding", "Flatten", "GroupNorm", "HybridBlock", "HybridLambda",
           "HybridSequential", "InstanceNorm", "LayerNorm", "LeakyReLU", "Lambda", "PReLU",
           "Sequential", "Swish"]
