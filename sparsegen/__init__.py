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
