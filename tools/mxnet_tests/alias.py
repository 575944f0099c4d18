"""``import mxnet`` (and ``mxnet.X``) served by sparsegen, for running MXNet's own test files.

``install()`` puts a finder first on ``sys.meta_path``: ``mxnet.X`` is the module ``sparsegen.X``
(the same object, so ``mxnet.nd is sparsegen.nd``). The parts of MXNet outside sparsegen's scope
(``mx.sym``, ``mx.symbol``, ``mx.gluon``, ``mx.autograd``: issues 14 and 15) become placeholder
modules whose every attribute raises ``OutOfScope``, so that a test touching them is reported
as out of scope rather than as a missing name. Placeholders are only made for names sparsegen
does not have.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
from typing import Any

OUT_OF_SCOPE = ("sym", "symbol", "gluon", "autograd")  # placeholders only where sparsegen has none
"""The parts of MXNet that sparsegen leaves to later issues."""


class OutOfScope(Exception):
    """A test used a part of MXNet outside sparsegen's scope (symbolic API, Gluon, autograd)."""


class _Placeholder(types.ModuleType):
    """A module standing in for an out-of-scope part of MXNet: any attribute raises."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        raise OutOfScope(f"{self.__name__}.{name} is out of scope (issues 14/15)")


class _Loader(importlib.abc.Loader):
    """Hands back the sparsegen module (or placeholder) for an ``mxnet`` name."""

    def __init__(self, module: types.ModuleType) -> None:
        self.module = module
        self.spec = getattr(module, "__spec__", None)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return self.module

    def exec_module(self, module: types.ModuleType) -> None:
        if self.spec is not None:
            module.__spec__ = self.spec  # the import system set the mxnet spec: give it back


class _Finder(importlib.abc.MetaPathFinder):
    """Finds ``mxnet`` and ``mxnet.*`` as the corresponding sparsegen modules."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != "mxnet" and not fullname.startswith("mxnet."):
            return None
        target_name = "sparsegen" + fullname[len("mxnet"):]
        module = sys.modules.get(target_name)
        if module is None:
            try:
                module = importlib.import_module(target_name)
            except ModuleNotFoundError as err:
                if err.name != target_name:
                    raise
                parts = fullname.split(".")
                if len(parts) < 2 or parts[1] not in OUT_OF_SCOPE:
                    return None  # a plain ModuleNotFoundError: a missing module of sparsegen
                module = _Placeholder(fullname)
        return importlib.machinery.ModuleSpec(fullname, _Loader(module))


def install() -> None:
    """Serve ``mxnet`` from sparsegen in this process, with placeholders for the parts out of scope."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
    import sparsegen

    for name in OUT_OF_SCOPE:
        if not hasattr(sparsegen, name):
            setattr(sparsegen, name, _Placeholder(f"mxnet.{name}"))
