"""``mx.optimizer.optimizer``: MXNet's module of the optimizer classes, the same classes as
``mx.optimizer`` (scripts import them from either)."""

from __future__ import annotations

from .accumulate import Test
from .adadelta import AdaDelta
from .adagrad import AdaGrad
from .adam import Adam
from .adamax import Adamax
from .base import Optimizer
from .dcasgd import DCASGD
from .ftml import FTML
from .ftrl import Ftrl
from .lamb import LAMB
from .lars import LARS
from .lbsgd import LBSGD
from .nadam import Nadam
from .nag import NAG
from .rmsprop import RMSProp
from .sgd import SGD, ccSGD
from .sgld import SGLD
from .signum import Signum
from .updater import Updater, get_updater

register = Optimizer.register
create = Optimizer.create_optimizer

__all__ = [
    "AdaDelta", "AdaGrad", "Adam", "Adamax", "DCASGD", "FTML", "Ftrl", "LAMB", "LARS", "LBSGD",
    "NAG", "Nadam", "Optimizer", "RMSProp", "SGD", "SGLD", "Signum", "Test", "Updater", "ccSGD",
    "create", "get_updater", "register",
]
