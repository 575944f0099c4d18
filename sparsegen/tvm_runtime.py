"""Loading and calling compiled kernels with the TVM runtime alone (no compiler import).

The runtime libraries (``libtvm_runtime.so``, and ``libtvm_runtime_cuda.so`` for GPUs) are found
in the ``apache-tvm`` package, or in the folder ``$SPARSEGEN_TVM_RUNTIME_DIR`` names: a
runtime-only install (``tvm_ffi`` plus those two libraries, no compiler) that runs prebuilt
kernel caches. Such a folder holds a file ``TVM_VERSION`` naming the apache-tvm release the
libraries come from, since cache keys include it.
"""

from __future__ import annotations

import ctypes
import importlib.metadata
import importlib.util
import itertools
import os
import shutil
import sys
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

# tvm_ffi imports torch (about 2 s) whenever it is installed, and may JIT-build a DLPack
# extension for it, at import time; kernels take torch tensors through the standard DLPack
# protocol without either. It also imports ml_dtypes (0.7.0: about 0.8 s of CPU) for numpy
# dtypes no kernel here uses (bfloat16, float8). Both are hidden while tvm_ffi loads (unless
# already imported): a process that runs cached kernels never pays for them.
os.environ.setdefault("TVM_FFI_DISABLE_TORCH_C_DLPACK", "1")
_HIDDEN = [name for name in ("torch", "ml_dtypes") if name not in sys.modules]
for _name in _HIDDEN:
    sys.modules[_name] = None  # type: ignore[assignment]  # `import <name>` raises ImportError
try:
    import tvm_ffi  # noqa: E402
finally:
    for _name in _HIDDEN:
        del sys.modules[_name]

from .config import num_threads  # noqa: E402
from .errors import SparsegenError  # noqa: E402
from .files import process_dir  # noqa: E402
from .trace import RECORDER  # noqa: E402

RUNTIME_DIR_VARIABLE = "SPARSEGEN_TVM_RUNTIME_DIR"


def register_ml_dtypes() -> None:
    """Give tvm_ffi's numpy dtype table the ml_dtypes entries its import skipped (ml_dtypes was
    hidden then), as tvm_ffi itself registers them; called once the compiler is imported
    (``cache._compiler``), since TVM imports ml_dtypes anyway."""
    if "ml_dtypes" not in _HIDDEN:
        return
    import ml_dtypes

    table = tvm_ffi.dtype._NUMPY_DTYPE_TO_STR
    for name in ("bfloat16", "float8_e4m3fn", "float8_e5m2", "float4_e2m1fn"):
        if hasattr(ml_dtypes, name):
            table.setdefault(np.dtype(getattr(ml_dtypes, name)), name)
VERSION_FILE = "TVM_VERSION"


def _configured_runtime_dir() -> Path | None:
    """The folder ``$SPARSEGEN_TVM_RUNTIME_DIR`` names, checked to hold ``libtvm_runtime.so``."""
    configured = os.environ.get(RUNTIME_DIR_VARIABLE)
    if not configured:
        return None
    folder = Path(configured).expanduser()
    if not (folder / "libtvm_runtime.so").is_file():
        raise SparsegenError(f"{RUNTIME_DIR_VARIABLE}={configured} holds no libtvm_runtime.so")
    return folder


def runtime_dir() -> Path:
    """The TVM runtime libraries' folder: ``$SPARSEGEN_TVM_RUNTIME_DIR``, else apache-tvm's."""
    folder = _configured_runtime_dir()
    if folder is not None:
        return folder
    spec = importlib.util.find_spec("tvm")
    if spec is None or spec.origin is None:
        raise SparsegenError(
            "the TVM runtime is missing: pip install apache-tvm==0.27.0.post1, or set "
            f"{RUNTIME_DIR_VARIABLE} to a folder holding libtvm_runtime.so and {VERSION_FILE}"
        )
    return Path(spec.origin).parent / "lib"


def tvm_version() -> str:
    """The apache-tvm release of the runtime in use: ``TVM_VERSION`` in a configured runtime
    folder, else the installed distribution's version."""
    folder = _configured_runtime_dir()
    if folder is not None and (folder / VERSION_FILE).is_file():
        return (folder / VERSION_FILE).read_text().strip()
    try:
        return importlib.metadata.version("apache-tvm")
    except importlib.metadata.PackageNotFoundError:
        where = (f"{folder / VERSION_FILE} is missing" if folder
                 else f"{RUNTIME_DIR_VARIABLE} is unset")
        raise SparsegenError(
            f"the TVM version is unknown: apache-tvm is not installed and {where} (kernel cache "
            "keys include the version; a runtime folder names it in that file)"
        ) from None


@lru_cache(maxsize=None)
def runtime_library() -> Path:
    """Load ``libtvm_runtime`` (the thread pool that parallel kernels call) and return its path."""
    os.environ.setdefault("TVM_NUM_THREADS", str(num_threads()))
    path = runtime_dir() / "libtvm_runtime.so"
    ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
    return path


def set_num_threads(count: int) -> None:
    """Run parallel kernels on ``count`` threads from now on (``TVM_NUM_THREADS`` for a runtime
    not loaded yet, and the loaded runtime's thread pool resized)."""
    os.environ["TVM_NUM_THREADS"] = str(count)
    if runtime_library.cache_info().currsize:
        tvm_ffi.get_global_func("runtime.config_threadpool")(1, count)  # 1: every (big) core


_OPENED: dict[str, tuple[int, int]] = {}  # path handed to dlopen -> (device, inode) it opened
_FRESH = itertools.count()


def load_module(path: Path) -> Any:
    """Load an exported kernel library (``.so``) as a ``tvm_ffi.Module``.

    ``dlopen`` answers a path it has opened before with the library it opened then, so a file
    that was replaced since (a rebuilt cache entry) is loaded from a fresh copy of it instead.
    """
    runtime_library()
    name = str(path)
    status = os.stat(name)
    identity = (status.st_dev, status.st_ino)
    if _OPENED.setdefault(name, identity) != identity:
        fresh = process_dir("reload") / f"{next(_FRESH)}-{Path(name).name}"
        shutil.copyfile(name, fresh)
        name = str(fresh)
    return tvm_ffi.load_module(name)


def _compact(arg: Any) -> Any:
    """numpy gives empty arrays zero strides, which TVM rejects as non-compact: restride them."""
    if isinstance(arg, np.ndarray) and arg.size == 0:
        strides, step = [], arg.itemsize
        for dim in reversed(arg.shape):
            strides.append(step)
            step *= dim
        return np.lib.stride_tricks.as_strided(arg, strides=tuple(reversed(strides)))
    return arg


def wrap(function: Any, name: str = "kernel") -> Callable[..., Any]:
    """A Python callable for kernel function ``name`` that accepts empty numpy arrays too, and
    is timed while the profiler records (``trace.RECORDER``).

    TVM rejects numpy's zero strides of empty arrays, so those are re-strided before the call:
    a rejected call costs more than the check, since TVM's first error in a process reads its
    own debug information for the backtrace (about 0.35 s).
    """

    def run(*args: Any) -> Any:
        for arg in args:
            if isinstance(arg, np.ndarray) and arg.size == 0:
                return function(*[_compact(a) for a in args])
        return function(*args)

    def call(*args: Any) -> Any:
        if RECORDER.on:
            return RECORDER.timed(name, "kernel", run, *args)
        return run(*args)

    return call
