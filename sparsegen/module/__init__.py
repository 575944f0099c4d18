"""``mx.mod`` / ``mx.module``: ``Module`` (a symbol bound with its parameters, optimizer and
kvstore), ``BaseModule`` (the ``fit`` / ``score`` / ``predict`` loops), ``SequentialModule``
(modules chained) and ``PythonModule`` / ``PythonLossModule`` (modules in Python), as MXNet
1.9.1's."""

from . import python_module, sequential_module
from .base_module import BaseModule
from .module import Module
from .python_module import PythonLossModule, PythonModule
from .sequential_module import SequentialModule

__all__ = ["BaseModule", "Module", "PythonLossModule", "PythonModule", "SequentialModule"]
