"""``mx.kv.KVStoreBase``: the interface of MXNet 1.9.1's key-value stores and its registry of
store types written in Python (``@KVStoreBase.register``; ``mx.kv.create(name)`` makes one by
its lower-case class name), with MXNet's ``TestStore`` (``'teststore'``: sums over the devices
of one process, runs no optimizer)."""

from __future__ import annotations

import warnings
from typing import Any

from ..errors import InvalidType, InvalidValue


class KVStoreBase:
    """A key-value store: ``broadcast`` (initialize a key and copy its value out), ``pushpull``
    (sum values and give the sum back), the optimizer it may run, and what it can do."""

    OPTIMIZER = "optimizer"
    """The capability of running the optimizer's updates on the store (``is_capable``)."""
    kv_registry: dict[str, type] = {}
    """The registered store types by lower-case class name."""

    def broadcast(self, key: Any, value: Any, out: Any, priority: int = 0) -> None:
        """Initialize ``key`` with ``value`` (rank 0's) and copy it into ``out``."""
        raise NotImplementedError

    def pushpull(self, key: Any, value: Any, out: Any = None, priority: int = 0) -> None:
        """Sum ``value`` (an array or a list) over devices and workers into ``out`` (or back
        into ``value``)."""
        raise NotImplementedError

    def set_optimizer(self, optimizer: Any) -> None:
        """Run ``optimizer``'s updates on the store (where ``is_capable('optimizer')``)."""
        raise NotImplementedError

    def is_capable(self, capability: str) -> bool:
        """Whether the store can ``capability`` (``KVStoreBase.OPTIMIZER``)."""
        raise NotImplementedError

    def save_optimizer_states(self, fname: str, dump_optimizer: bool = False) -> None:
        """Save the optimizer states the store keeps into the file ``fname``."""
        raise NotImplementedError

    def load_optimizer_states(self, fname: str) -> None:
        """Load optimizer states saved by ``save_optimizer_states``."""
        raise NotImplementedError

    @property
    def type(self) -> str:
        """The store's type name."""
        raise NotImplementedError

    @property
    def rank(self) -> int:
        """This worker's rank."""
        raise NotImplementedError

    @property
    def num_workers(self) -> int:
        """The number of workers."""
        raise NotImplementedError

    @staticmethod
    def register(klass: type) -> type:
        """Register store type ``klass`` (a class decorator) under its lower-case name, for
        ``mx.kv.create``; a name registered again is replaced, with a warning."""
        if not isinstance(klass, type):
            raise InvalidType(f"KVStoreBase.register: expected a class, got "
                              f"{type(klass).__name__}")
        name = klass.__name__.lower()
        if name in KVStoreBase.kv_registry:
            old = KVStoreBase.kv_registry[name]
            warnings.warn(f"kvstore {klass.__module__}.{klass.__name__} replaces the registered "
                          f"{old.__module__}.{old.__name__}", UserWarning, stacklevel=2)
        KVStoreBase.kv_registry[name] = klass
        return klass


@KVStoreBase.register
class TestStore(KVStoreBase):
    """MXNet's store for testing: sums the values of one process's devices, runs no
    optimizer."""

    __test__ = False  # not a pytest test class

    def broadcast(self, key: Any, value: Any, out: Any, priority: int = 0) -> None:
        """Copy ``value`` into each of ``out``."""
        for target in out if isinstance(out, (list, tuple)) else [out]:
            target[:] = value

    def pushpull(self, key: Any, value: Any, out: Any = None, priority: int = 0) -> None:
        """The sum of ``value`` (a list: on its first array's context) into ``out``, or into
        each of ``value``."""
        values = list(value) if isinstance(value, (list, tuple)) else [value]
        total = values[0].copy()
        for other in values[1:]:
            total += other.as_in_context(total.context)
        targets = values if out is None else (out if isinstance(out, (list, tuple)) else [out])
        for target in targets:
            target[:] = total

    def is_capable(self, capability: str) -> bool:
        """Nothing: it runs no optimizer (an unknown capability raises)."""
        if str(capability).lower() == KVStoreBase.OPTIMIZER:
            return False
        raise InvalidValue(f"Unknown capability: {capability}")

    @property
    def type(self) -> str:
        """``'teststore'``."""
        return "teststore"

    @property
    def rank(self) -> int:
        """0: one process."""
        return 0

    @property
    def num_workers(self) -> int:
        """1: one process."""
        return 1
