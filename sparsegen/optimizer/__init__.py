"""``mx.optimizer``: SGD, NAG, Signum, Adam, Adamax, Nadam, LAMB, AdaGrad, AdaDelta, RMSProp,
Ftrl, FTML, DCASGD, LARS, LBSGD, MXNet's Test and ``contrib.GroupAdaGrad`` on generated
in-place update kernels, and SGLD (a step of elementwise ops plus noise).

The update rules, the lazy / standard choice and the state storage types follow MXNet 1.9.1
(``python/mxnet/optimizer/optimizer.py`` and ``src/operator/optimizer_op-inl.h``);
docs/optimizers.md lists them and where sparsegen differs. Hyper-parameters are checked when
they are set (constructor, attribute, ``set_*``) and again as the values an update uses (the
scheduler's output, multipliers, bias correction). Every update validates all its arrays and
values before it writes anything and counts only once the kernel has run, so a failed update
leaves weight, states (values and storage) and update counts unchanged.

Every update but SGLD's runs an update rule (``update_rules``: the op ``<rule>_update``, kernel
``optim_<rule>``), by ``ndarray.optim_run.run`` (MXNet's storage fallbacks, the checks of
``ndarray.optim_arrays``) through ``ndarray.dispatch.invoke``, as the operator-level updates
(``ndarray.optim_ops``) are; hyper-parameters go by name.
``base`` holds the ``Optimizer`` class and its registry, ``hyper`` and ``inputs`` the checks of
hyper-parameters, states and indices, one module per optimizer, ``updater`` the ``Updater``.
"""

from ..ndarray import abs as NDabs  # noqa: N812 - MXNet's name (optimizer.py imports it so)
from . import contrib
from .accumulate import Test
from .adadelta import AdaDelta
from .adagrad import AdaGrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .base import Optimizer
from .contrib import GroupAdaGrad
from .dcasgd import DCASGD
from .ftml import FTML
from .ftrl import Ftrl
from .lamb import LAMB
from .lars import LARS
from .lbsgd import LBSGD
from .lion import Lion
from .nadam import Nadam
from .nag import NAG
from .rmsprop import RMSProp
from .rule import RuleOptimizer
from .sgd import SGD, ccSGD
from .sgld import SGLD
from .signum import Signum
from .updater import Updater, get_updater
from . import optimizer  # noqa: E402 - MXNet's module mxnet.optimizer.optimizer

register = Optimizer.register
create = Optimizer.create_optimizer

__all__ = [
    "AdaDelta", "AdaGrad", "Adam", "Adamax", "Ftrl", "LAMB", "NAG", "Nadam", "Optimizer", "RMSProp",
    "SGD", "SGLD", "Signum", "Updater", "create", "get_updater", "register",
    "AdamW", "Lion", "RuleOptimizer", "DCASGD", "FTML", "GroupAdaGrad", "Test", "ccSGD",
    "contrib", "LARS", "LBSGD", "NDabs", "optimizer",
]
