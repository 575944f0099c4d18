"""sparsegen: MXNet's sparse NDArray API on kernels generated, tuned and cached with Apache TVM.

``import sparsegen as mx`` runs MXNet 1.9.1 sparse code. Importing sparsegen does not import the
TVM compiler: cached kernels load through the TVM runtime alone.
"""

import importlib as _importlib

from . import ndarray
from .ndarray.keywords import check_keywords as _check_keywords

_check_keywords(ndarray)  # every function of mx.nd is defined once ndarray is imported

# mx.random re-exports mx.nd.random's samplers: imported after they are wrapped, it holds them
from . import autograd, base, context, kernels, optimizer, random  # noqa: E402
from ._version import __version__  # noqa: E402
from .context import Context, cpu, cpu_pinned, current_context, gpu, num_gpus  # noqa: E402
from .errors import MXNetError, SparsegenError, StorageFallbackWarning  # noqa: E402
from .util import is_np_array, is_np_shape, np_shape, set_np_shape, use_np_shape  # noqa: E402

nd = ndarray
rnd = random

_ON_FIRST_USE = {
    "attribute": "attribute", "callback": "callback", "contrib": "contrib", "executor": "executor",
    "gluon": "gluon",
    "init": "initializer", "initializer": "initializer",
    "interop": "interop", "io": "io", "kv": "kvstore", "kvstore": "kvstore",
    "lr_scheduler": "lr_scheduler", "metric": "metric", "mod": "module", "model": "model",
    "mon": "monitor", "monitor": "monitor",
    "module": "module", "name": "name", "np": "numpy", "numpy": "numpy",
    "operator": "operator", "profiler": "profiler", "runtime": "runtime",
    "sym": "symbol",
    "symbol": "symbol", "test_utils": "test_utils", "updates": "updates", "util": "util",
    "viz": "visualization", "visualization": "visualization",
}
"""``mx.<attribute>`` -> the submodule imported on first use (the training surface: a process
that only runs NDArray code and optimizers does not pay for importing it)."""

__all__ = [
    "AttrScope", "Context", "MXNetError", "SparsegenError", "StorageFallbackWarning", "__version__",
    "autograd", "base", "callback", "context", "contrib", "cpu", "cpu_pinned", "current_context",
    "executor", "gluon", "gpu", "init", "initializer", "interop", "io", "is_np_array",
    "is_np_shape", "kernels", "kv", "kvstore", "lr_scheduler", "metric", "model", "mod", "module",
    "mon", "monitor", "name", "nd", "ndarray", "np_shape", "num_gpus", "operator", "optimizer",
    "profiler", "random", "rnd", "runtime", "set_np_shape", "sym", "symbol", "test_utils",
    "updates", "use_np_shape", "util", "viz", "visualization",
]


def _get_symbol(x: object) -> object:
    """``mx.autograd.get_symbol``'s graph builder, from ``mx.sym`` (imported on first use)."""
    return _importlib.import_module(f"{__name__}.symbol.recorded").get_symbol(x)


autograd.install_get_symbol(_get_symbol)


def __getattr__(attribute: str) -> object:
    """The submodules of ``_ON_FIRST_USE`` (and ``AttrScope``), imported on first use."""
    if attribute == "AttrScope":
        return _importlib.import_module(f"{__name__}.attribute").AttrScope
    if attribute in _ON_FIRST_USE:
        module = _importlib.import_module(f"{__name__}.{_ON_FIRST_USE[attribute]}")
        globals()[attribute] = module
        return module
    raise AttributeError(f"module {__name__!r} has no attribute {attribute!r}")


def __dir__() -> list[str]:
    """The package's names, those imported on first use included."""
    return sorted({*globals(), *_ON_FIRST_USE, "AttrScope"})
