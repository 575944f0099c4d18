"""``mx.kv`` / ``mx.kvstore``: the one-machine key-value store (``local``, ``device``), as
MXNet 1.9.1's; the distributed types are issue 16's work and raise until then."""

from __future__ import annotations

from ..errors import InvalidType, InvalidValue
from .kvstore import KVStore

TYPES = ("local", "device")
"""The kvstore types sparsegen runs (both aggregate and update in this process)."""


def check_type(name: object) -> str:
    """``name`` if it is a kvstore type sparsegen runs; else a clear error (``dist_*``: not
    available yet)."""
    if not isinstance(name, str):
        raise InvalidType(f"kvstore: the type must be a string, got {type(name).__name__}")
    if name.startswith("dist"):
        raise InvalidValue(f"kvstore: type {name!r} (the distributed kvstore) is not available "
                           f"yet (issue 16); the supported types are {', '.join(TYPES)}")
    if name not in TYPES:
        raise InvalidValue(f"kvstore: unknown type {name!r}; the supported types are "
                           f"{', '.join(TYPES)}")
    return name


def create(name: str = "local") -> KVStore:
    """A new KVStore of type ``name`` (``'local'`` or ``'device'``), as ``mx.kv.create``."""
    return KVStore(check_type(name))


__all__ = ["KVStore", "TYPES", "check_type", "create"]
