"""The test utilities MXNet's unit tests import from their ``common.py``, on sparsegen.

Only seeding, exception checks and module set-up: no operator is implemented here.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import random
import sys
from pathlib import Path
from tempfile import TemporaryDirectory  # noqa: F401 - MXNet's common.py exports one
from typing import Any, Callable, Iterator

import numpy as np

import mxnet as mx  # sparsegen, through the harness's import hook
from mxnet.base import MXNetError  # noqa: F401 - MXNet's common.py exports it
from mxnet.test_utils import environment  # noqa: F401 - MXNet's common.py exports it too

_LOG = logging.getLogger("common")

MXNET_TESTS = Path(os.getenv("MXNET_TESTS_DIR", "/work/mxnet-1.9.1/tests/python"))
"""MXNet's tests/python: its ``common/models.py`` (small symbols) is MXNet's own test data."""
sys.path.insert(0, str(MXNET_TESTS / "common"))
import models  # noqa: E402, F401 - MXNet's common.py exports it


def _seed_all(seed: int) -> None:
    """Seed numpy, Python and (where sparsegen has it) ``mx.random``."""
    np.random.seed(seed)
    random.seed(seed)
    seed_mx = getattr(getattr(mx, "random", None), "seed", None)
    if seed_mx is not None:
        seed_mx(seed)


def assertRaises(expected_exception: Any, func: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """Fail unless ``func(*args, **kwargs)`` raises ``expected_exception``."""
    try:
        func(*args, **kwargs)
    except expected_exception:
        return
    raise AssertionError(f"{getattr(func, '__name__', func)} did not raise {expected_exception}")


@contextlib.contextmanager
def random_seed(seed: int | None = None) -> Iterator[None]:
    """Run a block with numpy, Python and mx seeded by ``seed`` (a random one if None)."""
    after = np.random.randint(0, np.iinfo(np.int32).max)
    if seed is None:
        seed = int(np.random.RandomState().randint(0, np.iinfo(np.int32).max))
    try:
        _seed_all(seed)
        yield
    finally:
        _seed_all(after)


def with_seed(seed: int | None = None) -> Callable[..., Any]:
    """Run the test with the generators seeded (``seed``, else $MXNET_TEST_SEED, else random);
    the seed is logged when the test fails."""
    def decorate(test: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(test)
        def run(*args: Any, **kwargs: Any) -> Any:
            chosen = seed if seed is not None else os.getenv("MXNET_TEST_SEED")
            this_seed = int(chosen) if chosen is not None else int(
                np.random.randint(0, np.iinfo(np.int32).max))
            state = np.random.get_state()
            _seed_all(this_seed)
            try:
                return test(*args, **kwargs)
            except BaseException:
                _LOG.warning("error seen with seeded test, use MXNET_TEST_SEED=%d to reproduce",
                             this_seed)
                raise
            finally:
                mx.nd.waitall()
                np.random.set_state(state)
        return run
    return decorate


def setup_module() -> None:
    """Seed the generators once per test module ($MXNET_MODULE_SEED, else random)."""
    module_seed = os.getenv("MXNET_MODULE_SEED")
    _seed_all(int(module_seed) if module_seed else int(np.random.randint(0, np.iinfo(np.int32).max)))


def teardown() -> None:
    """Wait for every pending kernel after a test module."""
    mx.nd.waitall()


teardown_module = teardown


def xfail_when_nonstandard_decimal_separator(test: Callable[..., Any]) -> Callable[..., Any]:
    """The test as it is: the harness runs with the C locale's decimal point."""
    return test



def assert_raises_cudnn_not_satisfied(min_version: str) -> Callable[..., Any]:
    """The test as it is: sparsegen does not use cuDNN, so no version can fall short."""
    return lambda test: test


assert_raises_cuda_not_satisfied = assert_raises_cudnn_not_satisfied


def with_environment(*settings: Any) -> Callable[..., Any]:
    """Run the test with environment variables set (``mx.test_utils.environment``)."""
    def decorate(test: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(test)
        def run(*args: Any, **kwargs: Any) -> Any:
            with mx.test_utils.environment(*settings):
                return test(*args, **kwargs)
        return run
    return decorate


def run_in_spawned_process(func: Callable[..., Any], env: dict, *args: Any) -> bool:
    """Run ``func(seed, *args)`` in this process with ``env`` set (MXNet spawns one to escape
    its backend's cached environment reads; sparsegen reads the environment when asked)."""
    seed = int(np.random.randint(0, np.iinfo(np.int32).max))
    with mx.test_utils.environment(env):
        func(seed, *args)
    return True
