"""``mx.executor``: the ``Executor`` of a bound symbol (``symbol/executor.py``), where MXNet
code imports it from."""

from .symbol.executor import Executor

__all__ = ["Executor"]
