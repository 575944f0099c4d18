"""``mx.AttrScope``: attributes given to every symbol created inside a ``with`` block, as MXNet
1.9.1's ``mx.attribute.AttrScope``."""

from __future__ import annotations

import threading
from typing import Any

from .errors import InvalidValue


class AttrScope:
    """A ``with`` scope whose string attributes (``ctx_group='dev1'``) every symbol created in
    it carries; nested scopes add to the outer ones."""

    _local = threading.local()

    def __init__(self, **kwargs: str) -> None:
        for key, value in kwargs.items():
            if not isinstance(value, str):
                raise InvalidValue(f"AttrScope: attribute {key} must be a string, got {value!r}")
        self._attr = dict(kwargs)
        self._old: AttrScope | None = None

    def get(self, attr: dict[str, str] | None) -> dict[str, str]:
        """The scope's attributes updated with ``attr`` (a symbol's own win)."""
        return {**self._attr, **(attr or {})}

    def __enter__(self) -> "AttrScope":
        self._old = AttrScope.current()
        merged = AttrScope(**self._old.get(self._attr))
        AttrScope._local.value = merged
        return self

    def __exit__(self, *exc: Any) -> None:
        AttrScope._local.value = self._old

    @classmethod
    def current(cls) -> "AttrScope":
        """The scope of the innermost ``with`` block of this thread (an empty one outside)."""
        if getattr(cls._local, "value", None) is None:
            cls._local.value = AttrScope()
        return cls._local.value
