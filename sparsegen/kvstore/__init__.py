"""``mx.kv`` / ``mx.kvstore``: the key-value store of MXNet 1.9.1: one machine (``local``,
``device``) or the workers of a torch.distributed group (``dist_sync`` and its device
spellings, docs/distributed.md)."""

from __future__ import annotations

from ..errors import InvalidType, InvalidValue
from .base import KVStoreBase, TestStore
from .kvstore import KVStore

LOCAL_TYPES = ("local", "device", "local_allreduce_cpu", "local_allreduce_device",
               "local_update_cpu")
"""The kvstore types that aggregate and update in this process (MXNet's ``local_*`` spellings
name where it reduces: the sums are the same)."""

DIST_TYPES = ("dist_sync", "dist_device_sync", "dist_sync_device")
"""The distributed kvstore types (synchronous, on torch.distributed; the three behave alike)."""

TYPES = LOCAL_TYPES + DIST_TYPES
"""The kvstore types sparsegen runs."""


def check_type(name: object) -> str:
    """``name`` if it is a kvstore type sparsegen runs; else a clear error naming those."""
    if not isinstance(name, str):
        raise InvalidType(f"kvstore: the type must be a string, got {type(name).__name__}")
    if name not in TYPES:
        kind = "asynchronous kvstore type" if "async" in name else "kvstore type"
        raise InvalidValue(f"kvstore: unknown or unsupported {kind} {name!r}; the supported "
                           f"types are {', '.join(TYPES)}")
    return name


def create(name: str = "local", timeout: float | None = None) -> KVStoreBase:
    """A new KVStore of type ``name``, as ``mx.kv.create``; a distributed one waits at most
    ``timeout`` seconds (default ``$SPARSEGEN_KV_TIMEOUT`` or 60) for the other workers; a type
    registered with ``KVStoreBase.register`` (``'teststore'``) is made by its class."""
    if isinstance(name, str) and name in KVStoreBase.kv_registry:
        return KVStoreBase.kv_registry[name]()
    if check_type(name) in LOCAL_TYPES:
        if timeout is not None:
            raise InvalidValue(f"kvstore: timeout is for the distributed types, not {name!r}")
        return KVStore(name)
    from .dist import DistKVStore

    return DistKVStore(name, timeout)


__all__ = ["DIST_TYPES", "KVStore", "KVStoreBase", "LOCAL_TYPES", "TYPES", "TestStore",
           "check_type", "create"]
