"""sparsegen: MXNet's sparse NDArray API on kernels generated, tuned and cached with Apache TVM.

``import sparsegen as mx`` runs MXNet 1.9.1 sparse code. Importing sparsegen does not import the
TVM compiler: cached kernels load through the TVM runtime alone.
"""

from . import context, interop, kernels, ndarray, optimizer
from . import lr_scheduler  # noqa: E402 - mx.lr_scheduler
from ._version import __version__
from .context import Context, cpu, cpu_pinned, current_context, gpu, num_gpus
from .errors import MXNetError, SparsegenError, StorageFallbackWarning

nd = ndarray

__all__ = [
    "Context", "MXNetError", "SparsegenError", "StorageFallbackWarning", "__version__",
    "context", "cpu", "cpu_pinned", "current_context", "gpu", "interop", "kernels", "nd", "ndarray",
    "num_gpus", "optimizer",
]
__all__ += ["lr_scheduler"]
from . import random  # noqa: E402 - mx.random

__all__ += ["random"]

from . import io  # noqa: E402 - mx.io, the data iterators

__all__ += ["io"]
# -- utils (issue 13): keep this block last, once every module has added its functions --------
import importlib as _importlib  # noqa: E402

from . import base  # noqa: E402
from .ndarray.keywords import check_keywords as _check_keywords  # noqa: E402

_check_keywords(ndarray)
__all__ += ["base", "test_utils"]


def __getattr__(name: str) -> object:
    """``mx.test_utils``, imported on first use: it builds on the whole package (``mx``)."""
    if name == "test_utils":
        return _importlib.import_module(f"{__name__}.test_utils")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
