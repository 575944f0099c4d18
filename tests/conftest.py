"""Shared test setup: one kernel cache per test run, two kernel threads."""

import os
import tempfile

# Set before sparsegen is imported anywhere, so that every test (and every subprocess a test
# starts) shares one cache and kernels are compiled once per run.
os.environ.setdefault("SPARSEGEN_CACHE_DIR", tempfile.mkdtemp(prefix="sparsegen-test-cache-"))
os.environ.setdefault("TVM_NUM_THREADS", "2")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile(
    "sparsegen", deadline=None, max_examples=40, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("sparsegen")

DTYPES = ("float16", "float32", "float64", "uint8", "int8", "int32", "int64")


@pytest.fixture
def rng() -> np.random.Generator:
    """A seeded generator."""
    return np.random.default_rng(0)


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """An empty kernel cache directory (and so an empty user tuning log) for one test."""
    from sparsegen import cache

    monkeypatch.setenv("SPARSEGEN_CACHE_DIR", str(tmp_path))
    cache.reset()
    yield cache.default_cache()
    cache.reset()
