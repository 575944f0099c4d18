"""Shared test setup: one kernel cache per test run, two kernel threads."""

import os
import subprocess
import sys
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
# CI runs the examples a fixed seed derives from each test (reproducible runs, a failure there is
# the same failure here); local runs draw new examples each time, to keep finding edge cases.
settings.register_profile("ci", settings.get_profile("sparsegen"), derandomize=True)
settings.load_profile(os.environ.get("SPARSEGEN_HYPOTHESIS_PROFILE", "sparsegen"))

_PREBUILD = ("from sparsegen.build import build_library; "
             "build_library(dtypes=('float32',), progress=False)")
_builder: list[subprocess.Popen] = []


def pytest_collection_finish(session) -> None:
    """On a whole-suite run, compile every kernel's float32 builds into the run's cache in a
    second process, so that on a cold cache the compiler keeps both cores busy while the tests
    run (a test that needs a kernel the builder is compiling waits for its lock, then loads it;
    no test asserts on this shared cache's counters: those use ``fresh_cache``).
    ``SPARSEGEN_TEST_PREBUILD=0`` turns it off."""
    if len(session.items) >= 1000 and os.environ.get("SPARSEGEN_TEST_PREBUILD", "1") != "0":
        _builder.append(subprocess.Popen([sys.executable, "-c", _PREBUILD],
                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))


def pytest_unconfigure(config) -> None:
    """Stop the builder if the tests finished first."""
    for process in _builder:
        process.terminate()
        process.wait()


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


@pytest.fixture
def fresh_warnings(monkeypatch):
    """An empty record of the storage-fallback warnings already given (MXNet-style, one per op
    and storage types per process), so the test sees its first ones."""
    from sparsegen.ndarray import dispatch

    monkeypatch.setattr(dispatch, "_WARNED", set())
