"""GPU memory for the front end: ``DeviceArray`` buffers and moving storage between contexts.

A ``gpu(i)`` array keeps its values in a ``DeviceArray`` (a C-contiguous TVM runtime tensor in
GPU ``i``'s memory); a ``cpu()`` array keeps a numpy array. The storage-level ops handle both
through the helpers at the end of this module, and the kernels they run are compiled for the
target of the buffers' device (``target_of``).

``SPARSEGEN_GPU=host`` emulates two GPUs in host memory: ``gpu(i)`` buffers are device tensors on
the host device ``cpu:i`` run by the host CPU kernels. Every GPU code path except the CUDA
kernels themselves runs that way on machines without a GPU (the tests use it).
"""

from __future__ import annotations

import ctypes
import dataclasses
import math
import os
from functools import lru_cache
from typing import Any

import numpy as np

from . import cuda_runtime
from . import tvm_runtime as runtime
from .errors import SparsegenError
from .tvm_runtime import tvm_ffi  # imported there with torch hidden (see tvm_runtime.py)
from .target import Target
from .target import cuda as cuda_target_of_arch

EMULATED_GPUS = 2
"""The number of GPUs ``SPARSEGEN_GPU=host`` emulates."""

_FUNCTIONS: dict[str, Any] = {}


def _runtime_function(name: str) -> Any:
    """A TVM runtime global function (loading the runtime first)."""
    function = _FUNCTIONS.get(name)
    if function is None:
        runtime.runtime_library()
        function = _FUNCTIONS[name] = tvm_ffi.get_global_func(name)
    return function


def emulated() -> bool:
    """Whether ``gpu(i)`` arrays are emulated in host memory (``SPARSEGEN_GPU=host``)."""
    mode = os.environ.get("SPARSEGEN_GPU", "cuda")
    if mode not in ("cuda", "host"):
        raise SparsegenError(f"SPARSEGEN_GPU must be 'cuda' or 'host', got {mode!r}")
    return mode == "host"


def num_gpus() -> int:
    """The GPUs ``gpu(i)`` can name: CUDA devices, or the emulated ones."""
    return EMULATED_GPUS if emulated() else cuda_runtime.device_count()


def missing_gpu_reason() -> str:
    """Why CUDA GPUs cannot be used, as a parenthesised phrase ('' when the runtime loads)."""
    if emulated():
        return f" (SPARSEGEN_GPU=host emulates {EMULATED_GPUS})"
    try:
        cuda_runtime.load()
    except SparsegenError as err:
        return f" ({err})"
    return ""


def gpu_device(device_id: int) -> Any:
    """The TVM device holding ``gpu(device_id)`` arrays."""
    return tvm_ffi.device("cpu" if emulated() else "cuda", device_id)


@lru_cache(maxsize=None)
def cuda_target(device_id: int) -> Target:
    """The CUDA kernel target of GPU ``device_id`` (its own ``sm_XY``)."""
    return cuda_target_of_arch(cuda_runtime.arch(device_id))


def synchronize(device_id: int) -> None:
    """Wait for the kernels launched on GPU ``device_id`` (emulated GPUs run synchronously)."""
    if not emulated():
        cuda_runtime.synchronize(device_id)


def synchronize_all() -> None:
    """Wait for the kernels launched on every GPU."""
    if not emulated() and cuda_runtime.is_loaded():
        for device_id in range(cuda_runtime.device_count()):
            cuda_runtime.synchronize(device_id)


def target_of(buffer: Any) -> Target | None:
    """The kernel target for an array: ``None`` (the host CPU) unless it is in CUDA memory (a
    ``DeviceArray``, or any DLPack array such as a torch ``cuda`` tensor)."""
    where = None if isinstance(buffer, np.ndarray) else getattr(buffer, "__dlpack_device__", None)
    if where is None:
        return None
    kind, index = where()
    return cuda_target(int(index)) if int(kind) == cuda_runtime.CUDA_DEVICE_TYPE else None


class _Flags:
    """numpy's ``flags`` as the storage code reads them: always C-contiguous."""

    __slots__ = ("writeable",)
    c_contiguous = True

    def __init__(self, writeable: bool) -> None:
        self.writeable = writeable


