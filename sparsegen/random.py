"""``mx.random``: seeding the generators, and the samplers of ``mx.nd.random`` under the names
MXNet gives them here (``mx.random.uniform`` ...)."""

from __future__ import annotations

import numbers
from typing import Any

from .context import Context
from .errors import InvalidValue
from .ndarray.random import *  # noqa: F403 - the samplers, as MXNet's mx.random re-exports them
from .ndarray import random as _samplers
from .ops import random as _generator


def seed(seed_state: int, ctx: Any = "all") -> None:
    """Restart the generator of every context (``ctx="all"``) or of context ``ctx`` at
    ``seed_state`` (any int: its value modulo 2**64 is the generator's key).

    After ``seed(s)`` every context draws the same numbers for the same calls (MXNet mixes in
    the device id there; ``seed(s, ctx)`` makes MXNet's devices agree too)."""
    if not isinstance(seed_state, numbers.Integral):
        raise InvalidValue(f"seed_state must be int, got {type(seed_state).__name__} "
                           f"{seed_state!r}")
    if isinstance(ctx, str) and ctx == "all":
        _generator.seed(int(seed_state))
        return
    context = Context(ctx)
    _generator.seed(int(seed_state), (context.device_type, context.device_id))


__all__ = ["seed", *_samplers.__all__]
