"""Parameter values for the gluon tests, set through ``Parameter.initialize`` where mx.init
exists (it comes from another branch of issue 14), else by placing the data directly."""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np

import sparsegen as mx

HAVE_INIT = importlib.util.find_spec("sparsegen.initializer") is not None
"""mx.init comes from another branch of issue 14; the real-initializer tests run once it is
merged."""


def initialize(params: Any, values: dict[str, np.ndarray]) -> None:
    """Give each parameter its value from ``values`` (by full name): through
    ``Parameter.initialize`` and ``set_data`` where mx.init exists, else by placing the data."""
    for name, param in params.items():
        value = mx.nd.array(values[name], dtype=param.dtype)
        if HAVE_INIT:
            param.shape = value.shape
            param.initialize(init="zeros", force_reinit=True)
            param.set_data(value)
        else:
            param.shape = value.shape
            param._init_impl(value.tostype(param.stype), [mx.cpu()])


def seeded(params: Any, seed: int = 0) -> dict[str, np.ndarray]:
    """Random float32 values for ``params`` (complete shapes), set with ``initialize``."""
    rng = np.random.default_rng(seed)
    values = {n: rng.standard_normal(p.shape).astype(np.float32) for n, p in params.items()}
    initialize(params, values)
    return values
