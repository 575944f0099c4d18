"""``gluon.nn``: the basic layers of MXNet 1.9.1 (Dense, Embedding, Dropout, BatchNorm,
Flatten, Activation, Lambda, HybridLambda, Sequential, HybridSequential)."""

from .activations import Activation
from .basic_layers import (BatchNorm, Dense, Dropout, Embedding, Flatten, HybridLambda,
                           HybridSequential, Lambda, Sequential)

__all__ = ["Activation", "BatchNorm", "Dense", "Dropout", "Embedding", "Flatten", "HybridLambda",
           "HybridSequential", "Lambda", "Sequential"]
