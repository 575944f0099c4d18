"""``mx.name``: the naming scope of operators, as MXNet 1.9.1's ``NameManager`` and ``Prefix``.

Arrays carry no names; the scope exists so that code written for MXNet (``with
mx.name.NameManager():``, ``mx.name.Prefix('enc_')``) runs, and names the symbols of issue 15.
"""

from __future__ import annotations

import threading
from typing import Any


class NameManager:
    """Gives each unnamed operator ``hint`` followed by a counter (``dot0``, ``dot1``, ...);
    a ``with`` block makes it the current manager of its thread."""

    _local = threading.local()

    def __init__(self) -> None:
        self._counter: dict[str, int] = {}
        self._old: NameManager | None = None

    def get(self, name: str | None, hint: str) -> str:
        """``name`` if given, else ``hint`` and the number of names this manager gave it before."""
        if name:
            return name
        count = self._counter.get(hint, 0)
        self._counter[hint] = count + 1
        return f"{hint}{count}"

    def __enter__(self) -> "NameManager":
        self._old = NameManager.current()
        NameManager._local.value = self
        return self

    def __exit__(self, *exc: Any) -> None:
        NameManager._local.value = self._old

    @classmethod
    def current(cls) -> "NameManager":
        """The manager of the innermost ``with`` block of this thread (a default one outside)."""
        if getattr(cls._local, "value", None) is None:
            cls._local.value = NameManager()
        return cls._local.value


class Prefix(NameManager):
    """A ``NameManager`` that puts ``prefix`` before every name it gives or is given."""

    def __init__(self, prefix: str) -> None:
        super().__init__()
        self._prefix = prefix

    def get(self, name: str | None, hint: str) -> str:
        """``prefix`` and the name ``NameManager.get`` gives."""
        return self._prefix + super().get(name, hint)
