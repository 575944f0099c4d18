"""``mx.base``: the names MXNet code imports from ``mxnet.base``: its error classes, the default
element type, the number types its functions accept, its small helpers, and ``_LIB`` /
``check_call`` for the C-API calls scripts make (``capi.py``)."""

from __future__ import annotations

import ctypes
import os
import platform
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .capi import LIB as _LIB
from .capi import check_call
from .errors import MXNetError

mx_real_t = np.float32
"""The default element type of new arrays, as MXNet's."""

mx_uint = ctypes.c_uint
mx_float = ctypes.c_float
mx_float_p = ctypes.POINTER(mx_float)
"""The ctypes types of MXNet's C API (``c_array(mx_float, ...)``)."""

numeric_types = (float, int, np.generic)
"""The scalar types MXNet's operators take as numbers."""

integer_types = (int, np.integer)
"""The integer types MXNet accepts where it needs an int."""

string_types = (str,)
"""The string types (MXNet's Python 2 compatibility name)."""


class _FunctionError(MXNetError):
    """A function called on what it does not serve, named as MXNet's message names it."""

    template = ""

    def __init__(self, function: Callable[..., Any], alias: str | None = None,
                 *args: Any) -> None:
        super().__init__()
        self.function = getattr(function, "__name__", str(function))
        self.alias, self.args = alias, [str(type(a)) for a in args]

    def __str__(self) -> str:
        name = self.function if self.alias is None else f"{self.function} ({self.alias})"
        return self.template.format(name)


class NotImplementedForSymbol(_FunctionError):
    """An NDArray function called on a Symbol, as MXNet's."""

    template = "Function {} (namely operator) is not implemented for Symbol"


class NotSupportedForSparseNDArray(_FunctionError):
    """A dense-only function called on a sparse array, as MXNet's."""

    template = "Function {} is not supported for SparseNDArray"


error_types: dict[str, type] = {}
"""The error classes registered by name (``register_error``)."""


def register_error(name: str | type | None = None, cls: type | None = None) -> Any:
    """Register an error class under ``name`` (its own name by default), as MXNet's decorator;
    MXNet maps C-side errors by it, here it is a table of names."""
    if isinstance(name, type) and cls is None:
        error_types[name.__name__] = name
        return name

    def register(klass: type) -> type:
        error_types[name or klass.__name__] = klass
        return klass

    return register(cls) if cls is not None else register


def _as_list(obj: Any) -> list[Any] | tuple[Any, ...]:
    """``obj`` if it is a list or tuple, else ``[obj]``, as MXNet's."""
    return obj if isinstance(obj, (list, tuple)) else [obj]


def py_str(value: bytes) -> str:
    """``value`` decoded as UTF-8 (MXNet's C strings)."""
    return value.decode("utf-8")


class _ClassProperty:
    """A read-only property of a class (``classproperty``)."""

    def __init__(self, getter: classmethod) -> None:
        self.getter = getter

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        return self.getter.__get__(instance, owner if owner is not None else type(instance))()


def classproperty(function: Callable[..., Any]) -> Any:
    """A property read on the class itself, as MXNet's decorator."""
    if not isinstance(function, (classmethod, staticmethod)):
        function = classmethod(function)
    return _ClassProperty(function)


def with_metaclass(meta: type, *bases: type) -> type:
    """A base class whose subclasses are made by ``meta`` (MXNet's Python 2 helper)."""
    return meta("_WithMetaclass", bases or (object,), {})


def data_dir_default() -> str:
    """MXNet's default data folder: ``~/.mxnet`` (``%APPDATA%\\mxnet`` on Windows)."""
    if platform.system() == "Windows":
        return os.path.join(os.environ.get("APPDATA", ""), "mxnet")
    return os.path.join(os.path.expanduser("~"), ".mxnet")


def data_dir() -> str:
    """The data folder (downloads, models): ``$MXNET_HOME``, else ``data_dir_default()``."""
    return os.getenv("MXNET_HOME", data_dir_default())


def c_str(string: str) -> ctypes.c_char_p:
    """``string`` as a C ``char *``."""
    return ctypes.c_char_p(string.encode("utf-8"))


def c_str_array(strings: Sequence[str]) -> Any:
    """``strings`` as a C ``const char **``."""
    array = (ctypes.c_char_p * len(strings))()
    array[:] = [s.encode("utf-8") for s in strings]
    return array


def c_array(ctype: Any, values: Sequence[Any]) -> Any:
    """``values`` as a C array of ``ctype``."""
    array = (ctype * len(values))()
    array[:] = values
    return array


def c_array_buf(ctype: Any, buffer: Any) -> Any:
    """A C array of ``ctype`` sharing the memory of ``buffer`` (an ``array.array``)."""
    return (ctype * len(buffer)).from_buffer(buffer)


def ctypes2buffer(pointer: Any, length: int) -> bytearray:
    """A copy of ``length`` bytes at the C ``char *`` ``pointer``."""
    if not isinstance(pointer, ctypes.POINTER(ctypes.c_char)):
        raise TypeError("ctypes2buffer: expected a char pointer, got "
                        f"{type(pointer).__name__}")
    result = bytearray(length)
    ctypes.memmove((ctypes.c_char * length).from_buffer(result), pointer, length)
    return result


def ctypes2numpy_shared(pointer: Any, shape: Sequence[int]) -> np.ndarray:
    """A numpy array of ``shape`` over the C ``float *`` ``pointer`` (memory shared)."""
    if not isinstance(pointer, mx_float_p):
        raise TypeError(f"ctypes2numpy_shared: expected a float pointer, got "
                        f"{type(pointer).__name__}")
    size = int(np.prod(shape, dtype=np.int64))
    buffer = (mx_float * size).from_address(ctypes.addressof(pointer.contents))
    return np.frombuffer(buffer, dtype=np.float32).reshape(shape)


__all__ = ["MXNetError", "NotImplementedForSymbol", "NotSupportedForSparseNDArray", "_LIB",
           "_as_list", "c_array", "c_array_buf", "c_str", "c_str_array", "check_call",
           "classproperty", "ctypes2buffer", "ctypes2numpy_shared", "data_dir",
           "data_dir_default", "error_types", "integer_types", "mx_float", "mx_float_p",
           "mx_real_t", "mx_uint", "numeric_types", "py_str", "register_error", "string_types",
           "with_metaclass"]
