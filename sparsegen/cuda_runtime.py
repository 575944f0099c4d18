"""The CUDA side of the TVM runtime: loading it, counting GPUs, and serving cached cubins.

TVM 0.27 stores a CUDA kernel library with its CUDA C source; when such a library is loaded (or
built) on a GPU machine, the runtime asks the global function ``tvm_callback_cuda_compile`` to
turn the source into a binary. While sparsegen loads or builds a CUDA kernel it puts its own
callback there (``serving_cubins``): it answers with the cubin that ``sparsegen build --target
cuda`` compiled with nvcc next to the library (looked up by the source's digest), so loading a
cached kernel needs neither the TVM compiler nor NVRTC, and nvcc runs only for a source whose
cubin is missing. Afterwards the previous callback (TVM's own, if ``tvm.support.nvcc`` was
imported) is put back, and a later import of TVM's finds the name free.

Everything here is loaded lazily: CPU-only use never touches the CUDA libraries.
"""

from __future__ import annotations

import ctypes
import hashlib
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

from . import tvm_runtime as runtime
from .errors import SparsegenError
from .tvm_runtime import tvm_ffi  # imported there with torch hidden (see tvm_runtime.py)

CUDA_DEVICE_TYPE = 2  # DLPack's kDLCUDA
_COMPUTE_VERSION = 4  # TVM's kComputeVersion device attribute
_DEVICE_NAME = 5  # TVM's kDeviceName device attribute
_TOTAL_MEMORY = 14  # TVM's kTotalGlobalMemory device attribute
_AVAILABLE_MEMORY = 15  # TVM's kAvailableGlobalMemory device attribute

_CALLBACK = "tvm_callback_cuda_compile"
_CUBINS: dict[str, bytes] = {}  # sha256 of a CUDA source -> its cubin
_SERVING = threading.RLock()  # one load or build at a time owns the callback


def source_digest(source: str) -> str:
    """The key a CUDA source's cubin is registered under."""
    return hashlib.sha256(source.encode()).hexdigest()


def register_cubin(source: str, cubin: bytes) -> None:
    """Serve ``cubin`` whenever the runtime asks to compile ``source``."""
    _CUBINS[source_digest(source)] = cubin


@contextmanager
def serving_cubins(arch: str) -> Iterator[None]:
    """Within the block, the runtime's compile requests get the registered cubins (nvcc's for
    ``arch`` for a source without one); the previous callback is restored after."""
    with _SERVING:
        previous = tvm_ffi.get_global_func(_CALLBACK, allow_missing=True)
        tvm_ffi.register_global_func(_CALLBACK, lambda source: cubin(source, arch), override=True)
        try:
            yield
        finally:
            if previous is None:
                tvm_ffi.remove_global_func(_CALLBACK)
            else:
                tvm_ffi.register_global_func(_CALLBACK, previous, override=True)


def compile_cubin(source: str, arch: str) -> bytes:
    """``source`` compiled by nvcc to a cubin for ``arch`` (``sm_90``); IEEE math, no fast-math."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        raise SparsegenError("building CUDA kernels needs nvcc (the CUDA toolkit) on PATH")
    with tempfile.TemporaryDirectory(prefix="sparsegen-nvcc-") as tmp:
        src, out = Path(tmp) / "kernel.cu", Path(tmp) / "kernel.cubin"
        src.write_text(source)
        done = subprocess.run(
            [nvcc, "--cubin", "-O3", "-arch", arch, "-o", str(out), str(src)],
            capture_output=True, text=True, check=False,
        )
        if done.returncode != 0:
            raise SparsegenError(f"nvcc failed for {arch}:\n{done.stdout}{done.stderr}")
        return out.read_bytes()


def cubin(source: str, arch: str) -> bytes:
    """The cubin of ``source`` for ``arch``: the one registered (or compiled already), else
    nvcc's."""
    digest = source_digest(source)
    binary = _CUBINS.get(digest)
    if binary is None:
        binary = _CUBINS[digest] = compile_cubin(source, arch)
    return binary


@lru_cache(maxsize=None)
def load() -> Path:
    """Load TVM's CUDA runtime (``libtvm_runtime_cuda``) and return its path.

    Raises ``SparsegenError`` with the loader's reason when the CUDA libraries (the driver's
    ``libcuda.so.1``, ``libcudart``) are missing.
    """
    path = runtime.runtime_library().parent / "libtvm_runtime_cuda.so"
    try:
        ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
    except OSError as err:
        raise SparsegenError(f"the CUDA runtime cannot be loaded: {err}") from None
    return path


def is_loaded() -> bool:
    """Whether the CUDA runtime has been loaded in this process (GPU work may be pending)."""
    return load.cache_info().currsize > 0


def device_count() -> int:
    """The number of CUDA GPUs the runtime sees (0 where the CUDA libraries are missing)."""
    try:
        load()
    except SparsegenError:
        return 0
    return int(tvm_ffi.get_global_func("runtime.GetCudaDeviceCount")())


@lru_cache(maxsize=None)
def arch(device_id: int) -> str:
    """The ``sm_XY`` architecture of CUDA device ``device_id``."""
    return "sm_" + str(_attribute(device_id, _COMPUTE_VERSION)).replace(".", "")


def name(device_id: int) -> str:
    """The model name of CUDA device ``device_id`` (``NVIDIA H200``)."""
    return str(_attribute(device_id, _DEVICE_NAME))


def memory(device_id: int) -> tuple[int, int]:
    """The (free, total) bytes of global memory of CUDA device ``device_id``."""
    return (int(_attribute(device_id, _AVAILABLE_MEMORY)),
            int(_attribute(device_id, _TOTAL_MEMORY)))


def _attribute(device_id: int, kind: int) -> object:
    load()
    return tvm_ffi.get_global_func("runtime.GetDeviceAttr")(CUDA_DEVICE_TYPE, device_id, kind)


def synchronize(device_id: int) -> None:
    """Wait until every kernel launched on GPU ``device_id`` has finished."""
    tvm_ffi.get_global_func("runtime.Device_StreamSync")(
        tvm_ffi.device("cuda", device_id), 0
    )
