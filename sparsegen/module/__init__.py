"""``mx.mod`` / ``mx.module``: ``Module`` (a symbol bound with its parameters, optimizer and
kvstore) and ``BaseModule`` (the ``fit`` / ``score`` / ``predict`` loops), as MXNet 1.9.1's."""

from .base_module import BaseModule
from .module import Module

__all__ = ["BaseModule", "Module"]
