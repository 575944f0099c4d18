"""The schedule config of a call: given, tuned (user or shipped records) or the defaults, and
the cache keys of its builds for large and small calls."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import registry
from .cachekey import KernelKey
from .schedules.space import Config
from .target import Target
from .target import resolve as resolve_target
from . import tuning_records


@dataclass(frozen=True)
class Choice:
    """The schedule config chosen for a call, where it came from, and its cache keys."""

    config: Config  # every knob, dispatch-only ones included
    source: str  # "given", "user", "shipped" or "default"
    measured_on: str | None  # the label of the target the records were measured on, if any
    key: KernelKey  # the build for calls of at least small_below elements
    small_key: KernelKey  # the build for smaller calls (the schedule space's small-call variant)
    small_below: int

    def is_small(self, size: int | None) -> bool:
        """Whether a call touching ``size`` elements (None: a large call) gets the small build."""
        return size is not None and size < self.small_below

    def key_for(self, size: int | None) -> KernelKey:
        """The key of the build for a call touching ``size`` elements (None: a large call)."""
        return self.small_key if self.is_small(size) else self.key


def choose(
    name: str,
    dtypes: tuple[str, ...],
    target: "Target | str | dict[str, Any] | None" = None,
    config: dict[str, Any] | None = None,
    bucket: str = "large",
) -> Choice:
    """The config for kernel ``name`` on ``target``: ``config`` if given, else the best tuning
    record for the size ``bucket`` (user logs, then shipped logs; for a CPU with none of its own,
    those of the nearest CPU of its family), else the schedule defaults."""
    definition = registry.kernel_def(name)
    definition.check_dtypes(dtypes)
    resolved = resolve_target(target)
    space = definition.space(resolved.kind)
    source, measured_on = "given", None
    if config is None:
        knobs = frozenset(k.name for k in space.knobs)
        found = tuning_records.best(name, dtypes, resolved, bucket, knobs)
        config, source, measured_on = found if found else ({}, "default", None)
    full = space.config(config)
    variants = space.variants(full)
    return Choice(
        full,
        source,
        measured_on,
        KernelKey(name, dtypes, resolved, variants.full, definition.definition),
        KernelKey(name, dtypes, resolved, variants.small, definition.definition),
        variants.small_below,
    )


def kernel_key(
    name: str,
    dtypes: tuple[str, ...],
    target: "Target | str | dict[str, Any] | None" = None,
    config: dict[str, Any] | None = None,
) -> KernelKey:
    """The cache key of kernel ``name`` for ``dtypes`` on ``target`` with ``config`` (or defaults)."""
    return choose(name, dtypes, target, config or {}).key
