"""Settings read from the environment: the cache directory and the kernel thread count."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import SparsegenError


def cache_dir() -> Path:
    """The kernel cache directory: ``$SPARSEGEN_CACHE_DIR`` or ``~/.cache/sparsegen``."""
    configured = os.environ.get("SPARSEGEN_CACHE_DIR")
    if configured:
        return Path(configured).expanduser()
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "sparsegen"


def num_threads() -> int:
    """Threads for parallel kernels: ``$TVM_NUM_THREADS`` if set, else every core this process may use."""
    configured = os.environ.get("TVM_NUM_THREADS")
    if configured:
        try:
            count = int(configured)
        except ValueError:
            count = 0
        if count < 1:
            raise SparsegenError(
                f"TVM_NUM_THREADS must be a positive integer (the kernel thread count), "
                f"got {configured!r}"
            )
        return count
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1
