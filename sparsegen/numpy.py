"""``mx.numpy`` / ``mx.np``: MXNet's NumPy-compatible array interface is out of scope for
sparsegen (it has no sparse arrays); this module stands in for it so that code importing it at
the top runs, and any use raises ``NotSupported`` naming what was asked for."""

from __future__ import annotations

from typing import Any

from .errors import NotSupported


def __getattr__(name: str) -> Any:
    """Every attribute of ``mx.np``: refused (use ``mx.nd``)."""
    if name.startswith("__"):
        raise AttributeError(name)
    raise NotSupported(f"mx.np.{name}: MXNet's numpy interface (mx.np / mx.npx) is out of scope "
                       "for sparsegen; use mx.nd")
