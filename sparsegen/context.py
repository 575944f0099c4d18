"""Device contexts: ``cpu(i)``, ``gpu(i)`` and ``with Context(...)`` as the default for new arrays."""

from __future__ import annotations

import numbers
import os
import threading
import warnings

from .errors import InvalidType, SparsegenError

_DEVICE_TYPES = {"cpu": 1, "gpu": 2, "cpu_pinned": 3, "cpu_shared": 5}


class _ContextType(type):
    """The metaclass that gives ``Context`` its class-level ``default_ctx``, as MXNet's."""

    @property
    def default_ctx(cls) -> "Context":
        """The default context (deprecated in MXNet 1.9.1 for ``current_context()``; it warns)."""
        warnings.warn("Context.default_ctx is deprecated: use mx.current_context(), or "
                      "mx.test_utils.set_default_context to set it", DeprecationWarning,
                      stacklevel=2)
        return current_context()

    @default_ctx.setter
    def default_ctx(cls, ctx: "Context") -> None:
        warnings.warn("Context.default_ctx is deprecated: use "
                      "mx.test_utils.set_default_context", DeprecationWarning, stacklevel=2)
        set_default(ctx)


class Context(metaclass=_ContextType):
    """A device and its id, as ``mxnet.Context``; usable as ``with Context('cpu', 0):``."""

    _default_ctx = threading.local()
    devtype2str = {code: name for name, code in _DEVICE_TYPES.items()}
    devstr2type = dict(_DEVICE_TYPES)

    def __init__(self, device_type: "str | Context", device_id: int = 0) -> None:
        if isinstance(device_type, Context):
            device_type, device_id = device_type.device_type, device_type.device_id
        if not isinstance(device_type, str) or device_type not in _DEVICE_TYPES:
            raise SparsegenError(
                f"device_type must be one of {sorted(_DEVICE_TYPES)}, got {device_type!r}"
            )
        if (not isinstance(device_id, numbers.Integral) or isinstance(device_id, bool)
                or device_id < 0):
            raise SparsegenError(f"device_id must be a non-negative int, got {device_id!r}")
        self.device_type = device_type
        self.device_id = int(device_id)
        self._old: list[Context] = []

    @property
    def device_typeid(self) -> int:
        """MXNet's numeric device type (1 cpu, 2 gpu)."""
        return _DEVICE_TYPES[self.device_type]

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Context)
            and self.device_type == other.device_type
            and self.device_id == other.device_id
        )

    def __hash__(self) -> int:
        return hash((self.device_type, self.device_id))

    def __repr__(self) -> str:
        return f"{self.device_type}({self.device_id})"

    __str__ = __repr__

    def __enter__(self) -> "Context":
        self._old.append(current_context())
        Context._default_ctx.value = self
        return self

    def __exit__(self, *exc: object) -> None:
        Context._default_ctx.value = self._old.pop()


def cpu(device_id: int = 0) -> Context:
    """The CPU context (MXNet ignores the id for computation; so does sparsegen)."""
    return Context("cpu", device_id)


def cpu_pinned(device_id: int = 0) -> Context:
    """Page-locked host memory in MXNet; ordinary host memory here."""
    return Context("cpu_pinned", device_id)


def gpu(device_id: int = 0) -> Context:
    """The context of GPU ``device_id``; arrays on it need that GPU to exist."""
    return Context("gpu", device_id)


def current_context() -> Context:
    """The default context for new arrays: ``cpu(0)`` unless inside ``with Context(...)``."""
    return getattr(Context._default_ctx, "value", None) or Context("cpu", 0)


def set_default(ctx: Context) -> None:
    """Make ``ctx`` the default context of this thread (outside any ``with`` block)."""
    if not isinstance(ctx, Context):
        raise InvalidType(f"the default context must be a Context such as mx.cpu(1), got "
                          f"{type(ctx).__name__} {ctx!r}")
    Context._default_ctx.value = ctx


def shared_memory(a: Context, b: Context) -> bool:
    """Whether arrays on ``a`` and ``b`` can meet in one op: the same context, or both on the
    host (MXNet mixes ``cpu(0)`` and ``cpu(1)``: one memory; its tests use cpu ids as devices)."""
    return a == b or (a.device_type != "gpu" and b.device_type != "gpu")


def num_gpus() -> int:
    """The number of GPUs ``gpu(i)`` can name: CUDA devices the runtime sees (0 without the CUDA
    libraries), or the emulated ones under ``SPARSEGEN_GPU=host``."""
    from .device import num_gpus as count  # loads the CUDA runtime: only when GPUs are asked for

    return count()


def gpu_memory_info(device_id: int = 0) -> tuple[int, int]:
    """The (free, total) bytes of GPU ``device_id``'s memory, as ``mx.context.gpu_memory_info``
    (an emulated GPU, ``SPARSEGEN_GPU=host``, reports the host's memory)."""
    from . import device  # loads the CUDA runtime: only when GPUs are asked for

    if not isinstance(device_id, int) or isinstance(device_id, bool) or device_id < 0:
        raise SparsegenError(f"gpu_memory_info: device_id must be an int >= 0, got {device_id!r}")
    if device_id >= num_gpus():
        raise SparsegenError(f"gpu_memory_info: there is no gpu({device_id}); {num_gpus()} "
                             f"GPUs are available{device.missing_gpu_reason()}")
    if device.emulated():
        page = os.sysconf("SC_PAGE_SIZE")
        return os.sysconf("SC_AVPHYS_PAGES") * page, os.sysconf("SC_PHYS_PAGES") * page
    return device.cuda_runtime.memory(device_id)


def resolve(ctx: "Context | str | None") -> Context:
    """The context an array is created on; a GPU context with no such GPU raises ``MXNetError``."""
    if ctx is None:
        ctx = current_context()
    elif isinstance(ctx, str) and ctx in _DEVICE_TYPES:
        ctx = Context(ctx)
    elif not isinstance(ctx, Context):
        raise SparsegenError(
            f"ctx must be a Context such as mx.cpu() or mx.gpu(0), or one of "
            f"{sorted(_DEVICE_TYPES)}; got {ctx!r}"
        )
    if ctx.device_type == "gpu":
        available = num_gpus()
        if ctx.device_id >= available:
            from .device import missing_gpu_reason

            raise SparsegenError(
                f"cannot use {ctx}: this machine has {available} GPU(s)"
                f"{missing_gpu_reason()}; use mx.cpu() instead"
            )
    return ctx