class DeviceArray:
    """A C-contiguous array in a device's memory, held as a TVM runtime tensor.

    It offers the part of numpy's interface the storage code uses (``shape``, ``dtype``,
    ``reshape``, ``copy``, leading-rows views); kernels take it directly, and ``numpy()``
    copies it to the host.
    """

    __slots__ = ("tensor", "shape", "dtype", "flags")

    def __init__(self, tensor: Any, writeable: bool = True) -> None:
        self.tensor = tensor
        self.shape = tuple(tensor.shape)
        self.dtype = np.dtype(str(tensor.dtype))
        self.flags = _Flags(writeable)

    @classmethod
    def empty(cls, shape: tuple[int, ...], dtype: Any, device: Any) -> "DeviceArray":
        """An uninitialised array on ``device``."""
        dims = tvm_ffi.Shape([int(d) for d in shape])
        alloc = _runtime_function("runtime.TVMTensorAllocWithScope")
        return cls(alloc(dims, tvm_ffi.dtype(np.dtype(dtype).name), device, None))

    @classmethod
    def from_dlpack(cls, array: Any) -> "DeviceArray":
        """An array sharing the memory of a DLPack array (a torch ``cuda`` tensor, say), with
        TVM's CUDA runtime loaded when that memory is a GPU's (arrays are then allocated
        beside it)."""
        tensor = tvm_ffi.from_dlpack(array, require_alignment=0)
        if tensor.device.dlpack_device_type() == cuda_runtime.CUDA_DEVICE_TYPE:
            cuda_runtime.load()
        return cls(tensor)

    @classmethod
    def from_numpy(cls, values: np.ndarray, device: Any) -> "DeviceArray":
        """A copy of ``values`` on ``device``."""
        result = cls.empty(values.shape, values.dtype, device)
        result.copy_from(values)
        return result

    # -- numpy-like attributes ----------------------------------------------------------------
    @property
    def device(self) -> Any:
        """The TVM device holding the values."""
        return self.tensor.device

    @property
    def size(self) -> int:
        """The number of elements."""
        return math.prod(self.shape)

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self.shape)

    @property
    def nbytes(self) -> int:
        """The size in bytes."""
        return self.size * self.dtype.itemsize

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        return f"DeviceArray({self.shape}, {self.dtype.name}, {self.device})"

    # -- views and copies ---------------------------------------------------------------------
    def _view(self, shape: tuple[int, ...], byte_offset: int = 0) -> "DeviceArray":
        """A view of ``shape`` starting ``byte_offset`` bytes in (kernels take offset 0 only)."""
        create = _runtime_function("runtime.TVMTensorCreateView")
        return DeviceArray(
            create(self.tensor, tvm_ffi.Shape(list(shape)), self.tensor.dtype, byte_offset),
            self.flags.writeable,
        )

    def view(self) -> "DeviceArray":
        """A new array object sharing this one's memory (its own ``writeable`` flag)."""
        return self._view(self.shape)

    def reshape(self, *shape: Any) -> "DeviceArray":
        """A view with a new shape (one ``-1`` is inferred), as ``numpy.reshape``."""
        dims = list(shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape)
        if dims.count(-1) == 1:
            known = math.prod(d for d in dims if d != -1)
            dims[dims.index(-1)] = self.size // known if known else 0
        if math.prod(dims) != self.size or any(d < 0 for d in dims):
            raise SparsegenError(f"cannot reshape an array of shape {self.shape} to {tuple(shape)}")
        return self._view(tuple(int(d) for d in dims))

    def head(self, rows: int) -> "DeviceArray":
        """A view of the first ``rows`` rows (kernels reject views that start elsewhere)."""
        return self._view((rows, *self.shape[1:]))

    def rows(self, start: int, stop: int) -> "DeviceArray":
        """A copy of rows ``start:stop``."""
        row_bytes = math.prod(self.shape[1:]) * self.dtype.itemsize
        return self._view((stop - start, *self.shape[1:]), start * row_bytes).copy()

    def copy(self) -> "DeviceArray":
        """A copy in the same device's memory."""
        result = DeviceArray.empty(self.shape, self.dtype, self.device)
        result.copy_from(self)
        return result

    def copy_from(self, source: "np.ndarray | DeviceArray") -> None:
        """Overwrite the values with ``source`` (same shape and dtype; host or any device)."""
        if tuple(source.shape) != self.shape or source.dtype != self.dtype:
            raise SparsegenError(
                f"cannot copy {source.dtype.name} values of shape {tuple(source.shape)} into a "
                f"{self.dtype.name} array of shape {self.shape}"
            )
        if isinstance(source, DeviceArray):
            _runtime_function("runtime.TVMTensorCopyFromTo")(source.tensor, self.tensor)
        elif self.size:
            values = np.ascontiguousarray(source)
            _runtime_function("runtime.TVMTensorCopyFromBytes")(
                self.tensor, ctypes.c_void_p(values.ctypes.data), values.nbytes
            )

    def numpy(self) -> np.ndarray:
        """A host copy of the values."""
        return self._read()

    def _read(self) -> np.ndarray:
        values = np.empty(self.shape, self.dtype)
        if self.size:
            _runtime_function("runtime.TVMTensorCopyToBytes")(
                self.tensor, ctypes.c_void_p(values.ctypes.data), values.nbytes
            )
        return values

    def item(self, position: int) -> Any:
        """One element of the flattened array, read back to the host."""
        position = position % self.size if self.size else position
        if not 0 <= position < self.size:
            raise SparsegenError(f"position {position} is out of range for {self.size} elements")
        return self._view((1,), position * self.dtype.itemsize)._read()[0].item()

    def overlaps(self, other: "DeviceArray") -> bool:
        """Whether the two arrays share any byte of memory."""
        a, b = self.tensor.data_ptr(), other.tensor.data_ptr()
        same = self.device.dlpack_device_type() == other.device.dlpack_device_type()
        return same and a < b + other.nbytes and b < a + self.nbytes and bool(self.size and other.size)

    # -- protocols ----------------------------------------------------------------------------
    def __tvm_ffi_object__(self) -> Any:
        return self.tensor

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.tensor.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.tensor.__dlpack_device__()


