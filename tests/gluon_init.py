"""Parameter values for the gluon tests, set through ``Parameter.initialize`` and ``set_data``."""

from __future__ import annotations

from typing import Any

import numpy as np

import sparsegen as mx


def initialize(params: Any, values: dict[str, np.ndarray]) -> None:
    """Give each parameter its value from ``values`` (by full name)."""
    for name, param in params.items():
        value = mx.nd.array(values[name], dtype=param.dtype)
        param.shape = value.shape
        param.initialize(init="zeros", force_reinit=True)
        param.set_data(value)


def seeded(params: Any, seed: int = 0) -> dict[str, np.ndarray]:
    """Random float32 values for ``params`` (complete shapes), set with ``initialize``."""
    rng = np.random.default_rng(seed)
    values = {n: rng.standard_normal(p.shape).astype(np.float32) for n, p in params.items()}
    initialize(params, values)
    return values
