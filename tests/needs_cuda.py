"""The skips of CUDA tests for lack of nvcc or a GPU: each says why, and with
``SPARSEGEN_REQUIRE_CUDA=1`` in the environment (GPU machines) each is a failure instead."""

from __future__ import annotations

import os
import shutil

import pytest

from sparsegen import device

REQUIRED = os.environ.get("SPARSEGEN_REQUIRE_CUDA") == "1"
"""Whether a missing nvcc or GPU fails the tests that need it."""


def skip(reason: str) -> None:
    """Skip the calling test for lack of CUDA (``reason``), or fail it where CUDA is required."""
    if REQUIRED:
        pytest.fail(f"SPARSEGEN_REQUIRE_CUDA=1, but {reason}", pytrace=False)
    pytest.skip(reason)


def nvcc() -> None:
    """Skip (or fail) unless the CUDA toolkit's nvcc is on PATH."""
    if shutil.which("nvcc") is None:
        skip("nvcc (the CUDA toolkit) is not installed on this machine")


def gpu() -> None:
    """Skip (or fail) unless ``gpu(0)`` is a real CUDA GPU (``SPARSEGEN_GPU`` must be ``cuda``)."""
    if device.emulated() or device.num_gpus() == 0:
        skip(f"no CUDA GPU here{device.missing_gpu_reason()}")