# -- what the storage-level code uses for numpy arrays and device arrays alike ------------------
_ARRAYS = (np.ndarray, DeviceArray)


def empty_like(like: Any, shape: tuple[int, ...], dtype: Any) -> Any:
    """An uninitialised buffer of ``shape`` / ``dtype`` in the memory ``like`` lives in."""
    if isinstance(like, DeviceArray):
        check_allocation(tuple(shape), np.dtype(dtype))
        return DeviceArray.empty(shape, dtype, like.device)
    try:  # checked only when numpy refuses: the check costs more than a small allocation
        return np.empty(shape, dtype)
    except (MemoryError, ValueError):
        return allocated(lambda: np.empty(shape, dtype), tuple(shape), np.dtype(dtype))


_ADDRESSABLE = int(np.iinfo(np.intp).max)
"""The most bytes (and elements along one axis) a dense array can have."""


def check_allocation(shape: tuple[int, ...], dtype: np.dtype, what: str = "shape") -> None:
    """Raise ``MXNetError`` when a dense array of ``shape`` cannot be addressed in memory."""
    limit = _ADDRESSABLE
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes > limit or (shape and max(shape) > limit):
        raise SparsegenError(
            f"{what} {shape} is too large for a dense {dtype.name} array "
            f"({math.prod(shape)} elements, {nbytes} bytes; the limit is {limit} bytes)"
        )


def allocated(make: Any, shape: tuple[int, ...], dtype: np.dtype, what: str = "shape") -> Any:
    """``make()`` (which allocates a dense ``shape`` array), with a failed allocation reported
    as ``MXNetError`` naming the shape and the bytes it needs."""
    check_allocation(shape, dtype, what)
    try:
        return make()
    except MemoryError:
        raise SparsegenError(
            f"{what} {shape}: out of memory allocating {math.prod(shape) * dtype.itemsize} bytes "
            f"for a dense {dtype.name} array"
        ) from None



def contiguous(values: Any) -> Any:
    """``values`` as a C-contiguous buffer (device arrays always are)."""
    return values if isinstance(values, DeviceArray) else np.ascontiguousarray(values)


def copy(values: Any) -> Any:
    """A C-contiguous copy of a buffer, in the same memory."""
    return values.copy() if isinstance(values, DeviceArray) else np.array(values, order="C")


