"""``mx.util``: MXNet 1.9.1's utility functions that scripts and tests import. NDArrays have
numpy's shapes (0-d arrays, zero-size dimensions); ``set_np_shape`` switches what a symbol's
shapes mean, as MXNet's (its legacy partial shapes by default); the ``mx.np`` array interface
is out of scope, so the switches that would turn it on refuse."""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Iterator
from typing import Any

from .context import gpu_memory_info, num_gpus
from .errors import InvalidValue, NotSupported, SparsegenError

_NP_ARRAY = "mx.np arrays (MXNet's numpy interface) are out of scope for sparsegen"


def get_gpu_count() -> int:
    """The number of GPUs (``mx.context.num_gpus``)."""
    return num_gpus()


def get_gpu_memory(gpu_dev_id: int) -> tuple[int, int]:
    """(free, total) bytes of GPU ``gpu_dev_id``."""
    return gpu_memory_info(gpu_dev_id)


def get_cuda_compute_capability(ctx: Any) -> int:
    """The CUDA compute capability of the GPU of context ``ctx`` as an int (70 for ``sm_70``),
    as ``mxnet.util.get_cuda_compute_capability``; a non-GPU context raises ``InvalidValue``,
    a GPU that is missing or emulated (``SPARSEGEN_GPU=host``) ``MXNetError``."""
    from . import cuda_runtime, device  # loads the CUDA runtime: only when asked

    if getattr(ctx, "device_type", None) != "gpu":
        raise InvalidValue(f"get_cuda_compute_capability: ctx must be a gpu context, got {ctx!r}")
    if device.emulated():
        raise SparsegenError(f"get_cuda_compute_capability: {ctx} is emulated in host memory "
                             "(SPARSEGEN_GPU=host) and has no compute capability")
    if ctx.device_id >= num_gpus():
        raise SparsegenError(f"get_cuda_compute_capability: there is no {ctx}; {num_gpus()} "
                             f"GPUs are available{device.missing_gpu_reason()}")
    return int(cuda_runtime.arch(ctx.device_id)[len("sm_"):])


_SHAPE_SEMANTICS = {"numpy": False}
"""Whether MXNet's numpy shape semantics are on (``set_np_shape``); off by default, as MXNet's."""


def is_np_shape() -> bool:
    """Whether numpy shape semantics are on (``set_np_shape``): what a 0, -1 and ``()`` mean in
    a symbol's shapes (legacy, MXNet's default: 0 an unknown dimension, ``()`` an unknown
    shape; numpy's: -1 and None). NDArrays have numpy's shapes either way."""
    return _SHAPE_SEMANTICS["numpy"]


def set_np_shape(active: bool) -> bool:
    """Turns MXNet's numpy shape semantics on or off (``is_np_shape``); returns the previous
    state."""
    previous = _SHAPE_SEMANTICS["numpy"]
    _SHAPE_SEMANTICS["numpy"] = bool(active)
    return previous


@contextlib.contextmanager
def np_shape(active: bool = True) -> Iterator[None]:
    """A scope with numpy shape semantics on (or, ``active=False``, off)."""
    previous = set_np_shape(active)
    try:
        yield
    finally:
        set_np_shape(previous)


def use_np_shape(func: Any) -> Any:
    """A function, or each method of a class, run with numpy shape semantics on."""
    if isinstance(func, type):
        for name, method in list(vars(func).items()):
            if callable(method) and not isinstance(method, type):
                setattr(func, name, use_np_shape(method))
        return func

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        with np_shape(True):
            return func(*args, **kwargs)

    return wrapped


def is_np_array() -> bool:
    """False: ``mx.np`` arrays are out of scope, NDArrays are MXNet's legacy arrays."""
    return False


def set_np_array(active: bool) -> bool:
    """Turning ``mx.np`` arrays on refuses (out of scope); off is the state already."""
    if active:
        raise NotSupported(_NP_ARRAY)
    return False


@contextlib.contextmanager
def np_array(active: bool = True) -> Iterator[None]:
    """A scope of ``mx.np`` arrays: refuses (out of scope) unless ``active`` is False."""
    set_np_array(active)
    yield


def set_np(shape: bool = True, array: bool = True) -> None:
    """MXNet's numpy mode: numpy shape semantics as ``shape`` says; ``mx.np`` arrays refuse
    (before anything changes)."""
    set_np_array(array)
    set_np_shape(shape)


def reset_np() -> None:
    """Back to MXNet's defaults: legacy shape semantics and arrays."""
    set_np_array(False)
    set_np_shape(False)


def _refused(func: Any) -> Any:
    """``func`` that refuses when called: it needs ``mx.np`` arrays."""
    @functools.wraps(func)
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise NotSupported(f"{getattr(func, '__name__', func)} is decorated to run on "
                           f"{_NP_ARRAY}")
    return refuse


def use_np_array(func: Any) -> Any:
    """A function needing ``mx.np`` arrays: defining it works, calling it refuses (a class is
    returned unchanged, as its methods decide)."""
    return func if isinstance(func, type) else _refused(func)


use_np = use_np_array


def getenv(name: str) -> str | None:
    """The value of environment variable ``name`` (None when unset)."""
    return os.environ.get(name)


def setenv(name: str, value: str | None) -> None:
    """Set environment variable ``name`` (unset it when ``value`` is None)."""
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = str(value)


def makedirs(d: str) -> None:
    """``os.makedirs(d, exist_ok=True)`` after expanding ``~``."""
    os.makedirs(os.path.expanduser(d), exist_ok=True)


def set_module(module: str) -> Callable[[Any], Any]:
    """A decorator setting ``__module__`` of a function or class (MXNet's documentation aid)."""
    def decorate(func: Any) -> Any:
        if module is not None:
            func.__module__ = module
        return func
    return decorate


__all__ = ["get_cuda_compute_capability", "get_gpu_count", "get_gpu_memory", "getenv",
           "is_np_array", "is_np_shape",
           "makedirs", "np_array", "np_shape", "reset_np", "set_module", "set_np",
           "set_np_array", "set_np_shape", "setenv", "use_np", "use_np_array", "use_np_shape"]
