"""Registries of named classes with MXNet 1.9.1's ``register`` / ``alias`` / ``create``
(``mxnet/registry.py``), for ``mx.init`` and ``mx.metric``."""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable
from typing import Any

from .errors import InvalidType, InvalidValue


class Factory:
    """The classes derived from ``base`` registered under lower-cased names, and ``create``."""

    def __init__(self, base: type, nickname: str) -> None:
        self.base = base
        self.nickname = nickname
        self.classes: dict[str, type] = {}

    def register(self, klass: type, name: str | None = None) -> type:
        """Register ``klass`` under ``name`` (its class name by default), case-insensitively;
        replacing another class warns, as MXNet."""
        if not (isinstance(klass, type) and issubclass(klass, self.base)):
            raise InvalidType(f"Can only register subclass of {self.base.__name__}, got {klass!r}")
        key = (klass.__name__ if name is None else name).lower()
        known = self.classes.get(key)
        if known is not None and known is not klass:
            warnings.warn(f"New {self.nickname} {klass.__module__}.{klass.__name__} registered "
                          f"with name {key} is overriding existing {self.nickname} "
                          f"{known.__module__}.{known.__name__}", UserWarning, stacklevel=2)
        self.classes[key] = klass
        return klass

    def alias(self, *names: str) -> Callable[[type], type]:
        """A class decorator registering the class under each of ``names``."""
        def register_all(klass: type) -> type:
            for name in names:
                self.register(klass, name)
            return klass
        return register_all

    def create(self, *args: Any, **kwargs: Any) -> Any:
        """An instance from a registered name (with constructor arguments), an instance (returned
        as is), a dict of keyword arguments naming the class under ``nickname``, or the JSON of
        ``'["name", {kwargs}]'`` / ``'{kwargs}'``, as MXNet's ``create``."""
        if args:
            name, args = args[0], args[1:]
        elif self.nickname in kwargs:
            name = kwargs.pop(self.nickname)
        else:
            raise InvalidValue(f"create: give the {self.nickname} to create")
        if isinstance(name, self.base):
            if args or kwargs:
                raise InvalidValue(f"{self.nickname} is already an instance. Additional "
                                   f"arguments are invalid")
            return name
        if isinstance(name, dict):
            return self.create(**name)
        if not isinstance(name, str):
            raise InvalidType(f"{self.nickname} must be of string type, got "
                              f"{type(name).__name__}")
        if name.startswith(("[", "{")):
            if args or kwargs:
                raise InvalidValue(f"{self.nickname} from JSON takes no other arguments")
            config = json.loads(name)
            return self.create(config[0], **config[1]) if isinstance(config, list) \
                else self.create(**config)
        klass = self.classes.get(name.lower())
        if klass is None:
            raise InvalidValue(f"{name.lower()} is not registered. Please register with "
                               f"{self.nickname}.register first (known: "
                               f"{', '.join(sorted(self.classes))})")
        return klass(*args, **kwargs)