def item(values: Any, position: int) -> int:
    """Element ``position`` of a flat integer buffer, as a Python int."""
    return int(values.item(position) if isinstance(values, DeviceArray) else values[position])


def head(values: Any, rows: int) -> Any:
    """The first ``rows`` rows of a buffer, as a view."""
    return values.head(rows) if isinstance(values, DeviceArray) else values[:rows]


def to_host(values: Any) -> np.ndarray:
    """A buffer's values as a numpy array (a copy for device arrays, else ``values`` itself)."""
    return values.numpy() if isinstance(values, DeviceArray) else values


def copy_into(dest: Any, source: Any) -> None:
    """Overwrite buffer ``dest`` with ``source`` (same shape and dtype, any memory)."""
    if isinstance(dest, DeviceArray):
        dest.copy_from(source)
    else:
        np.copyto(dest, to_host(source))


def rows(values: Any, start: int, stop: int) -> Any:
    """A copy of rows ``start:stop`` of a buffer, in the same memory."""
    return values.rows(start, stop) if isinstance(values, DeviceArray) else values[start:stop].copy()


def astype(values: Any, dtype: np.dtype) -> Any:
    """A copy of a buffer with elements cast to ``dtype``, in the same memory (a device array
    is cast on the host: no cast kernel exists yet)."""
    if isinstance(values, DeviceArray):
        return DeviceArray.from_numpy(values.numpy().astype(dtype), values.device)
    return values.astype(dtype)


def may_share_memory(a: Any, b: Any) -> bool:
    """Whether two buffers may overlap in memory (``numpy.may_share_memory`` for numpy)."""
    if isinstance(a, DeviceArray) and isinstance(b, DeviceArray):
        return a.overlaps(b)
    if isinstance(a, DeviceArray) or isinstance(b, DeviceArray):
        return False
    return bool(np.may_share_memory(a, b))


def device_of(context: Any) -> Any:
    """The TVM device of a context's memory (``None`` for host contexts: numpy buffers)."""
    return gpu_device(context.device_id) if context.device_type == "gpu" else None


def colocate(values: Any, reference: Any) -> Any:
    """``values`` (a host array) in the memory ``reference`` lives in."""
    return place(values, reference.device if isinstance(reference, DeviceArray) else None)


def place(storage: Any, device: Any, fresh: bool = False) -> Any:
    """``storage`` (a buffer or format dataclass) with its buffers in ``device``'s memory
    (``None``: host numpy). Buffers already there are kept unless ``fresh``."""
    if not fresh:
        if isinstance(storage, _ARRAYS):
            if _is_on(storage, device):
                return storage
        else:
            for name in storage.BUFFERS:  # a loop: a generator costs more on small arrays
                if not _is_on(getattr(storage, name), device):
                    break
            else:
                return storage

    def move(buffer: Any) -> Any:
        if not fresh and _is_on(buffer, device):
            return buffer
        if device is None:
            return buffer.numpy() if isinstance(buffer, DeviceArray) else np.array(buffer, order="C")
        moved = DeviceArray.empty(buffer.shape, buffer.dtype, device)
        moved.copy_from(buffer)
        return moved

    return _map_buffers(storage, move)


def deep_copy(storage: Any) -> Any:
    """A copy of a storage object in the same memory, sharing no buffer with it."""
    return _map_buffers(storage, copy)


def host_copy(storage: Any) -> Any:
    """A copy of a storage object with every buffer in host numpy memory."""
    return place(storage, None, fresh=True)


def _is_on(buffer: Any, device: Any) -> bool:
    if device is None:
        return not isinstance(buffer, DeviceArray)
    return isinstance(buffer, DeviceArray) and buffer.device == device


def _map_buffers(storage: Any, function: Any) -> Any:
    """``storage`` (a buffer, or a format dataclass naming its buffers in ``BUFFERS``) with
    ``function`` applied to each buffer."""
    if isinstance(storage, _ARRAYS):
        return function(storage)
    return dataclasses.replace(
        storage, **{name: function(getattr(storage, name)) for name in storage.BUFFERS}
    )


def buffers(storage: Any) -> list[Any]:
    """The buffers of a storage object."""
    if isinstance(storage, _ARRAYS):
        return [storage]
    return [getattr(storage, name) for name in storage.BUFFERS]
