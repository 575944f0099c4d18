"""Settings read from the environment: the cache directory and the kernel thread count."""

from __future__ import annotations

import os
from pathlib import Path


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
        return max(1, int(configured))
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1
