"""Storage-type inference as data: (op, input storage types) -> the output storage type and the
storage-level implementation that serves it.

Each family module of ``sparsegen/ops`` declares its ops' rules beside their implementations
(``STORAGE_RULES``, with the functions themselves); this module merges them, derives the
``<name>_update`` ops of the registered update rules, and is the one lookup
(``ndarray/dispatch.invoke``, the symbolic graph's storage inference). Rules change no
binary, so nothing here is in a kernel's cache key."""

from __future__ import annotations

from .ops import (arith, astype, batch, broadcast, cast, compare, conv, dot, elemwise, gather,
                  layers, linalg, random, reduce, retain, shape, signal, sort)
from .ops.optim import update_storage_rules
from .ops.rule import VARIADIC, Rules, StorageRule
from .registry import UPDATE_RULES

FAMILIES = (arith, astype, batch, broadcast, cast, compare, conv, dot, elemwise, gather, layers,
            linalg, random, reduce, retain, shape, signal, sort)
"""The ``sparsegen/ops`` modules that declare storage rules (a test checks none is missing)."""

STORAGE_RULES: Rules = {key: rule for family in FAMILIES
                        for key, rule in family.STORAGE_RULES.items()}
"""(op, input storage types) -> output storage type and implementation, every family's."""

_UPDATE = "_update"


def storage_rule(op: str, stypes: tuple[str, ...]) -> StorageRule | None:
    """The rule for ``op`` on inputs of ``stypes``, or ``None`` when no sparse kernel exists.

    A rule keyed ``(stype, VARIADIC)`` serves any number of inputs of that one storage type;
    ``<name>_update`` ops are derived from the registered update rule ``name``
    (``ops.optim.update_storage_rules``)."""
    rule = STORAGE_RULES.get((op, stypes))
    if rule is None and stypes and stypes.count(stypes[0]) == len(stypes):
        rule = STORAGE_RULES.get((op, (stypes[0], VARIADIC)))
    if rule is None and op.endswith(_UPDATE):
        update = UPDATE_RULES.get(op[:-len(_UPDATE)])
        rule = update_storage_rules(update).get((op, stypes)) if update is not None else None
    return rule


COMPOSED_OPS = (
    "SoftmaxOutput", "LinearRegressionOutput", "LogisticRegressionOutput",
    "MAERegressionOutput", "MakeLoss", "make_loss", "BlockGrad", "BatchNorm", "_copyto",
    "_sample_multinomial", "SVMOutput", "IdentityAttachKLSparseReg",
    "_contrib_gradientmultiplier", "_contrib_round_ste", "_contrib_sign_ste",
    "RNN",
)
"""Ops with no rule of their own: the front end (``ndarray/output.py``, ``ndarray/batchnorm.py``)
computes them with other ops (``_copyto``: ``as_in_context`` moves the storage to another
context; ``_sample_multinomial``: the sampler's kernel, whose log-probabilities differentiate)
and records each as one node, whose gradient rule is in ``autograd/gradients``."""
