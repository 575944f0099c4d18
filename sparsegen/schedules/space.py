"""Knob spaces: the tunable parameters of a schedule, their candidate values and defaults."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..errors import SparsegenError

Config = tuple[tuple[str, Any], ...]
"""A schedule configuration: sorted ``(knob, value)`` pairs, hashable and JSON-able."""


@dataclass(frozen=True)
class Knob:
    """One tunable parameter: its candidate values and the value used without tuning."""

    name: str
    values: tuple[Any, ...]
    default: Any
    doc: str
    threshold: bool = False  # calls touching fewer elements than its value are small calls
    # (the knob steers dispatch only and is not part of the cache key)
    small: Any = None  # the value of the small calls' build (None: the config's own)

    def allows(self, value: Any) -> bool:
        """Whether ``value`` is one of the candidates (``True`` is not taken for ``1``)."""
        return any(type(v) is type(value) and v == value for v in self.values)


class Variants(NamedTuple):
    """The binary configs a config dispatches to: one for large calls, one for small calls."""

    full: Config  # the cache key's config for calls of at least ``small_below`` elements
    small: Config  # the cache key's config for smaller calls
    small_below: int  # 0 where small calls use the full config


@dataclass(frozen=True)
class ScheduleSpace:
    """A schedule function and the knobs it reads from its config."""

    name: str
    knobs: tuple[Knob, ...]
    apply: Callable[[Any, Mapping[str, Any]], Any]  # (IRModule, config) -> scheduled IRModule

    def default(self) -> Config:
        """The configuration used when no tuning record applies."""
        return tuple(sorted((k.name, k.default) for k in self.knobs))

    def config(self, values: Mapping[str, Any] | None = None) -> Config:
        """A full configuration from ``values`` (missing knobs take their defaults)."""
        merged = dict(self.default())
        for name, value in (values or {}).items():
            knob = next((k for k in self.knobs if k.name == name), None)
            if knob is None:
                raise SparsegenError(
                    f"schedule {self.name!r} has no knob {name!r}; its knobs are "
                    f"{[k.name for k in self.knobs]}"
                )
            if not knob.allows(value):
                raise SparsegenError(
                    f"schedule {self.name!r}: knob {name!r} = {value!r} is not one of its "
                    f"values {list(knob.values)}"
                )
            merged[name] = value
        return tuple(sorted(merged.items()))

    def binary(self, config: Config) -> Config:
        """The part of ``config`` that changes the compiled binary (the cache key's config)."""
        dispatch_only = {k.name for k in self.knobs if k.threshold}
        return tuple(item for item in config if item[0] not in dispatch_only)

    def variants(self, config: Config) -> Variants:
        """The binaries of the full ``config``: small calls (below its threshold knob's value)
        get the knobs' ``small`` values, where those differ from ``config``'s."""
        values = dict(config)
        small = self.config({**values, **{k.name: k.small for k in self.knobs
                                          if k.small is not None}})
        below = next((values[k.name] for k in self.knobs if k.threshold), 0)
        return Variants(self.binary(config), self.binary(small), below if small != config else 0)

    def candidates(self) -> Iterator[Config]:
        """Every configuration of the space, the default first."""
        yield self.default()
        names = [k.name for k in self.knobs]
        for values in itertools.product(*(k.values for k in self.knobs)):
            config = tuple(sorted(zip(names, values)))
            if config != self.default():
                yield config
