"""``mx.optimizer``: SGD, Adam, AdaGrad and Ftrl on generated in-place update kernels.

The update rules, the lazy / standard choice and the state storage types follow MXNet 1.9.1
(``python/mxnet/optimizer/optimizer.py`` and ``src/operator/optimizer_op-inl.h``);
docs/optimizers.md lists them and where sparsegen differs. Hyper-parameters are checked when
they are set (constructor, attribute, ``set_*``) and again as the values an update uses (the
scheduler's output, multipliers, bias correction). Every update validates all its arrays and
values before it writes anything and counts only once the kernel has run, so a failed update
leaves weight, states (values and storage) and update counts unchanged.

Every update is an op of the registry (``sgd_update``, ``sgd_mom_update``, ``adam_update``,
``adagrad_update``, ``ftrl_update``) run by ``ndarray.dispatch.invoke``. ``base`` holds the
``Optimizer`` class and its registry, ``hyper`` and ``arrays`` the checks of hyper-parameters
and arrays, one module per optimizer, ``updater`` the ``Updater``.
"""

from .adagrad import AdaGrad
from .adam import Adam
from .base import Optimizer
from .ftrl import Ftrl
from .sgd import SGD
from .updater import Updater, get_updater

register = Optimizer.register
create = Optimizer.create_optimizer

__all__ = [
    "AdaGrad", "Adam", "Ftrl", "Optimizer", "SGD", "Updater", "create", "get_updater", "register",
]
