"""``mx.base._LIB``: the C-API calls MXNet scripts make through ctypes, served in Python.

MXNet code sets thread counts, waits, counts GPUs and seeds generators by calling MXNet's C
library directly (``check_call(_LIB.MXSetNumOMPThreads(ctypes.c_int(4)))``). sparsegen has no
such library; ``LIB`` answers the calls that have a meaning here, with the arguments scripts
pass (ints, ctypes values, ``ctypes.byref`` outputs), and returns 0 as the C API does. Any other
call raises ``AttributeError`` naming it and the calls served.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

from .errors import InvalidValue, MXNetError, NotSupported

VERSION = 10901
"""The MXNet version sparsegen's semantics follow, as ``MXGetVersion`` reports it (1.9.1)."""


def _value(argument: Any) -> Any:
    """An input argument's value: a ctypes value's ``.value``, bytes decoded, else itself."""
    value = getattr(argument, "value", argument)
    return value.decode() if isinstance(value, bytes) else value


def _write(reference: Any, value: Any) -> None:
    """Store ``value`` in an output argument (``ctypes.byref(x)``, a pointer, or ``x``)."""
    target = getattr(reference, "_obj", None)  # ctypes.byref
    if target is None:
        target = reference.contents if isinstance(reference, ctypes._Pointer) else reference
    target.value = value


def _threads(count: Any) -> int:
    from . import tvm_runtime as runtime

    count = int(_value(count))
    if count < 1:
        raise InvalidValue(f"MXSetNumOMPThreads: the thread count must be positive, got {count}")
    runtime.set_num_threads(count)
    return 0


def _wait_all() -> int:
    return 0  # every op has finished when it returns: nothing is queued


def _gpu_count(out: Any) -> int:
    from .context import num_gpus

    _write(out, num_gpus())
    return 0


def _gpu_memory(device: Any, free: Any, total: Any) -> int:
    from .context import gpu_memory_info

    free_bytes, total_bytes = gpu_memory_info(int(_value(device)))
    _write(free, free_bytes)
    _write(total, total_bytes)
    return 0


def _seed(seed: Any) -> int:
    from .random import seed as reseed

    reseed(int(_value(seed)))
    return 0


def _seed_context(seed: Any, device_type: Any, device_id: Any) -> int:
    from .context import Context
    from .random import seed as reseed

    kind = int(_value(device_type))
    if kind not in Context.devtype2str:
        raise InvalidValue(f"MXRandomSeedContext: device type {kind} is not one of "
                           f"{Context.devtype2str}")
    reseed(int(_value(seed)), Context(Context.devtype2str[kind], int(_value(device_id))))
    return 0


def _version(out: Any) -> int:
    _write(out, VERSION)
    return 0


_BULK = [15]  # MXNet's default engine bulk size; ops run eagerly here, so it changes nothing


def _bulk_size(size: Any, previous: Any) -> int:
    _write(previous, _BULK[0])
    _BULK[0] = int(_value(size))
    return 0


def _set_numpy_shape(flag: Any, previous: Any) -> int:
    if int(_value(flag)):
        raise NotSupported("MXSetIsNumpyShape: the numpy shape semantics (mx.np, zero-size "
                           "dimensions as known) are out of scope (docs/mxnet-differences.md)")
    _write(previous, 0)
    return 0


def _is_numpy_shape(out: Any) -> int:
    _write(out, 0)
    return 0


def _shutdown() -> int:
    return 0


CALLS: dict[str, Callable[..., int]] = {
    "MXGetVersion": _version,
    "MXSetNumOMPThreads": _threads,
    "MXNDArrayWaitAll": _wait_all,
    "MXGetGPUCount": _gpu_count,
    "MXGetGPUMemoryInformation64": _gpu_memory,
    "MXRandomSeed": _seed,
    "MXRandomSeedContext": _seed_context,
    "MXEngineSetBulkSize": _bulk_size,
    "MXSetIsNumpyShape": _set_numpy_shape,
    "MXIsNumpyShape": _is_numpy_shape,
    "MXNotifyShutdown": _shutdown,
}
"""The C-API functions served, by MXNet's name."""


class Library:
    """MXNet's C library as scripts reach it (``mx.base._LIB``): the ``CALLS`` it serves."""

    def __getattr__(self, name: str) -> Callable[..., int]:
        if name in CALLS:
            return CALLS[name]
        raise AttributeError(
            f"mx.base._LIB.{name}: sparsegen has no MXNet C library; it serves the C-API calls "
            f"{sorted(CALLS)} (docs/mxnet-differences.md)")

    def __dir__(self) -> list[str]:
        return sorted(CALLS)


LIB = Library()
"""The one ``_LIB``."""


def check_call(ret: int) -> None:
    """Raise ``MXNetError`` when a C-API call returned non-zero, as ``mxnet.base.check_call``."""
    if ret != 0:
        raise MXNetError(f"a C-API call returned {ret}")
