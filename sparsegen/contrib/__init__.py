"""``mx.contrib``: MXNet's contrib operators under their older spellings (``mx.contrib.nd``,
``mx.contrib.sym``), its first autograd interface (``mx.contrib.autograd``); automatic mixed
precision (``amp``) is out of scope."""

from __future__ import annotations

import importlib
from types import ModuleType

_ALIASES = {"nd": "ndarray", "ndarray": "ndarray", "sym": "symbol", "symbol": "symbol"}
"""``mx.contrib.<name>`` -> the sparsegen namespace whose ``contrib`` it is."""

__all__ = ["amp", "autograd", "nd", "ndarray", "sym", "symbol"]


def __getattr__(name: str) -> ModuleType:
    """``mx.contrib.nd`` is ``mx.nd.contrib``, ``mx.contrib.sym`` is ``mx.sym.contrib``."""
    if name == "amp":
        return importlib.import_module(f"{__name__}.amp")
    if name == "autograd":
        return importlib.import_module(f"{__name__}.autograd")
    if name in _ALIASES:
        return importlib.import_module(f"sparsegen.{_ALIASES[name]}").contrib
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
