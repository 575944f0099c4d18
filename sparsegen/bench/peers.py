"""Optional peer libraries for benchmarks: PyTorch CPU, the numba kernels and MKL's sparse BLAS
(``sparse_dot_mkl``), each ``None`` when it is not installed (the ``[bench]`` extra has them)."""

from __future__ import annotations

import glob
import os
import sys
from typing import Any


def torch() -> Any:
    """The ``torch`` module, or ``None`` when it is not installed."""
    try:
        import torch as module
    except ImportError:
        return None
    return module


def numba_kernels() -> Any:
    """``sparsegen.bench.numba_kernels`` on as many numba threads as sparsegen's pool has, or
    ``None`` when numba is not installed."""
    try:
        import numba
    except ImportError:
        return None
    from ..config import num_threads
    from . import numba_kernels as module

    numba.set_num_threads(min(num_threads(), numba.config.NUMBA_NUM_THREADS))
    return module


def mkl() -> Any:
    """``sparse_dot_mkl``, or ``None`` when it or MKL's ``libmkl_rt`` is missing. The ``mkl``
    wheel puts ``libmkl_rt`` under the environment's ``lib/``, which the loader does not search:
    ``MKL_RT`` points it there unless already set."""
    if "MKL_RT" not in os.environ:
        found = sorted(glob.glob(os.path.join(sys.prefix, "lib", "libmkl_rt.so*")))
        if found:
            os.environ["MKL_RT"] = found[0]
    try:
        import sparse_dot_mkl
    except (ImportError, OSError, AttributeError):  # the library loads at import time
        return None
    return sparse_dot_mkl
