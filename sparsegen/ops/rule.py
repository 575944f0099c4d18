"""``StorageRule``: how a front-end op runs for one combination of input storage types.

Each family module of ``sparsegen/ops`` declares the rules of its ops beside their
implementations, in a ``STORAGE_RULES`` table keyed by ``(op, input storage types)`` and
holding the implementation itself; ``storage_rules.py`` merges the tables and is the one lookup.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

STYPES = ("default", "row_sparse", "csr")
"""The storage types, by MXNet's names: dense, row_sparse (``RowSparse``), csr (``CSR``)."""

VARIADIC = "..."
"""The last storage type of a rule's key that takes any number of inputs of the one before."""


@dataclass(frozen=True)
class StorageRule:
    """The output storage type (``None``: the op writes its inputs or checks them, no array
    result) and the storage-level implementation that serves one key."""

    output_stype: str | None
    function: Callable[..., Any]


Rules = dict[tuple[str, tuple[str, ...]], StorageRule]
"""A family's storage rules: ``(op, input storage types) -> StorageRule``."""
