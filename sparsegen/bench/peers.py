"""Optional peer libraries for benchmarks: PyTorch CPU when importable."""

from __future__ import annotations

from typing import Any


def torch() -> Any:
    """The ``torch`` module, or ``None`` when it is not installed."""
    try:
        import torch as module
    except ImportError:
        return None
    return module
