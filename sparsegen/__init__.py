"""sparsegen: MXNet's sparse NDArray API on kernels generated, tuned and cached with Apache TVM.

``import sparsegen as mx`` runs MXNet 1.9.1 sparse code. Importing sparsegen does not import the
TVM compiler: cached kernels load through the TVM runtime alone.
"""

import importlib as _importlib

from . import (autograd, base, callback, context, gluon, initializer, interop, io, kernels,
               kvstore, lr_scheduler, metric, model, module, name, ndarray, operator,
               optimizer, random, symbol, updates)
from ._version import __version__
from .attribute import AttrScope
from .context import Context, cpu, cpu_pinned, current_context, gpu, num_gpus
from .errors import MXNetError, SparsegenError, StorageFallbackWarning
from .ndarray.keywords import check_keywords as _check_keywords

nd = ndarray
sym = symbol
init = initializer
kv = kvstore
mod = module
_check_keywords(ndarray)  # once every module has added its functions to mx.nd

__all__ = [
    "AttrScope", "Context", "MXNetError", "SparsegenError", "StorageFallbackWarning", "__version__",
    "autograd", "base", "callback", "context", "cpu", "cpu_pinned", "current_context", "gluon",
    "gpu", "init", "initializer", "interop", "io", "kernels", "kv", "kvstore", "lr_scheduler",
    "metric", "model", "name", "nd", "ndarray", "num_gpus", "operator", "optimizer", "random",
    "sym", "symbol", "test_utils",
    "mod", "module",
    "updates",
]


def __getattr__(attribute: str) -> object:
    """``mx.test_utils``, imported on first use: it builds on the whole package (``mx``)."""
    if attribute == "test_utils":
        return _importlib.import_module(f"{__name__}.test_utils")
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")
