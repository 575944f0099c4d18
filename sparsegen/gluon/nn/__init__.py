"""``gluon.nn``: the basic layers of MXNet 1.9.1 (Dense, Embedding, Dropout, Flatten,
Activation, Lambda, HybridLambda, Sequential, HybridSequential)."""

from .activations import Activation
from .basic_layers import (Dense, Dropout, Embedding, Flatten, HybridLambda, HybridSequential,
                           Lambda, Sequential)

__all__ = ["Activation", "Dense", "Dropout", "Embedding", "Flatten", "HybridLambda",
           "HybridSequential", "Lambda", "Sequential"]
